// Signed distance of two shapes by GJK and EPA on the Minkowski difference M = A − B of their cores,
// without the cone program. A polytope is its vertex set; a sphere, a capsule and a padded polygon
// are a core point set (the centre, the axis ends, the corners) inflated by their radius R, which
// adds R to the support function in every direction and so subtracts the radii from the cores'
// signed distance, along the same normal.
//
// A cylinder, a cone and an ellipsoid are their own cores (radius 0), given by their support functions:
// on them GJK and EPA approach the surface and stop at a relative tolerance (kRoundGjkTolerance and
// kRoundEpaTolerance in gjk.cpp) instead of ending exactly.
//
// Apart: GJK (Gilbert, Johnson, Keerthi 1988) walks a simplex of M's support points towards the
// point v of M closest to the origin; on point sets it ends after finitely many steps, with v exact
// to rounding: the distance is ‖v‖, the normal (from a to b) −v/‖v‖ (a face of M's normal when the
// simplex is a triangle), and the witness points the simplex's barycentric combinations of the
// points of a and of b.
//
// Overlapping cores (the origin in M): EPA (van den Bergen 2001) grows a polytope inside M from
// GJK's last simplex until its face closest to the origin is a face of M: its distance d to the
// origin is the penetration depth (the minimum translation distance, the least b must move to touch
// a), its outward normal the direction b must move; the distance is −d. EPA needs M to be solid:
// two flat cores (two capsules, a sphere and a polygon…) that overlap have no answer here
// (converged false). Touching shapes come out of either branch with distance 0.
#pragma once

#include "geometry/distance.hpp"
#include "geometry/proximity_types.hpp"
#include "geometry/vertex_adjacency.hpp"

namespace dcol::geometry {

struct GjkDistance {
  double distance = 0.0;                          // > 0 apart, ≤ 0 overlapping (−penetration depth)
  double p_a[3] = {0, 0, 0}, p_b[3] = {0, 0, 0};  // witness points; apart, p_b − p_a = distance · normal
  double normal[3] = {0, 0, 0};                   // unit, from a to b
  bool converged = false;  // false: an iteration limit, or overlapping cores whose difference is flat
  // The support points of the last simplex (apart) or of EPA's nearest face (overlapping): their core
  // points' indices in a and in b, from which the derivatives follow (gjk_distance_jacobian).
  int simplex_size = 0;
  int vertex_a[4] = {0, 0, 0, 0}, vertex_b[4] = {0, 0, 0, 0};
  // A round core's support points of that simplex (vertex −1) in its shape frame: a cylinder's rim points.
  double round_a[4][3] = {}, round_b[4][3] = {};
  double extent = 0.0;  // of the cores' difference M along the world axes, the rounding scale
};

// A shape's core: `count` points of `dim` (2 or 3) coordinates in its shape frame (the third one 0
// for 2), and the radius inflating them; or a round shape (cylinder, cone, ellipsoid) whole, by its
// support function.
struct Core {
  const double* shape_points = nullptr;  // the shape's vertices, or null for `own`
  double own[6] = {0, 0, 0, 0, 0, 0};    // a sphere's centre or a capsule's ends
  int count = 0, dim = 3;
  const Shape* round = nullptr;  // a round shape, whose support points stand in for the point set
  Pose frame{};
  double radius = 0.0;
  // A polytope's vertex adjacency, if given: its support points by hill climbing instead of a scan (the same
  // support points; among exactly tied vertices the scan's first), and its coordinates' bound without a scan.
  const VertexAdjacency* adjacency = nullptr;

