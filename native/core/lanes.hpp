// Values of W independent problems computed in lock-step, one per SIMD lane (GCC vector
// extensions). W = 1 is a plain double, so the same solver code serves one problem and a batch:
// branches on values are written as selects on lane masks.
#pragma once

#include <cmath>

namespace dcol {

template <int W>
struct LaneTypes {
  typedef double value __attribute__((vector_size(8 * W)));
  typedef long mask __attribute__((vector_size(8 * W)));
};
template <>
struct LaneTypes<1> {
  using value = double;
  using mask = bool;
};

template <int W>
using Lanes = typename LaneTypes<W>::value;
template <int W>
using LaneMask = typename LaneTypes<W>::mask;

// The lane count of a value type.
template <class V>
constexpr int lane_count() {
  return sizeof(V) / sizeof(double);
}

// s in every lane.
template <class V>
inline V splat(double s) {
  return V{} + s;
}

template <class V, class M>
inline V select(M mask, V if_true, V if_false) {
  return mask ? if_true : if_false;  // elementwise for vectors
}

template <class V>
inline V lane_min(V a, V b) {
  return select(a < b, a, b);
}

template <class V>
inline V lane_max(V a, V b) {
  return select(a > b, a, b);
}

inline double lane_sqrt(double a) { return std::sqrt(a); }
template <class V>
inline V lane_sqrt(V a) {
  V out;
  for (int i = 0; i < lane_count<V>(); ++i) out[i] = std::sqrt(a[i]);
  return out;
}

inline double lane_abs(double a) { return std::abs(a); }
template <class V>
inline V lane_abs(V a) {
  return select(a < 0.0, -a, a);
}

// Lane i of a value or a mask.
inline double lane(double v, int) { return v; }
inline bool lane(bool m, int) { return m; }
template <class V>
inline auto lane(const V& v, int i) {
  return v[i];
}

inline void set_lane(double& v, int, double x) { v = x; }
template <class V>
inline void set_lane(V& v, int i, double x) {
  v[i] = x;
}

template <class M>
inline M lane_not(M m) {
  return m == 0;
}

inline bool all_lanes(bool m) { return m; }
template <class M>
inline bool all_lanes(M m) {
  for (int i = 0; i < lane_count<M>(); ++i)
    if (!m[i]) return false;
  return true;
}

// Finite (not NaN, not ±inf) lane by lane.
template <class V>
inline auto lane_finite(V v) {
  return v - v == 0.0;
}

}  // namespace dcol
