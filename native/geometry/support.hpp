// Support points of the primitives: the point of a shape farthest along a direction. They give
// penetration depths along a normal (distance.hpp) and bounding boxes.
#pragma once

#include <cmath>

#include "geometry/primitives.hpp"
#include "geometry/proximity_types.hpp"

namespace dcol::geometry {

namespace detail {

inline double sign_or_zero(double v) { return v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : 0.0); }

// Index of the row of points (k×dim, row-major) with the largest u·point over its first dim entries.
inline int farthest(const std::vector<double>& points, int count, int dim, const double* u) {
  int best = 0;
  double best_value = -INFINITY;
  for (int i = 0; i < count; ++i) {
    double value = 0.0;
    for (int j = 0; j < dim; ++j) value += u[j] * points[dim * i + j];
    if (value > best_value) {
      best_value = value;
      best = i;
    }
  }
  return best;
}

// Support point in the shape's own frame for the body-axes direction u (nonzero).
inline void body_support(const Shape& sh, const double* u, double* y) {
  const double u_norm = std::sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
  const double radial = std::sqrt(u[1] * u[1] + u[2] * u[2]);  // about body x
  for (int i = 0; i < 3; ++i) y[i] = 0.0;
  switch (sh.kind) {
    case ShapeKind::polytope: {
      const int v = farthest(sh.vertices, sh.num_vertices, 3, u);
      for (int i = 0; i < 3; ++i) y[i] = sh.vertices[3 * v + i];
      break;
    }
    case ShapeKind::polygon: {
      const int v = farthest(sh.vertices, sh.num_vertices, 2, u);
      y[0] = sh.vertices[2 * v];
      y[1] = sh.vertices[2 * v + 1];
      for (int i = 0; i < 3; ++i) y[i] += sh.R * u[i] / u_norm;
      break;
    }
    case ShapeKind::sphere:
    case ShapeKind::capsule:
      y[0] = sh.kind == ShapeKind::capsule ? 0.5 * sh.L * sign_or_zero(u[0]) : 0.0;
      for (int i = 0; i < 3; ++i) y[i] += sh.R * u[i] / u_norm;
      break;
    case ShapeKind::cylinder:
      y[0] = 0.5 * sh.L * sign_or_zero(u[0]);
      if (radial > 0.0)
        for (int i = 1; i < 3; ++i) y[i] = sh.R * u[i] / radial;
      break;
    case ShapeKind::cone: {
      // The apex or the point of the base rim farthest along u.
      const double base_radius = sh.H * sh.tan_beta;
      const double rim_value = 0.25 * sh.H * u[0] + base_radius * radial;
      if (-0.75 * sh.H * u[0] >= rim_value) {
        y[0] = -0.75 * sh.H;
      } else {
        y[0] = 0.25 * sh.H;
        if (radial > 0.0)
          for (int i = 1; i < 3; ++i) y[i] = base_radius * u[i] / radial;
      }
      break;
    }
    case ShapeKind::ellipsoid: {
      // y = P⁻¹u / √(uᵀP⁻¹u) with P = UᵀU: w = U⁻ᵀu, y = U⁻¹w / ‖w‖.
      const auto& U = sh.U;
      double w[3];
      for (int i = 0; i < 3; ++i) {
        double acc = u[i];
        for (int k = 0; k < i; ++k) acc -= U[k][i] * w[k];
        w[i] = acc / U[i][i];
      }
      const double w_norm = std::sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
      for (int i = 2; i >= 0; --i) {
        double acc = w[i];
        for (int k = i + 1; k < 3; ++k) acc -= U[i][k] * y[k];
        y[i] = acc / U[i][i];
      }
      for (int i = 0; i < 3; ++i) y[i] /= w_norm;
      break;
    }
  }
}

}  // namespace detail

// World support point of a shape whose own frame (offset applied) is f, along the world direction u
// (nonzero, any length).
inline void support_point(const Shape& sh, const Pose& f, const double* u, double* out) {
  double u_body[3], y[3];
  for (int j = 0; j < 3; ++j) u_body[j] = f.Q.m[0][j] * u[0] + f.Q.m[1][j] * u[1] + f.Q.m[2][j] * u[2];
  detail::body_support(sh, u_body, y);
  for (int i = 0; i < 3; ++i) out[i] = f.r[i] + f.Q.m[i][0] * y[0] + f.Q.m[i][1] * y[1] + f.Q.m[i][2] * y[2];
}

// The world support points of a shape along u and along −u, as support_point gives each (the same
// points, ties included), from one pass over a polytope's vertices.
inline void support_points(const Shape& sh, const Pose& f, const double* u, double* along, double* against) {
  if (sh.kind != ShapeKind::polytope) {
    const double minus_u[3] = {-u[0], -u[1], -u[2]};
    support_point(sh, f, u, along);
    support_point(sh, f, minus_u, against);
    return;
  }
  double u_body[3];
  for (int j = 0; j < 3; ++j) u_body[j] = f.Q.m[0][j] * u[0] + f.Q.m[1][j] * u[1] + f.Q.m[2][j] * u[2];
  // (−u)·v rounds to exactly −(u·v), so the first vertex of least u·v is the first of largest (−u)·v.
  int highest = 0, lowest = 0;
  double high = -INFINITY, low = INFINITY;
  for (int i = 0; i < sh.num_vertices; ++i) {
    double value = 0.0;
    for (int j = 0; j < 3; ++j) value += u_body[j] * sh.vertices[3 * i + j];
    if (value > high) high = value, highest = i;
    if (value < low) low = value, lowest = i;
  }
  auto to_world = [&](int vertex, double* out) {
    const double* y = &sh.vertices[3 * vertex];
    for (int i = 0; i < 3; ++i) out[i] = f.r[i] + f.Q.m[i][0] * y[0] + f.Q.m[i][1] * y[1] + f.Q.m[i][2] * y[2];
  };
  to_world(highest, along);
  to_world(lowest, against);
}

}  // namespace dcol::geometry
