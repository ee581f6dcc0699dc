// The contact geometry of the planar engine (LCP-physics §A.6): the normal, the arms from each body's
// centre and the gap that a contact feature gives at two poses (angle, x, y), and their derivatives
// with respect to the poses, written once over a scalar type (double, or Dual<6> for the derivatives
// along the six pose coordinates of the two bodies).
//
// A feature is what the narrowphase found the contact on; its derivatives hold that feature fixed
// (the contact mode):
//   * points: the line between two body-fixed points (circle centres, polygon corners), each padded
//     by a radius (0 for a corner); the normal points from b's point towards a's;
//   * face: a face of the reference body (b, or a) against a body-fixed point of the other, the
//     incident body, padded by a radius (a circle's centre) or not (a corner);
//   * clipped face: as a face, against the point where the incident edge from incident_point to
//     edge_end crosses the side plane of the reference face through its corner side_point.
// The normal always points from body b towards body a, so that n · (velocity of a's point − velocity
// of b's point) is the separating speed.
#pragma once

#include <cmath>

#include "core/dual.hpp"

namespace dcol::planar {

enum class PlanarFeatureKind : int { points = 0, face = 1, clipped_face = 2 };

// The data of a feature, in each body's own frame. points: point_a, radius_a, point_b, radius_b.
// face and clipped face: the reference face's outward unit normal and corner face_point and, for a
// clipped face, its corner side_point (reference frame); incident_point and, for a clipped face,
// edge_end (incident frame); radius (a face only).
struct PlanarFeature {
  PlanarFeatureKind kind = PlanarFeatureKind::points;
  bool reference_is_b = true;
  double point_a[2] = {}, radius_a = 0.0, point_b[2] = {}, radius_b = 0.0;
  double normal[2] = {}, face_point[2] = {}, incident_point[2] = {}, radius = 0.0;
  double edge_end[2] = {}, side_point[2] = {};
};

namespace detail {

template <class T>
struct Vec2 {
  T x, y;
};
template <class T>
inline Vec2<T> operator+(const Vec2<T>& a, const Vec2<T>& b) {
  return {a.x + b.x, a.y + b.y};
}
template <class T>
inline Vec2<T> operator-(const Vec2<T>& a, const Vec2<T>& b) {
  return {a.x - b.x, a.y - b.y};
}
template <class T, class S>
inline Vec2<T> operator*(const S& s, const Vec2<T>& a) {
  return {s * a.x, s * a.y};
}
template <class T>
inline T dot(const Vec2<T>& a, const Vec2<T>& b) {
  return a.x * b.x + a.y * b.y;
}
// R(π/2) a: the vector turned a right angle counter-clockwise.
template <class T>
inline Vec2<T> perpendicular(const Vec2<T>& a) {
  return {-a.y, a.x};
}

inline void cos_sin(double angle, double& c, double& s) { c = std::cos(angle), s = std::sin(angle); }
template <int K>
inline void cos_sin(const Dual<K>& angle, Dual<K>& c, Dual<K>& s) {
  c = Dual<K>(std::cos(angle.v)), s = Dual<K>(std::sin(angle.v));
  for (int i = 0; i < K; ++i) c.d[i] = -s.v * angle.d[i], s.d[i] = c.v * angle.d[i];
}

// A pose (angle, x, y) with its rotation.
template <class T>
struct Pose {
  T c, s;
  Vec2<T> centre;
  explicit Pose(const T* pose) : centre{pose[1], pose[2]} { cos_sin(pose[0], c, s); }
  // The body-frame vector u in the world frame: R(angle) u.
  Vec2<T> turned(const double* u) const { return {c * u[0] - s * u[1], s * u[0] + c * u[1]}; }
  // The body-fixed point u in the world frame.
  Vec2<T> point(const double* u) const { return centre + turned(u); }
  // The world point u in the body frame: R(angle)ᵀ (u − centre).
  Vec2<T> local(const Vec2<T>& u) const {
    const Vec2<T> offset = u - centre;
    return {c * offset.x + s * offset.y, -s * offset.x + c * offset.y};
  }
};

}  // namespace detail

// normal (2), arm_a (2), arm_b (2) and gap of a feature at poses pose_a, pose_b (3 each), as T.
template <class T>
struct PlanarContactGeometry {
  T normal[2], arm_a[2], arm_b[2], gap;
};

template <class T>
PlanarContactGeometry<T> planar_feature_geometry(const PlanarFeature& feature, const T* pose_a, const T* pose_b) {
  using namespace detail;
  PlanarContactGeometry<T> out;
  auto store = [&out](const Vec2<T>& normal, const Vec2<T>& arm_a, const Vec2<T>& arm_b, const T& gap) {
    out.normal[0] = normal.x, out.normal[1] = normal.y;
    out.arm_a[0] = arm_a.x, out.arm_a[1] = arm_a.y;
    out.arm_b[0] = arm_b.x, out.arm_b[1] = arm_b.y;
    out.gap = gap;
    return out;
  };
  const Pose<T> a(pose_a), b(pose_b);
  if (feature.kind == PlanarFeatureKind::points) {
    const Vec2<T> arm_a = a.turned(feature.point_a), arm_b = b.turned(feature.point_b);
    const Vec2<T> offset = a.centre + arm_a - b.centre - arm_b;
    const double length = std::sqrt(value_of(dot(offset, offset)));
    // Coincident points have no normal; the world's y axis stands in, held fixed (zero derivative).
    Vec2<T> normal{T(0.0), T(1.0)};
    T distance(0.0);
    if (length > 0.0) {
      using std::sqrt;
      distance = sqrt(dot(offset, offset));
      normal = {offset.x / distance, offset.y / distance};
    }
    return store(normal, arm_a - feature.radius_a * normal, arm_b + feature.radius_b * normal,
                 distance - feature.radius_a - feature.radius_b);
  }
  const Pose<T>& reference = feature.reference_is_b ? b : a;
  const Pose<T>& incident = feature.reference_is_b ? a : b;
  const Vec2<T> outward = reference.turned(feature.normal);
  Vec2<T> point = incident.point(feature.incident_point);
  if (feature.kind == PlanarFeatureKind::face) {
    point = point - feature.radius * outward;
  } else {  // where the edge crosses the side plane (x − side) · tangent = 0
    const Vec2<T> edge = incident.point(feature.edge_end) - point;
    const Vec2<T> side = reference.point(feature.side_point), tangent = perpendicular(outward);
    const T along = dot(side - point, tangent) / dot(edge, tangent);
    point = point + along * edge;
  }
  const T separation = dot(point - reference.point(feature.face_point), outward);
  const Vec2<T> arm_incident = point - incident.centre;
  const Vec2<T> arm_reference = point - separation * outward - reference.centre;
  if (feature.reference_is_b) return store(outward, arm_incident, arm_reference, separation);
  return store(Vec2<T>{-outward.x, -outward.y}, arm_reference, arm_incident, separation);
}

// The geometry at poses (3 each) as doubles, and, where jacobian is not null, ∂(normal, arm_a,
// arm_b)/∂(pose_a, pose_b) (6 × 6, row-major) into it.
inline PlanarContactGeometry<double> planar_feature_geometry(const PlanarFeature& feature, const double* pose_a,
                                                             const double* pose_b, double* jacobian) {
  if (jacobian == nullptr) return planar_feature_geometry<double>(feature, pose_a, pose_b);
  Dual<6> poses[6];
  for (int i = 0; i < 6; ++i) {
    poses[i] = Dual<6>(i < 3 ? pose_a[i] : pose_b[i - 3]);
    poses[i].d[i] = 1.0;
  }
  const PlanarContactGeometry<Dual<6>> dual = planar_feature_geometry<Dual<6>>(feature, poses, poses + 3);
  const Dual<6>* outputs[6] = {&dual.normal[0], &dual.normal[1], &dual.arm_a[0],
                               &dual.arm_a[1],  &dual.arm_b[0],  &dual.arm_b[1]};
  PlanarContactGeometry<double> geometry;
  double* values[6] = {&geometry.normal[0], &geometry.normal[1], &geometry.arm_a[0],
                       &geometry.arm_a[1],  &geometry.arm_b[0],  &geometry.arm_b[1]};
  for (int row = 0; row < 6; ++row) {
    *values[row] = outputs[row]->v;
    for (int column = 0; column < 6; ++column) jacobian[row * 6 + column] = outputs[row]->d[column];
  }
  geometry.gap = dual.gap.v;
  return geometry;
}

}  // namespace dcol::planar
