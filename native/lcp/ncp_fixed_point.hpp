// The contact NCP (lcp/ncp.hpp) by the fixed point of Acary, Cadoux, Lemaréchal and Malick, "A
// formulation of the linear discrete Coulomb friction problem via convex optimization" (ZAMM 91(2),
// 2011): with the De Saxcé term s = Γ(v) held fixed the NCP is the optimality condition of the convex
// second-order-cone QP
//
//     min ½ λᵀGλ + (g + s)ᵀλ   subject to λ ∈ K_μ,
//
// whose solution λ(s) gives v = G λ(s) + g: its optimality conditions are λ ∈ K_μ ⊥ v + s ∈ K_μ*,
// the NCP's with Γ(v) replaced by s, so that the NCP's solutions are the fixed points s = Γ(v(s)) (the
// paper's formulation; its text is not at hand here, so its equation numbers are not cited). Each QP is solved by a
// primal-dual interior-point method: unlike ADMM, whose iterate creeps along the null space of a rank-deficient G, its
// iterates are central, and it solves each QP to the accuracy the fixed point needs in a few tens of Newton steps.
// lcp/ncp.hpp runs it when ADMM ends without a solution.
//
// The QP in the cones' standard coordinates: per contact with μ > 0, x = [μ λ_n, λ_t1, λ_t2] in the
// second-order cone ‖x_1:2‖ ≤ x_0 (self-dual); with μ = 0 (a frictionless contact, a joint limit)
// x = [λ_n] ≥ 0 and λ_t = 0. With λ = T x the QP is the monotone cone complementarity problem
// x ∈ K ⊥ z = P x + q ∈ K, P = TᵀGT, q = Tᵀ(g + s), which the method solves with Nesterov–Todd
// scaling and Mehrotra's predictor–corrector (the cone algebra of conic/cone_solver.hpp, whose solver
// takes linear objectives only). Eliminating Δz from the Newton system leaves (P + W⁻²) Δx = r.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "conic/cone_solver.hpp"
#include "core/cholesky.hpp"
#include "core/magnitudes.hpp"
#include "lcp/active_set.hpp"
#include "lcp/lcp.hpp"

