// The lane kernel for every processor: two lanes fill the 128-bit vectors every x86-64 (SSE2) and
// ARM64 (NEON) processor has.
#include "geometry/proximity.hpp"
#include "kernels/kernels.hpp"

namespace dcol::kernels {

void proximity_lanes_baseline(const Shape& a, const Pose* pa, const Shape& b, const Pose* pb,
                              const SolverSettings& settings, ProximityResult* out, const DerivativeOutput& deriv) {
  geometry::proximity_lanes<2>(a, pa, b, pb, settings, out, deriv);
}

}  // namespace dcol::kernels
