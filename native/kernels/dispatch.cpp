// The proximity kernels (geometry/proximity_kernels.hpp) and the choice among them from the
// processor's instruction sets, made once per process.
#include "geometry/proximity_kernels.hpp"
#include "kernels/policies.hpp"

namespace dcol::kernels {
namespace {

void proximity_lanes_baseline(const Shape& a, const Pose* pa, const Shape& b, const Pose* pb,
                              const SolverSettings& settings, ProximityResult* out, const DerivativeOutput& deriv) {
  geometry::proximity_lanes<2, PlainSized>(a, pa, b, pb, settings, out, deriv);
}

void proximity_one_baseline(const Shape& a, const Pose* pa, const Shape& b, const Pose* pb,
                            const SolverSettings& settings, ProximityResult* out, const DerivativeOutput& deriv) {
  geometry::proximity_lanes<1, PlainSized>(a, pa, b, pb, settings, out, deriv);
}

#if defined(__x86_64__) || defined(__i386__)
void proximity_lanes_avx2(const Shape& a, const Pose* pa, const Shape& b, const Pose* pb,
                          const SolverSettings& settings, ProximityResult* out, const DerivativeOutput& deriv) {
  geometry::proximity_lanes<4, Avx2Sized>(a, pa, b, pb, settings, out, deriv);
}

void proximity_one_avx2(const Shape& a, const Pose* pa, const Shape& b, const Pose* pb, const SolverSettings& settings,
                        ProximityResult* out, const DerivativeOutput& deriv) {
  geometry::proximity_lanes<1, Avx2OneSized>(a, pa, b, pb, settings, out, deriv);
}
#endif

geometry::ProximityKernels best_proximity_kernels() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {"avx2+fma", 4, proximity_lanes_avx2, proximity_one_avx2};
#endif
  return {"baseline", 2, proximity_lanes_baseline, proximity_one_baseline};
}

}  // namespace
}  // namespace dcol::kernels

namespace dcol::geometry {

const ProximityKernels& proximity_kernels() {
  static const ProximityKernels chosen = kernels::best_proximity_kernels();
  return chosen;
}

}  // namespace dcol::geometry
