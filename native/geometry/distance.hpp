// Signed distance between two primitives, with witness points, the normal and their derivatives.
//
// Apart (DCOL's α > 1): the exact Euclidean distance as a second-order cone program on the same
// solver and the same primitive constraints as DCOL with α fixed at 1 (primitives.hpp),
//     minimize t   subject to   ‖x_a − x_b‖ ≤ t,  x_a ∈ a,  x_b ∈ b,
// whose solution gives the witness points x_a, x_b; the normal (from a to b) is the vector part of
// the distance cone's dual variable, (x_b − x_a)/t, well defined even as t → 0. Derivatives by the
// implicit function theorem at the solution, as for DCOL (proximity_derivatives.hpp).
//
// Overlapping (α ≤ 1): the penetration depth along DCOL's normal n, the overlap of the two shapes'
// extents along n: depth = h_a(n) + h_b(−n) with h the support functions; the distance is −depth.
// This is how far b must move along n to touch a; it is the minimum translation distance when n is
// the best direction to separate them (spheres, resting faces) and an upper bound on it otherwise.
// The witness points are DCOL's x projected along n onto the two support planes. Both branches go to
// zero as the shapes come to touch, so the signed distance is continuous there.
//
// Touching (1 < α ≤ 1 + kTouching): the support planes' gap along n, the same formula. The distance
// cone sits at its apex there and the interior-point solve stalls (a cylinder resting on its rim runs
// into the iteration limit); the planes' gap is a lower bound on the distance, off
// by O(d θ²) for an angle θ between n and the closest points' direction — negligible at these gaps —
// and a resting contact's derivatives then come from one formula on both sides of touching.
#pragma once

#include "geometry/proximity_types.hpp"

namespace dcol::geometry {

struct DistanceResult {
  double distance = 0.0;  // > 0 apart (Euclidean); ≤ 0 overlapping: −(penetration depth along normal)
  double p_a[3] = {0, 0, 0}, p_b[3] = {0, 0, 0};  // witness points of a and b
  double normal[3] = {0, 0, 0};                   // unit, from a to b
  double alpha = 0.0;                             // DCOL's scaling, which chose the branch
  SolveStatus status = SolveStatus::numerical_error;
  int iterations = 0;  // of both solves
};

// Derivatives with respect to rigid motions δ = [δp; δθ] of body a, then body b (12 columns); α's
// come with the DCOL solve that chose the branch.
struct DistanceJacobian {
  double alpha[12];
  double distance[12];
  double p_a[3][12], p_b[3][12];
  double normal[3][12];
};

// Relative scaling α − 1 below which separated shapes count as touching (module comment).
constexpr double kTouching = 1e-5;

// Signed distance of shapes a and b at body poses pa, pb; with jac, its derivatives.
void signed_distance(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, const SolverSettings& settings,
                     DistanceResult& out, DistanceJacobian* jac = nullptr);

}  // namespace dcol::geometry
