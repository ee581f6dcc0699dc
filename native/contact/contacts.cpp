// The contact rules of contacts.hpp: support features, witness hulls and the formulas of each
// contact over a scalar type.
#include "contact/contacts.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "contact/broadphase.hpp"
#include "core/dual.hpp"
#include "geometry/distance.hpp"
#include "geometry/gjk.hpp"
#include "geometry/support.hpp"

namespace dcol::contact {

using geometry::DistanceJacobian;
using geometry::DistanceResult;
using geometry::shape_frame;
using geometry::signed_distance;
using geometry::support_point;

namespace {

using Vec3 = Vec3T<double>;
using D = Dual<12>;
using DVec3 = Vec3T<D>;

// A shape's support feature: world points, inflated by radius. A
// polygon (dim 2) is counterclockwise in the witness plane's coordinates; its face has the outward
// unit normal face_normal and passes through face_point (both moving with the body).
struct Feature {
  int dim = -1;  // −1: the shape has no contact rule
  int count = 0;
  Vec3 points[kMaxFeaturePoints];
  double radius = 0.0;
  Vec3 face_normal{}, face_point{};
  // rim_radius > 0: the points lie on rims of that radius around the axis rim_axis through rim_origin,
  // each at its angle from the direction to the other shape's face (add_rim's tilted square,
  // rim_support): as the shapes turn they slide round the rim (sliding_rim_point), where others move
  // with the body.
  double rim_radius = 0.0;
  Vec3 rim_axis{}, rim_origin{};
  // False for an incident polygon turned away from the reference face (face_pair_features): the
  // reference corners inside it, seen along the reference normal, need not lie under its plane.
  bool face_usable = true;
};

// (e_j × v)_i: column j of the cross-product map δθ ↦ δθ × v.
inline double cross_column(const Vec3& v, int i, int j) {
  const int k = (i + 2) % 3, l = (i + 1) % 3;
  return (j == l ? v[k] : 0.0) - (j == k ? v[l] : 0.0);
}

// The world point w moving with body `body` whose origin is r: δw = δp + δθ × (w − r).
inline DVec3 seed_point(const Vec3& w, const double* r, int body) {
  const Vec3 lever{{w[0] - r[0], w[1] - r[1], w[2] - r[2]}};
  DVec3 out;
  for (int i = 0; i < 3; ++i) {
    out[i] = D(w[i]);
    out[i].d[6 * body + i] = 1.0;
    for (int j = 0; j < 3; ++j) out[i].d[6 * body + 3 + j] = cross_column(lever, i, j);
  }
  return out;
}

// A world direction m turning with body `body`: δm = δθ × m.
inline DVec3 seed_direction(const Vec3& m, int body) {
  DVec3 out;
  for (int i = 0; i < 3; ++i) {
    out[i] = D(m[i]);
    for (int j = 0; j < 3; ++j) out[i].d[6 * body + 3 + j] = cross_column(m, i, j);
  }
  return out;
}

inline Vec3 to_vec(const double* v) { return {{v[0], v[1], v[2]}}; }

// The world position of the point y of a shape whose frame is `frame`.
inline Vec3 world_point(const Pose& frame, const double* y) {
  Vec3 w;
  for (int i = 0; i < 3; ++i)
    w[i] = frame.r[i] + frame.Q.m[i][0] * y[0] + frame.Q.m[i][1] * y[1] + frame.Q.m[i][2] * y[2];
  return w;
}

// Orthonormal tangents (t1, t2) with (t1, t2, n) right-handed: the minimal rotation taking world z
// to n applied to x and y. Continuous in n except at n = −z, where (x, −y) is taken.
template <class T>
void tangents(const Vec3T<T>& n, Vec3T<T>& t1, Vec3T<T>& t2) {
  const double nz = value_of(n[2]);
  if (nz <= -1.0 + 1e-12) {
    t1 = {{T(1.0), T(0.0), T(0.0)}};
    t2 = {{T(0.0), T(-1.0), T(0.0)}};
    return;
  }
  const T inv = 1.0 / (n[2] + 1.0);
  t1 = {{1.0 - n[0] * n[0] * inv, -(n[0] * n[1] * inv), -n[0]}};
  t2 = {{-(n[0] * n[1] * inv), 1.0 - n[1] * n[1] * inv, -n[1]}};
}

// +1 if v points along the witness normal (from a to b), else −1.
template <class T>
double witness_sign(const Vec3T<T>& v, const Vec3& witness) {
  return value_of(v[0]) * witness[0] + value_of(v[1]) * witness[1] + value_of(v[2]) * witness[2] < 0.0 ? -1.0 : 1.0;
}

// The contact point between c_a and c_b weighted by the radii: on the surfaces' common tangent
// plane when they touch (Nimble App. C2, C4); the midpoint of two bare points.
template <class T>
Vec3T<T> weighted_point(const Vec3T<T>& ca, double ra, const Vec3T<T>& cb, double rb) {
  return ra + rb > 0.0 ? (1.0 / (ra + rb)) * (rb * ca + ra * cb) : 0.5 * (ca + cb);
}

// The contact of two points c_a, c_b with radii (sphere–sphere, and with a point moving along a line
// the point–edge rules): normal along c_b − c_a (oriented by the witness normal, which also stands in
// when the points coincide), point weighted by the radii (the midpoint for two bare points).
template <class T>
void point_point(const Vec3T<T>& ca, double ra, const Vec3T<T>& cb, double rb, const Vec3& witness, Vec3T<T>& point,
                 Vec3T<T>& normal, T& separation) {
  const Vec3T<T> d = cb - ca;
  // Scaled by its largest component: the squares of points 10¹⁵⁵ m apart overflow.
  const double largest = std::max({std::abs(value_of(d[0])), std::abs(value_of(d[1])), std::abs(value_of(d[2]))});
  const T length = largest > 0.0 ? largest * norm((1.0 / largest) * d) : T(0.0);
  if (value_of(length) <= 1e-14) {
    for (int i = 0; i < 3; ++i) normal[i] = T(witness[i]);
    separation = T(-(ra + rb));
  } else {
    const double sign = witness_sign(d, witness);
    normal = (sign / length) * d;
    separation = sign * length - (ra + rb);
  }
  point = weighted_point(ca, ra, cb, rb);
}

// The point of the line through q0, q1 closest to p.
template <class T>
Vec3T<T> closest_on_line(const Vec3T<T>& p, const Vec3T<T>& q0, const Vec3T<T>& q1) {
  const Vec3T<T> u = q1 - q0;
  return q0 + (dot(p - q0, u) / dot(u, u)) * u;
}

// Two segments' lines: their closest points, normal ±(u × v) oriented by the witness normal.
template <class T>
void edge_edge(const Vec3T<T>& p0, const Vec3T<T>& p1, double ra, const Vec3T<T>& q0, const Vec3T<T>& q1, double rb,
               const Vec3& witness, Vec3T<T>& point, Vec3T<T>& normal, T& separation) {
  const Vec3T<T> u = p1 - p0, v = q1 - q0, w = p0 - q0;
  const T uu = dot(u, u), uv = dot(u, v), vv = dot(v, v), uw = dot(u, w), vw = dot(v, w);
  const T det = uu * vv - uv * uv;
  const T s = (uv * vw - vv * uw) / det, t = (uu * vw - uv * uw) / det;
  const Vec3T<T> ca = p0 + s * u, cb = q0 + t * v;
  const Vec3T<T> axis = cross(u, v);
  normal = (witness_sign(axis, witness) / norm(axis)) * axis;
  separation = dot(normal, cb - ca) - (ra + rb);
  point = weighted_point(ca, ra, cb, rb);
}

// A point c with radius rc over a face with outward unit normal m through f0, inflated by rf.
// face_on_a: the face belongs to a (the normal from a to b is then m, else −m).
template <class T>
void point_face(const Vec3T<T>& c, double rc, const Vec3T<T>& m, const Vec3T<T>& f0, double rf, bool face_on_a,
                Vec3T<T>& point, Vec3T<T>& normal, T& separation) {
  separation = dot(m, c - f0) - (rc + rf);
  point = c - rc * m;
  normal = face_on_a ? m : T(-1.0) * m;
}

// Which features define a contact: indices into the two features' points (−1: unused).
struct Recipe {
  ContactRule rule;
  int a0, a1, b0, b1;
};

// 2-D coordinates of a world point in the witness plane spanned by (e1, e2).
struct Plane2 {
  Vec3 e1, e2;
  void project(const Vec3& p, double* out) const {
    out[0] = dot(p, e1);
    out[1] = dot(p, e2);
  }
};

inline double cross2(const double* o, const double* a, const double* b) {
  return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}

// Keeps the points of f that are corners of their 2-D convex hull, counterclockwise (Andrew's
// monotone chain); reports dim 0, 1 or 2 by the hull's extent relative to tol.
inline void reduce_to_hull(Feature& f, const Plane2& plane, double tol) {
  double uv[kMaxFeaturePoints][2];
  int order[kMaxFeaturePoints];
  for (int i = 0; i < f.count; ++i) {
    plane.project(f.points[i], uv[i]);
    order[i] = i;
  }
  std::sort(order, order + f.count,
            [&](int i, int j) { return uv[i][0] < uv[j][0] || (uv[i][0] == uv[j][0] && uv[i][1] < uv[j][1]); });
  int hull[2 * kMaxFeaturePoints], k = 0;
  const double area_tol = tol * tol;
  for (int pass = 0; pass < 2; ++pass) {
    const int start = k;
    for (int ii = 0; ii < f.count; ++ii) {
      const int i = order[pass == 0 ? ii : f.count - 1 - ii];
      while (k >= start + 2 && cross2(uv[hull[k - 2]], uv[hull[k - 1]], uv[i]) <= area_tol) --k;
      hull[k++] = i;
    }
    --k;  // the last point starts the other chain
  }
  const double span =
      std::hypot(uv[order[f.count - 1]][0] - uv[order[0]][0], uv[order[f.count - 1]][1] - uv[order[0]][1]);
  Vec3 kept[kMaxFeaturePoints];
  if (span <= tol || f.count == 1) {  // one point: the farthest along the support direction is points[0]
    f.dim = 0;
    f.count = 1;
    return;
  }
  if (k <= 2) {  // collinear: the two ends
    kept[0] = f.points[order[0]];
    kept[1] = f.points[order[f.count - 1]];
    f.points[0] = kept[0];
    f.points[1] = kept[1];
    f.dim = 1;
    f.count = 2;
    return;
  }
  for (int i = 0; i < k; ++i) kept[i] = f.points[hull[i]];
  for (int i = 0; i < k; ++i) f.points[i] = kept[i];
  f.count = k;
  f.dim = 2;
}

// World outward unit normal of a polytope's face (shape frame `frame`) and, with height, the plane's
// height along it above the frame's origin.
inline Vec3 face_world_normal(const Shape& sh, const Pose& frame, int face, double* height) {
  const double* m = &sh.normals[3 * face];
  const double length = std::sqrt(m[0] * m[0] + m[1] * m[1] + m[2] * m[2]);
  Vec3 out;
  for (int i = 0; i < 3; ++i)
    out[i] = (frame.Q.m[i][0] * m[0] + frame.Q.m[i][1] * m[1] + frame.Q.m[i][2] * m[2]) / length;
  if (height) *height = sh.offsets[face] / length;
  return out;
}

// A world direction in the axes of the shape frame `frame`.
inline Vec3 local_direction(const Pose& frame, const Vec3& u) {
  Vec3 w;
  for (int j = 0; j < 3; ++j) w[j] = frame.Q.m[0][j] * u[0] + frame.Q.m[1][j] * u[1] + frame.Q.m[2][j] * u[2];
  return w;
}

// A polytope face's normal row m (not necessarily unit) dotted with the shape-frame vector y, and m·m.
inline double face_dot(const Shape& sh, int face, const double* y) {
  const double* m = &sh.normals[3 * face];
  return m[0] * y[0] + m[1] * y[1] + m[2] * y[2];
}
inline double face_norm2(const Shape& sh, int face) { return sh.face_norm2[face]; }

// Whether the shape-frame point y lies on the plane of the polytope's face to within tol, tested in the
// shape frame with squares, which spares the scans over every face or vertex a rotation and a root each.
inline bool on_face_plane(const Shape& sh, int face, const double* y, double tol) {
  const double gap = face_dot(sh, face, y) - sh.offsets[face];
  return gap * gap <= tol * tol * face_norm2(sh, face);
}

// The alignment of a polytope face's outward normal with the shape-frame direction w, squared with
// its sign: it orders faces as the cosine does, without a root.
inline double signed_alignment2(const Shape& sh, int face, const Vec3& w) {
  const double along = face_dot(sh, face, w.x);
  return along * std::abs(along) / face_norm2(sh, face);
}

// The face of a polytope whose outward normal is closest to the world direction u.
inline int facing_face(const Shape& sh, const Pose& frame, const Vec3& u) {
  const Vec3 w = local_direction(frame, u);
  int best = 0;
  double best_alignment = -INFINITY;
  for (int f = 0; f < sh.num_faces; ++f) {
    const double alignment = signed_alignment2(sh, f, w);
    if (alignment > best_alignment) best_alignment = alignment, best = f;
  }
  return best;
}

// A cap's rim stands for its disk by four points, a square inscribed in it: no more than a patch keeps
// (kPatchPoints), so that no reduction picks among near-equal points and flips its choice as the
// shape moves. A cap flat on the other shape (its rim within the feature tolerance of its top along u)
// takes four material points (at right angles from the shape's y axis), as a box's face its corners; a
// tilted one the square turned to u (its rim point farthest along u, the opposite one and the two
// between), which turns continuously with the cap, where the flat cap's direction to u would jump.
inline void add_rim(const Pose& frame, const Vec3& centre, double R, const Vec3& u, bool flat, Feature& f) {
  const Vec3 axis{{frame.Q.m[0][0], frame.Q.m[1][0], frame.Q.m[2][0]}};
  Vec3 first{{frame.Q.m[0][1], frame.Q.m[1][1], frame.Q.m[2][1]}};  // the shape's y axis
  if (!flat) {
    const Vec3 across = u - dot(u, axis) * axis;
    first = (1.0 / norm(across)) * across;
  }
  const Vec3 second = cross(axis, first);
  for (const Vec3& offset : {first, second, -1.0 * first, -1.0 * second}) f.points[f.count++] = centre + R * offset;
}

// The point of the rim of centre c and radius R around the frame's x axis farthest along u (the
// centre itself if u is along the axis).
inline Vec3 rim_support(const Pose& frame, const Vec3& c, double R, const Vec3& u) {
  const Vec3 axis{{frame.Q.m[0][0], frame.Q.m[1][0], frame.Q.m[2][0]}};
  const Vec3 across = u - dot(u, axis) * axis;
  const double length = norm(across);
  return length > 0.0 ? c + (R / length) * across : c;
}

// The support feature of a cylinder or a cone (shape frame `frame`) along the world direction u, before
// reduce_to_hull; dim −1 where it has none worth a rule (a rim point or a cone's apex: the signed
// distance's one contact is exact there). A cap facing u within tol (its whole rim within tol of its
// top) is its rim square (add_rim), with the cap's plane as its face. A side line facing u within tol
// is, on a cylinder, its axis inflated by R (as a capsule's: exact while the line faces u, and it rolls
// as a capsule does), on a cone the segment from the apex to the base's rim point farthest along u.
// whole (an incident feature clipped against a face, each contact then at its own depth): beyond
// those, the cap turned more towards u than the side gives its square turned to u (the deepest rim
// point first), else the side gives its line: a cylinder's two rim points farthest along u, a cone's
// apex and base rim point.
inline void round_feature(const Shape& sh, const Pose& frame, const Vec3& u, double tol, bool whole, Feature& f) {
  const Vec3 axis{{frame.Q.m[0][0], frame.Q.m[1][0], frame.Q.m[2][0]}};
  const double along = dot(u, axis), across = std::sqrt(std::max(0.0, 1.0 - along * along));
  auto on_axis = [&](double x) { return to_vec(frame.r) + x * axis; };
  f.count = 0;
  f.rim_axis = axis;
  f.rim_origin = to_vec(frame.r);
  if (sh.kind == ShapeKind::cylinder) {
    const double side = along >= 0.0 ? 1.0 : -1.0;
    const Vec3 cap = on_axis(0.5 * side * sh.L);
    const bool flat = 2.0 * sh.R * across <= tol;
    if (flat || (whole && std::abs(along) >= across)) {
      add_rim(frame, cap, sh.R, u, flat, f);
      if (!flat) f.rim_radius = sh.R;
      f.face_normal = side * axis;
      f.face_point = cap;
    } else if (sh.L * std::abs(along) <= tol) {
      f.points[f.count++] = on_axis(-0.5 * sh.L);
      f.points[f.count++] = on_axis(0.5 * sh.L);
      f.radius = sh.R;
    } else if (whole) {
      for (double end : {-0.5 * sh.L, 0.5 * sh.L}) f.points[f.count++] = rim_support(frame, on_axis(end), sh.R, u);
      f.rim_radius = sh.R;
    }
  } else {  // cone: apex at x = −¾H, base of radius H tan β at x = ¼H
    const double base_radius = sh.H * sh.tan_beta;
    const Vec3 apex = on_axis(-0.75 * sh.H), base = on_axis(0.25 * sh.H);
    const Vec3 rim = rim_support(frame, base, base_radius, u);
    // Sines of the base's and of the side line's tilts out of the plane normal to u.
    const double side_tilt = std::abs(dot(rim - apex, u)) / norm(rim - apex);
    const bool flat = 2.0 * base_radius * across <= tol;
    if (along > 0.0 && (flat || (whole && across <= side_tilt))) {
      add_rim(frame, base, base_radius, u, flat, f);
      if (!flat) f.rim_radius = base_radius;
    } else if (whole || std::abs(dot(rim - apex, u)) <= tol) {
      f.points[f.count++] = apex;
      f.points[f.count++] = rim;
      if (whole) f.rim_radius = base_radius;  // against a face: the rim point slides (the apex stays)
    }
    f.face_normal = axis;  // the base's plane, should the points be its rim
    f.face_point = base;
  }
  f.dim = f.count > 0 ? 0 : -1;
}

// The support feature of shape sh (body pose body_pose) along the world direction u (unit); tol:
// the absolute feature tolerance. whole: all the candidates (a capsule's two ends, a polygon's
// corners), not only those near the top, for an incident feature clipped against a face.
inline Feature support_feature(const Shape& sh, const Pose& body_pose, const Vec3& u, double tol, const Plane2& plane,
                               bool whole = false) {
  Feature f;
  const Pose frame = shape_frame(sh, body_pose);
  auto world = [&](double y0, double y1, double y2) {
    const double y[3] = {y0, y1, y2};
    return world_point(frame, y);
  };
  // Candidates near the top along u, the farthest first; height_of(i) is the candidate's height along u
  // up to a constant, so that a polytope's vertices are ranked in its own frame and only the kept ones
  // are carried into the world.
  auto gather_by = [&](int count, auto&& height_of, auto&& point_of) {
    double best = -INFINITY;
    for (int i = 0; i < count; ++i) best = std::max(best, height_of(i));
    f.count = 0;
    int top = 0;
    double top_height = -INFINITY;
    for (int i = 0; i < count && f.count < kMaxFeaturePoints; ++i) {
      const double h = height_of(i);
      if (!whole && h < best - tol) continue;
      if (f.count == 0 || h > top_height) top = f.count, top_height = h;
      f.points[f.count++] = point_of(i);
    }
    std::swap(f.points[0], f.points[top]);
  };
  auto gather = [&](int count, auto&& point_of) {
    gather_by(count, [&](int i) { return dot(point_of(i), u); }, point_of);
  };
  switch (sh.kind) {
    case ShapeKind::sphere:
      f.radius = sh.R;
      f.points[0] = world(0.0, 0.0, 0.0);
      f.count = 1;
      f.dim = 0;
      return f;
    case ShapeKind::capsule:
      f.radius = sh.R;
      gather(2, [&](int i) { return world(i == 0 ? -0.5 * sh.L : 0.5 * sh.L, 0.0, 0.0); });
      break;
    case ShapeKind::polytope: {
      const Vec3 w = local_direction(frame, u);
      gather_by(
          sh.num_vertices,
          [&](int i) {
            const double* v = &sh.vertices[3 * i];
            return v[0] * w[0] + v[1] * w[1] + v[2] * w[2];
          },
          [&](int i) { return world_point(frame, &sh.vertices[3 * i]); });
      break;
    }
    case ShapeKind::polygon:
      f.radius = sh.R;
      gather(sh.num_vertices, [&](int i) { return world(sh.vertices[2 * i], sh.vertices[2 * i + 1], 0.0); });
      break;
    case ShapeKind::cylinder:
    case ShapeKind::cone: {
      round_feature(sh, frame, u, tol, whole, f);
      if (f.dim < 0) return f;
      // The farthest along u first (reduce_to_hull keeps it when the feature is one point).
      int top = 0;
      for (int i = 1; i < f.count; ++i)
        if (dot(f.points[i], u) > dot(f.points[top], u)) top = i;
      std::swap(f.points[0], f.points[top]);
      const Vec3 face_normal = f.face_normal, face_point = f.face_point;
      reduce_to_hull(f, plane, tol);
      f.face_normal = face_normal, f.face_point = face_point;
      return f;
    }
    default:
      return f;  // no rule
  }
  reduce_to_hull(f, plane, tol);
  if (f.dim != 2) return f;
  // The face: the polytope face (or polygon side) whose outward normal is closest to u.
  if (sh.kind == ShapeKind::polygon) {
    const double side = frame.Q.m[0][2] * u[0] + frame.Q.m[1][2] * u[1] + frame.Q.m[2][2] * u[2] >= 0.0 ? 1.0 : -1.0;
    for (int i = 0; i < 3; ++i) f.face_normal[i] = side * frame.Q.m[i][2];
    f.face_point = to_vec(frame.r);  // the unpadded polygon's plane
  } else {
    double height;
    f.face_normal = face_world_normal(sh, frame, facing_face(sh, frame, u), &height);
    f.face_point = to_vec(frame.r) + height * f.face_normal;  // the plane's foot
  }
  return f;
}

// Recipes of the contacts between the features of a and b (Nimble App. C1 in the witness plane).
class ContactPlanner {
 public:
  ContactPlanner(const Feature& fa, const Feature& fb, const Plane2& plane, double tol) : fa_(fa), fb_(fb), tol_(tol) {
    for (int i = 0; i < fa.count; ++i) plane.project(fa.points[i], a_[i]);
    for (int i = 0; i < fb.count; ++i) plane.project(fb.points[i], b_[i]);
    side_lengths(a_, fa.count, a_sides_);
    side_lengths(b_, fb.count, b_sides_);
  }

