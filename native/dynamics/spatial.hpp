// Spatial algebra in world axes (Featherstone ch. 2), with 6-vectors ordered [linear; angular] as in
// Pinocchio. A motion [v; ω] is the velocity of the body point at a fixed reference point O and the
// angular velocity; a force [f; n] is the force and its moment about O. With every quantity
// expressed at the same O (the dynamics take O = Data::origin), no coordinate transforms appear in
// the recursions, and a rigid motion of a subtree acts on its quantities by the cross products
// below. Poses below are relative to O.
#pragma once

#include <cmath>

#include "core/rotations.hpp"

namespace dcol::dyn {

struct Vec3 {
  double x = 0.0, y = 0.0, z = 0.0;
};

inline Vec3 operator+(const Vec3& a, const Vec3& b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline Vec3 operator-(const Vec3& a, const Vec3& b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline Vec3 operator-(const Vec3& a) { return {-a.x, -a.y, -a.z}; }
inline Vec3 operator*(double s, const Vec3& a) { return {s * a.x, s * a.y, s * a.z}; }
inline Vec3& operator+=(Vec3& a, const Vec3& b) { return a = a + b; }
inline double dot(const Vec3& a, const Vec3& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

// Row-major 3×3 matrix.
struct Mat3 {
  double m[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
  static Mat3 identity() {
    Mat3 I;
    I.m[0][0] = I.m[1][1] = I.m[2][2] = 1.0;
    return I;
  }
};

inline Vec3 operator*(const Mat3& A, const Vec3& v) {
  return {A.m[0][0] * v.x + A.m[0][1] * v.y + A.m[0][2] * v.z, A.m[1][0] * v.x + A.m[1][1] * v.y + A.m[1][2] * v.z,
          A.m[2][0] * v.x + A.m[2][1] * v.y + A.m[2][2] * v.z};
}
inline Vec3 transpose_times(const Mat3& A, const Vec3& v) {
  return {A.m[0][0] * v.x + A.m[1][0] * v.y + A.m[2][0] * v.z, A.m[0][1] * v.x + A.m[1][1] * v.y + A.m[2][1] * v.z,
          A.m[0][2] * v.x + A.m[1][2] * v.y + A.m[2][2] * v.z};
}
inline Mat3 operator*(const Mat3& A, const Mat3& B) {
  Mat3 C;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) C.m[i][j] = A.m[i][0] * B.m[0][j] + A.m[i][1] * B.m[1][j] + A.m[i][2] * B.m[2][j];
  return C;
}
// A S Aᵀ for symmetric S.
inline Mat3 congruence(const Mat3& A, const Mat3& S) {
  Mat3 AS = A * S, C;
  for (int i = 0; i < 3; ++i)
    for (int j = i; j < 3; ++j)
      C.m[i][j] = C.m[j][i] = AS.m[i][0] * A.m[j][0] + AS.m[i][1] * A.m[j][1] + AS.m[i][2] * A.m[j][2];
  return C;
}

// Rotation by angle about a unit axis (Rodrigues).
inline Mat3 axis_angle(const Vec3& u, double angle) {
  const double c = std::cos(angle), s = std::sin(angle), t = 1.0 - c;
  Mat3 R;
  R.m[0][0] = c + t * u.x * u.x;
  R.m[0][1] = t * u.x * u.y - s * u.z;
  R.m[0][2] = t * u.x * u.z + s * u.y;
  R.m[1][0] = t * u.x * u.y + s * u.z;
  R.m[1][1] = c + t * u.y * u.y;
  R.m[1][2] = t * u.y * u.z - s * u.x;
  R.m[2][0] = t * u.x * u.z - s * u.y;
  R.m[2][1] = t * u.y * u.z + s * u.x;
  R.m[2][2] = c + t * u.z * u.z;
  return R;
}

// Rotation of the quaternion [w, x, y, z] / ‖·‖ (nonzero: the callers check), by the geometry
// core's conversion.
inline Mat3 quaternion_matrix(const double* q) {
  dcol::Mat3 Q{};
  dcol::quaternion_to_matrix(q, Q);
  Mat3 R;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) R.m[r][c] = Q.m[r][c];
  return R;
}

// Unit quaternion [w, x, y, z] with w ≥ 0 of a rotation matrix (Shepperd's method: the largest of
// the four squared components gives the stable square root).
inline void matrix_quaternion(const Mat3& R, double* q) {
  const double trace = R.m[0][0] + R.m[1][1] + R.m[2][2];
  int i = 0;
  double largest = trace;
  for (int k = 0; k < 3; ++k)
    if (R.m[k][k] > largest) largest = R.m[k][k], i = k + 1;
  if (i == 0) {
    const double s = 2.0 * std::sqrt(1.0 + trace);
    q[0] = 0.25 * s;
    q[1] = (R.m[2][1] - R.m[1][2]) / s;
    q[2] = (R.m[0][2] - R.m[2][0]) / s;
    q[3] = (R.m[1][0] - R.m[0][1]) / s;
  } else {
    const int a = i - 1, b = i % 3, c = (i + 1) % 3;  // cyclic axes
    const double s = 2.0 * std::sqrt(1.0 + R.m[a][a] - R.m[b][b] - R.m[c][c]);
    q[0] = (R.m[c][b] - R.m[b][c]) / s;
    q[1 + a] = 0.25 * s;
    q[1 + b] = (R.m[b][a] + R.m[a][b]) / s;
    q[1 + c] = (R.m[c][a] + R.m[a][c]) / s;
  }
  if (q[0] < 0.0)
    for (int k = 0; k < 4; ++k) q[k] = -q[k];
}

// Rigid transform: a point y of the child frame is at R y + p in the parent frame.
struct Transform {
  Mat3 R = Mat3::identity();
  Vec3 p;
  Vec3 act(const Vec3& y) const { return R * y + p; }
};
inline Transform operator*(const Transform& A, const Transform& B) { return {A.R * B.R, A.R * B.p + A.p}; }

struct Vec6 {
  Vec3 lin, ang;
};
inline Vec6 operator+(const Vec6& a, const Vec6& b) { return {a.lin + b.lin, a.ang + b.ang}; }
inline Vec6 operator-(const Vec6& a, const Vec6& b) { return {a.lin - b.lin, a.ang - b.ang}; }
inline Vec6 operator*(double s, const Vec6& a) { return {s * a.lin, s * a.ang}; }
inline Vec6& operator+=(Vec6& a, const Vec6& b) { return a = a + b; }
inline double dot(const Vec6& a, const Vec6& b) { return dot(a.lin, b.lin) + dot(a.ang, b.ang); }

// m × m' (motion cross product).
inline Vec6 cross_motion(const Vec6& m, const Vec6& n) {
  return {cross(m.ang, n.lin) + cross(m.lin, n.ang), cross(m.ang, n.ang)};
}
// m ×* f (force cross product); (m ×* f)·n = −f·(m × n).
inline Vec6 cross_force(const Vec6& m, const Vec6& f) {
  return {cross(m.ang, f.lin), cross(m.ang, f.ang) + cross(m.lin, f.lin)};
}

// A motion given in a frame at pose X, expressed at O in world axes.
inline Vec6 motion_to_world(const Transform& X, const Vec6& local) {
  const Vec3 w = X.R * local.ang;
  return {X.R * local.lin + cross(X.p, w), w};
}
// A world motion expressed in the frame at pose X (velocity of its origin, in its axes).
inline Vec6 motion_to_local(const Transform& X, const Vec6& world) {
  return {transpose_times(X.R, world.lin + cross(world.ang, X.p)), transpose_times(X.R, world.ang)};
}

// Rigid-body inertia in a body's frame: mass, centre of mass, rotational inertia about the centre
// of mass.
struct Inertia {
  double mass = 0.0;
  Vec3 com;
  Mat3 rot;
};

// Spatial inertia about O in world axes: mass, first moment h = m c and rotational inertia about O.
// Inertias of rigidly joined bodies add (no division by a total mass, so massless bodies are fine).
struct SpatialInertia {
  double mass = 0.0;
  Vec3 h;
  Mat3 I;

  // I m: the momentum [m v + ω × h; h × v + I_O ω] of a motion m = [v; ω].
  Vec6 apply(const Vec6& m) const { return {mass * m.lin + cross(m.ang, h), cross(h, m.lin) + I * m.ang}; }
  SpatialInertia& operator+=(const SpatialInertia& o) {
    mass += o.mass;
    h += o.h;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) I.m[r][c] += o.I.m[r][c];
    return *this;
  }
};

// A body inertia placed at pose X (relative to O): I_O = R I_c Rᵀ + m (|c|² E − c cᵀ).
inline SpatialInertia spatial_inertia(const Inertia& body, const Transform& X) {
  const Vec3 c = X.act(body.com);
  SpatialInertia out{body.mass, body.mass * c, congruence(X.R, body.rot)};
  const double cc = dot(c, c);
  const double cv[3] = {c.x, c.y, c.z};
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) out.I.m[r][k] += body.mass * ((r == k ? cc : 0.0) - cv[r] * cv[k]);
  return out;
}

// Dense 6×6 matrix for composite and articulated inertias (row-major, blocks [lin; ang]).
struct Mat6 {
  double m[6][6] = {};