  const double* points() const { return shape_points ? shape_points : own; }
};

// The core of a shape at its body pose.
bool shape_core(const Shape& sh, const Pose& body, Core& out);

// The widths of a core (its radius left out) along the world axes, at its frame: the sum of two cores' is the
// extent of their difference M that gjk_distance takes as its rounding scale, which a caller pairing one core
// with many computes once.
void core_widths(const Core& c, double* widths);

// Signed distance of the two inflated cores; with `previous` (which may be `out`), the result of the same
// cores at other poses, GJK starts from its final simplex; a positive `extent` is M's, known to the caller.
void gjk_distance(const Core& a, const Core& b, GjkDistance& out, const GjkDistance* previous = nullptr,
                  double extent = 0.0);

// DCOL's α (DCOL §III-A, eq. 9): the least uniform scaling of both shapes about their frames' origins r_a,
// r_b at which they touch. With A₀ = A − r_a and B₀ = B − r_b it is the gauge of D = A₀ ⊕ (−B₀) at
// d = r_b − r_a, α = min{t : d ∈ t D}: the ray {μ d/|d| : μ > 0} leaves D at μ = |d|/α. It is found without a cone
// program by one GJK ray cast (van den Bergen 2004) along that ray from outside D inwards, on the support points of D
// (those of A₀ and −B₀ added): exact for point sets, to kRoundCastTolerance of D's extent for round cores (gjk.cpp).
// Two polytopes' exit face is first sought by portal discovery and refinement (XenoCollide's MPR), a support point
// a step, the cast taking over where that finds none.
struct GjkScaling {
  double alpha = 0.0;
  double x[3] = {0, 0, 0};       // the scaled shapes' touching point (DCOL's x)
  double normal[3] = {0, 0, 0};  // unit, from a to b: the normal of D at the ray's exit
  double support_gap = 0.0;      // h_D(normal), of the unscaled shapes
  int steps = 0;                 // the ray cast's iterations (0 where the portal refinement found the exit)
  bool converged = false;        // false: coincident origins (α = 0, no normal), a ray missing D, or no convergence
  // The simplex of D's support points the cast ended on, as GjkDistance's (round cores' points relative to
  // their frames' origins, in their shape frames).
  int simplex_size = 0;
  int vertex_a[4] = {0, 0, 0, 0}, vertex_b[4] = {0, 0, 0, 0};
  double round_a[4][3] = {}, round_b[4][3] = {};
};

// α of two cores.
void gjk_scaling(const Core& a, const Core& b, GjkScaling& out);

// ∂α along rigid motions [δp_a, δθ_a, δp_b, δθ_b] of the bodies with origins origin_a, origin_b (12
// values). α = max_n n·d / h_D(n) (the gauge as its polar's support function), so by the envelope
// theorem only d and h_D move at the optimal n: ∂α = (n·δd − α δh_D)/h_D, which gathers into the
// wrench of the force n/h_D at the touching point x: [−n, −(x − o_a) × n, n, (x − o_b) × n] / h_D.
void gjk_scaling_gradient(const GjkScaling& s, const double* origin_a, const double* origin_b, double* gradient);

// The derivatives of gjk_distance's distance, witness points and normal (all of jac but its alpha row)
// along the bodies' rigid motions: the result is the origin's projection onto the affine hull of the
// final simplex's support points w_k = a_k − b_k, whose core points move with their bodies; it is
// differentiated in forward mode (core/dual.hpp) through that projection, the normal (the simplex
// triangle's, or the witnesses' direction) and the radii's offsets along it. Where the witness features
// are unique (a vertex against a face, two crossing edges, round cores) this is the exact derivative.
void gjk_distance_jacobian(const Core& a, const Core& b, const GjkDistance& d, const double* origin_a,
                           const double* origin_b, DistanceJacobian& jac);

// The signed distance (GJK apart, EPA overlapping: the minimum translation distance) and DCOL's α by
// gjk_scaling of two shapes with cores at body poses pa, pb, with jac all their derivatives along the
// bodies' rigid motions; false (out untouched) where the shapes have no cores or GJK/EPA cannot answer
// (overlapping flat cores), for the cone program to decide. Of round cores only cylinders are taken: the
// features GJK, EPA and the cast end on (rim points, side lines, cap faces) fixed, the normal is refined
// to rounding by Newton's method and the derivatives follow by the implicit function theorem (gjk.cpp's
// refine_round_distance and refine_round_scaling); false where the refined normal's support is not the
// features'. With adjacency_a, adjacency_b (polytopes'), support points by hill climbing; a positive `extent` is
// the cores' difference's (the largest sum of their core_widths over the axes), else it is measured.
bool gjk_signed_distance(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, DistanceResult& out,
                         DistanceJacobian* jac = nullptr, const VertexAdjacency* adjacency_a = nullptr,
                         const VertexAdjacency* adjacency_b = nullptr, double extent = 0.0);

// DCOL's α alone (out.alpha, status and iterations), the same as gjk_signed_distance's, and with
// alpha_gradient its 12 derivatives; false for cones and ellipsoids (the ray's exit normal, so the
// gradient, is only as good as the square root of the cast's tolerance; a cylinder's is refined) and where
// the ray cast or the refinement fails.
bool gjk_alpha(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, DistanceResult& out,
               double* alpha_gradient = nullptr, const VertexAdjacency* adjacency_a = nullptr,
               const VertexAdjacency* adjacency_b = nullptr);

}  // namespace dcol::geometry
