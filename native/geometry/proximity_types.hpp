// Poses, shape frames and proximity results, shared by the proximity, distance and contact headers.
#pragma once

#include "conic/cone_solver.hpp"
#include "geometry/primitives.hpp"
#include "core/rotations.hpp"

namespace dcol {

struct Pose {
  double r[3];
  Mat3 Q;
};

// Pose of the shape's own frame: the body pose composed with the shape's fixed offset.
inline Pose shape_frame(const Shape& sh, const Pose& body) {
  if (!sh.has_offset) return body;
  Pose f;
  for (int i = 0; i < 3; ++i)
    f.r[i] =
        body.r[i] + body.Q.m[i][0] * sh.offset_r[0] + body.Q.m[i][1] * sh.offset_r[1] + body.Q.m[i][2] * sh.offset_r[2];
  f.Q = multiply(body.Q, sh.offset_Q);
  return f;
}

struct ProximityResult {
  double alpha = 0.0;
  double x[3] = {0, 0, 0};       // intersection point of the scaled shapes (world)
  double p_a[3] = {0, 0, 0};     // (29) on shape a
  double p_b[3] = {0, 0, 0};     // (29) on shape b
  double distance = 0.0;         // (30)
  double normal[3] = {0, 0, 0};  // separating-plane normal at x, from a to b
  SolveStatus status = SolveStatus::numerical_error;
  int iterations = 0;
};

}  // namespace dcol