  void set_zero() { *this = Mat6(); }
  Vec6 apply(const Vec6& x) const {
    double in[6] = {x.lin.x, x.lin.y, x.lin.z, x.ang.x, x.ang.y, x.ang.z}, out[6];
    for (int i = 0; i < 6; ++i) {
      double s = 0.0;
      for (int j = 0; j < 6; ++j) s += m[i][j] * in[j];
      out[i] = s;
    }
    return {{out[0], out[1], out[2]}, {out[3], out[4], out[5]}};
  }
  Vec6 transpose_apply(const Vec6& x) const {
    double in[6] = {x.lin.x, x.lin.y, x.lin.z, x.ang.x, x.ang.y, x.ang.z}, out[6];
    for (int j = 0; j < 6; ++j) {
      double s = 0.0;
      for (int i = 0; i < 6; ++i) s += m[i][j] * in[i];
      out[j] = s;
    }
    return {{out[0], out[1], out[2]}, {out[3], out[4], out[5]}};
  }
  Mat6& operator+=(const Mat6& B) {
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j) m[i][j] += B.m[i][j];
    return *this;
  }
};

inline void set_column(Mat6& A, int j, const Vec6& c) {
  A.m[0][j] = c.lin.x, A.m[1][j] = c.lin.y, A.m[2][j] = c.lin.z;
  A.m[3][j] = c.ang.x, A.m[4][j] = c.ang.y, A.m[5][j] = c.ang.z;
}

// The 6×6 matrix of an inertia given at O: [f; n] = I [v; ω].
inline Mat6 matrix(const SpatialInertia& I) {
  Mat6 A;
  const Vec3 basis[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  for (int j = 0; j < 3; ++j) {
    set_column(A, j, I.apply({basis[j], {}}));
    set_column(A, 3 + j, I.apply({{}, basis[j]}));
  }
  return A;
}

// d/dt of a world-frame inertia I moving with spatial velocity m: m ×* I − I m×, as a 6×6 matrix.
inline Mat6 inertia_rate(const SpatialInertia& I, const Vec6& m) {
  Mat6 A;
  const Vec3 basis[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  const Vec6 h[6] = {{basis[0], {}}, {basis[1], {}}, {basis[2], {}}, {{}, basis[0]}, {{}, basis[1]}, {{}, basis[2]}};
  for (int j = 0; j < 6; ++j) set_column(A, j, cross_force(m, I.apply(h[j])) - I.apply(cross_motion(m, h[j])));
  return A;
}

}  // namespace dcol::dyn
