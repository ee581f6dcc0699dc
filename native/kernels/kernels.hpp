// The proximity kernels (geometry/proximity_kernels.hpp), one translation unit per instruction set
// and kernel, so that the build compiles them in parallel and a change to one recompiles only it.
#pragma once

#include "geometry/proximity_kernels.hpp"

namespace dcol::kernels {

using geometry::DerivativeOutput;
using geometry::Pose;
using geometry::ProximityResult;
using geometry::Shape;
using geometry::SolverSettings;

void proximity_lanes_baseline(const Shape& a, const Pose* pa, const Shape& b, const Pose* pb,
                              const SolverSettings& settings, ProximityResult* out, const DerivativeOutput& deriv);
void proximity_one_baseline(const Shape& a, const Pose* pa, const Shape& b, const Pose* pb,
                            const SolverSettings& settings, ProximityResult* out, const DerivativeOutput& deriv);
#if defined(__x86_64__) || defined(__i386__)
void proximity_lanes_avx2(const Shape& a, const Pose* pa, const Shape& b, const Pose* pb,
                          const SolverSettings& settings, ProximityResult* out, const DerivativeOutput& deriv);
void proximity_one_avx2(const Shape& a, const Pose* pa, const Shape& b, const Pose* pb, const SolverSettings& settings,
                        ProximityResult* out, const DerivativeOutput& deriv);
#endif

}  // namespace dcol::kernels
