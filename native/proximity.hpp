// DCOL proximity (paper §III): the minimum uniform scaling α at which two primitives intersect,
// problem (9), with the contact points (29) and distance (30) derived from its solution.
#pragma once

#include <cmath>

#include "cone_solver.hpp"
#include "primitives.hpp"
#include "rotations.hpp"

namespace dcol {

struct Pose {
  double r[3];
  Mat3 Q;
};

struct ProximityResult {
  double alpha = 0.0;
  double x[3] = {0, 0, 0};    // intersection point of the scaled shapes (world)
  double p_a[3] = {0, 0, 0};  // (29) on shape a
  double p_b[3] = {0, 0, 0};  // (29) on shape b
  double distance = 0.0;      // (30)
  double normal[3] = {0, 0, 0};  // separating-plane normal at x, from a to b
  SolveStatus status = SolveStatus::numerical_error;
  int iterations = 0;
};

// Pose of the shape's own frame: the body pose composed with the shape's fixed offset.
inline Pose shape_frame(const Shape& sh, const Pose& body) {
  if (!sh.has_offset) return body;
  Pose f;
  for (int i = 0; i < 3; ++i)
    f.r[i] = body.r[i] + body.Q.m[i][0] * sh.offset_r[0] + body.Q.m[i][1] * sh.offset_r[1] +
             body.Q.m[i][2] * sh.offset_r[2];
  f.Q = multiply(body.Q, sh.offset_Q);
  return f;
}

// N: variables (x, α and 0–2 slack variables per shape); MMax: capacity in rows.
template <int N, int MMax>
void proximity_sized(const Shape& a, const Pose& fa, const Shape& b, const Pose& fb, const SolverSettings& settings,
                     ProximityResult& out) {
  using Program = ConeProgram<N, MMax, 2>;
  Program prob;
  double center[3], ra[3], rb[3];
  const double len = 0.5 * (a.length_scale + b.length_scale);
  const double inv_len = 1.0 / len;
  for (int i = 0; i < 3; ++i) {
    center[i] = 0.5 * (fa.r[i] + fb.r[i]);
    ra[i] = (fa.r[i] - center[i]) * inv_len;
    rb[i] = (fb.r[i] - center[i]) * inv_len;
  }
  const Columns ca{4}, cb{4 + a.num_slack()};
  prob.clear(4 + a.num_slack() + b.num_slack());
  prob.c[Columns::alpha] = 1.0;
  prob.add_orthant_row(0.0)[Columns::alpha] = -1.0;  // α ≥ 0
  const int lin_a = prob.m;
  add_linear_rows(prob, a, ra, fa.Q, inv_len, ca);
  const int lin_b = prob.m;
  add_linear_rows(prob, b, rb, fb.Q, inv_len, cb);
  const int lin_end = prob.m;
  const int cone_a = add_cone_rows(prob, a, ra, fa.Q, inv_len, ca);
  const int cone_b = add_cone_rows(prob, b, rb, fb.Q, inv_len, cb);

  ConeSolver<Program, N> solver;
  const SolveInfo& info = solver.solve(prob, settings);
  out.status = info.status;
  out.iterations = info.iterations;

  const double alpha = solver.x[Columns::alpha];
  out.alpha = alpha;
  for (int i = 0; i < 3; ++i) out.x[i] = center[i] + len * solver.x[i];

  // Stationarity gives G_aᵀ z_a = −G_bᵀ z_b on the x columns: the outward normal of scaled a at x.
  // Using both halves keeps the result exactly antisymmetric under swapping a and b.
  double n[3] = {0.0, 0.0, 0.0};
  auto accumulate = [&](int begin, int end, double sign) {
    for (int r = begin; r < end; ++r)
      for (int i = 0; i < 3; ++i) n[i] += sign * prob.G[r][i] * solver.z[r];
  };
  accumulate(lin_a, lin_b, 1.0);
  accumulate(lin_b, lin_end, -1.0);
  if (cone_a >= 0) accumulate(cone_a, cone_a + a.cone_dim(), 1.0);
  if (cone_b >= 0) accumulate(cone_b, cone_b + b.cone_dim(), -1.0);
  const double n_norm = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  // With coincident origins (α = 0) the scaled shapes are points and no plane is defined: normal 0.
  for (int i = 0; i < 3; ++i) out.normal[i] = n_norm > 0.0 ? n[i] / n_norm : 0.0;

  double dist2 = 0.0;
  for (int i = 0; i < 3; ++i) {
    out.p_a[i] = alpha > 0.0 ? fa.r[i] + (out.x[i] - fa.r[i]) / alpha : fa.r[i];
    out.p_b[i] = alpha > 0.0 ? fb.r[i] + (out.x[i] - fb.r[i]) / alpha : fb.r[i];
    dist2 += (out.p_a[i] - out.p_b[i]) * (out.p_a[i] - out.p_b[i]);
  }
  out.distance = std::sqrt(dist2);
}

// Rows of problem (9) for this pair; the solver size class is chosen from it.
inline int proximity_rows(const Shape& a, const Shape& b) {
  return 1 + a.num_linear_rows() + b.num_linear_rows() + a.cone_dim() + b.cone_dim();
}

template <int MMax>
void proximity_rows_class(const Shape& a, const Pose& fa, const Shape& b, const Pose& fb,
                          const SolverSettings& settings, ProximityResult& out) {
  switch (4 + a.num_slack() + b.num_slack()) {
    case 4: return proximity_sized<4, MMax>(a, fa, b, fb, settings, out);
    case 5: return proximity_sized<5, MMax>(a, fa, b, fb, settings, out);
    case 6: return proximity_sized<6, MMax>(a, fa, b, fb, settings, out);
    case 7: return proximity_sized<7, MMax>(a, fa, b, fb, settings, out);
    default: return proximity_sized<8, MMax>(a, fa, b, fb, settings, out);
  }
}

// a and b at body poses pa and pb (their offsets are applied here).
inline void proximity(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, const SolverSettings& settings,
                      ProximityResult& out) {
  const Pose fa = shape_frame(a, pa), fb = shape_frame(b, pb);
  const int rows = proximity_rows(a, b);
  if (rows <= 32)
    proximity_rows_class<32>(a, fa, b, fb, settings, out);
  else if (rows <= 128)
    proximity_rows_class<128>(a, fa, b, fb, settings, out);
  else
    proximity_rows_class<2 * kMaxFaces + 9>(a, fa, b, fb, settings, out);
}

}  // namespace dcol
