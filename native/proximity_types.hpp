// Poses and proximity results, shared by proximity.hpp and proximity_derivatives.hpp.
#pragma once

#include "cone_solver.hpp"
#include "primitives.hpp"

namespace dcol {

struct Pose {
  double r[3];
  Mat3 Q;
};

struct ProximityResult {
  double alpha = 0.0;
  double x[3] = {0, 0, 0};    // intersection point of the scaled shapes (world)
  double p_a[3] = {0, 0, 0};  // (29) on shape a
  double p_b[3] = {0, 0, 0};  // (29) on shape b
  double distance = 0.0;      // (30)
  double normal[3] = {0, 0, 0};  // separating-plane normal at x, from a to b
  SolveStatus status = SolveStatus::numerical_error;
  int iterations = 0;
};

}  // namespace dcol
