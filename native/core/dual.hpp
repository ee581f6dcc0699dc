// Forward-mode derivatives with a fixed number of directions: a Dual carries a value and its
// derivatives with respect to K inputs (for contacts: the 12 rigid motions of two bodies). Formulas
// written once over a scalar type T give values with T = double and values with derivatives with
// T = Dual<K>.
#pragma once

#include <cmath>

namespace dcol {

template <int K>
struct Dual {
  double v = 0.0;
  double d[K] = {};
  Dual() = default;
  Dual(double value) : v(value) {}  // a constant: zero derivatives
};

template <int K>
inline Dual<K> operator+(const Dual<K>& a, const Dual<K>& b) {
  Dual<K> r(a.v + b.v);
  for (int i = 0; i < K; ++i) r.d[i] = a.d[i] + b.d[i];
  return r;
}
template <int K>
inline Dual<K> operator-(const Dual<K>& a, const Dual<K>& b) {
  Dual<K> r(a.v - b.v);
  for (int i = 0; i < K; ++i) r.d[i] = a.d[i] - b.d[i];
  return r;
}
template <int K>
inline Dual<K> operator-(const Dual<K>& a) {
  Dual<K> r(-a.v);
  for (int i = 0; i < K; ++i) r.d[i] = -a.d[i];
  return r;
}
template <int K>
inline Dual<K> operator*(const Dual<K>& a, const Dual<K>& b) {
  Dual<K> r(a.v * b.v);
  for (int i = 0; i < K; ++i) r.d[i] = a.d[i] * b.v + a.v * b.d[i];
  return r;
}
template <int K>
inline Dual<K> operator/(const Dual<K>& a, const Dual<K>& b) {
  const double inv = 1.0 / b.v;
  Dual<K> r(a.v * inv);
  for (int i = 0; i < K; ++i) r.d[i] = (a.d[i] - r.v * b.d[i]) * inv;
  return r;
}
template <int K>
inline Dual<K> operator+(const Dual<K>& a, double b) {
  return a + Dual<K>(b);
}
template <int K>
inline Dual<K> operator-(const Dual<K>& a, double b) {
  return a - Dual<K>(b);
}
template <int K>
inline Dual<K> operator+(double a, const Dual<K>& b) {
  return Dual<K>(a) + b;
}
template <int K>
inline Dual<K> operator-(double a, const Dual<K>& b) {
  return Dual<K>(a) - b;
}
template <int K>
inline Dual<K> operator*(const Dual<K>& a, double b) {
  Dual<K> r(a.v * b);
  for (int i = 0; i < K; ++i) r.d[i] = a.d[i] * b;
  return r;
}
template <int K>
inline Dual<K> operator*(double a, const Dual<K>& b) {
  return b * a;
}
template <int K>
inline Dual<K> operator/(const Dual<K>& a, double b) {
  return a * (1.0 / b);
}
template <int K>
inline Dual<K> operator/(double a, const Dual<K>& b) {
  return Dual<K>(a) / b;
}
template <int K>
inline Dual<K> sqrt(const Dual<K>& a) {
  Dual<K> r(std::sqrt(a.v));
  const double scale = r.v > 0.0 ? 0.5 / r.v : 0.0;
  for (int i = 0; i < K; ++i) r.d[i] = a.d[i] * scale;
  return r;
}

inline double value_of(double a) { return a; }
template <int K>
inline double value_of(const Dual<K>& a) {
  return a.v;
}

// 3-vectors over a scalar type.
template <class T>
struct Vec3T {
  T x[3];
  T& operator[](int i) { return x[i]; }
  const T& operator[](int i) const { return x[i]; }
};

template <class T>
inline Vec3T<T> operator+(const Vec3T<T>& a, const Vec3T<T>& b) {
  return {{a[0] + b[0], a[1] + b[1], a[2] + b[2]}};
}
template <class T>
inline Vec3T<T> operator-(const Vec3T<T>& a, const Vec3T<T>& b) {
  return {{a[0] - b[0], a[1] - b[1], a[2] - b[2]}};
}
template <class T, class S>
inline Vec3T<T> operator*(const S& s, const Vec3T<T>& a) {
  return {{a[0] * s, a[1] * s, a[2] * s}};
}
template <class T>
inline T dot(const Vec3T<T>& a, const Vec3T<T>& b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
template <class T>
inline Vec3T<T> cross(const Vec3T<T>& a, const Vec3T<T>& b) {
  return {{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}};
}
template <class T>
inline T norm(const Vec3T<T>& a) {
  using std::sqrt;
  return sqrt(dot(a, a));
}

}  // namespace dcol
