// Signed distance of two convex vertex sets (polytopes, convex-mesh hulls, boxes) by GJK and EPA on
// their Minkowski difference M = A − B, without the cone program.
//
// Apart: GJK (Gilbert, Johnson, Keerthi 1988) walks a simplex of M's support points towards the
// point v of M closest to the origin; on vertex sets it ends after finitely many steps, with v
// exact to rounding: the distance is ‖v‖, the normal (from a to b) −v/‖v‖, and the witness
// points the simplex's barycentric combinations of the vertices of a and of b.
//
// Overlapping (the origin in M): EPA (van den Bergen 2001) grows a polytope inside M from GJK's
// last simplex until its face closest to the origin is a face of M: its distance d to the origin is
// the penetration depth (the minimum translation distance, the least b must move to touch a),
// its outward normal the direction b must move; the distance is −d. Touching shapes come out of
// either branch with distance 0.
#pragma once

#include "geometry/proximity_types.hpp"

namespace dcol::geometry {

struct PolytopeDistance {
  double distance = 0.0;                          // > 0 apart, ≤ 0 overlapping (−penetration depth)
  double p_a[3] = {0, 0, 0}, p_b[3] = {0, 0, 0};  // witness points; apart, p_b − p_a = distance · normal
  double normal[3] = {0, 0, 0};                   // unit, from a to b
  bool converged = false;                         // false: an iteration limit or a degenerate polytope
};

// Signed distance of the convex hulls of na points va (na × 3, row-major, in the frame fa) and nb
// points vb (in the frame fb).
void polytope_distance(const double* va, int na, const Pose& fa, const double* vb, int nb, const Pose& fb,
                       PolytopeDistance& out);

// Signed distance of two polytopes (ShapeKind::polytope) at their body poses.
inline void polytope_distance(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, PolytopeDistance& out) {
  polytope_distance(a.vertices.data(), a.num_vertices, shape_frame(a, pa), b.vertices.data(), b.num_vertices,
                    shape_frame(b, pb), out);
}

}  // namespace dcol::geometry
