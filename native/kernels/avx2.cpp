// Proximity kernels for x86-64 processors with AVX2 and FMA (batch_kernels.hpp). Each solver size
// class is flattened on its own: one function holding all of them took the compiler ten minutes.
#include "kernels/proximity_kernels.hpp"

#if defined(__x86_64__) || defined(__i386__)
namespace dcol {
namespace {

struct Avx2Sized {
  template <int N, int NA, int NTail, int MMax, int W>
  __attribute__((target("avx2,fma"), flatten)) static void run(const Shape& a, const Pose* fa, const Shape& b,
                                                               const Pose* fb, const SolverSettings& settings,
                                                               ProximityResult* out, const DerivativeOutput& deriv) {
    proximity_sized<N, NA, NTail, MMax, W>(a, fa, b, fb, settings, out, deriv);
  }
};

// One pose pair: the solves with derivatives run on plain doubles, and the auto-vectorizer, packing
// the short loops over a row's few columns into vectors, made them slower (a single call 4.8 → 4.3 µs
// on average without it, when values were solved so too; the lanes need it). The value solves
// vectorize by hand (row_packet_solver.hpp).
struct Avx2OneSized {
  template <int N, int NA, int NTail, int MMax, int W>
  __attribute__((target("avx2,fma"), optimize("no-tree-vectorize", "unroll-loops"), flatten)) static void run(
      const Shape& a, const Pose* fa, const Shape& b, const Pose* fb, const SolverSettings& settings,
      ProximityResult* out, const DerivativeOutput& deriv) {
    proximity_sized<N, NA, NTail, MMax, W>(a, fa, b, fb, settings, out, deriv);
  }
};

}  // namespace

void proximity_lanes_avx2(const Shape& a, const Pose* pa, const Shape& b, const Pose* pb,
                          const SolverSettings& settings, ProximityResult* out, const DerivativeOutput& deriv) {
  proximity_lanes<4, Avx2Sized>(a, pa, b, pb, settings, out, deriv);
}

void proximity_one_avx2(const Shape& a, const Pose* pa, const Shape& b, const Pose* pb, const SolverSettings& settings,
                        ProximityResult* out, const DerivativeOutput& deriv) {
  proximity_lanes<1, Avx2OneSized>(a, pa, b, pb, settings, out, deriv);
}

}  // namespace dcol
#endif
