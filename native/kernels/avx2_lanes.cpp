// The lane kernel for x86-64 processors with AVX2 and FMA: four pose pairs to a 256-bit vector. Each
// solver size class is flattened on its own, so that the whole solver is compiled for this target
// (geometry/proximity_kernels.hpp); one function holding all the classes is beyond what the compiler
// optimizes in reasonable time.
#include "geometry/proximity.hpp"
#include "kernels/kernels.hpp"

#if defined(__x86_64__) || defined(__i386__)
namespace dcol::kernels {
namespace {

struct Avx2Sized {
  template <int N, int NA, int NTail, int MMax, int W>
  __attribute__((target("avx2,fma"), flatten)) static void run(const Shape& a, const Pose* fa, const Shape& b,
                                                               const Pose* fb, const SolverSettings& settings,
                                                               ProximityResult* out, const DerivativeOutput& deriv) {
    geometry::proximity_sized<N, NA, NTail, MMax, W>(a, fa, b, fb, settings, out, deriv);
  }
};

}  // namespace

void proximity_lanes_avx2(const Shape& a, const Pose* pa, const Shape& b, const Pose* pb,
                          const SolverSettings& settings, ProximityResult* out, const DerivativeOutput& deriv) {
  geometry::proximity_lanes<4, Avx2Sized>(a, pa, b, pb, settings, out, deriv);
}

}  // namespace dcol::kernels
#endif