  int plan(Recipe* out) {
    out_ = out;
    count_ = 0;
    if (fa_.dim == 0) {
      point_against(0, fb_, b_, false);
    } else if (fb_.dim == 0) {
      point_against(0, fa_, a_, true);
    } else if (fa_.dim == 1 && fb_.dim == 1) {
      segments();
    } else {
      // A polygon against a segment or a polygon: corners inside or on the other's polygon (a corner of
      // b on a corner of a once, as a's), crossing sides. Flush faces offset along a side (a box on a
      // box shifted by 1 mm) put corners of each on the other's sides: all of them are contacts.
      if (fb_.dim == 2 && fb_.face_usable)
        for (int i = 0; i < fa_.count; ++i)
          if (inside(a_[i], b_, b_sides_, fb_.count, -tol_)) add({ContactRule::point_face, i, -1, -1, -1});
      if (fa_.dim == 2 && fa_.face_usable)
        for (int j = 0; j < fb_.count; ++j)
          if (inside(b_[j], a_, a_sides_, fa_.count, -tol_) && !near_corner(b_[j], a_, fa_.count))
            add({ContactRule::face_point, -1, -1, j, -1});
      // Crossings within tol of a corner are that corner's point–face contact.
      for (int i = 0; i < sides(fa_); ++i)
        for (int j = 0; j < sides(fb_); ++j) {
          const int i1 = (i + 1) % fa_.count, j1 = (j + 1) % fb_.count;
          const double s_tol = tol_ / a_sides_[i], t_tol = tol_ / b_sides_[j];
          double s, t;
          if (crossing(a_[i], a_[i1], a_sides_[i], b_[j], b_[j1], b_sides_[j], s, t) && s > s_tol && s < 1.0 - s_tol &&
              t > t_tol && t < 1.0 - t_tol &&
              lines_meet_inside(fa_.points[i], fa_.points[i1], fb_.points[j], fb_.points[j1]))
            add({ContactRule::edge_edge, i, i1, j, j1});
        }
    }
    return count_;
  }

