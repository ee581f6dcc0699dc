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

#include "geometry/proximity_types.hpp"

namespace dcol::geometry {

struct GjkDistance {
  double distance = 0.0;                          // > 0 apart, ≤ 0 overlapping (−penetration depth)
  double p_a[3] = {0, 0, 0}, p_b[3] = {0, 0, 0};  // witness points; apart, p_b − p_a = distance · normal
  double normal[3] = {0, 0, 0};                   // unit, from a to b
  bool converged = false;  // false: an iteration limit, or overlapping cores whose difference is flat
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

  const double* points() const { return shape_points ? shape_points : own; }
};

// The core of a shape at its body pose.
bool shape_core(const Shape& sh, const Pose& body, Core& out);

// Signed distance of the two inflated cores.
void gjk_distance(const Core& a, const Core& b, GjkDistance& out);

}  // namespace dcol::geometry
