// Poses, shape frames, proximity results and the derivatives a proximity call is asked for, shared by
// the proximity, distance and contact headers.
#pragma once

#include "conic/cone_solver.hpp"
#include "conic/exact_kkt.hpp"
#include "conic/row_packet_solver.hpp"
#include "core/rotations.hpp"
#include "geometry/primitives.hpp"

namespace dcol::geometry {

// The cone program vocabulary the geometry layer poses its problems in.
using conic::ConeProgram;
using conic::ConeSolver;
using conic::ExactKKT;
using conic::RowPacketSolver;
using conic::SolveInfo;
using conic::SolverSettings;
using conic::SolveStatus;

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
  double p_a[3] = {0, 0, 0};     // DCOL eq. 29 on shape a
  double p_b[3] = {0, 0, 0};     // DCOL eq. 29 on shape b
  double distance = 0.0;         // DCOL eq. 30
  double normal[3] = {0, 0, 0};  // separating-plane normal at x, from a to b
  SolveStatus status = SolveStatus::numerical_error;
  int iterations = 0;
};

// Rows of DCOL's problem (DCOL eq. 9) for this pair; the solver size class is chosen from it.
inline int proximity_rows(const Shape& a, const Shape& b) {
  return a.num_linear_rows() + b.num_linear_rows() + a.cone_dim() + b.cone_dim();
}

// Rows of the smallest size class, which the pairs of round primitives and small polytopes fit.
constexpr int kSmallRows = 32;

// Rows of the largest problem: two polytopes of kMaxFaces faces and the cones' rows of any pair.
constexpr int kMaxRows = 2 * kMaxFaces + 8;

// Problems of more rows go one pose pair at a time, to the one-pair kernel, not to the lane kernels:
// their work arrays are large and their rows alone keep the processor busy.
constexpr int kMaxLaneRows = 128;

// Whether pose pairs of shapes a and b may be solved several at a time, one per lane.
inline bool fits_lanes(const Shape& a, const Shape& b) { return proximity_rows(a, b) <= kMaxLaneRows; }

// Which derivatives a proximity call computes.
enum class DerivativeRequest : int {
  none = 0,
  gradient = 1,  // ∂α only: the gradient of the Lagrangian, no linear solve
  jacobian = 2,  // x and α
  contact = 3,   // and the contact points and distance (from x and α), and the normal, which takes
                 // three more adjoint solves
};

// Derivatives of one proximity result with respect to rigid motions δ = [δp; δθ] (r ← r + δp,
// Q ← exp(δθ^) Q, world frame) of body a, then body b: 12 columns. proximity_lanes fills them for the
// shapes' own frames first and then moves them to the bodies (apply_offsets).
struct ProximityJacobian {
  double alpha[12];
  double x[3][12];
  double p_a[3][12], p_b[3][12];
  double distance[12];
  double normal[3][12];
};

// What a proximity call should differentiate, and where the results go (one per pose pair).
// shape_parameters: the (4, shape_parameter_count) derivatives of (x, α) with respect to each shape's
// parameters (world units), or null; for one pose pair only, so callers set it with the one-pair
// kernel, and it stays with the first pair.
struct DerivativeOutput {
  DerivativeRequest request = DerivativeRequest::none;
  ProximityJacobian* jacobian = nullptr;
  double* shape_parameters[2] = {nullptr, nullptr};
  // The exact problem's derivatives (ExactKKT) instead of the barrier-smoothed one's; one pose pair
  // at a time (each problem has its own roles), so the lane kernels leave it to the one-pair kernel.
  bool exact = false;
  DerivativeOutput at(int k) const {
    return {request,
            jacobian ? jacobian + k : nullptr,
            {k == 0 ? shape_parameters[0] : nullptr, k == 0 ? shape_parameters[1] : nullptr},
            exact};
  }
};

}  // namespace dcol::geometry
