// The signed distance (distance.hpp): its Euclidean branch, a cone program solved here, and its
// penetration branch from DCOL's result, which the proximity kernels compute.
#include "geometry/distance.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/magnitudes.hpp"
#include "geometry/proximity.hpp"
#include "geometry/proximity_kernels.hpp"
#include "geometry/support.hpp"

namespace dcol::geometry {

namespace {

// The Euclidean branch for shapes a, b with their own frames fa, fb. N: variables (x_a, x_b, t, the
// slack variables); MMax: rows.
template <int N, int MMax>
void euclidean_distance(const Shape& a, const Pose& fa, const Shape& b, const Pose& fb, const SolverSettings& settings,
                        DistanceResult& out, DistanceJacobian* jac) {
  using Program = ConeProgram<N, MMax, 3>;
  using V = typename Program::V;
  constexpr int t_column = 6;
  Program prob;
  const double len = 0.5 * (a.length_scale + b.length_scale), inv_len = 1.0 / len;
  double center[3], ra[3], rb[3];
  for (int i = 0; i < 3; ++i) {
    center[i] = 0.5 * (fa.r[i] + fb.r[i]);
    ra[i] = (fa.r[i] - center[i]) * inv_len;
    rb[i] = (fb.r[i] - center[i]) * inv_len;
  }
  const Columns ca{7, 0, -1}, cb{7 + a.num_slack(), 3, -1};
  prob.clear(N);
  prob.c[t_column] = 1.0;
  const int lin_a = prob.m;
  add_linear_rows(prob, a, ra, fa.Q, inv_len, ca);
  const int lin_b = prob.m;
  add_linear_rows(prob, b, rb, fb.Q, inv_len, cb);
  const int lin_end = prob.m;
  const int cone_a = add_cone_rows(prob, a, ra, fa.Q, inv_len, ca);
  const int cone_b = add_cone_rows(prob, b, rb, fb.Q, inv_len, cb);
  const int gap = prob.add_soc(4);  // (t, x_a − x_b)
  prob.G[gap][t_column] = -1.0;
  for (int i = 0; i < 3; ++i) {
    prob.G[gap + 1 + i][i] = -1.0;
    prob.G[gap + 1 + i][3 + i] = 1.0;
  }

  ConeSolver<Program, N> solver;
  const SolveInfo<1>& info = solver.solve(prob, settings);
  out.status = worse(out.status, info.status[0]);
  out.iterations += info.iterations[0];
  double n_norm = 0.0, d2 = 0.0;
  for (int i = 0; i < 3; ++i) {
    out.p_a[i] = center[i] + len * solver.x[i];
    out.p_b[i] = center[i] + len * solver.x[3 + i];
    out.normal[i] = solver.z[gap + 1 + i];
    n_norm += out.normal[i] * out.normal[i];
    d2 += (out.p_b[i] - out.p_a[i]) * (out.p_b[i] - out.p_a[i]);
  }
  n_norm = std::sqrt(n_norm);
  for (double& v : out.normal) v = n_norm > 0.0 ? v / n_norm : 0.0;
  out.distance = std::sqrt(d2);
  if (!jac) return;

  const SolvedProximity<Program> sp{
      prob,     solver.x,
      solver.z, {&a, &b},
      {ra, rb}, {&fa.Q, &fb.Q},
      {ca, cb}, {{lin_a, lin_b, cone_a, a.cone_dim()}, {lin_b, lin_end, cone_b, b.cone_dim()}}};
  using KKT = LinearizedKKT<ConeSolver<Program, N>, Program>;
  const KKT kkt(solver, prob);
  const PoseAdjoint<Program, KKT> adjoint(kkt, sp);
  V derivative_rows[7][12], v[7][N], omega[7][MMax];  // x'_a, x'_b, t'
  adjoint.template variable_rows<7>(derivative_rows, v, omega);
  for (int k = 0; k < 3; ++k) {
    world_point_columns(derivative_rows[k], 0, len, k, jac->p_a[k]);
    world_point_columns(derivative_rows[3 + k], 0, len, k, jac->p_b[k]);
  }
  world_columns(derivative_rows[6], 0, len, len, jac->distance);
  // n = (p_b − p_a)/d: dn = (I − n nᵀ)(dp_b − dp_a)/d
  const double d = out.distance;
  for (int j = 0; j < 12; ++j) {
    double dd[3], n_dd = 0.0;
    for (int i = 0; i < 3; ++i) {
      dd[i] = jac->p_b[i][j] - jac->p_a[i][j];
      n_dd += out.normal[i] * dd[i];
    }
    for (int i = 0; i < 3; ++i) jac->normal[i][j] = d > 0.0 ? (dd[i] - out.normal[i] * n_dd) / d : 0.0;
  }
}

// Euclidean branch: chooses the size class. The frames' offsets are applied by the caller.
inline void euclidean_distance_sized(const Shape& a, const Pose& fa, const Shape& b, const Pose& fb,
                                     const SolverSettings& settings, DistanceResult& out, DistanceJacobian* jac) {
  const int rows = proximity_rows(a, b) + 4;
  auto with_rows = [&](auto rows_class) {
    constexpr int MMax = decltype(rows_class)::value;
    switch (a.num_slack() + b.num_slack()) {
      case 0:
        return euclidean_distance<7, MMax>(a, fa, b, fb, settings, out, jac);
      case 1:
        return euclidean_distance<8, MMax>(a, fa, b, fb, settings, out, jac);
      case 2:
        return euclidean_distance<9, MMax>(a, fa, b, fb, settings, out, jac);
      case 3:
        return euclidean_distance<10, MMax>(a, fa, b, fb, settings, out, jac);
      default:
        return euclidean_distance<11, MMax>(a, fa, b, fb, settings, out, jac);
    }
  };
  if (rows <= 32)
    with_rows(std::integral_constant<int, 32>{});
  else if (rows <= 128)
    with_rows(std::integral_constant<int, 128>{});
  else if (rows <= 256)
    with_rows(std::integral_constant<int, 256>{});
  else
    with_rows(std::integral_constant<int, 2 * kMaxFaces + 12>{});
}

// Overlapping and touching branch from DCOL's result (and its contact Jacobian, with respect to body
// motions).
// With coincident origins (α = 0) DCOL has no normal; world z is then taken, with a zero derivative.
inline void penetration(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, const ProximityResult& dcol,
                        const ProximityJacobian* dcol_jac, DistanceResult& out, DistanceJacobian* jac) {
  const bool no_normal = dcol.normal[0] == 0.0 && dcol.normal[1] == 0.0 && dcol.normal[2] == 0.0;
  const double up[3] = {0.0, 0.0, 1.0};
  const double* n = no_normal ? up : dcol.normal;
  const double minus_n[3] = {-n[0], -n[1], -n[2]};
  double s_a[3], s_b[3];  // farthest points of a along n and of b along −n
  support_point(a, shape_frame(a, pa), n, s_a);
  support_point(b, shape_frame(b, pb), minus_n, s_b);
  double top_a = 0.0, bottom_b = 0.0, n_x = 0.0;
  for (int i = 0; i < 3; ++i) {
    top_a += n[i] * s_a[i];
    bottom_b += n[i] * s_b[i];
    n_x += n[i] * dcol.x[i];
  }
  out.distance = bottom_b - top_a;
  for (int i = 0; i < 3; ++i) {
    out.normal[i] = n[i];
    out.p_a[i] = dcol.x[i] + (top_a - n_x) * n[i];
    out.p_b[i] = dcol.x[i] + (bottom_b - n_x) * n[i];
  }
  if (!jac) return;
  // d(n·s) = n·(δp + δθ × (s − r)) + s·dn for the farthest point s of a body at r (envelope theorem).
  auto plane_row = [&](const double* s, const double* r, int side, double* row) {
    double lever[3];
    for (int i = 0; i < 3; ++i) lever[i] = s[i] - r[i];
    double moment[3];
    detail::cross(lever, n, moment);
    for (int j = 0; j < 12; ++j) {
      row[j] = 0.0;
      for (int i = 0; i < 3; ++i) row[j] += s[i] * dcol_jac->normal[i][j];
    }
    for (int i = 0; i < 3; ++i) {
      row[6 * side + i] += n[i];
      row[6 * side + 3 + i] += moment[i];
    }
  };
  double d_top[12], d_bottom[12];
  plane_row(s_a, pa.r, 0, d_top);
  plane_row(s_b, pb.r, 1, d_bottom);
  for (int j = 0; j < 12; ++j) {
    jac->distance[j] = d_bottom[j] - d_top[j];
    double d_nx = 0.0;
    for (int i = 0; i < 3; ++i) d_nx += dcol_jac->normal[i][j] * dcol.x[i] + n[i] * dcol_jac->x[i][j];
    for (int i = 0; i < 3; ++i) {
      const double dn = dcol_jac->normal[i][j];
      jac->p_a[i][j] = dcol_jac->x[i][j] + (d_top[j] - d_nx) * n[i] + (top_a - n_x) * dn;
      jac->p_b[i][j] = dcol_jac->x[i][j] + (d_bottom[j] - d_nx) * n[i] + (bottom_b - n_x) * dn;
      jac->normal[i][j] = dn;
    }
  }
}

}  // namespace

void signed_distance(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, const SolverSettings& settings,
                     DistanceResult& out, DistanceJacobian* jac) {
  // With jac, DCOL's contact Jacobian comes with the solve: the penetration branch needs it, and
  // computing it costs less than the second solve it would take once the branch is known.
  ProximityResult dcol;
  ProximityJacobian dcol_jac;
  proximity_kernels().run_one(a, &pa, b, &pb, settings, &dcol,
                              jac ? DerivativeOutput{DerivativeRequest::contact, &dcol_jac} : DerivativeOutput{});
  out = DistanceResult{};
  out.alpha = dcol.alpha;
  out.status = dcol.status;
  out.iterations = dcol.iterations;
  if (jac) std::copy_n(dcol_jac.alpha, 12, jac->alpha);
  if (dcol.alpha > 1.0 + kTouching) {
    const Pose fa = shape_frame(a, pa), fb = shape_frame(b, pb);
    euclidean_distance_sized(a, fa, b, fb, settings, out, jac);
    if (!jac) return;
    double d_a[3], d_b[3];  // shape frame origin − body origin
    for (int i = 0; i < 3; ++i) {
      d_a[i] = fa.r[i] - pa.r[i];
      d_b[i] = fb.r[i] - pb.r[i];
    }
    frame_to_body_columns(d_a, d_b, jac->distance);
    for (int i = 0; i < 3; ++i) {
      frame_to_body_columns(d_a, d_b, jac->p_a[i]);
      frame_to_body_columns(d_a, d_b, jac->p_b[i]);
      frame_to_body_columns(d_a, d_b, jac->normal[i]);
    }
  } else {
    penetration(a, pa, b, pb, dcol, jac ? &dcol_jac : nullptr, out, jac);
  }
  // A solve can end SOLVED_INACCURATE with derivatives its KKT system could not give (shapes far apart
  // for their size): the status says so rather than hand out NaN as a result.
  if (!jac) return;
  auto finite_row = [](const double* row) { return all_finite(12, row); };
  bool finite = finite_row(jac->alpha) && finite_row(jac->distance);
  for (int i = 0; i < 3; ++i)
    finite = finite && finite_row(jac->p_a[i]) && finite_row(jac->p_b[i]) && finite_row(jac->normal[i]);
  if (!finite) out.status = SolveStatus::numerical_error;
}

}  // namespace dcol::geometry