 private:
  static int sides(const Feature& f) { return f.dim == 1 ? 1 : f.count; }

  // The length of each side i (corner i to corner i + 1, cyclic) of a projected feature, computed once
  // for the many tests that divide by it.
  static void side_lengths(const double (*poly)[2], int n, double* lengths) {
    for (int i = 0; i < n; ++i) {
      const double* p0 = poly[i];
      const double* p1 = poly[(i + 1) % n];
      lengths[i] = std::hypot(p1[0] - p0[0], p1[1] - p0[1]);
    }
  }

  void add(Recipe r) {
    if (count_ < kMaxPairContacts) out_[count_++] = r;
  }

  // q inside the counterclockwise polygon poly (n corners, side lengths `lengths`) by more than margin
  // (negative: or on it).
  static bool inside(const double* q, const double (*poly)[2], const double* lengths, int n, double margin) {
    for (int i = 0; i < n; ++i)
      if (cross2(poly[i], poly[(i + 1) % n], q) <= margin * lengths[i]) return false;
    return true;
  }

  // Whether q is within tol of one of the n corners of poly.
  bool near_corner(const double* q, const double (*poly)[2], int n) const {
    for (int i = 0; i < n; ++i)
      if (std::hypot(q[0] - poly[i][0], q[1] - poly[i][1]) <= tol_) return true;
    return false;
  }

  // Parameters s, t of the crossing of segments p0p1 and q0q1 of lengths p_length and q_length; false
  // if they are parallel within the tolerance (over the shorter one's length they turn apart by less
  // than tol).
  bool crossing(const double* p0, const double* p1, double p_length, const double* q0, const double* q1,
                double q_length, double& s, double& t) const {
    const double u[2] = {p1[0] - p0[0], p1[1] - p0[1]}, v[2] = {q1[0] - q0[0], q1[1] - q0[1]};
    const double w[2] = {q0[0] - p0[0], q0[1] - p0[1]};
    const double det = u[0] * v[1] - u[1] * v[0];
    if (std::abs(det) <= tol_ * std::max(p_length, q_length)) return false;
    s = (w[0] * v[1] - w[1] * v[0]) / det;
    t = (w[0] * u[1] - w[1] * u[0]) / det;
    return true;
  }

