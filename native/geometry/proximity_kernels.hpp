// Kernels of the proximity solves, compiled for the vector instruction sets a processor may have
// and chosen at run time: one pose pair, and several pose pairs of one shape pair solved together,
// one per SIMD lane. (AVX2's four lanes rather than AVX-512's eight: the lanes of a vector wait for
// the slowest of their problems, and more lanes wait more.) `flatten` inlines the whole solver, with
// the derivatives, into each solver size class of a kernel, so all of it is compiled for that target;
// any out-of-line copy the compiler keeps is baseline code, safe on every processor.
// The one-pair and the lane kernels may fuse different multiply-adds into FMAs, so a pair solved in
// a lane agrees with the same pair solved alone up to rounding, not bit for bit.
#pragma once

#include "geometry/proximity_types.hpp"

namespace dcol::geometry {

using ProximityKernelFunction = void (*)(const Shape&, const Pose*, const Shape&, const Pose*, const SolverSettings&,
                                         ProximityResult*, const DerivativeOutput&);

struct ProximityKernels {
  const char* name;  // the instruction sets they are compiled for
  int lanes;
  ProximityKernelFunction run_lanes;  // `lanes` pose pairs of one shape pair
  ProximityKernelFunction run_one;    // one pose pair
};

constexpr int kMaxKernelLanes = 4;

// The best kernels this processor runs, chosen once (defined in kernels/dispatch.cpp). Every proximity
// solve of the library goes through them.
const ProximityKernels& proximity_kernels();

}  // namespace dcol::geometry
