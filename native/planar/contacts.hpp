// Contact detection of the planar engine (LCP-physics §A.6): a bounding-circle broadphase and
// narrowphases for circle–circle (§A.6.1), circle–polygon (§A.6.2: GJK's closest point of the
// polygon to the centre outside, the separating axis of least penetration inside) and
// polygon–polygon (separating axes, with GJK's distance where they leave it open, which also finds
// corners closest to each other; then the incident edge clipped against the reference face, at most
// two points). Two bodies are in contact where their signed distance is below the margin ε.
#pragma once

#include <cmath>
#include <vector>

#include "planar/contact_geometry.hpp"
#include "planar/gjk.hpp"

namespace dcol::planar {

// The shapes of a planar scene's bodies: body i is a circle of radius radius[i] where
// corner_count[i] is 0, else the convex polygon of corner_count[i] corners from first_corner[i] on
// in corners (counter-clockwise, centroid at the origin) with the edges' outward unit normals in
// edge_normals (the edge from corner k to corner k + 1), both row-major (x, y).
struct PlanarShapes {
  std::vector<double> radius, bounding_radius;
  std::vector<int> first_corner, corner_count;
  std::vector<double> corners, edge_normals;
  int bodies() const { return static_cast<int>(radius.size()); }
};

// One contact: its bodies, the feature it is on, and the geometry that feature gives.
struct PlanarContact {
  int body_a = 0, body_b = 0;
  PlanarFeature feature;
  PlanarContactGeometry<double> geometry;
};

namespace detail {

inline double dot2(const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1]; }

struct WorldPolygon {
  int count = 0;
  const double *local_corners = nullptr, *local_normals = nullptr;
  std::vector<double> corners, normals;  // in the world frame
  void place(const PlanarShapes& shapes, int body, const double* pose) {
    count = shapes.corner_count[body];
    local_corners = shapes.corners.data() + 2 * shapes.first_corner[body];
    local_normals = shapes.edge_normals.data() + 2 * shapes.first_corner[body];
    corners.resize(2 * count), normals.resize(2 * count);
    const Pose<double> placed(pose);
    for (int k = 0; k < count; ++k) {
      const Vec2<double> corner = placed.point(local_corners + 2 * k), normal = placed.turned(local_normals + 2 * k);
      corners[2 * k] = corner.x, corners[2 * k + 1] = corner.y;
      normals[2 * k] = normal.x, normals[2 * k + 1] = normal.y;
    }
  }
  const double* corner(int k) const { return corners.data() + 2 * (k % count); }
};

inline PlanarFeature points_feature(const double* point_a, double radius_a, const double* point_b, double radius_b) {
  PlanarFeature f;
  f.kind = PlanarFeatureKind::points;
  f.point_a[0] = point_a[0], f.point_a[1] = point_a[1], f.radius_a = radius_a;
  f.point_b[0] = point_b[0], f.point_b[1] = point_b[1], f.radius_b = radius_b;
  return f;
}

inline PlanarFeature face_feature(bool reference_is_b, const double* normal, const double* face_point,
                                  const double* incident_point, double radius) {
  PlanarFeature f;
  f.kind = PlanarFeatureKind::face;
  f.reference_is_b = reference_is_b;
  f.normal[0] = normal[0], f.normal[1] = normal[1];
  f.face_point[0] = face_point[0], f.face_point[1] = face_point[1];
  f.incident_point[0] = incident_point[0], f.incident_point[1] = incident_point[1];
  f.radius = radius;
  return f;
}

// The same contact with bodies a and b exchanged.
inline PlanarFeature swapped(const PlanarFeature& found) {
  if (found.kind != PlanarFeatureKind::points) {
    PlanarFeature f = found;
    f.reference_is_b = !found.reference_is_b;
    return f;
  }
  return points_feature(found.point_b, found.radius_b, found.point_a, found.radius_a);
}

// LCP-physics §A.6.2, the circle (centre in the world) as body a and the polygon as body b: GJK's
// closest point of the polygon to the centre (a corner, or a point of a face), or for a centre
// inside, the face of least penetration (separating axes).
inline PlanarFeature circle_polygon(const double* centre, double radius, const PlanarShapes& shapes, int polygon,
                                    const double* pose) {
  const int count = shapes.corner_count[polygon];
  const double* corners = shapes.corners.data() + 2 * shapes.first_corner[polygon];
  const double* normals = shapes.edge_normals.data() + 2 * shapes.first_corner[polygon];
  const Vec2<double> in_polygon = Pose<double>(pose).local({centre[0], centre[1]});
  const double local[2] = {in_polygon.x, in_polygon.y};
  const PlanarProximity proximity = planar_closest_points(corners, count, local, 1);
  int face = 0;
  const double origin[2] = {0.0, 0.0};
  if (proximity.overlapping) {
    double deepest = -INFINITY;
    for (int k = 0; k < count; ++k) {
      const double from[2] = {local[0] - corners[2 * k], local[1] - corners[2 * k + 1]};
      const double along = dot2(from, normals + 2 * k);
      if (along > deepest) deepest = along, face = k;
    }
  } else if (proximity.count_a == 1) {
    return points_feature(origin, radius, corners + 2 * proximity.corners_a[0], 0.0);
  } else {  // the edge between two consecutive corners
    const int first = proximity.corners_a[0], second = proximity.corners_a[1];
    face = second == first + 1 ? first : second;
  }
  return face_feature(true, normals + 2 * face, corners + 2 * face, origin, radius);
}

// The face of `reference` that separates it most from the polygon `other`, and that separation
// (< 0: overlap along every face) into separation.
inline int deepest_face(const WorldPolygon& reference, const WorldPolygon& other, double& separation) {
  int face = 0;
  separation = -INFINITY;
  for (int k = 0; k < reference.count; ++k) {
    double nearest = INFINITY;
    for (int j = 0; j < other.count; ++j) {
      const double from[2] = {other.corners[2 * j] - reference.corners[2 * k],
                              other.corners[2 * j + 1] - reference.corners[2 * k + 1]};
      nearest = std::min(nearest, dot2(from, reference.normals.data() + 2 * k));
    }
    if (nearest > separation) separation = nearest, face = k;
  }
  return face;
}

// The part of the segment (two points, row-major) where x · direction ≤ limit; false if none.
inline bool clip(double (*segment)[2], const double* direction, double limit) {
  const double excess[2] = {dot2(segment[0], direction) - limit, dot2(segment[1], direction) - limit};
  if (excess[0] <= 0.0 && excess[1] <= 0.0) return true;
  if (excess[0] > 0.0 && excess[1] > 0.0) return false;
  const double t = excess[0] / (excess[0] - excess[1]);
  const double crossing[2] = {segment[0][0] + t * (segment[1][0] - segment[0][0]),
                              segment[0][1] + t * (segment[1][1] - segment[0][1])};
  for (int e = 0; e < 2; ++e)
    if (excess[e] > 0.0) segment[e][0] = crossing[0], segment[e][1] = crossing[1];
  return true;
}

// Separating axes of both polygons; for polygons they leave apart, unless the other polygon's nearest
// corner lies over the reference face (then the face's separation is the distance), GJK's distance
// (the separation is only its lower bound): beyond the margin, no contact; two corners closest to
// each other, one contact along the line between them. Otherwise the incident edge of the other
// polygon is clipped to the reference face's side planes and its points within the margin are
// contacts. Appends the features (a the first polygon) to found.
inline void polygon_polygon(const WorldPolygon& a, const WorldPolygon& b, double margin,
                            std::vector<PlanarFeature>& found) {
  double separation_a, separation_b;
  const int face_a = deepest_face(a, b, separation_a);
  const int face_b = deepest_face(b, a, separation_b);
  const double separation = std::max(separation_a, separation_b);
  if (separation > margin) return;
  // a is the reference unless b's face separates clearly more, so that parallel faces (a tie) do
  // not swap roles on round-off.
  const bool reference_is_b = separation_b > separation_a + 1e-9 * (1.0 + std::abs(separation_a));
  const int face = reference_is_b ? face_b : face_a;
  const WorldPolygon& reference = reference_is_b ? b : a;
  const WorldPolygon& incident = reference_is_b ? a : b;
  const double* normal = reference.normals.data() + 2 * face;
  const double *start = reference.corner(face), *end = reference.corner(face + 1);
  const double face_vector[2] = {end[0] - start[0], end[1] - start[1]};
  const double length = std::sqrt(dot2(face_vector, face_vector));
  const double tangent[2] = {face_vector[0] / length, face_vector[1] / length};
  int nearest = 0;
  double lowest = INFINITY;
  for (int j = 0; j < incident.count; ++j) {
    const double from[2] = {incident.corners[2 * j] - start[0], incident.corners[2 * j + 1] - start[1]};
    const double height = dot2(from, normal);
    if (height < lowest) lowest = height, nearest = j;
  }
  const double from_start[2] = {incident.corner(nearest)[0] - start[0], incident.corner(nearest)[1] - start[1]};
  const double along = dot2(from_start, tangent);
  const bool over_face = 0.0 <= along && along <= dot2(face_vector, tangent);
  if (separation >= 0.0 && !over_face) {
    const PlanarProximity proximity = planar_closest_points(a.corners.data(), a.count, b.corners.data(), b.count);
    if (proximity.distance > margin) return;
    if (!proximity.overlapping && proximity.count_a == 1 && proximity.count_b == 1) {
      found.push_back(points_feature(a.local_corners + 2 * proximity.corners_a[0], 0.0,
                                     b.local_corners + 2 * proximity.corners_b[0], 0.0));
      return;
    }
  }
  int edge = 0;
  double most_opposed = INFINITY;
  for (int k = 0; k < incident.count; ++k) {
    const double facing = dot2(incident.normals.data() + 2 * k, normal);
    if (facing < most_opposed) most_opposed = facing, edge = k;
  }
  const int corners[2] = {edge, (edge + 1) % incident.count};
  double segment[2][2];
  for (int e = 0; e < 2; ++e)
    segment[e][0] = incident.corner(corners[e])[0], segment[e][1] = incident.corner(corners[e])[1];
  const double backwards[2] = {-tangent[0], -tangent[1]};
  if (!clip(segment, tangent, dot2(end, tangent)) || !clip(segment, backwards, -dot2(start, tangent))) return;
  const double* local_normal = reference.local_normals + 2 * face;
  const double* local_face = reference.local_corners + 2 * face;
  for (int e = 0; e < 2; ++e) {  // clipping keeps the order of the edge's corners
    const double* point = segment[e];
    const double rise[2] = {point[0] - start[0], point[1] - start[1]};
    if (dot2(rise, normal) > margin) continue;
    const double* corner = incident.local_corners + 2 * corners[e];
    PlanarFeature feature = face_feature(reference_is_b, local_normal, local_face, corner, 0.0);
    const double* world_corner = incident.corner(corners[e]);
    if (point[0] != world_corner[0] || point[1] != world_corner[1]) {
      const double past_end[2] = {point[0] - end[0], point[1] - end[1]};
      const int side =
          std::abs(dot2(rise, tangent)) < std::abs(dot2(past_end, tangent)) ? face : (face + 1) % reference.count;
      const double* other = incident.local_corners + 2 * corners[1 - e];
      const double* side_point = reference.local_corners + 2 * side;
      feature.kind = PlanarFeatureKind::clipped_face;
      feature.edge_end[0] = other[0], feature.edge_end[1] = other[1];
      feature.side_point[0] = side_point[0], feature.side_point[1] = side_point[1];
    }
    found.push_back(feature);
  }
}

}  // namespace detail

