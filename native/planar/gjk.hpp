// GJK (Gilbert–Johnson–Keerthi) in the plane: the distance and closest points of the convex hulls of
// two point sets (a polygon's corners, a circle's centre), for the planar engine's narrowphase
// (LCP-physics §A.6: GJK for disjoint shapes, the separating axes of contacts.hpp for
// interpenetrating ones).
//
// The search runs over the Minkowski difference A − B through its support points w = a_i − b_j, each
// kept with its indices (i, j), so that the closest points and the features they lie on (a corner,
// or the edge between two corners) are read off the final simplex (van den Bergen 2004, Catto 2010).
#pragma once

#include <algorithm>
#include <cmath>

namespace dcol::planar {

// The closest points of two convex hulls A and B. distance ≥ 0, zero when the hulls touch or
// overlap (`overlapping`); point_a, point_b the closest points on A and on B (for overlapping hulls:
// a point of the final simplex, not a witness of any depth); corners_a, corners_b (count_a,
// count_b of them, 1 or 2, ascending) the indices of the points of each set that the closest point
// combines: one for a corner, two (consecutive corners of a polygon) for a point inside an edge.
struct PlanarProximity {
  double distance = 0.0;
  double point_a[2] = {}, point_b[2] = {};
  int corners_a[3] = {}, corners_b[3] = {};
  int count_a = 0, count_b = 0;
  bool overlapping = false;
};

namespace detail {

// Below this fraction of the shapes' size the origin is taken to be on the difference's boundary:
// the hulls touch, and the narrowphase treats them as overlapping (its separating axes give gap 0).
constexpr double kTouching = 1e-12;

inline double cross(const double* a, const double* b) { return a[0] * b[1] - a[1] * b[0]; }

// Barycentric weights of the point of the segment closest to the origin into weights, which of
// the two ends (0, 1) it combines into ends; returns their number.
inline int closest_on_segment(const double* start, const double* end, double* weights, int* ends) {
  const double edge[2] = {end[0] - start[0], end[1] - start[1]};
  const double along = -(start[0] * edge[0] + start[1] * edge[1]) / (edge[0] * edge[0] + edge[1] * edge[1]);
  if (along <= 0.0) return weights[0] = 1.0, ends[0] = 0, 1;
  if (along >= 1.0) return weights[0] = 1.0, ends[0] = 1, 1;
  weights[0] = 1.0 - along, weights[1] = along, ends[0] = 0, ends[1] = 1;
  return 2;
}

// Weights of the point of the simplex (count ≤ 3 points) closest to the origin and the rows it
// combines; returns their number. A triangle that holds the origin keeps all three rows.
inline int closest_on_simplex(const double (*simplex)[2], int count, double touching, double* weights, int* rows) {
  if (count == 1) return weights[0] = 1.0, rows[0] = 0, 1;
  if (count == 2) return closest_on_segment(simplex[0], simplex[1], weights, rows);
  bool all_left = true, all_right = true;
  for (int i = 0; i < 3; ++i) {
    const double* from = simplex[i];
    const double* to = simplex[(i + 1) % 3];
    const double edge[2] = {to[0] - from[0], to[1] - from[1]}, back[2] = {-from[0], -from[1]};
    const double side = cross(edge, back);  // > 0 where the origin is left of the edge
    all_left = all_left && side >= 0.0, all_right = all_right && side <= 0.0;
  }
  const double e1[2] = {simplex[1][0] - simplex[0][0], simplex[1][1] - simplex[0][1]};
  const double e2[2] = {simplex[2][0] - simplex[0][0], simplex[2][1] - simplex[0][1]};
  if (std::abs(cross(e1, e2)) > touching && (all_left || all_right)) {
    for (int i = 0; i < 3; ++i) weights[i] = 1.0 / 3.0, rows[i] = i;
    return 3;
  }
  double best = INFINITY;
  int kept = 0;
  for (int first = 0; first < 3; ++first) {
    const int second = (first + 1) % 3, pair[2] = {first, second};
    double w[2];
    int ends[2];
    const int used = closest_on_segment(simplex[first], simplex[second], w, ends);
    double point[2] = {0.0, 0.0};
    for (int k = 0; k < used; ++k)
      point[0] += w[k] * simplex[pair[ends[k]]][0], point[1] += w[k] * simplex[pair[ends[k]]][1];
    const double squared = point[0] * point[0] + point[1] * point[1];
    if (squared < best) {
      best = squared, kept = used;
      for (int k = 0; k < used; ++k) weights[k] = w[k], rows[k] = pair[ends[k]];
    }
  }
  return kept;
}

}  // namespace detail

// The closest points of the hulls of points_a (count_a × 2) and points_b (count_b × 2), row-major, in
// one frame (for a circle, pass its centre and subtract the radius from the distance).
inline PlanarProximity planar_closest_points(const double* points_a, int count_a, const double* points_b, int count_b) {
  using namespace detail;
  double scale = 1.0;
  for (int i = 0; i < 2 * count_a; ++i) scale = std::max(scale, std::abs(points_a[i]));
  for (int i = 0; i < 2 * count_b; ++i) scale = std::max(scale, std::abs(points_b[i]));
  const double touching = (kTouching * scale) * (kTouching * scale);
  int indices[3][2] = {{0, 0}}, count = 1, kept_rows[3];
  double weights[3] = {1.0}, simplex[3][2];
  bool overlapping = false;
  // A pass adds a support point not in the simplex and the distance falls at each, so the search
  // ends; count_a·count_b passes, the number of the difference's candidate corners, guard it
  // generously (and a last one only reduces the simplex).
  const int last_pass = count_a * count_b;
  for (int pass = 0; pass <= last_pass; ++pass) {
    for (int r = 0; r < count; ++r)
      for (int c = 0; c < 2; ++c) simplex[r][c] = points_a[2 * indices[r][0] + c] - points_b[2 * indices[r][1] + c];
    const int kept = closest_on_simplex(simplex, count, touching, weights, kept_rows);
    int reduced[3][2];
    double closest[2] = {0.0, 0.0};
    for (int k = 0; k < kept; ++k) {
      reduced[k][0] = indices[kept_rows[k]][0], reduced[k][1] = indices[kept_rows[k]][1];
      closest[0] += weights[k] * simplex[kept_rows[k]][0], closest[1] += weights[k] * simplex[kept_rows[k]][1];
    }
    count = kept;
    std::copy(&reduced[0][0], &reduced[0][0] + 2 * kept, &indices[0][0]);
    const double squared = closest[0] * closest[0] + closest[1] * closest[1];
    overlapping = count == 3 || squared <= touching;
    if (overlapping || pass == last_pass) break;
    int support_a = 0, support_b = 0;
    double reach_a = -INFINITY, reach_b = -INFINITY;
    for (int i = 0; i < count_a; ++i) {
      const double along = -(points_a[2 * i] * closest[0] + points_a[2 * i + 1] * closest[1]);
      if (along > reach_a) reach_a = along, support_a = i;
    }
    for (int j = 0; j < count_b; ++j) {
      const double along = points_b[2 * j] * closest[0] + points_b[2 * j + 1] * closest[1];
      if (along > reach_b) reach_b = along, support_b = j;
    }
    // The distance lies between |closest| and the support point's reach along −closest, less by
    // this gap over |closest|: stop when the gap is round-off of the shapes' size.
    const double gain = squared - (closest[0] * (points_a[2 * support_a] - points_b[2 * support_b]) +
                                   closest[1] * (points_a[2 * support_a + 1] - points_b[2 * support_b + 1]));
    bool known = false;
    for (int k = 0; k < count; ++k) known = known || (indices[k][0] == support_a && indices[k][1] == support_b);
    if (known || gain <= 1e-12 * scale * std::sqrt(squared)) break;
    indices[count][0] = support_a, indices[count][1] = support_b, ++count;
  }
  PlanarProximity out;
  for (int k = 0; k < count; ++k)
    for (int c = 0; c < 2; ++c) {
      out.point_a[c] += weights[k] * points_a[2 * indices[k][0] + c];
      out.point_b[c] += weights[k] * points_b[2 * indices[k][1] + c];
    }
  out.overlapping = overlapping;
  const double dx = out.point_a[0] - out.point_b[0], dy = out.point_a[1] - out.point_b[1];
  out.distance = overlapping ? 0.0 : std::sqrt(dx * dx + dy * dy);
  // The distinct indices of each set, ascending.
  auto distinct = [&](int side, int* corners) {
    int found = 0;
    for (int k = 0; k < count; ++k) {
      const int index = indices[k][side];
      if (std::find(corners, corners + found, index) == corners + found) corners[found++] = index;
    }
    std::sort(corners, corners + found);
    return found;
  };
  out.count_a = distinct(0, out.corners_a);
  out.count_b = distinct(1, out.corners_b);
  return out;
}

}  // namespace dcol::planar
