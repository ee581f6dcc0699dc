// The one-pair kernel for x86-64 processors with AVX2 and FMA. Its solves run on plain doubles: the
// auto-vectorizer, packing the short loops over a row's few columns into vectors, makes them slower
// (the value solves vectorize by hand, conic/row_packet_solver.hpp); the lane kernel needs it.
#include "geometry/proximity.hpp"
#include "kernels/kernels.hpp"

#if defined(__x86_64__) || defined(__i386__)
namespace dcol::kernels {
namespace {

struct Avx2OneSized {
  template <int N, int NA, int NTail, int MMax, int W>
  __attribute__((target("avx2,fma"), optimize("no-tree-vectorize", "unroll-loops"), flatten)) static void run(
      const Shape& a, const Pose* fa, const Shape& b, const Pose* fb, const SolverSettings& settings,
      ProximityResult* out, const DerivativeOutput& deriv) {
    geometry::proximity_sized<N, NA, NTail, MMax, W>(a, fa, b, fb, settings, out, deriv);
  }
};

}  // namespace

void proximity_one_avx2(const Shape& a, const Pose* pa, const Shape& b, const Pose* pb, const SolverSettings& settings,
                        ProximityResult* out, const DerivativeOutput& deriv) {
  geometry::proximity_lanes<1, Avx2OneSized>(a, pa, b, pb, settings, out, deriv);
}

}  // namespace dcol::kernels
#endif