  // Whether the lines through p0p1 and q0q1 come closest within both segments (to tol). A side crossing
  // another in the witness plane need not: a segment steep to the plane (a capsule's axis clipped
  // against a face) passes the side's line elsewhere, and the lines' gap along u × v, which the
  // edge–edge rule measures, is then no gap of the shapes (it can read centimetres deep for shapes
  // apart).
  bool lines_meet_inside(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1) const {
    const Vec3 u = p1 - p0, v = q1 - q0, w = p0 - q0;
    const double uu = dot(u, u), uv = dot(u, v), vv = dot(v, v), uw = dot(u, w), vw = dot(v, w);
    const double det = uu * vv - uv * uv;
    if (!(det > 0.0)) return true;  // parallel: the crossing test decides
    const double s = (uv * vw - vv * uw) / det, t = (uu * vw - uv * uw) / det;
    const double s_tol = tol_ / std::sqrt(uu), t_tol = tol_ / std::sqrt(vv);
    return s >= -s_tol && s <= 1.0 + s_tol && t >= -t_tol && t <= 1.0 + t_tol;
  }

  // Parameter of q's projection onto the segment p0p1.
  static double along(const double* q, const double* p0, const double* p1) {
    const double u[2] = {p1[0] - p0[0], p1[1] - p0[1]};
    return ((q[0] - p0[0]) * u[0] + (q[1] - p0[1]) * u[1]) / (u[0] * u[0] + u[1] * u[1]);
  }

  // Point `index` of one body against the other's feature. point_on_b: the point is b's.
  void point_against(int index, const Feature& other, const double (*uv)[2], bool point_on_b) {
    const double* q = point_on_b ? b_[index] : a_[index];
    auto recipe = [&](ContactRule on_a, ContactRule on_b, int o0, int o1) {
      add(point_on_b ? Recipe{on_b, o0, o1, index, -1} : Recipe{on_a, index, -1, o0, o1});
    };
    if (other.dim == 2 && inside(q, uv, point_on_b ? a_sides_ : b_sides_, other.count, -tol_)) {
      recipe(ContactRule::point_face, ContactRule::face_point, -1, -1);
      return;
    }
    if (other.dim == 0) {
      recipe(ContactRule::point_point, ContactRule::point_point, 0, -1);
      return;
    }
    // The nearest side of the segment or polygon: its interior, or its nearer end.
    double best = INFINITY;
    int side = 0;
    double side_t = 0.0;
    for (int i = 0; i < sides(other); ++i) {
      const double* p0 = uv[i];
      const double* p1 = uv[(i + 1) % other.count];
      const double t = std::clamp(along(q, p0, p1), 0.0, 1.0);
      const double d = std::hypot(p0[0] + t * (p1[0] - p0[0]) - q[0], p0[1] + t * (p1[1] - p0[1]) - q[1]);
      if (d < best) {
        best = d;
        side = i;
        side_t = t;
      }
    }
    const int i0 = side, i1 = (side + 1) % other.count;
    if (side_t > 0.0 && side_t < 1.0)
      recipe(ContactRule::point_edge, ContactRule::edge_point, i0, i1);
    else
      recipe(ContactRule::point_point, ContactRule::point_point, side_t <= 0.0 ? i0 : i1, -1);
  }

  // Two segments: their crossing; else, parallel, the two ends of their overlap; else the nearest ends.
  // Segments that cross in the plane but whose lines come closest outside them (nearly parallel in
  // space: the edge–edge rule's closest points of the lines then lie far off, its gap along u × v no
  // gap of the shapes) are taken as parallel.
  void segments() {
    double s, t;
    const bool crosses = crossing(a_[0], a_[1], a_sides_[0], b_[0], b_[1], b_sides_[0], s, t) &&
                         lines_meet_inside(fa_.points[0], fa_.points[1], fb_.points[0], fb_.points[1]);
    if (crosses && s >= 0.0 && s <= 1.0 && t >= 0.0 && t <= 1.0) {
      add({ContactRule::edge_edge, 0, 1, 0, 1});
      return;
    }
    // Parallel segments touch only if their lines are within tol of each other in the plane; lines
    // apart side by side go to the nearest ends below.
    const double a_length = std::hypot(a_[1][0] - a_[0][0], a_[1][1] - a_[0][1]);
    if (!crosses && std::abs(cross2(a_[0], a_[1], b_[0])) <= tol_ * a_length) {
      const double b_lo = along(b_[0], a_[0], a_[1]), b_hi = along(b_[1], a_[0], a_[1]);
      const double lo = std::max(0.0, std::min(b_lo, b_hi)), hi = std::min(1.0, std::max(b_lo, b_hi));
      if (lo <= hi) {  // each end of the overlap is an end of a (against b's line) or of b
        for (double end : {lo, hi}) {
          if (end == 0.0 || end == 1.0)
            add({ContactRule::point_edge, end == 0.0 ? 0 : 1, -1, 0, 1});
          else
            add({ContactRule::edge_point, 0, 1, end == b_lo ? 0 : 1, -1});
        }
        if (count_ == 2 && hi - lo <= tol_) --count_;  // a single touching point
        return;
      }
    }
    // Apart in the plane: the nearest end against the other segment.
    int best_end = 0;
    bool end_of_b = false;
    double best = INFINITY;
    for (int e = 0; e < 4; ++e) {
      const bool of_b = e >= 2;
      const double* q = of_b ? b_[e - 2] : a_[e];
      const double* p0 = of_b ? a_[0] : b_[0];
      const double* p1 = of_b ? a_[1] : b_[1];
      const double tt = std::clamp(along(q, p0, p1), 0.0, 1.0);
      const double d = std::hypot(p0[0] + tt * (p1[0] - p0[0]) - q[0], p0[1] + tt * (p1[1] - p0[1]) - q[1]);
      if (d < best) {
        best = d;
        best_end = of_b ? e - 2 : e;
        end_of_b = of_b;
      }
    }
    point_against(best_end, end_of_b ? fa_ : fb_, end_of_b ? a_ : b_, end_of_b);
  }

