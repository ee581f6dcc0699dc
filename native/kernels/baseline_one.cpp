// The one-pair kernel for every processor.
#include "geometry/proximity.hpp"
#include "kernels/kernels.hpp"

namespace dcol::kernels {

void proximity_one_baseline(const Shape& a, const Pose* pa, const Shape& b, const Pose* pb,
                            const SolverSettings& settings, ProximityResult* out, const DerivativeOutput& deriv) {
  geometry::proximity_lanes<1>(a, pa, b, pb, settings, out, deriv);
}

}  // namespace dcol::kernels