namespace dcol::lcp {

struct NcpFixedPointWorkspace {
  std::vector<int> entry;      // per λ entry, its entry of x (−1: none, λ_t of a frictionless contact)
  std::vector<double> factor;  // λ_a = factor_a x_entry
  std::vector<int> block;      // per contact, its first entry of x
  std::vector<double> P, q, H, L;
  std::vector<double> x, z, residual, lambda_scaled, c, rhs, dx, dz, ds, dzs, ds_affine, dzs_affine, target;
  std::vector<dcol::conic::detail::SocScaling<double>> scaling;
  std::vector<double> saxce, lambda, v;
  // Anderson acceleration: the last rounds' De Saxcé terms s_k and their images T(s_k), per contact
  // (columns of nc entries, oldest first), and the least-squares system of the mixing.
  std::vector<double> s_history, image_history, differences, mixing;
  int newest = 0, stored = 0;                               // the ring's newest column and how many hold rounds
  double f_norm = std::numeric_limits<double>::infinity();  // |T(s) − s|∞ of the last round
  OrthogonalDecomposition decomposition;
};

namespace ncp_fixed_point_detail {

// A cone QP block of x: 3 entries (a second-order cone) or 1 (the orthant).
inline int block_size(int nc, int c, const NcpFixedPointWorkspace& ws) {
  return (c + 1 < nc ? ws.block[c + 1] : static_cast<int>(ws.x.size())) - ws.block[c];
}

// The map λ = T x of the file's comment, and the size of x.
inline int layout(int nc, const double* mu, NcpFixedPointWorkspace& ws) {
  ws.entry.assign(3 * nc, -1);
  ws.factor.assign(3 * nc, 0.0);
  ws.block.resize(nc);
  int size = 0;
  for (int c = 0; c < nc; ++c) {
    ws.block[c] = size;
    if (mu[c] > 0.0) {
      ws.entry[3 * c + 2] = size, ws.factor[3 * c + 2] = 1.0 / mu[c];
      ws.entry[3 * c] = size + 1, ws.factor[3 * c] = 1.0;
      ws.entry[3 * c + 1] = size + 2, ws.factor[3 * c + 1] = 1.0;
      size += 3;
    } else {
      ws.entry[3 * c + 2] = size, ws.factor[3 * c + 2] = 1.0;
      size += 1;
    }
  }
  return size;
}

// Calls f(first, size) for each block of x.
template <class F>
void for_each_block(int nc, const NcpFixedPointWorkspace& ws, F&& f) {
  for (int c = 0; c < nc; ++c) f(ws.block[c], block_size(nc, c, ws));
}

// The Nesterov–Todd scaling at x, z (strictly inside K): per block λ = W z = W⁻¹ x into
// lambda_scaled, W's parameters (a cone's c over its rows, scaling; an orthant's w = √(x/z) in c),
// and W⁻² added to H's diagonal blocks. False where an iterate has left the cone's interior.
inline bool scale(int nc, int n, NcpFixedPointWorkspace& ws) {
  namespace cd = dcol::conic::detail;
  bool inside = true;
  for_each_block(nc, ws, [&](int first, int size) {
    const double *x = ws.x.data() + first, *z = ws.z.data() + first;
    double* lambda = ws.lambda_scaled.data() + first;
    double* H = ws.H.data() + static_cast<size_t>(first) * n + first;
    if (size == 1) {
      inside = inside && x[0] > 0.0 && z[0] > 0.0;
      ws.c[first] = std::sqrt(x[0] / z[0]);
      lambda[0] = std::sqrt(x[0] * z[0]);
      H[0] += z[0] / x[0];
      return;
    }
    const double x_res = cd::soc_residual(x, 3), z_res = cd::soc_residual(z, 3);
    if (!(x_res > 0.0 && z_res > 0.0 && x[0] > 0.0 && z[0] > 0.0)) {
      inside = false;
      return;
    }
    const auto point = cd::soc_scaling(x_res, z_res, cd::dot(x, z, 3), x[0], z[0]);
    double* c = ws.c.data() + first;
    c[0] = point.c0;
    for (int i = 1; i < 3; ++i) {
      c[i] = x[i] * point.s_inv - z[i] * point.z_inv;
      lambda[i] = point.lambda_s * x[i] + point.lambda_z * z[i];
    }
    lambda[0] = point.lambda0;
    ws.scaling[first] = point.w;
    for (int j = 0; j < 3; ++j) {  // column j of W⁻², W symmetric
      double unit[3] = {0.0, 0.0, 0.0}, once[3], twice[3];
      unit[j] = 1.0;
      cd::soc_apply_Winv(c, point.w, unit, once, 3);
      cd::soc_apply_Winv(c, point.w, once, twice, 3);
      for (int i = 0; i < 3; ++i) H[static_cast<size_t>(i) * n + j] += twice[i];
    }
  });
  return inside;
}

// out = W⁻¹ in (inverse) or W in (per block).
inline void apply_scaling(int nc, const NcpFixedPointWorkspace& ws, const double* in, double* out, bool inverse) {
  namespace cd = dcol::conic::detail;
  for_each_block(nc, ws, [&](int first, int size) {
    const double* c = ws.c.data() + first;
    if (size == 1) {
      out[first] = inverse ? in[first] / c[0] : in[first] * c[0];
    } else if (inverse) {
      cd::soc_apply_Winv(c, ws.scaling[first], in + first, out + first, 3);
    } else {
      cd::soc_apply_W(c, ws.scaling[first], in + first, out + first, 3);
    }
  });
}

// The Newton direction for the complementarity target λ∘(W Δz + W⁻¹ Δx) = target, with H = P + W⁻²
// factored in ws.L: Δx, Δz and their scaled forms ds = W⁻¹Δx, dzs = W Δz; returns the longest
// step (≤ ∞) keeping both λ + t ds and λ + t dzs in K, and the sums centering_parameter needs.
inline double newton_direction(int nc, int n, NcpFixedPointWorkspace& ws,
                               dcol::conic::detail::DirectionProducts<double>& products,
                               dcol::conic::detail::StepBounds<double>& bounds) {
  namespace cd = dcol::conic::detail;
  for_each_block(nc, ws, [&](int first, int size) {  // d = λ⁻¹∘target, into dz for now
    const double* lambda = ws.lambda_scaled.data() + first;
    if (size == 1) {
      ws.dz[first] = ws.target[first] / lambda[0];
    } else {
      cd::soc_divide(lambda, cd::soc_point(lambda, 3), ws.target.data() + first, ws.dz.data() + first, 3);
    }
  });
  apply_scaling(nc, ws, ws.dz.data(), ws.rhs.data(), true);  // W⁻¹ d
  for (int i = 0; i < n; ++i) ws.dx[i] = ws.residual[i] + ws.rhs[i];
  cholesky_solve(n, ws.L, ws.dx.data());
  apply_scaling(nc, ws, ws.dx.data(), ws.ds.data(), true);      // W⁻¹ Δx
  for (int i = 0; i < n; ++i) ws.dzs[i] = ws.dz[i] - ws.ds[i];  // W Δz = d − W⁻¹ Δx
  apply_scaling(nc, ws, ws.dzs.data(), ws.dz.data(), true);     // Δz
  double inverse_primal = 0.0, inverse_dual = 0.0;
  products = {};
  for_each_block(nc, ws, [&](int first, int size) {
    const double *lambda = ws.lambda_scaled.data() + first, *ds = ws.ds.data() + first, *dzs = ws.dzs.data() + first;
    products.lambda_ds += cd::dot(lambda, ds, size);
    products.lambda_dz += cd::dot(lambda, dzs, size);
    products.ds_dz += cd::dot(ds, dzs, size);
    if (size == 1) {
      inverse_primal = std::max(inverse_primal, -ds[0] / lambda[0]);
      inverse_dual = std::max(inverse_dual, -dzs[0] / lambda[0]);
      return;
    }
    const auto point = cd::soc_point(lambda, 3);
    inverse_primal = std::max(inverse_primal, cd::soc_inverse_step(lambda, point, ds, 3));
    inverse_dual = std::max(inverse_dual, cd::soc_inverse_step(lambda, point, dzs, 3));
  });
  bounds = cd::StepBounds<double>::from_inverse(inverse_primal, inverse_dual);
  return bounds.both();
}

// Solves the cone QP of q (P in ws.P, n × n) into ws.x by at most max_iterations interior-point
// iterations, from a point on the central ray scaled to the data. Stops when its gap and residual are
// at rounding level, when the Newton matrix can no longer be factored or a step taken (near the
// solution W⁻² grows without bound on the cones the solution ends on the boundary of; the iterate kept
// is the last inside K), or at the limit; the fixed point measures the outcome by the NCP's residual.
inline void solve_cone_qp(int nc, int n, NcpFixedPointWorkspace& ws, int max_iterations) {
  namespace cd = dcol::conic::detail;
  const double q_scale = largest_magnitude(n, ws.q.data()), P_scale = largest_magnitude(n * n, ws.P.data());
  const double x_start = q_scale > 0.0 && P_scale > 0.0 ? std::sqrt(q_scale / P_scale) : 1.0;
  const double z_start = q_scale > 0.0 && P_scale > 0.0 ? std::sqrt(q_scale * P_scale) : 1.0;
  ws.x.assign(n, 0.0), ws.z.assign(n, 0.0);
  for_each_block(nc, ws, [&](int first, int) { ws.x[first] = x_start, ws.z[first] = z_start; });
  for (std::vector<double>* buffer : {&ws.residual, &ws.lambda_scaled, &ws.c, &ws.rhs, &ws.dx, &ws.dz, &ws.ds, &ws.dzs,
                                      &ws.ds_affine, &ws.dzs_affine, &ws.target})
    buffer->assign(n, 0.0);
  ws.scaling.resize(n);
  constexpr double kRounding = 1e-15;
  for (int it = 0; it < max_iterations; ++it) {
    lcp_velocity(n, ws.P.data(), ws.q.data(), ws.x.data(), ws.residual.data());  // P x + q
    double gap = 0.0, residual = 0.0;
    for (int i = 0; i < n; ++i) {
      ws.residual[i] = ws.z[i] - ws.residual[i];  // r = z − P x − q, which Δz − P Δx = −r removes
      residual = std::max(residual, std::abs(ws.residual[i]));
      gap += ws.x[i] * ws.z[i];
    }
    const double x_scale = std::max(largest_magnitude(n, ws.x.data()), x_start);
    if (gap <= kRounding * q_scale * x_scale * n && residual <= kRounding * (q_scale + P_scale * x_scale)) return;
    ws.H = ws.P;
    if (!scale(nc, n, ws) || !cholesky(n, ws.H.data(), 0.0, ws.L)) return;
    // Predictor: target −λ∘λ.
    for_each_block(nc, ws, [&](int first, int size) {
      const double* lambda = ws.lambda_scaled.data() + first;
      if (size == 1) {
        ws.target[first] = -lambda[0] * lambda[0];
      } else {
        cd::soc_product(lambda, lambda, ws.target.data() + first, 3);
        for (int i = 0; i < 3; ++i) ws.target[first + i] = -ws.target[first + i];
      }
    });
    cd::DirectionProducts<double> products;
    cd::StepBounds<double> affine;
    const double affine_step = newton_direction(nc, n, ws, products, affine);
    const double sigma = cd::centering_parameter(1.0 / gap, affine, products);
    // Corrector: target σ (gap / blocks) e − λ∘λ − ds∘dzs of the predictor.
    ws.ds_affine = ws.ds, ws.dzs_affine = ws.dzs;
    const double centre = sigma * gap / nc;
    for_each_block(nc, ws, [&](int first, int size) {
      double product[3];
      if (size == 1) {
        product[0] = ws.ds_affine[first] * ws.dzs_affine[first];
      } else {
        cd::soc_product(ws.ds_affine.data() + first, ws.dzs_affine.data() + first, product, 3);
      }
      for (int i = 0; i < size; ++i) ws.target[first + i] -= product[i];
      ws.target[first] += centre;
    });
    cd::StepBounds<double> bounds;
    const double longest = newton_direction(nc, n, ws, products, bounds);
    const double step = std::min(1.0, cd::step_fraction(affine_step) * longest);
    if (!(step > 0.0)) return;
    for (int i = 0; i < n; ++i) ws.x[i] += step * ws.dx[i], ws.z[i] += step * ws.dz[i];
  }
}

// The next De Saxcé term after a round that solved the QP of ws.saxce into ws.v: the map's image
// T(s) = Γ(v) mixed with the last rounds' by Anderson acceleration (type II; Walker & Ni, "Anderson
// acceleration for fixed-point iterations", SIAM J. Numer. Anal. 49(4), 2011): with f_k = T(s_k) − s_k,
// γ minimizing ‖f_k − ΔF γ‖ over the differences of consecutive f, s_{k+1} = T(s_k) − ΔT γ, held ≥ 0
// like Γ. On a rank-deficient G the plain iteration s_{k+1} = T(s_k) can drift along a direction where
// T's derivative is nearly the identity (a box twisting on four nearly coplanar corners) by a
// constant step per round; the mixing extrapolates along it. Its memory restarts when |f_k|∞ grows:
// near the fixed point the differences are round-off, and mixing them would throw the iterate off.
constexpr int kAndersonMemory = 5;

inline void anderson_update(int nc, const double* mu, NcpFixedPointWorkspace& ws) {
  constexpr int columns = kAndersonMemory + 1;
  ws.s_history.resize(static_cast<size_t>(columns) * nc), ws.image_history.resize(static_cast<size_t>(columns) * nc);
  auto column = [&](std::vector<double>& history, int back) {  // the round `back` rounds ago
    return history.data() + static_cast<size_t>((ws.newest + columns - back) % columns) * nc;
  };
  ws.newest = (ws.newest + 1) % columns;
  double* s_k = column(ws.s_history, 0);
  double* image_k = column(ws.image_history, 0);
  double f_norm = 0.0;
  for (int c = 0; c < nc; ++c) {
    s_k[c] = ws.saxce[3 * c + 2];
    image_k[c] = mu[c] * std::hypot(ws.v[3 * c], ws.v[3 * c + 1]);
    f_norm = std::max(f_norm, std::abs(image_k[c] - s_k[c]));
  }
  ws.stored = f_norm > ws.f_norm ? 1 : std::min(ws.stored + 1, columns);
  ws.f_norm = f_norm;
  const int depth = ws.stored - 1;
  // ΔF (nc × depth, row-major): f_j − f_{j−1} over the last depth rounds.
  ws.differences.resize(static_cast<size_t>(nc) * depth);
  for (int j = 0; j < depth; ++j) {
    const double *s_new = column(ws.s_history, j), *s_old = column(ws.s_history, j + 1);
    const double *image_new = column(ws.image_history, j), *image_old = column(ws.image_history, j + 1);
    for (int c = 0; c < nc; ++c)
      ws.differences[static_cast<size_t>(c) * depth + j] = (image_new[c] - s_new[c]) - (image_old[c] - s_old[c]);
  }
  ws.mixing.assign(std::max(nc, depth), 0.0);
  if (depth > 0) {
    for (int c = 0; c < nc; ++c) ws.mixing[c] = image_k[c] - s_k[c];
    ws.decomposition.factor(nc, depth, ws.differences.data());
    ws.decomposition.solve(ws.mixing.data());  // γ into the first depth entries
  }
  for (int c = 0; c < nc; ++c) {
    double next = image_k[c];
    for (int j = 0; j < depth; ++j)
      next -= ws.mixing[j] * (column(ws.image_history, j)[c] - column(ws.image_history, j + 1)[c]);
    ws.saxce[3 * c + 2] = std::max(next, 0.0);
  }
}

}  // namespace ncp_fixed_point_detail

// The contact NCP of lcp/ncp.hpp (G, g, mu; nc contacts) by the fixed point on the De Saxcé term of
// Acary, Cadoux, Lemaréchal and Malick (2011) from s = 0, each cone QP solved by the interior-point
// method of this file, at most max_rounds QPs. The impulses of smallest NCP residual (residual, in
// lcp/ncp.hpp's measure) into lambda and v = G λ + g, with that residual in the report: solved when it
// is within tol, else iteration_limit. Stops early once the residual has not improved for a tenth of
// the rounds (the QPs' own accuracy bounds it on ill-conditioned G).
template <class Residual>
LcpReport solve_ncp_fixed_point(int nc, const double* G, const double* g, const double* mu, double tol, int max_rounds,
                                Residual&& residual, double* lambda, double* v, NcpFixedPointWorkspace& ws) {
  using namespace ncp_fixed_point_detail;
  constexpr int kInteriorPointIterations = 100;
  const int m = 3 * nc;
  const int n = layout(nc, mu, ws);
  ws.P.assign(static_cast<size_t>(n) * n, 0.0);
  for (int a = 0; a < m; ++a)
    for (int b = 0; b < m; ++b)
      if (ws.entry[a] >= 0 && ws.entry[b] >= 0)
        ws.P[static_cast<size_t>(ws.entry[a]) * n + ws.entry[b]] =
            ws.factor[a] * ws.factor[b] * G[static_cast<size_t>(a) * m + b];
  ws.saxce.assign(m, 0.0);
  ws.stored = 0, ws.f_norm = std::numeric_limits<double>::infinity();
  ws.lambda.resize(m), ws.v.resize(m), ws.q.resize(n);
  LcpReport report;
  report.status = LcpStatus::iteration_limit;
  report.residual = std::numeric_limits<double>::infinity();
  const int patience = std::max(1, max_rounds / 10);
  for (int round = 0, since_best = 0; round < max_rounds && since_best < patience; ++round) {
    for (int a = 0; a < m; ++a)
      if (ws.entry[a] >= 0) ws.q[ws.entry[a]] = ws.factor[a] * (g[a] + ws.saxce[a]);
    solve_cone_qp(nc, n, ws, kInteriorPointIterations);
    report.iterations += 1;
    for (int a = 0; a < m; ++a) ws.lambda[a] = ws.entry[a] >= 0 ? ws.factor[a] * ws.x[ws.entry[a]] : 0.0;
    lcp_velocity(m, G, g, ws.lambda.data(), ws.v.data());
    const double r = residual(ws.lambda.data(), ws.v.data());
    ++since_best;
    if (r < report.residual) {
      report.residual = r, since_best = 0;
      std::copy(ws.lambda.begin(), ws.lambda.end(), lambda);
      std::copy(ws.v.begin(), ws.v.end(), v);
      if (r <= tol) {
        report.status = LcpStatus::solved;
        return report;
      }
    }
    anderson_update(nc, mu, ws);
  }
  return report;
}

}  // namespace dcol::lcp