  const Feature& fa_;
  const Feature& fb_;
  double tol_;
  double a_[kMaxFeaturePoints][2], b_[kMaxFeaturePoints][2];
  double a_sides_[kMaxFeaturePoints], b_sides_[kMaxFeaturePoints];
  Recipe* out_ = nullptr;
  int count_ = 0;
};

template <class T>
Vec3T<T> lift_point(const Vec3& w, const double* r, int body);
template <>
inline Vec3 lift_point<double>(const Vec3& w, const double*, int) {
  return w;
}
template <>
inline DVec3 lift_point<D>(const Vec3& w, const double* r, int body) {
  return seed_point(w, r, body);
}
template <class T>
Vec3T<T> lift_direction(const Vec3& m, int body);
template <>
inline Vec3 lift_direction<double>(const Vec3& m, int) {
  return m;
}
template <>
inline DVec3 lift_direction<D>(const Vec3& m, int body) {
  return seed_direction(m, body);
}

template <class T>
Vec3 value_of_vec(const Vec3T<T>& v) {
  return {{value_of(v[0]), value_of(v[1]), value_of(v[2])}};
}

// Point i of a rim feature f of body `body` (origin r), the other shape's face turned to it: its cap
// centre (moving with the body) plus the rim radius times its direction at its angle from d, the
// direction to that face across the axis (−m less its part along the axis, m the face's outward
// normal, moving with the other body), so that the point slides round the rim as either body turns.
// The cap centre and the angle are read off the point's value; a point on the axis (a cone's apex)
// stays there.
template <class T>
Vec3T<T> sliding_rim_point(const Feature& f, int i, const Feature& other, const double* r, int body) {
  const Vec3 p = f.points[i], centre = f.rim_origin + dot(p - f.rim_origin, f.rim_axis) * f.rim_axis;
  const Vec3T<T> lifted_centre = lift_point<T>(centre, r, body);
  const Vec3 offset = p - centre;
  if (norm(offset) <= 0.5 * f.rim_radius) return lifted_centre;
  const Vec3T<T> axis = lift_direction<T>(f.rim_axis, body),
                 toward = T(-1.0) * lift_direction<T>(other.face_normal, 1 - body);
  const Vec3T<T> across = toward - dot(toward, axis) * axis;
  const Vec3T<T> d = (1.0 / norm(across)) * across, e = cross(axis, d);
  const Vec3 d0 = value_of_vec(d), e0 = value_of_vec(e);
  const double angle = std::atan2(dot(offset, e0), dot(offset, d0));
  return lifted_centre + f.rim_radius * (std::cos(angle) * d + std::sin(angle) * e);
}

// The contact a recipe defines, from the features' points moving with bodies a (origin ra) and b.
template <class T>
void evaluate(const Recipe& rc, const Feature& fa, const Feature& fb, const double* ra, const double* rb,
              const Vec3& witness, Vec3T<T>& point, Vec3T<T>& normal, T& separation) {
  auto A = [&](int i) {
    return fa.rim_radius > 0.0 ? sliding_rim_point<T>(fa, i, fb, ra, 0) : lift_point<T>(fa.points[i], ra, 0);
  };
  auto B = [&](int i) {
    return fb.rim_radius > 0.0 ? sliding_rim_point<T>(fb, i, fa, rb, 1) : lift_point<T>(fb.points[i], rb, 1);
  };
  switch (rc.rule) {
    case ContactRule::point_point:
      point_point(A(rc.a0), fa.radius, B(rc.b0), fb.radius, witness, point, normal, separation);
      break;
    case ContactRule::point_edge: {
      const Vec3T<T> c = A(rc.a0);
      point_point(c, fa.radius, closest_on_line(c, B(rc.b0), B(rc.b1)), fb.radius, witness, point, normal, separation);
      break;
    }
    case ContactRule::edge_point: {
      const Vec3T<T> c = B(rc.b0);
      point_point(closest_on_line(c, A(rc.a0), A(rc.a1)), fa.radius, c, fb.radius, witness, point, normal, separation);
      break;
    }
    case ContactRule::edge_edge:
      edge_edge(A(rc.a0), A(rc.a1), fa.radius, B(rc.b0), B(rc.b1), fb.radius, witness, point, normal, separation);
      break;
    case ContactRule::point_face:
      point_face(A(rc.a0), fa.radius, lift_direction<T>(fb.face_normal, 1), lift_point<T>(fb.face_point, rb, 1),
                 fb.radius, false, point, normal, separation);
      break;
    case ContactRule::face_point:
      point_face(B(rc.b0), fb.radius, lift_direction<T>(fa.face_normal, 0), lift_point<T>(fa.face_point, ra, 0),
                 fa.radius, true, point, normal, separation);
      break;
    case ContactRule::distance:
      break;  // not from features
  }
}

inline void store(const Vec3& v, double* out, double (*)[12]) {
  for (int i = 0; i < 3; ++i) out[i] = v[i];
}
inline void store(const DVec3& v, double* out, double (*d)[12]) {
  for (int i = 0; i < 3; ++i) {
    out[i] = v[i].v;
    if (d) std::copy(v[i].d, v[i].d + 12, d[i]);
  }
}
inline void store(double v, double* out, double*) { *out = v; }
inline void store(const D& v, double* out, double* d) {
  *out = v.v;
  if (d) std::copy(v.d, v.d + 12, d);
}

// Fills one contact (and its derivatives, with T = D and deriv) with the frame of its normal.
template <class T>
void write_contact(const Vec3T<T>& point, const Vec3T<T>& normal, const T& separation, ContactRule rule, Contact& out,
                   ContactDerivatives* deriv) {
  Vec3T<T> t1, t2;
  tangents(normal, t1, t2);
  out.rule = rule;
  store(point, out.point, deriv ? deriv->point : nullptr);
  store(normal, out.normal, deriv ? deriv->normal : nullptr);
  store(t1, out.tangent1, deriv ? deriv->tangent1 : nullptr);
  store(t2, out.tangent2, deriv ? deriv->tangent2 : nullptr);
  store(separation, &out.separation, deriv ? deriv->separation : nullptr);
}

// The DISTANCE rule: the midpoint of the witness points, the distance's normal and value.
inline void distance_contact(const DistanceResult& d, const DistanceJacobian* jac, Contact& out,
                             ContactDerivatives* deriv) {
  if (!jac) {
    Vec3 point, normal;
    for (int i = 0; i < 3; ++i) {
      point[i] = 0.5 * (d.p_a[i] + d.p_b[i]);
      normal[i] = d.normal[i];
    }
    return write_contact(point, normal, d.distance, ContactRule::distance, out, nullptr);
  }
  DVec3 point, normal;
  D separation(d.distance);
  for (int i = 0; i < 3; ++i) {
    point[i] = D(0.5 * (d.p_a[i] + d.p_b[i]));
    normal[i] = D(d.normal[i]);
    for (int j = 0; j < 12; ++j) {
      point[i].d[j] = 0.5 * (jac->p_a[i][j] + jac->p_b[i][j]);
      normal[i].d[j] = jac->normal[i][j];
    }
  }
  std::copy(jac->distance, jac->distance + 12, separation.d);
  write_contact(point, normal, separation, ContactRule::distance, out, deriv);
}

// The signed distance and normal of a shape and a box when one face of the box settles them, without
// the cone program. The face f whose outward normal m best separates (largest s = m·p − h over the
// faces, p the shape's support point along −m, h the face's plane offset) gives the distance s
// exactly when p projects onto the face at an in-face distance ρ from its edges with ρ ≥ d and the
// box is at least 2d thick along m, d = max(−s, 0): every point of the shape lies on the far side of
// the plane, and (overlapping) any other direction u must cross at least d cos φ + ρ sin φ ≥ d of box
// over the disk of radius ρ around p's projection, or (T − d)|cos φ| + ρ sin φ ≥ d through the
// box below it, so m is the direction of least penetration. Returns false when the test does not
// settle the pair; else the distance and the unit normal out of the box.
//
// A polytope within radius ρ of its frame's origin c has s between m·(c − r) − h − ρ and that + ρ (r
// the box's centre): a pair of faces whose upper bounds both fall short of another face's lower bound
// cannot give the largest s, and its support points are not sought (a shape on a large box, as on the
// ground, needs only the pair of faces it lies between).
inline bool box_face_distance(const Shape& box, const Pose& box_pose, const Shape& other, const Pose& other_pose,
                              double* distance, double normal[3], int* face) {
  if (!box.box) return false;
  const int* opposite = box.opposite_face;
  const Pose frame = shape_frame(box, box_pose), other_frame = shape_frame(other, other_pose);
  const double* A = box.normals.data();
  // Per face: |A_f|, the world unit normal m, and m·(c − r) − h; then the largest lower bound of s.
  double norms[6], m[6][3], centre_height[6], least = -INFINITY;
  for (int f = 0; f < 6; ++f) {
    const double norm = norms[f] =
        std::sqrt(A[3 * f] * A[3 * f] + A[3 * f + 1] * A[3 * f + 1] + A[3 * f + 2] * A[3 * f + 2]);
    centre_height[f] = -box.offsets[f] / norm;
    for (int i = 0; i < 3; ++i) {
      m[f][i] = (frame.Q.m[i][0] * A[3 * f] + frame.Q.m[i][1] * A[3 * f + 1] + frame.Q.m[i][2] * A[3 * f + 2]) / norm;
      centre_height[f] += m[f][i] * (other_frame.r[i] - frame.r[i]);
    }
    least = std::max(least, centre_height[f] - other.vertex_radius);
  }
  double best = -INFINITY, best_point[3] = {0.0, 0.0, 0.0};
  int best_face = -1;
  for (int f = 0; f < 6; ++f) {
    const int g = opposite[f];
    // A pair of exactly opposite faces takes its two support points from one pass over the vertices.
    const bool paired = A[3 * g] == -A[3 * f] && A[3 * g + 1] == -A[3 * f + 1] && A[3 * g + 2] == -A[3 * f + 2];
    if (paired && g < f) continue;
    if (centre_height[f] + other.vertex_radius < least && (!paired || centre_height[g] + other.vertex_radius < least))
      continue;
    const double norm = norms[f], *mf = m[f];
    double p[3], q[3];
    const double minus_m[3] = {-mf[0], -mf[1], -mf[2]};
    if (paired)
      support_points(other, other_frame, mf, q, p);  // q along m: the support point under face g
    else
      support_point(other, other_frame, minus_m, p);
    auto consider = [&](int face, const double* direction, const double* point) {
      double s = -box.offsets[face] / norm;
      for (int i = 0; i < 3; ++i) s += direction[i] * (point[i] - frame.r[i]);
      if (s > best) best = s, best_face = face, std::copy(point, point + 3, best_point);
    };
    consider(f, mf, p);
    if (paired) consider(g, minus_m, q);
  }
  // p in the box's frame, projected onto the face's plane; its distances to the four side faces.
  const int f = best_face;
  const double norm_f = norms[f];
  const double n_f[3] = {A[3 * f] / norm_f, A[3 * f + 1] / norm_f, A[3 * f + 2] / norm_f};
  double c[3];
  for (int j = 0; j < 3; ++j) {
    c[j] = 0.0;
    for (int i = 0; i < 3; ++i) c[j] += frame.Q.m[i][j] * (best_point[i] - frame.r[i]);
  }
  const double height = n_f[0] * c[0] + n_f[1] * c[1] + n_f[2] * c[2] - box.offsets[f] / norm_f;
  for (int j = 0; j < 3; ++j) c[j] -= height * n_f[j];
  double clearance = INFINITY;
  for (int g = 0; g < 6; ++g) {
    if (g == f || g == opposite[f]) continue;
    clearance =
        std::min(clearance, (box.offsets[g] - A[3 * g] * c[0] - A[3 * g + 1] * c[1] - A[3 * g + 2] * c[2]) / norms[g]);
  }
  const double depth = std::max(-best, 0.0);
  const double thickness = (box.offsets[f] + box.offsets[opposite[f]]) / norm_f;
  if (!(clearance >= depth && thickness >= 2.0 * depth)) return false;
  *distance = best;
  *face = f;
  for (int i = 0; i < 3; ++i)
    normal[i] = frame.Q.m[i][0] * n_f[0] + frame.Q.m[i][1] * n_f[1] + frame.Q.m[i][2] * n_f[2];
  return true;
}

// The witness normal (from a to b) and signed distance of a pair by box_face_distance when either shape
// is a box whose face settles the pair, and that face (face_a of a or face_b of b; the other −1).
inline bool box_face_witness(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, DistanceResult& out,
                             int& face_a, int& face_b) {
  double distance, normal[3];
  face_a = face_b = -1;
  if (box_face_distance(b, pb, a, pa, &distance, normal, &face_b)) {
    for (int i = 0; i < 3; ++i) out.normal[i] = -normal[i];  // out of b: from b to a
  } else if (box_face_distance(a, pa, b, pb, &distance, normal, &face_a)) {
    for (int i = 0; i < 3; ++i) out.normal[i] = normal[i];
  } else {
    return false;
  }
  out.distance = distance;
  out.status = SolveStatus::solved;
  return true;
}

// World corners of a box whose shape frame is `frame`.
constexpr int kBoxCorners = 8;
inline void box_corners(const Shape& box, const Pose& frame, Vec3* out) {
  for (int k = 0; k < kBoxCorners; ++k) out[k] = world_point(frame, &box.vertices[3 * k]);
}

// The separation of two vertex sets along the axis u or −u, whichever is larger (the gap between
// their extents along it, negative where they overlap), and that direction, from a to b.
inline double axis_separation(const Vec3* va, int na, const Vec3* vb, int nb, const Vec3& u, Vec3& toward_b) {
  double a_lo = INFINITY, a_hi = -INFINITY, b_lo = INFINITY, b_hi = -INFINITY;
  for (int k = 0; k < na; ++k) {
    const double h = dot(va[k], u);
    a_lo = std::min(a_lo, h), a_hi = std::max(a_hi, h);
  }
  for (int k = 0; k < nb; ++k) {
    const double h = dot(vb[k], u);
    b_lo = std::min(b_lo, h), b_hi = std::max(b_hi, h);
  }
  const bool forward = b_lo - a_hi >= a_lo - b_hi;
  toward_b = forward ? u : -1.0 * u;
  return forward ? b_lo - a_hi : a_lo - b_hi;
}

// The axis along which two boxes overlap least or lie farthest apart, among their six face normals
// and the nine cross products of their edge directions (the separating axis theorem for boxes, as in
// Gottschalk's OBB test and Box2D/ODE's box–box): its separation (a lower bound on the distance when
// apart, the exact penetration depth when overlapping), its direction from a to b, and the face of a
// or of b it is the normal of (−1 for an edge pair). A face beats an edge pair, and a's face b's, unless
// the other is larger by more than tol: flush faces then keep one reference whatever the round-off.
struct BoxAxis {
  double separation = -INFINITY;
  Vec3 normal{};
  int face_a = -1, face_b = -1;
};

inline BoxAxis box_separating_axis(const Shape& a, const Pose& fa, const Vec3* va, const Shape& b, const Pose& fb,
                                   const Vec3* vb, double tol) {
  BoxAxis best_a, best_b, best_edge;
  Vec3 edges_a[3], edges_b[3];
  int na = 0, nb = 0;
  for (int f = 0; f < 6; ++f) {
    Vec3 toward_b;
    const Vec3 ma = face_world_normal(a, fa, f, nullptr);
    double s = axis_separation(va, kBoxCorners, vb, kBoxCorners, ma, toward_b);
    if (f < a.opposite_face[f]) edges_a[na++] = ma;
    if (s > best_a.separation && dot(toward_b, ma) > 0.0) best_a = {s, toward_b, f, -1};
    const Vec3 mb = face_world_normal(b, fb, f, nullptr);
    s = axis_separation(va, kBoxCorners, vb, kBoxCorners, mb, toward_b);
    if (f < b.opposite_face[f]) edges_b[nb++] = mb;
    if (s > best_b.separation && dot(toward_b, mb) < 0.0) best_b = {s, toward_b, -1, f};
  }
  for (const Vec3& ea : edges_a)
    for (const Vec3& eb : edges_b) {
      const Vec3 axis = cross(ea, eb);
      const double length = norm(axis);
      if (length < 1e-6) continue;  // parallel edges: their planes are face axes
      Vec3 toward_b;
      const double s = axis_separation(va, kBoxCorners, vb, kBoxCorners, (1.0 / length) * axis, toward_b);
      if (s > best_edge.separation) best_edge = {s, toward_b, -1, -1};
    }
  const BoxAxis& face = best_b.separation > best_a.separation + tol ? best_b : best_a;
  return best_edge.separation > face.separation + tol ? best_edge : face;
}

// The polygon of a polytope's face `face` (shape frame `frame`): its corners (the vertices on its
// plane), in the witness plane's counterclockwise order, with its outward normal and plane.
inline Feature face_feature(const Shape& sh, const Pose& frame, int face, double tol, const Plane2& plane) {
  Feature f;
  double height;
  f.face_normal = face_world_normal(sh, frame, face, &height);
  f.face_point = to_vec(frame.r) + height * f.face_normal;
  auto add_corner = [&](int k) { f.points[f.count++] = world_point(frame, &sh.vertices[3 * k]); };
  const geometry::IncidenceLists& lists = sh.face_vertices;
  if (lists.answers(face, tol)) {
    // The corners among the face's nearest vertices, in the order of a scan over all of them.
    int corners[geometry::kIncidenceListLength], count = 0;
    for (int e = lists.start[face], end = lists.end_within(face, tol); e < end; ++e)
      if (on_face_plane(sh, face, &sh.vertices[3 * lists.index[e]], tol)) corners[count++] = lists.index[e];
    std::sort(corners, corners + count);
    for (int i = 0; i < std::min(count, kMaxFeaturePoints); ++i) add_corner(corners[i]);
  } else {
    for (int k = 0; k < sh.num_vertices && f.count < kMaxFeaturePoints; ++k)
      if (on_face_plane(sh, face, &sh.vertices[3 * k], tol)) add_corner(k);
  }
  if (f.count > 0) reduce_to_hull(f, plane, tol);
  return f;
}

// The face of a polytope (shape frame `frame`) turned most towards the world direction u among those
// through its vertex farthest along u (half-spaces may give faces no vertex lies on).
inline int incident_face(const Shape& sh, const Pose& frame, const Vec3& u, double tol) {
  const Vec3 w = local_direction(frame, u);
  const int top = geometry::detail::farthest(sh.vertices, sh.num_vertices, 3, w.x);
  int best = -1;
  double best_alignment = -INFINITY;
  auto consider = [&](int f) {  // the first of equally aligned faces in index order, as a scan keeps
    if (!on_face_plane(sh, f, &sh.vertices[3 * top], tol)) return;
    const double alignment = signed_alignment2(sh, f, w);
    if (alignment > best_alignment || (alignment == best_alignment && f < best)) best_alignment = alignment, best = f;
  };
  const geometry::IncidenceLists& lists = sh.vertex_faces;
  if (lists.answers(top, tol)) {
    for (int e = lists.start[top], end = lists.end_within(top, tol); e < end; ++e) consider(lists.index[e]);
  } else {
    for (int f = 0; f < sh.num_faces; ++f) consider(f);
  }
  return best;
}

// A witness normal within this angle (its cosine) of a polytope's face normal takes that face as the
// reference face of a clipped patch. GJK/EPA's normal of a segment or a face lying across a face's
// side, tilted a little into it, is the edge pair's at the deeper crossing; the face clipped against
// the incident feature gives both crossings (each with its own rule), where the support features
// along that normal give the deeper one only and the pair rocks from one crossing to the other. An
// incident polygon within the same angle of facing the reference face also takes the reference's
// corners under it (Feature::face_usable).
constexpr double kFaceSnapCosine = 0.99;

// The features of a polytope's face touching or overlapping another shape along the face's normal n:
// the reference face (face_a of a, or else face_b of b, whose outward normal is ±n) and the other
// shape's incident feature: a polytope's face turned most against it, a capsule's whole axis, a
// polygon's whole outline. The planner then clips them against each other in the witness plane
// (Box2D's and ODE's box–box clipping): the incident corners over the reference face, the reference
// corners under the incident face and the crossings of their sides, each at its own depth, so that a
// deep or tilted overlap pushes on a patch rather than on its deepest point. False if a face has no
// corner (then the support features stand in).
inline bool face_pair_features(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, const Vec3& n,
                               int face_a, int face_b, double tol, const Plane2& plane, Feature& fa, Feature& fb) {
  auto incident = [&](const Shape& sh, const Pose& body, const Vec3& u, Feature& f) {
    if (sh.kind != ShapeKind::polytope) {
      f = support_feature(sh, body, u, tol, plane, true);
      return;
    }
    const Pose frame = shape_frame(sh, body);
    const int face = incident_face(sh, frame, u, tol);
    if (face >= 0) f = face_feature(sh, frame, face, tol, plane);
  };
  if (face_a >= 0) {
    fa = face_feature(a, shape_frame(a, pa), face_a, tol, plane);
    incident(b, pb, -1.0 * n, fb);
    fb.face_usable = dot(fb.face_normal, n) <= -kFaceSnapCosine;
  } else {
    fb = face_feature(b, shape_frame(b, pb), face_b, tol, plane);
    incident(a, pa, n, fa);
    fa.face_usable = dot(fa.face_normal, n) >= kFaceSnapCosine;
  }
  return fa.count > 0 && fb.count > 0;
}

// The face of a polytope whose outward normal is closest to u if within kFaceSnapCosine of it (else
// −1), and its normal.
inline int snapped_face(const Shape& sh, const Pose& body, const Vec3& u, Vec3& normal) {
  if (sh.kind != ShapeKind::polytope) return -1;
  const Pose frame = shape_frame(sh, body);
  const int face = facing_face(sh, frame, u);
  normal = face_world_normal(sh, frame, face, nullptr);
  return dot(normal, u) >= kFaceSnapCosine ? face : -1;
}

// The closest points ca, cb of the segments p0p1 and q0q1 (either may be a point, p0 = p1): the lines'
// closest points, clamped to a segment and projected back onto the other (Ericson, Real-Time Collision
// Detection, §5.1.9).
inline void closest_on_segments(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, Vec3& ca, Vec3& cb) {
  const Vec3 u = p1 - p0, v = q1 - q0, w = p0 - q0;
  const double uu = dot(u, u), vv = dot(v, v), uw = dot(u, w), vw = dot(v, w);
  double s = 0.0, t = 0.0;
  if (uu == 0.0) {
    if (vv > 0.0) t = std::clamp(vw / vv, 0.0, 1.0);
  } else if (vv == 0.0) {
    s = std::clamp(-uw / uu, 0.0, 1.0);
  } else {
    const double uv = dot(u, v), det = uu * vv - uv * uv;
    // Parallel (to rounding): any s; s = 0 and the t it gives.
    s = det > 1e-14 * uu * vv ? std::clamp((uv * vw - vv * uw) / det, 0.0, 1.0) : 0.0;
    t = (uv * s + vw) / vv;
    if (t < 0.0 || t > 1.0) {
      t = std::clamp(t, 0.0, 1.0);
      s = std::clamp((uv * t - uw) / uu, 0.0, 1.0);
    }
  }
  ca = p0 + s * u;
  cb = q0 + t * v;
}

// The world ends of a sphere's (both its centre) or a capsule's axis.
inline void axis_ends(const Shape& sh, const Pose& body, Vec3& e0, Vec3& e1) {
  const Pose frame = shape_frame(sh, body);
  const double half = sh.kind == ShapeKind::capsule ? 0.5 * sh.L : 0.0;
  const double y0[3] = {-half, 0.0, 0.0}, y1[3] = {half, 0.0, 0.0};
  e0 = world_point(frame, y0);
  e1 = world_point(frame, y1);
}

// The signed distance and witness normal (from a to b) of two spheres or capsules in closed form: their
// axes' closest points, the normal along their difference, less the radii. Axes that cross (closest
// points within rounding of each other) are parted along the common perpendicular u × v of their
// directions, oriented from a's centre to b's, by the sum of the radii: the least translation that
// separates them while their crossing stays inside both (EPA has no solid difference to grow there).
// False for another pair, and for coincident or parallel crossing axes (no one direction parts them).
inline bool round_core_witness(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, DistanceResult& out) {
  auto rounded = [](const Shape& sh) { return sh.kind == ShapeKind::sphere || sh.kind == ShapeKind::capsule; };
  if (!rounded(a) || !rounded(b)) return false;
  Vec3 a0, a1, b0, b1, ca, cb;
  axis_ends(a, pa, a0, a1);
  axis_ends(b, pb, b0, b1);
  closest_on_segments(a0, a1, b0, b1, ca, cb);
  const Vec3 gap = cb - ca;
  const double length = norm(gap), size = a.length_scale + b.length_scale;
  Vec3 normal;
  if (length > 1e-12 * size) {
    normal = (1.0 / length) * gap;
  } else {
    const Vec3 common = cross(a1 - a0, b1 - b0);
    const double common_length = norm(common);
    if (common_length <= 1e-12 * std::max(norm(a1 - a0) * norm(b1 - b0), size * size)) return false;
    const double toward_b = dot(common, (0.5 * (b0 + b1)) - (0.5 * (a0 + a1))) >= 0.0 ? 1.0 : -1.0;
    normal = (toward_b / common_length) * common;
  }
  out.distance = dot(normal, gap) - (a.R + b.R);
  for (int i = 0; i < 3; ++i) {
    out.normal[i] = normal[i];
    out.p_a[i] = ca[i] + a.R * normal[i];
    out.p_b[i] = cb[i] - b.R * normal[i];
  }
  out.status = SolveStatus::solved;
  return true;
}

// The witness normal (from a to b) and signed distance of two shapes with cores (gjk.hpp) by GJK/EPA,
// if it converged.
inline bool gjk_witness(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, DistanceResult& out) {
  geometry::Core core_a, core_b;
  if (!geometry::shape_core(a, pa, core_a) || !geometry::shape_core(b, pb, core_b)) return false;
  geometry::GjkDistance result;
  geometry::gjk_distance(core_a, core_b, result);
  if (!result.converged) return false;
  out.distance = result.distance;
  std::copy(result.normal, result.normal + 3, out.normal);
  std::copy(result.p_a, result.p_a + 3, out.p_a);
  std::copy(result.p_b, result.p_b + 3, out.p_b);
  out.status = SolveStatus::solved;
  return true;
}

// Evaluates the recipes into out (and deriv), keeping the contacts whose separation is at most
// max_separation; returns their count.
inline int evaluate_contacts(const Recipe* recipes, int count, const Feature& fa, const Feature& fb, const Pose& pa,
                             const Pose& pb, const Vec3& witness, double max_separation, Contact* out,
                             ContactDerivatives* deriv) {
  int kept = 0;
  for (int k = 0; k < count; ++k) {
    if (deriv) {
      DVec3 point, normal;
      D separation;
      evaluate(recipes[k], fa, fb, pa.r, pb.r, witness, point, normal, separation);
      write_contact(point, normal, separation, recipes[k].rule, out[kept], deriv + kept);
    } else {
      Vec3 point, normal;
      double separation;
      evaluate(recipes[k], fa, fb, pa.r, pb.r, witness, point, normal, separation);
      write_contact(point, normal, separation, recipes[k].rule, out[kept], nullptr);
    }
    if (out[kept].separation <= max_separation) ++kept;
  }
  return kept;
}

inline bool is_round(const Shape& sh) { return sh.kind == ShapeKind::cylinder || sh.kind == ShapeKind::cone; }

// The contacts of a polytope's face on or near the witness normal n (the better aligned of a's and
// b's, kFaceSnapCosine) clipped in the face's plane against the other shape's incident feature, those
// within the margin; 0 if no face is near n or none is within the margin.
// The contacts of the reference face face_a of a (else face_b of b), whose outward normal is ±face_normal
// (from a to b), clipped in its plane against the other shape's incident feature, those within the
// margin; 0 if none is.
inline int reference_face_contacts(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb,
                                   const Vec3& face_normal, int face_a, int face_b, double tol, double margin,
                                   Contact* out, ContactDerivatives* deriv) {
  Plane2 plane;
  tangents(face_normal, plane.e1, plane.e2);
  Feature fa, fb;
  if (!face_pair_features(a, pa, b, pb, face_normal, face_a, face_b, tol, plane, fa, fb) || fa.dim < 0 || fb.dim < 0)
    return 0;
  Recipe recipes[kMaxPairContacts];
  return evaluate_contacts(recipes, ContactPlanner(fa, fb, plane, tol).plan(recipes), fa, fb, pa, pb, face_normal,
                           margin, out, deriv);
}

// The contacts of a polytope's face on or near the witness normal n (the better aligned of a's and
// b's, kFaceSnapCosine) clipped in the face's plane against the other shape's incident feature, those
// within the margin; 0 if no face is near n or none is within the margin.
inline int snapped_face_contacts(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, const Vec3& n,
                                 double tol, double margin, Contact* out, ContactDerivatives* deriv) {
  Vec3 normal_a, normal_b;
  const int snap_a = snapped_face(a, pa, n, normal_a), snap_b = snapped_face(b, pb, -1.0 * n, normal_b);
  if (snap_a < 0 && snap_b < 0) return 0;
  const bool use_a = snap_a >= 0 && (snap_b < 0 || dot(normal_a, n) >= -dot(normal_b, n));
  return reference_face_contacts(a, pa, b, pb, use_a ? normal_a : -1.0 * normal_b, use_a ? snap_a : -1,
                                 use_a ? -1 : snap_b, tol, margin, out, deriv);
}

// Contacts of two boxes from their separating axis: for a face axis, that face clipped against the
// other box's incident face (face_pair_features), without the contacts farther apart than the margin
// (a tilted incident face's raised corners); for an edge pair, the clipped patch of a face within a few
// degrees of it (snapped_face_contacts), else the edges' contact. Returns −1 when the
// axes leave the pair to the signed distance: no contact of the clipped patch within the margin,
// although no axis separates the boxes by more than the margin.
inline int box_box_contacts(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, const ContactSettings& cs,
                            double tol, Contact* out, ContactDerivatives* deriv) {
  const Pose frame_a = shape_frame(a, pa), frame_b = shape_frame(b, pb);
  Vec3 va[kBoxCorners], vb[kBoxCorners];
  box_corners(a, frame_a, va);
  box_corners(b, frame_b, vb);
  const BoxAxis axis = box_separating_axis(a, frame_a, va, b, frame_b, vb, tol);
  if (axis.separation > cs.margin) return 0;
  const Vec3& n = axis.normal;
  if (axis.face_a < 0 && axis.face_b < 0) {  // an edge pair within a few degrees of a face: its patch
    const int count = snapped_face_contacts(a, pa, b, pb, n, tol, cs.margin, out, deriv);
    if (count > 0) return count;
  }
  Plane2 plane;
  tangents(n, plane.e1, plane.e2);
  Feature fa, fb;
  if (!((axis.face_a >= 0 || axis.face_b >= 0) &&
        face_pair_features(a, pa, b, pb, n, axis.face_a, axis.face_b, tol, plane, fa, fb))) {
    fa = support_feature(a, pa, n, tol, plane);
    fb = support_feature(b, pb, -1.0 * n, tol, plane);
  }
  Recipe recipes[kMaxPairContacts];
  const int count = evaluate_contacts(recipes, ContactPlanner(fa, fb, plane, tol).plan(recipes), fa, fb, pa, pb, n,
                                      cs.margin, out, deriv);
  return count > 0 ? count : -1;
}

}  // namespace

int pair_contacts(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, const ContactSettings& cs,
                  const SolverSettings& settings, Contact* out, ContactDerivatives* deriv, SolveStatus* status) {
  if (status != nullptr) *status = SolveStatus::solved;
  // Shapes whose bounding boxes, grown by the margin, do not meet are apart without a solve (whose
  // squared distances overflow for shapes 10¹⁵⁵ m apart).
  if (!overlap(bounding_box(a, pa, 0.5 * cs.margin), bounding_box(b, pb, 0.5 * cs.margin))) return 0;
  return overlapping_pair_contacts(a, pa, b, pb, cs, settings, out, deriv, status);
}

int overlapping_pair_contacts(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, const ContactSettings& cs,
                              const SolverSettings& settings, Contact* out, ContactDerivatives* deriv,
                              SolveStatus* status) {
  if (status != nullptr) *status = SolveStatus::solved;
  const double tol = cs.feature_tolerance * 0.5 * (a.length_scale + b.length_scale);
  if (a.box && b.box && a.num_vertices == kBoxCorners && b.num_vertices == kBoxCorners) {
    const int count = box_box_contacts(a, pa, b, pb, cs, tol, out, deriv);
    if (count >= 0) return count;
  }
  // Ellipsoids are smooth: one contact, at the signed distance's witnesses.
  const bool has_rules = a.kind != ShapeKind::ellipsoid && b.kind != ShapeKind::ellipsoid;
  const bool round = is_round(a) || is_round(b);
  DistanceResult dist;
  DistanceJacobian dist_jac;
  const bool distance_derivatives = deriv && !has_rules;
  // With rules the solve only picks the features (the contacts come from the rules' formulas), for
  // which the plain interior-point stop is accurate enough and needs fewer iterations than centring.
  SolverSettings feature_settings = settings;
  feature_settings.barrier = 0.0;
  int box_face_a, box_face_b;
  const bool by_face = has_rules && box_face_witness(a, pa, b, pb, dist, box_face_a, box_face_b);
  const bool by_gjk =
      !by_face && has_rules && (round_core_witness(a, pa, b, pb, dist) || gjk_witness(a, pa, b, pb, dist));
  if (!by_face && !by_gjk)
    signed_distance(a, pa, b, pb, has_rules ? feature_settings : settings, dist,
                    distance_derivatives ? &dist_jac : nullptr);
  // Without centring the solve can stall on nearly touching flat faces with a normal tilted enough
  // (~1e-3) to turn a face into an edge; the centred solve settles those.
  if (has_rules && (dist.status == SolveStatus::max_iterations || dist.status == SolveStatus::numerical_error))
    signed_distance(a, pa, b, pb, settings, dist, nullptr);
  if (status != nullptr) *status = dist.status;
  // Apart, or a solve that failed (status): its witnesses are no contacts.
  if (!(dist.distance <= cs.margin) || dist.status == SolveStatus::numerical_error) return 0;
  const Vec3 n = to_vec(dist.normal);
  int count = 0;
  if (has_rules) {
    // A polytope's face on or near the witness normal: that face against the other's incident feature.
    // A box's face that settled the pair is that face: the witness normal is its normal, which no face
    // of the other shape is better aligned with than to rounding (a mesh on the ground needs no scan of
    // its faces).
    if (by_face) {
      const bool on_a = box_face_a >= 0;
      const Vec3 face_normal = on_a ? face_world_normal(a, shape_frame(a, pa), box_face_a, nullptr)
                                    : -1.0 * face_world_normal(b, shape_frame(b, pb), box_face_b, nullptr);
      count = reference_face_contacts(a, pa, b, pb, face_normal, box_face_a, box_face_b, tol, cs.margin, out, deriv);
    } else {
      count = snapped_face_contacts(a, pa, b, pb, n, tol, cs.margin, out, deriv);
    }
    // A face's patch stands for the pair only where it reaches the pair's depth: where the deepest
    // point lies off the face (a capsule's end past the face's side, against its edge), the face
    // clipped against the other's feature keeps only shallower points, and the pair's own features
    // decide.
    if (count > 0) {
      double deepest = INFINITY;
      for (int k = 0; k < count; ++k) deepest = std::min(deepest, out[k].separation);
      if (deepest > dist.distance + tol) count = 0;
    }
    if (count == 0) {
      Plane2 plane;
      tangents(n, plane.e1, plane.e2);
      const Feature fa = support_feature(a, pa, n, tol, plane);
      const Feature fb = support_feature(b, pb, -1.0 * n, tol, plane);
      // A cylinder's or a cone's features stand for its surface only against a segment or a face (a
      // cap's rim samples are no circle to a point): a point against one is the signed distance's.
      const bool features = fa.dim >= 0 && fb.dim >= 0 && !(round && std::min(fa.dim, fb.dim) == 0);
      Recipe recipes[kMaxPairContacts];
      if (features)
        count = evaluate_contacts(recipes, ContactPlanner(fa, fb, plane, tol).plan(recipes), fa, fb, pa, pb, n,
                                  INFINITY, out, deriv);
    }
  }
  if (count > 0) return count;
  // (The box-face test gives no witness points. On a cylinder or a cone GJK/EPA stop at a tolerance
  // that picks features but leaves the witnesses' normal far less accurate than the distance, and EPA's depth is the
  // least translation's where the distance rule's is along DCOL's normal: their one contact is the centred solve's, as
  // the ellipsoids' is.)
  if (by_face || (deriv && !distance_derivatives) || round) {
    signed_distance(a, pa, b, pb, settings, dist, deriv ? &dist_jac : nullptr);
    if (status != nullptr) *status = dist.status;
    if (dist.status == SolveStatus::numerical_error) return 0;
  }
  distance_contact(dist, deriv ? &dist_jac : nullptr, out[0], deriv);
  return 1;
}

int reduce_patch(Contact* contacts, ContactDerivatives* deriv, int count, int* kept_places) {
  if (count <= kPatchPoints) {
    if (kept_places != nullptr) std::iota(kept_places, kept_places + count, 0);
    return count;
  }
  auto point = [&](int k) { return to_vec(contacts[k].point); };
  auto argmax = [&](auto score) {
    int best = -1;
    double best_score = 0.0;
    for (int k = 0; k < count; ++k) {
      const double value = score(k);
      if (best < 0 || value > best_score) best = k, best_score = value;
    }
    return std::pair{best, best_score};
  };
  int chosen[kPatchPoints];
  Vec3 centroid{0.0, 0.0, 0.0};
  for (int k = 0; k < count; ++k) centroid = centroid + point(k);
  centroid = (1.0 / count) * centroid;
  chosen[0] = argmax([&](int k) { return dot(point(k) - centroid, point(k) - centroid); }).first;
  const Vec3 p0 = point(chosen[0]);
  chosen[1] = argmax([&](int k) { return dot(point(k) - p0, point(k) - p0); }).first;
  const Vec3 p1 = point(chosen[1]);
  const Vec3 base = p1 - p0;
  chosen[2] = argmax([&](int k) {
                const Vec3 c = cross(base, point(k) - p0);
                return dot(c, c);
              }).first;
  const Vec3 p2 = point(chosen[2]);
  const Vec3 up = cross(base, p2 - p0);  // the triangle's normal (its size: twice the area)
  // The area a point adds: for each edge whose outer side it is on, the triangle it makes with it.
  const Vec3 corners[3] = {p0, p1, p2};
  const auto [fourth, gain] = argmax([&](int k) {
    double added = 0.0;
    for (int e = 0; e < 3; ++e) {
      const Vec3& a = corners[e];
      const Vec3& b = corners[(e + 1) % 3];
      added = std::max(added, -dot(cross(b - a, point(k) - a), up));
    }
    return added;
  });
  int kept = 3;
  if (gain > 0.0) chosen[kept++] = fourth;
  std::sort(chosen, chosen + kept);
  for (int i = 0; i < kept; ++i) {
    contacts[i] = contacts[chosen[i]];
    if (deriv) deriv[i] = deriv[chosen[i]];
  }
  if (kept_places != nullptr) std::copy(chosen, chosen + kept, kept_places);
  return kept;
}

}  // namespace dcol::contact