// Work buffers of planar_detect_contacts, reused from call to call.
struct PlanarContactWorkspace {
  detail::WorldPolygon polygon_a, polygon_b;
  std::vector<PlanarFeature> features;
};

// The contacts (gap < margin) among the bodies at positions (bodies × 3, rows (angle, x, y)) into
// contacts (cleared first). Broadphase: the pairs i < j whose bounding circles come within the
// margin, in the order of i then j, less those with skipped(i, j) true (bodies bound by a joint,
// bodies both welded to the world).
template <class Skipped>
void planar_detect_contacts(const PlanarShapes& shapes, const double* positions, double margin, const Skipped& skipped,
                            PlanarContactWorkspace& work, std::vector<PlanarContact>& contacts) {
  using namespace detail;
  contacts.clear();
  const int n = shapes.bodies();
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      const double *pose_a = positions + 3 * i, *pose_b = positions + 3 * j;
      const double reach = shapes.bounding_radius[i] + shapes.bounding_radius[j] + margin;
      const double dx = pose_a[1] - pose_b[1], dy = pose_a[2] - pose_b[2];
      if (dx * dx + dy * dy > reach * reach || skipped(i, j)) continue;
      work.features.clear();
      const bool circle_a = shapes.corner_count[i] == 0, circle_b = shapes.corner_count[j] == 0;
      const double origin[2] = {0.0, 0.0};
      if (circle_a && circle_b) {
        work.features.push_back(points_feature(origin, shapes.radius[i], origin, shapes.radius[j]));
      } else if (circle_a) {
        work.features.push_back(circle_polygon(pose_a + 1, shapes.radius[i], shapes, j, pose_b));
      } else if (circle_b) {
        work.features.push_back(swapped(circle_polygon(pose_b + 1, shapes.radius[j], shapes, i, pose_a)));
      } else {
        work.polygon_a.place(shapes, i, pose_a);
        work.polygon_b.place(shapes, j, pose_b);
        polygon_polygon(work.polygon_a, work.polygon_b, margin, work.features);
      }
      for (const PlanarFeature& feature : work.features) {
        PlanarContact contact;
        contact.body_a = i, contact.body_b = j, contact.feature = feature;
        contact.geometry = planar_feature_geometry(feature, pose_a, pose_b, nullptr);
        if (contact.geometry.gap < margin) contacts.push_back(contact);
      }
    }
}

}  // namespace dcol::planar
