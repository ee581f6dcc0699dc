// Chooses the proximity kernels (geometry/proximity_kernels.hpp) from the processor's instruction
// sets, once per process.
#include "kernels/kernels.hpp"

namespace dcol::geometry {
namespace {

ProximityKernels best_proximity_kernels() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {4, kernels::proximity_lanes_avx2, kernels::proximity_one_avx2};
#endif
  return {2, kernels::proximity_lanes_baseline, kernels::proximity_one_baseline};
}

}  // namespace

const ProximityKernels& proximity_kernels() {
  static const ProximityKernels chosen = best_proximity_kernels();
  return chosen;
}

}  // namespace dcol::geometry
