// The contact NCP on Coulomb's second-order cones (solvers/ncp.py's module docstring has the problem):
// ADMM on the cone QP min ½λᵀGλ + (g + s)ᵀλ, λ ∈ K_μ, the De Saxcé term s = Γ(v) refreshed every
// iteration, the penalty balanced on the residuals (Boyd et al. 2011, §3.4.1). After 25, 50, 100, …
// iterations the iterate's contact modes are solved on exactly (mode polishing, like the LCP's on its
// sets): on rank-deficient Delassus matrices (many contacts on few joints) ADMM finds the modes long
// before its iterate settles along the null space. Where a short run does not converge, the fixed
// point of Acary et al. (lcp/ncp_fixed_point.hpp), then ADMM's whole budget, then a run that holds s
// while ADMM settles on the QP of each s (ncp_detail::SaxceUpdate). Per contact the impulse is [t1, t2, n].
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/cholesky.hpp"
#include "lcp/active_set.hpp"
#include "lcp/lcp.hpp"
#include "lcp/ncp_fixed_point.hpp"

namespace dcol::lcp {

struct NcpWorkspace {
  std::vector<double> L, lambda, y, rhs, z_previous, system, velocity, polished, best, saxce;
  std::vector<double> fixed_lambda, fixed_v;  // the fixed point's result (solve_ncp_admm)
  std::vector<int8_t> modes, iterate_modes;   // the polish's trial modes, and the iterate's
  std::vector<int8_t> polished_modes;         // the last modes admm_run's breaking trials started from
  std::vector<int> trial_order;               // the contacts polish_modes tries as breaking
  OrthogonalDecomposition decomposition;      // the polishing's least-squares solve
  NcpFixedPointWorkspace fixed_point;         // solve_ncp_fixed_point's
};

// A contact's mode (solvers/ncp.py's ContactMode): breaking (λ_i = 0), sticking (v_i = 0) or sliding.
enum class ContactMode : int8_t { breaking = 0, sticking = 1, sliding = 2 };

// Each contact's mode at (λ, v): breaking when |λ_i| ≤ tol |λ|∞, else sliding when
// |v_t,i| > tol max(|v|∞, free_speed), else sticking. free_speed, the largest free velocity |g|∞, sets
// the velocity scale when the contacts have (nearly) stopped every motion.
inline void contact_modes(int nc, const double* lambda, const double* v, double free_speed, double tol, int8_t* modes) {
  double lambda_scale = 0.0, v_scale = free_speed;
  for (int i = 0; i < 3 * nc; ++i) {
    lambda_scale = std::max(lambda_scale, std::abs(lambda[i]));
    v_scale = std::max(v_scale, std::abs(v[i]));
  }
  for (int c = 0; c < nc; ++c) {
    const double* l = lambda + 3 * c;
    const ContactMode mode = std::sqrt(l[0] * l[0] + l[1] * l[1] + l[2] * l[2]) <= tol * lambda_scale
                                 ? ContactMode::breaking
                             : std::hypot(v[3 * c], v[3 * c + 1]) > tol * v_scale ? ContactMode::sliding
                                                                                  : ContactMode::sticking;
    modes[c] = static_cast<int8_t>(mode);
  }
}

// The tolerance of contact_modes for a solve to tolerance tol.
inline double mode_tolerance(double tol) { return std::sqrt(std::max(tol, 1e-12)); }

namespace ncp_detail {

// Euclidean projection of [t1, t2, n] onto ‖t‖ ≤ μ n.
inline void project_onto_cone(const double* in, double mu, double* out) {
  const double r = std::hypot(in[0], in[1]), n = in[2];
  if (n >= 0.0 && r <= mu * n) {  // n ≥ 0 too: with μ = 0 the cone is the ray t = 0, n ≥ 0
    std::copy(in, in + 3, out);
  } else if (mu * r <= -n) {
    std::fill(out, out + 3, 0.0);
  } else {
    const double s = (mu * r + n) / (mu * mu + 1.0);
    const double scale = r > 0.0 ? mu * s / r : 0.0;
    out[0] = scale * in[0], out[1] = scale * in[1], out[2] = s;
  }
}

// The scales a residual is taken relative to, from the data alone so that the residual of a problem
// and of the same problem in other units agree: the largest entries of G and g, and the largest
// impulse the data can call for (lcp/active_set.hpp's impulse_cap). An iterate beyond that cap has run off along G's
// null space (equal and opposite impulses that move nothing), and measuring the residual relative to that iterate would
// call it converged.
struct ResidualScale {
  double G = 0.0, g = 0.0, lambda_cap = std::numeric_limits<double>::infinity();
};

inline ResidualScale residual_scale(int n, const double* G, const double* g) {
  ResidualScale scale;
  scale.g = largest_magnitude(n, g);
  scale.G = largest_magnitude(n * n, G);
  scale.lambda_cap = impulse_cap(scale.g, smallest_positive_diagonal(n, G));
  return scale;
}

// x relative to scale, where a zero scale leaves only x = 0 acceptable.
inline double relative(double x, double scale) {
  return x == 0.0 ? 0.0 : scale > 0.0 ? x / scale : std::copysign(std::numeric_limits<double>::infinity(), x);
}

// The share of |G|∞ |λ|∞ a velocity is measured against besides |g|∞: G λ + g carries a round-off
// error of order 1e-16 |G|∞ |λ|∞, which must stay below the tightest tolerance (1e-10) of the scale.
constexpr double kVelocityRoundoff = 1e-6;

// Largest violation of λ ∈ K, v + Γ(v) ∈ K* and ⟨λ, v + Γ(v)⟩ = 0 over the contacts, each in its own
// units: velocities relative to the free velocities, V = max(|g|∞, kVelocityRoundoff |G|∞ Λ) with
// Λ = min(|λ|∞, cap), impulses to max(Λ, |g|∞ / |G|∞), scaled before they multiply so that a run-off
// iterate cannot overflow its way to a small residual. Infinite for a residual that is not a number.
inline double residual(int nc, const double* lambda, const double* v, const double* mu, const ResidualScale& scale) {
  const double lambda_max = largest_magnitude(3 * nc, lambda);
  const double lambda_bounded = std::min(lambda_max, scale.lambda_cap);
  const double v_scale = std::max(scale.g, kVelocityRoundoff * scale.G * lambda_bounded);
  const double lambda_scale = scale.G > 0.0 ? std::max(lambda_bounded, scale.g / scale.G) : lambda_bounded;
  double worst = 0.0;
  auto keep_worst = [&worst](double violation) {
    if (!(violation <= worst)) worst = violation;  // a NaN is kept too
  };
  for (int c = 0; c < nc; ++c) {
    double l[3], u[3];
    for (int k = 0; k < 3; ++k)
      l[k] = relative(lambda[3 * c + k], lambda_scale), u[k] = relative(v[3 * c + k], v_scale);
    const double w_n = u[2] + mu[c] * std::hypot(u[0], u[1]);
    keep_worst(std::hypot(l[0], l[1]) - mu[c] * l[2]);  // λ ∈ K
    keep_worst(-l[2]);
    keep_worst(mu[c] * std::hypot(u[0], u[1]) - w_n);  // v + Γ(v) ∈ K*
    keep_worst(std::abs(l[0] * u[0] + l[1] * u[1] + l[2] * w_n));
  }
  return std::isnan(worst) ? std::numeric_limits<double>::infinity() : worst;
}

// The iterate's modes solved on exactly: a breaking contact (|λ_i| small) has λ_i = 0; a sticking
// one v_i = 0; a sliding one (|v_t| not small) v_n = 0 and λ_t = −μ λ_n v_t/|v_t|. First with the
// sliding directions of the iterate, the least-norm λ of these 3 nc linear equations; then Newton
// steps (least-norm, from that λ) on the same equations with each direction following v = G λ + g,
// ∂(v_t/|v_t|)/∂v_t = (I − u uᵀ)/|v_t|. (Re-solving with each solve's own directions instead need not
// settle on a rank-deficient G: each least-norm solve moves along the null space, which turns the next
// directions.) from_iterate: Newton steps from the iterate's λ itself, which keeps its part along G's
// null space: where the least-norm λ of the first solve lies far from the iterate, its directions can
// lead Newton away from a solution the iterate is near. The first λ whose residual is within tol
// replaces the iterate, and true is returned. The modes are ws.modes; (λ, v) the iterate.
inline bool polish_on_modes(int nc, const double* G, const double* g, const double* mu, double tol,
                            const ResidualScale& scale, double* lambda, double* v, NcpWorkspace& ws,
                            bool from_iterate) {
  constexpr int8_t breaking = static_cast<int8_t>(ContactMode::breaking);
  constexpr int8_t sliding = static_cast<int8_t>(ContactMode::sliding);
  const int n = 3 * nc;
  ws.velocity.assign(v, v + n);
  if (from_iterate)
    ws.polished.assign(lambda, lambda + n);
  else
    ws.polished.assign(n, 0.0);
  for (int round = 0; round < 8; ++round) {
    const bool newton = from_iterate || round > 0;  // else the linear equations with the iterate's directions
    ws.system.assign(static_cast<size_t>(n) * n, 0.0);
    ws.rhs.assign(n, 0.0);  // λ in the first round, the Newton step −F(λ) after
    for (int c = 0; c < nc; ++c) {
      double* rows = ws.system.data() + static_cast<size_t>(3 * c) * n;
      const double* l = ws.polished.data() + 3 * c;
      if (ws.modes[c] == breaking) {  // λ_i = 0
        for (int k = 0; k < 3; ++k) rows[k * n + 3 * c + k] = 1.0, ws.rhs[3 * c + k] = newton ? -l[k] : 0.0;
        continue;
      }
      const double* u = ws.velocity.data() + 3 * c;
      const double slip = std::hypot(u[0], u[1]);
      const bool slides = ws.modes[c] == sliding;
      if (slides && slip == 0.0) return false;    // the mode guess was wrong
      for (int k = slides ? 2 : 0; k < 3; ++k) {  // v_k = (G λ + g)_k = 0
        std::copy(G + static_cast<size_t>(3 * c + k) * n, G + static_cast<size_t>(3 * c + k + 1) * n, rows + k * n);
        ws.rhs[3 * c + k] = -(newton ? u[k] : g[3 * c + k]);
      }
      if (!slides) continue;
      const double d[2] = {u[0] / slip, u[1] / slip};
      for (int k = 0; k < 2; ++k) {  // λ_t,k + μ λ_n d_k = 0
        double* row = rows + k * n;
        if (newton) {  // + μ λ_n ((I − d dᵀ)/|v_t| G_t)_k: the direction's own derivative
          const double factor = mu[c] * l[2] / slip;
          const double* G_t0 = G + static_cast<size_t>(3 * c) * n;
          const double* G_t1 = G_t0 + n;
          const double p0 = (k == 0 ? 1.0 : 0.0) - d[k] * d[0], p1 = (k == 1 ? 1.0 : 0.0) - d[k] * d[1];
          for (int j = 0; j < n; ++j) row[j] = factor * (p0 * G_t0[j] + p1 * G_t1[j]);
          ws.rhs[3 * c + k] = -(l[k] + mu[c] * l[2] * d[k]);
        }
        row[3 * c + k] += 1.0;
        row[3 * c + 2] += mu[c] * d[k];
      }
    }
    ws.decomposition.factor(n, ws.system.data());
    ws.decomposition.solve(ws.rhs.data());
    for (int i = 0; i < n; ++i) ws.polished[i] = newton ? ws.polished[i] + ws.rhs[i] : ws.rhs[i];
    for (int c = 0; c < nc; ++c)  // exactly, not to the least-squares solve's round-off
      if (ws.modes[c] == breaking) std::fill_n(ws.polished.data() + 3 * c, 3, 0.0);
    lcp_velocity(n, G, g, ws.polished.data(), ws.velocity.data());
    if (residual(nc, ws.polished.data(), ws.velocity.data(), mu, scale) <= tol) {
      std::copy(ws.polished.begin(), ws.polished.end(), lambda);
      std::copy(ws.velocity.begin(), ws.velocity.end(), v);
      return true;
    }
  }
  return false;
}

// Contacts the polishes of a problem the first solves did not solve (those of ADMM holding the De
// Saxcé term, and the final polish) try as breaking, one at a time, when the iterate's modes do not solve.
constexpr int kPolishBreakingTrials = 8;

// polish_on_modes on the iterate's modes (contact_modes with mode_tol), and failing that on the same
// modes with one more contact breaking, the `breaking_trials` pushing least first, and with
// breaking_pairs two more (each pair of those); each set of modes from the least-norm λ, then from the
// iterate. A contact that touches without pushing (λ = 0 with v_n = 0: of redundant contacts, corners
// of flush faces, the solution can leave one out, or two of a face's four) is read from a stalled
// iterate as sliding with a small λ, and the equations of that mode then disagree.
inline bool polish_modes(int nc, const double* G, const double* g, const double* mu, double mode_tol, double tol,
                         const ResidualScale& scale, double* lambda, double* v, NcpWorkspace& ws,
                         int breaking_trials = 0, bool breaking_pairs = false) {
  constexpr int8_t breaking = static_cast<int8_t>(ContactMode::breaking);
  ws.modes.resize(nc);
  contact_modes(nc, lambda, v, scale.g, mode_tol, ws.modes.data());
  auto solves = [&] {
    return polish_on_modes(nc, G, g, mu, tol, scale, lambda, v, ws, false) ||
           polish_on_modes(nc, G, g, mu, tol, scale, lambda, v, ws, true);
  };
  if (solves()) return true;
  ws.iterate_modes.assign(ws.modes.begin(), ws.modes.end());
  ws.trial_order.clear();
  for (int c = 0; c < nc; ++c)
    if (ws.iterate_modes[c] != breaking) ws.trial_order.push_back(c);
  std::sort(ws.trial_order.begin(), ws.trial_order.end(),
            [&](int a, int b) { return lambda[3 * a + 2] < lambda[3 * b + 2]; });
  const int trials = std::min(breaking_trials, static_cast<int>(ws.trial_order.size()));
  for (int t = 0; t < trials; ++t) {
    ws.modes.assign(ws.iterate_modes.begin(), ws.iterate_modes.end());
    ws.modes[ws.trial_order[t]] = breaking;
    if (solves()) return true;
  }
  if (!breaking_pairs) return false;
  for (int t = 0; t < trials; ++t)
    for (int u = t + 1; u < trials; ++u) {
      ws.modes.assign(ws.iterate_modes.begin(), ws.iterate_modes.end());
      ws.modes[ws.trial_order[t]] = breaking, ws.modes[ws.trial_order[u]] = breaking;
      if (solves()) return true;
    }
  return false;
}

// How an ADMM run treats the De Saxcé term s = Γ(v). every_iteration: refreshed from each iterate,
// which solves most problems fastest but need not converge (the map from s to the cone QP's
// solution is no contraction): on rank-deficient Delassus matrices with large μ the iterate can
// cycle with its modes wrong. when_settled: held fixed while ADMM solves the convex cone QP it
// defines, refreshed once the iterate has settled: the fixed point on s of Acary, Cadoux, Lemaréchal
// and Malick (2011), each of whose steps is a convex problem, on which ADMM converges.
enum class SaxceUpdate { every_iteration, when_settled };

// One ADMM run of solve_ncp_admm from λ = 0 with penalty rho, at most max_iterations iterations
// (added to report.iterations): solved (λ, v = G λ + g in lambda and v, report.residual set),
// invalid_problem, or iteration_limit with the iterate of smallest residual so far in ws.best (of
// residual best_residual, both carried over from earlier runs).
inline LcpStatus admm_run(int nc, const double* G, const double* g, const double* mu, double rho, double tol,
                          int max_iterations, SaxceUpdate update, const ResidualScale& scale, double* lambda, double* v,
                          NcpWorkspace& ws, double& best_residual, LcpReport& report) {
  const int n = 3 * nc;
  const double mode_tol = mode_tolerance(tol);
  std::fill(lambda, lambda + n, 0.0);  // the projected iterate z of ADMM
  std::copy(g, g + n, v);
  if (!cholesky(n, G, rho, ws.L)) return LcpStatus::invalid_problem;
  ws.modes.resize(nc);
  ws.polished_modes.clear();
  ws.y.assign(n, 0.0);
  ws.lambda.resize(n);
  ws.z_previous.resize(n);
  ws.saxce.assign(n, 0.0);
  auto refresh_saxce = [&] {
    for (int c = 0; c < nc; ++c) ws.saxce[3 * c + 2] = mu[c] * std::hypot(v[3 * c], v[3 * c + 1]);
  };
  refresh_saxce();
  int next_polish = 25, last_polish = 0;
  const double initial_rho = rho;  // the balancing keeps ρ within 1e±6 of it
  for (int it = 1; it <= max_iterations; ++it) {
    ++report.iterations;
    if (update == SaxceUpdate::every_iteration && it > 1) refresh_saxce();
    // λ = (G + ρI)⁻¹ (ρ z − y − g − s)
    for (int i = 0; i < n; ++i) ws.lambda[i] = rho * lambda[i] - ws.y[i] - g[i] - ws.saxce[i];
    cholesky_solve(n, ws.L, ws.lambda.data());
    std::copy(lambda, lambda + n, ws.z_previous.begin());
    for (int c = 0; c < nc; ++c) {
      double shifted[3];
      for (int k = 0; k < 3; ++k) shifted[k] = ws.lambda[3 * c + k] + ws.y[3 * c + k] / rho;
      project_onto_cone(shifted, mu[c], lambda + 3 * c);
    }
    for (int i = 0; i < n; ++i) ws.y[i] += rho * (ws.lambda[i] - lambda[i]);
    lcp_velocity(n, G, g, lambda, v);
    report.residual = residual(nc, lambda, v, mu, scale);
    if (report.residual <= tol) return LcpStatus::solved;
    if (report.residual < best_residual) {
      best_residual = report.residual;
      std::copy(lambda, lambda + n, ws.best.begin());
    }
    // An iterate far beyond the largest impulse the data can call for has run off (ADMM on the
    // De Saxcé fixed point need not converge on rank-deficient G): stop rather than overflow.
    const double lambda_max = largest_magnitude(n, lambda);
    if (!(lambda_max <= kImpulseCap * scale.lambda_cap)) break;
    // Polishing: after 25, 50, 100, … iterations; holding s, also once the iterate has settled on
    // the QP of this s (at most every 25 iterations), which is when its modes are worth trying.
    bool polish = it == next_polish;
    if (update == SaxceUpdate::when_settled) {
      double primal = 0.0, change = 0.0;
      for (int i = 0; i < n; ++i) {
        primal = std::max(primal, std::abs(ws.lambda[i] - lambda[i]));
        change = std::max(change, std::abs(lambda[i] - ws.z_previous[i]));
      }
      const double size = scale.G > 0.0 ? std::max(lambda_max, scale.g / scale.G) : lambda_max;
      if (std::max(primal, change) <= mode_tol * size) {
        refresh_saxce();
        polish = polish || it - last_polish >= 25;
      }
    }
    if (polish) {
      if (it == next_polish) next_polish *= 2;
      last_polish = it;
      // Holding s (a problem the runs before did not solve), the polishes also try contacts as
      // breaking, but only on modes they have not tried yet: the trials of the same modes differ only
      // in the iterate Newton's method starts from, and they are most of a polish's cost.
      int breaking_trials = 0;
      if (update == SaxceUpdate::when_settled) {
        contact_modes(nc, lambda, v, scale.g, mode_tol, ws.modes.data());
        if (ws.modes != ws.polished_modes) {
          ws.polished_modes = ws.modes;
          breaking_trials = kPolishBreakingTrials;
        }
      }
      if (polish_modes(nc, G, g, mu, mode_tol, tol, scale, lambda, v, ws, breaking_trials)) {
        report.residual = residual(nc, lambda, v, mu, scale);
        return LcpStatus::solved;
      }
    }
    if (it % 25 == 0) {
      // Residual balancing: primal and dual residuals within a factor of ten, the primal one (an
      // impulse) turned into a velocity by the initial penalty, so that the balance does not depend
      // on the units of the data.
      double primal = 0.0, dual = 0.0;
      for (int i = 0; i < n; ++i) {
        primal = std::max(primal, initial_rho * std::abs(ws.lambda[i] - lambda[i]));
        dual = std::max(dual, rho * std::abs(lambda[i] - ws.z_previous[i]));
      }
      if ((primal > 10.0 * dual && rho < 1e6 * initial_rho) || (dual > 10.0 * primal && rho > 1e-6 * initial_rho)) {
        rho *= primal > dual ? 5.0 : 0.2;
        if (!cholesky(n, G, rho, ws.L)) return LcpStatus::invalid_problem;
      }
    }
  }
  return LcpStatus::iteration_limit;
}

}  // namespace ncp_detail

// An initial ADMM penalty for G (n × n): its largest eigenvalue, by a few power iterations (residual
// balancing adapts it); 1 for G = 0. On the rank-deficient Delassus matrices of many contacts (four
// corners of a box share its six dofs) smaller penalties, such as G's largest diagonal entry, stall
// ADMM short of the solution.
inline double ncp_penalty(int n, const double* G, NcpWorkspace& ws) {
  constexpr int kPowerIterations = 10;
  std::vector<double>&x = ws.lambda, &Gx = ws.y;
  x.assign(n, 0.0);
  Gx.resize(n);
  for (int i = 0; i < n; ++i)  // |G| 1: no eigenvector of G's top eigenvalue is orthogonal to it
    for (int j = 0; j < n; ++j) x[i] += std::abs(G[static_cast<size_t>(i) * n + j]);
  double eigenvalue = 0.0;
  for (int it = 0; it < kPowerIterations; ++it) {
    const double norm = std::sqrt(dot(x.data(), x.data(), n));
    if (!(norm > 0.0)) break;
    for (int i = 0; i < n; ++i) x[i] /= norm;
    for (int i = 0; i < n; ++i) Gx[i] = dot(G + static_cast<size_t>(i) * n, x.data(), n);
    eigenvalue = dot(x.data(), Gx.data(), n);  // Rayleigh quotient
    std::swap(x, Gx);
  }
  return eigenvalue > 0.0 ? eigenvalue : 1.0;
}

// The cone QPs the fixed point in solve_ncp_admm solves at most (solve_ncp_fixed_point).
constexpr int kFixedPointRounds = 200;
// solve_ncp_admm's first ADMM run has this share (1/kShortRunShare) of max_iterations.
constexpr int kShortRunShare = 10;

// Solves the NCP of nc contacts: G (3nc × 3nc) symmetric positive semidefinite, g (3nc), mu (nc);
// rho > 0 the initial penalty. λ and v = G λ + g into lambda and v. report.residual as
// ncp_detail::residual. In turn, each from λ = 0 and each only when the ones before did not converge
// (iteration limits, or iterates run off): ADMM refreshing the De Saxcé term every iteration, for a
// tenth of max_iterations; the fixed point of lcp/ncp_fixed_point.hpp; the same ADMM for
// max_iterations; ADMM holding the term while it settles (ncp_detail::SaxceUpdate), for
// max_iterations. report.iterations counts every ADMM iteration and every cone QP of the fixed point.
// Without convergence the impulses of smallest residual are returned, with the status solved only
// when their polish solves the problem (else iteration_limit).
inline LcpReport solve_ncp_admm(int nc, const double* G, const double* g, const double* mu, double rho, double tol,
                                int max_iterations, double* lambda, double* v, NcpWorkspace& ws) {
  using namespace ncp_detail;
  const int n = 3 * nc;
  LcpReport report;
  const ResidualScale scale = residual_scale(n, G, g);
  std::fill(lambda, lambda + n, 0.0);
  std::copy(g, g + n, v);
  if (n == 0) {
    report.status = LcpStatus::solved;
    return report;
  }
  ws.best.assign(n, 0.0);  // λ = 0, the start
  double best_residual = residual(nc, lambda, v, mu, scale);
  auto admm = [&](int iterations, SaxceUpdate update) {
    report.status = admm_run(nc, G, g, mu, rho, tol, iterations, update, scale, lambda, v, ws, best_residual, report);
    return report.status != LcpStatus::iteration_limit;
  };
  // A short run first: of the problems it leaves, the fixed point solves most in a few cone QPs, which
  // cost less than ADMM's remaining iterations would.
  if (admm(std::max(1, max_iterations / kShortRunShare), SaxceUpdate::every_iteration)) return report;
  ws.fixed_lambda.resize(n), ws.fixed_v.resize(n);
  const LcpReport fixed = solve_ncp_fixed_point(
      nc, G, g, mu, tol, kFixedPointRounds,
      [&](const double* l, const double* u) { return residual(nc, l, u, mu, scale); }, ws.fixed_lambda.data(),
      ws.fixed_v.data(), ws.fixed_point);
  report.iterations += fixed.iterations;
  auto take_fixed_point = [&] {
    std::copy(ws.fixed_lambda.begin(), ws.fixed_lambda.end(), lambda);
    std::copy(ws.fixed_v.begin(), ws.fixed_v.end(), v);
    report.residual = fixed.residual;
    report.status = fixed.status;
  };
  if (fixed.status == LcpStatus::solved) {
    take_fixed_point();
    return report;
  }
  // Else ADMM with its whole budget (some problems need it), then holding the De Saxcé term.
  if (admm(max_iterations, SaxceUpdate::every_iteration) || admm(max_iterations, SaxceUpdate::when_settled))
    return report;
  // Not converged: the iterate of smallest residual, ADMM's, then the fixed point's where it is smaller,
  // polished with the breaking trials one and two at a time (only here, on a problem no run solved:
  // the pairs cost up to C(8, 2) polishes more); solved if a polish solves the problem.
  auto polish_iterate = [&] {
    if (!polish_modes(nc, G, g, mu, mode_tolerance(tol), tol, scale, lambda, v, ws, kPolishBreakingTrials, true))
      return false;
    report.residual = residual(nc, lambda, v, mu, scale);
    report.status = LcpStatus::solved;
    return true;
  };
  std::copy(ws.best.begin(), ws.best.end(), lambda);
  lcp_velocity(n, G, g, lambda, v);
  report.residual = residual(nc, lambda, v, mu, scale);
  if (polish_iterate()) return report;
  if (fixed.residual < report.residual) {
    take_fixed_point();
    polish_iterate();
  }
  return report;
}

}  // namespace dcol::lcp
