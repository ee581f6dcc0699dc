// Primal-dual interior-point method for small cone programs
//
//     minimize cᵀx   subject to   s = h − G x ∈ K,
//
// K = (nonnegative orthant of size l) × (second-order cones of sizes q_1 … q_k), in that row order.
// Dual: z ∈ K with c + Gᵀz = 0. The method is the one of CVXOPT's conelp/coneqp as DCOL §II-A uses
// it: Nesterov–Todd scaling, Mehrotra predictor–corrector, the Newton system reduced to the normal
// equations Gᵀ W⁻² G Δx = r (n ≤ NMax is tiny), feasible-start-free initialization by least squares.
//
// All storage is inside the solver object, sized by template parameters, so a solve never touches
// the heap. The scaling and the Cholesky factor of the last iteration (before its step) stay in the
// object for a derivative pass.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace dcol {

enum class SolveStatus : int {
  solved = 0,
  solved_inaccurate = 1,  // stopped early but within inaccurate_factor × tolerances
  max_iterations = 2,
  numerical_error = 3,
};

struct SolverSettings {
  double feastol = 1e-9;  // relative primal/dual residual
  double abstol = 1e-9;   // absolute duality gap sᵀz
  double reltol = 1e-9;   // duality gap relative to the objective
  int max_iter = 50;
  double inaccurate_factor = 1e4;  // looser tolerances for solved_inaccurate
};

struct SolveInfo {
  SolveStatus status = SolveStatus::numerical_error;
  int iterations = 0;
  double primal_objective = 0.0;
  double dual_objective = 0.0;
  double gap = 0.0;
  double primal_residual = 0.0;
  double dual_residual = 0.0;
};

// Problem data, dense, row-major with a fixed row stride NMax.
template <int NMax, int MMax, int KMax>
struct ConeProgram {
  static constexpr int n_max = NMax;
  static constexpr int m_max = MMax;
  static constexpr int k_max = KMax;
  int n = 0;          // variables
  int m = 0;          // rows
  int l = 0;          // orthant rows (the first l rows)
  int num_soc = 0;    // second-order cones after the orthant
  int soc_dim[KMax];  // their sizes
  double c[NMax];
  double h[MMax];
  double G[MMax][NMax];

  void clear(int n_vars) {
    n = n_vars;
    m = l = num_soc = 0;
    std::fill(c, c + n, 0.0);
  }
  // Appends a row of zeros to the orthant part (all orthant rows must come before any cone).
  double* add_orthant_row(double h_value) {
    double* row = G[m];
    std::fill(row, row + n, 0.0);
    h[m++] = h_value;
    ++l;
    return row;
  }
  // Opens a second-order cone of size dim; its rows are G[first]… and h[first]….
  int add_soc(int dim) {
    const int first = m;
    for (int i = 0; i < dim; ++i) {
      std::fill(G[m + i], G[m + i] + n, 0.0);
      h[m + i] = 0.0;
    }
    m += dim;
    soc_dim[num_soc++] = dim;
    return first;
  }
};

namespace detail {

inline double dot(const double* a, const double* b, int k) {
  double acc = 0.0;
  for (int i = 0; i < k; ++i) acc += a[i] * b[i];
  return acc;
}

// u0² − ‖u1‖², factored so that it stays accurate near the cone boundary.
inline double soc_residual(const double* u, int dim) {
  const double tail = std::sqrt(dot(u + 1, u + 1, dim - 1));
  return (u[0] - tail) * (u[0] + tail);
}

// Largest t ≤ t_max with u + t du in the cone, u strictly inside.
inline double soc_step(const double* u, const double* du, int dim, double t_max) {
  // f(t) = a t² + b t + c = (u0 + t du0)² − ‖u1 + t du1‖², c > 0; first positive root. A path from
  // the interior to the other nappe crosses the boundary, so the root alone decides.
  const double a = du[0] * du[0] - dot(du + 1, du + 1, dim - 1);
  const double b = 2.0 * (u[0] * du[0] - dot(u + 1, du + 1, dim - 1));
  const double c = std::max(soc_residual(u, dim), 0.0);
  double root = std::numeric_limits<double>::infinity();
  if (a == 0.0) {
    if (b < 0.0) root = -c / b;
  } else {
    const double disc = b * b - 4.0 * a * c;
    if (disc >= 0.0) {
      const double q = -0.5 * (b + std::copysign(std::sqrt(disc), b));
      const double r1 = q / a;
      const double r2 = q != 0.0 ? c / q : std::numeric_limits<double>::infinity();
      if (r1 >= 0.0) root = std::min(root, r1);
      if (r2 >= 0.0) root = std::min(root, r2);
    }
  }
  return std::min(t_max, root);
}

// One second-order cone block of W = η (2 v vᵀ − J) and W⁻¹ = (2 J v vᵀ J − J) / η.
inline void soc_apply_W(const double* sv, double eta, const double* x, double* out, int dim) {
  const double t = 2.0 * dot(sv, x, dim);
  out[0] = eta * (t * sv[0] - x[0]);
  for (int i = 1; i < dim; ++i) out[i] = eta * (t * sv[i] + x[i]);
}

inline void soc_apply_Winv(const double* sv, double eta, const double* x, double* out, int dim) {
  const double t = 2.0 * (sv[0] * x[0] - dot(sv + 1, x + 1, dim - 1));
  const double inv_eta = 1.0 / eta;
  out[0] = inv_eta * (t * sv[0] - x[0]);
  for (int i = 1; i < dim; ++i) out[i] = inv_eta * (x[i] - t * sv[i]);
}

// Jordan product in one cone: (uᵀv, u0 v1 + v0 u1).
inline void soc_product(const double* u, const double* v, double* out, int dim) {
  out[0] = dot(u, v, dim);
  for (int i = 1; i < dim; ++i) out[i] = u[0] * v[i] + v[0] * u[i];
}

// Solves u ∘ out = v in one cone (u strictly inside): the inverse of the arrow matrix of u.
inline void soc_divide(const double* u, const double* v, double* out, int dim) {
  const double u0 = u[0];
  const double o0 = (u0 * v[0] - dot(u + 1, v + 1, dim - 1)) / soc_residual(u, dim);
  out[0] = o0;
  for (int i = 1; i < dim; ++i) out[i] = (v[i] - o0 * u[i]) / u0;
}

}  // namespace detail

// The solver proper. With NFixed > 0 the number of variables is a compile-time constant (the
// proximity problems have 4–8), which lets the compiler unroll every short loop over them.
//
// Each iteration makes a few passes over the rows; on the orthant rows, where W is diagonal, every
// pass does all of its work for a row at once (scaling, residuals, the row of W⁻¹G and its share of
// the normal matrix; later the directions and the step bound), so the data of a row is touched
// once per pass. The cones, at most a few small blocks, go through the per-cone helpers.
template <class Program, int NFixed = 0>
class ConeSolver {
  static constexpr int NMax = Program::n_max;
  static constexpr int MMax = Program::m_max;
  static constexpr int KMax = Program::k_max;
  static_assert(NFixed >= 0 && NFixed <= NMax, "NFixed exceeds the program's column capacity");

 public:
  double x[NMax], s[MMax], z[MMax];
  SolveInfo info;

  // Solves prob (with prob.n == NFixed when NFixed > 0); the result is in x, s, z and info.
  const SolveInfo& solve(const Program& prob, const SolverSettings& settings);

  // Nesterov–Todd scaling at the last iterate: orthant W = diag(w); cone k: W = η_k (2 v vᵀ − J)
  // with vᵀJv = 1, v stored in soc_v over the cone's rows. λ = W z = W⁻¹ s. L: Cholesky factor of
  // Gᵀ W⁻² G. At a solved status they belong to the returned solution.
  double w[MMax], w_inv[MMax];
  double soc_v[MMax];
  double eta[KMax];
  double lambda[MMax];
  double L[NMax][NMax];

 private:
  const Program* p_ = nullptr;
  double Gs_[MMax][NMax];  // W⁻¹ G
  double rx_[NMax];                        // c + Gᵀz
  double u_[MMax];                         // W⁻¹ (G x + s − h)
  double h_scale_ = 1.0, c_scale_ = 1.0;  // max(1, ‖h‖), max(1, ‖c‖)

  int num_vars() const { return NFixed > 0 ? NFixed : p_->n; }
  bool scale_and_assemble();
  bool factor(const double (&H)[NMax][NMax]);
  void cholesky_solve(double* b) const;
  double newton_direction(const double* t1, double* dx, double* ds_scaled, double* dz_scaled);
  bool shift_into_cone(double* v) const;
};

// ---------------------------------------------------------------------------------------------

// CVXOPT's initialization: v ← v + (1 + a) e when v is not strictly inside (a: how far outside).
template <class Program, int NFixed>
bool ConeSolver<Program, NFixed>::shift_into_cone(double* v) const {
  const Program& p = *p_;
  double outside = -std::numeric_limits<double>::infinity();
  for (int i = 0; i < p.l; ++i) outside = std::max(outside, -v[i]);
  for (int k = 0, row = p.l; k < p.num_soc; row += p.soc_dim[k], ++k) {
    const int dim = p.soc_dim[k];
    outside = std::max(outside, std::sqrt(detail::dot(v + row + 1, v + row + 1, dim - 1)) - v[row]);
  }
  if (!std::isfinite(outside)) return false;
  if (outside >= 0.0) {
    const double shift = 1.0 + outside;
    for (int i = 0; i < p.l; ++i) v[i] += shift;
    for (int k = 0, row = p.l; k < p.num_soc; row += p.soc_dim[k], ++k) v[row] += shift;
  }
  return true;
}

// One pass at the current iterate: the scaling W and λ, the residuals r_x = c + Gᵀz and
// u = W⁻¹(Gx + s − h), the gap, objectives and residual norms in info, Gs = W⁻¹G and the factor of
// GsᵀGs. False when s or z has left the cone interior or the factorization failed.
template <class Program, int NFixed>
bool ConeSolver<Program, NFixed>::scale_and_assemble() {
  const Program& p = *p_;
  const int n = num_vars();
  // Accumulate in locals: the compiler cannot keep members in registers across the stores to Gs_.
  double H[NMax][NMax], rx[NMax], xl[NMax];
  for (int j = 0; j < n; ++j) {
    rx[j] = p.c[j];
    xl[j] = x[j];
    for (int k = 0; k <= j; ++k) H[j][k] = 0.0;
  }
  double rz2 = 0.0, gap = 0.0, hz = 0.0;
  for (int i = 0; i < p.l; ++i) {
    const double si = s[i], zi = z[i];
    if (!(si > 0.0 && zi > 0.0)) return false;
    const double wi = std::sqrt(si / zi), wi_inv = 1.0 / wi;
    w[i] = wi;
    w_inv[i] = wi_inv;
    lambda[i] = wi * zi;
    const double* g = p.G[i];
    double gs[NMax];
    double gx = 0.0;
    for (int j = 0; j < n; ++j) {
      gx += g[j] * xl[j];
      rx[j] += g[j] * zi;
      gs[j] = g[j] * wi_inv;
    }
    for (int a = 0; a < n; ++a) {
      Gs_[i][a] = gs[a];
      for (int b = 0; b <= a; ++b) H[a][b] += gs[a] * gs[b];
    }
    const double rz = gx + si - p.h[i];
    rz2 += rz * rz;
    gap += si * zi;
    hz += p.h[i] * zi;
    u_[i] = rz * wi_inv;
  }
  for (int k = 0, row = p.l; k < p.num_soc; row += p.soc_dim[k], ++k) {
    const int dim = p.soc_dim[k];
    const double* sk = s + row;
    const double* zk = z + row;
    const double s_res = detail::soc_residual(sk, dim);
    const double z_res = detail::soc_residual(zk, dim);
    if (!(s_res > 0.0 && z_res > 0.0 && sk[0] > 0.0 && zk[0] > 0.0)) return false;
    const double s_norm = std::sqrt(s_res), z_norm = std::sqrt(z_res);
    const double gamma = std::sqrt(0.5 * (1.0 + detail::dot(sk, zk, dim) / (s_norm * z_norm)));
    // w̄ = (s̄ + J z̄) / 2γ, and the vector v = (w̄ + e) / √(2(w̄0 + 1)) of W = η (2 v vᵀ − J).
    double* v = soc_v + row;
    const double w0 = (sk[0] / s_norm + zk[0] / z_norm) / (2.0 * gamma);
    const double v_scale = 1.0 / std::sqrt(2.0 * (w0 + 1.0));
    v[0] = (w0 + 1.0) * v_scale;
    for (int i = 1; i < dim; ++i) v[i] = (sk[i] / s_norm - zk[i] / z_norm) / (2.0 * gamma) * v_scale;
    eta[k] = std::sqrt(s_norm / z_norm);
    detail::soc_apply_W(v, eta[k], zk, lambda + row, dim);

    double rz[MMax];
    for (int i = 0; i < dim; ++i) {
      const double* g = p.G[row + i];
      double gx = 0.0;
      for (int j = 0; j < n; ++j) {
        gx += g[j] * xl[j];
        rx[j] += g[j] * zk[i];
      }
      rz[i] = gx + sk[i] - p.h[row + i];
      rz2 += rz[i] * rz[i];
      gap += sk[i] * zk[i];
      hz += p.h[row + i] * zk[i];
    }
    detail::soc_apply_Winv(v, eta[k], rz, u_ + row, dim);
    // Rows of W⁻¹G: W⁻¹ = (2 J v vᵀ J − J)/η acts on each column of the block.
    const double inv_eta = 1.0 / eta[k];
    double t[NMax];  // 2 (Jv)ᵀ G_k
    for (int j = 0; j < n; ++j) t[j] = v[0] * p.G[row][j];
    for (int i = 1; i < dim; ++i)
      for (int j = 0; j < n; ++j) t[j] -= v[i] * p.G[row + i][j];
    for (int i = 0; i < dim; ++i) {
      const double* g = p.G[row + i];
      const double sign = i == 0 ? -1.0 : 1.0;
      double gs[NMax];
      for (int j = 0; j < n; ++j) gs[j] = inv_eta * (sign * g[j] - sign * 2.0 * t[j] * v[i]);
      for (int a = 0; a < n; ++a) {
        Gs_[row + i][a] = gs[a];
        for (int b = 0; b <= a; ++b) H[a][b] += gs[a] * gs[b];
      }
    }
  }
  for (int a = 0; a < n; ++a) rx_[a] = rx[a];
  info.gap = gap;
  info.primal_objective = detail::dot(p.c, xl, n);
  info.dual_objective = -hz;
  info.primal_residual = std::sqrt(rz2) / h_scale_;
  info.dual_residual = std::sqrt(detail::dot(rx, rx, n)) / c_scale_;
  return factor(H);
}

// Cholesky factor L of H (lower triangle); a tiny relative floor on the pivots keeps the last
// iterations usable when the scaling has become extreme.
template <class Program, int NFixed>
bool ConeSolver<Program, NFixed>::factor(const double (&H)[NMax][NMax]) {
  const int n = num_vars();
  double max_diag = 0.0;
  for (int a = 0; a < n; ++a) max_diag = std::max(max_diag, H[a][a]);
  if (!(max_diag > 0.0) || !std::isfinite(max_diag)) return false;
  const double floor = 1e-15 * max_diag;
  for (int j = 0; j < n; ++j) {
    double d = H[j][j];
    for (int k = 0; k < j; ++k) d -= L[j][k] * L[j][k];
    const double ljj = std::sqrt(d > floor ? d : floor);
    L[j][j] = ljj;
    for (int i = j + 1; i < n; ++i) {
      double v = H[i][j];
      for (int k = 0; k < j; ++k) v -= L[i][k] * L[j][k];
      L[i][j] = v / ljj;
    }
  }
  return true;
}

template <class Program, int NFixed>
void ConeSolver<Program, NFixed>::cholesky_solve(double* b) const {
  const int n = num_vars();
  for (int i = 0; i < n; ++i) {
    double v = b[i];
    for (int k = 0; k < i; ++k) v -= L[i][k] * b[k];
    b[i] = v / L[i][i];
  }
  for (int i = n - 1; i >= 0; --i) {
    double v = b[i];
    for (int k = i + 1; k < n; ++k) v -= L[k][i] * b[k];
    b[i] = v / L[i][i];
  }
}

// Newton step for  Gᵀ dz = −r_x,  G dx + ds = −r_z,  W⁻¹ds + W dz = t1  (t1 = λ \ the
// complementarity right-hand side). With v = W⁻¹ r_z + t1 (CVXOPT's elimination):
// GsᵀGs dx = −r_x − Gsᵀv,  W dz = Gs dx + v,  W⁻¹ds = t1 − W dz.
// Returns dx, the scaled directions and the largest step keeping λ + t·(both) in the cone.
template <class Program, int NFixed>
double ConeSolver<Program, NFixed>::newton_direction(const double* t1, double* dx, double* ds_scaled,
                                                     double* dz_scaled) {
  const Program& p = *p_;
  const int n = num_vars(), m = p.m;
  double v[MMax], step[NMax];  // step: a local copy of dx the compiler can keep in registers
  for (int j = 0; j < n; ++j) step[j] = -rx_[j];
  for (int i = 0; i < m; ++i) {
    v[i] = u_[i] + t1[i];
    for (int j = 0; j < n; ++j) step[j] -= Gs_[i][j] * v[i];
  }
  cholesky_solve(step);
  double t_max = std::numeric_limits<double>::infinity();
  for (int i = 0; i < m; ++i) {
    double wdz = v[i];
    for (int j = 0; j < n; ++j) wdz += Gs_[i][j] * step[j];
    dz_scaled[i] = wdz;
    ds_scaled[i] = t1[i] - wdz;
  }
  // Step bound on the orthant, written as selects: the signs are unpredictable branches.
  constexpr double inf = std::numeric_limits<double>::infinity();
  for (int i = 0; i < p.l; ++i) {
    const double by_z = dz_scaled[i] < 0.0 ? -lambda[i] / dz_scaled[i] : inf;
    const double by_s = ds_scaled[i] < 0.0 ? -lambda[i] / ds_scaled[i] : inf;
    t_max = std::min(t_max, std::min(by_z, by_s));
  }
  for (int k = 0, row = p.l; k < p.num_soc; row += p.soc_dim[k], ++k) {
    t_max = detail::soc_step(lambda + row, ds_scaled + row, p.soc_dim[k], t_max);
    t_max = detail::soc_step(lambda + row, dz_scaled + row, p.soc_dim[k], t_max);
  }
  std::copy(step, step + n, dx);
  return t_max;
}

template <class Program, int NFixed>
const SolveInfo& ConeSolver<Program, NFixed>::solve(const Program& prob, const SolverSettings& settings) {
  p_ = &prob;
  const int n = num_vars(), m = prob.m;
  info = SolveInfo{};
  std::fill(x, x + n, 0.0);
  std::fill(s, s + m, 0.0);
  std::fill(z, z + m, 0.0);
  const int degree = prob.l + prob.num_soc;  // ν: the barrier parameter of K
  h_scale_ = std::max(1.0, std::sqrt(detail::dot(prob.h, prob.h, m)));
  c_scale_ = std::max(1.0, std::sqrt(detail::dot(prob.c, prob.c, n)));

  // Initialization: x minimizes ‖Gx − h‖, z minimizes ‖z‖ subject to Gᵀz + c = 0, both then
  // shifted into the cone interior; both use the factor of GᵀG.
  double H[NMax][NMax] = {};
  for (int i = 0; i < m; ++i) {
    const double* g = prob.G[i];
    for (int a = 0; a < n; ++a) {
      x[a] += g[a] * prob.h[i];
      for (int b = 0; b <= a; ++b) H[a][b] += g[a] * g[b];
    }
  }
  if (!factor(H)) return info;
  cholesky_solve(x);
  double y[NMax];
  for (int j = 0; j < n; ++j) y[j] = -prob.c[j];
  cholesky_solve(y);
  for (int i = 0; i < m; ++i) {
    s[i] = prob.h[i] - detail::dot(prob.G[i], x, n);
    z[i] = detail::dot(prob.G[i], y, n);
  }
  if (!shift_into_cone(s) || !shift_into_cone(z)) return info;

  double dx[NMax], ds_aff[MMax], dz_aff[MMax], ds_scaled[MMax], dz_scaled[MMax], t1[MMax];
  auto within = [&](double factor) {
    const double rel_gap = info.gap / std::max(std::abs(info.primal_objective), std::abs(info.dual_objective));
    return info.primal_residual <= factor * settings.feastol && info.dual_residual <= factor * settings.feastol &&
           (info.gap <= factor * settings.abstol || rel_gap <= factor * settings.reltol);
  };
  auto finish_early = [&](SolveStatus fallback) -> const SolveInfo& {
    info.status = within(settings.inaccurate_factor) ? SolveStatus::solved_inaccurate : fallback;
    return info;
  };

  for (int iter = 0;; ++iter) {
    info.iterations = iter;
    const bool factored = scale_and_assemble();
    if (factored && within(1.0)) {
      info.status = SolveStatus::solved;
      return info;
    }
    if (!factored) return finish_early(SolveStatus::numerical_error);
    if (iter == settings.max_iter) return finish_early(SolveStatus::max_iterations);

    // Predictor (affine scaling): λ∘(W⁻¹ds + W dz) = −λ∘λ, so t1 = −λ.
    for (int i = 0; i < m; ++i) t1[i] = -lambda[i];
    const double t_aff = std::min(1.0, newton_direction(t1, dx, ds_aff, dz_aff));
    const double one_minus = 1.0 - t_aff;
    const double sigma_mu = one_minus * one_minus * one_minus * info.gap / degree;

    // Corrector: λ∘(W⁻¹ds + W dz) = −λ∘λ − (W⁻¹ds_aff)∘(W dz_aff) + σμe.
    for (int i = 0; i < prob.l; ++i) t1[i] = -lambda[i] + (sigma_mu - ds_aff[i] * dz_aff[i]) / lambda[i];
    for (int k = 0, row = prob.l; k < prob.num_soc; row += prob.soc_dim[k], ++k) {
      const int dim = prob.soc_dim[k];
      double rhs[MMax];
      detail::soc_product(ds_aff + row, dz_aff + row, rhs, dim);
      for (int i = 0; i < dim; ++i) rhs[i] = -rhs[i];
      rhs[0] += sigma_mu;
      detail::soc_divide(lambda + row, rhs, t1 + row, dim);  // λ \ (−λ∘λ + r) = −λ + λ \ r
      for (int i = 0; i < dim; ++i) t1[row + i] -= lambda[row + i];
    }
    const double t = std::min(1.0, 0.99 * newton_direction(t1, dx, ds_scaled, dz_scaled));
    // ds and dz are finite whenever dx is; a NaN fails these tests too, leaving the iterate intact.
    if (!(t > 1e-12) || !std::isfinite(detail::dot(dx, dx, n))) return finish_early(SolveStatus::numerical_error);

    for (int j = 0; j < n; ++j) x[j] += t * dx[j];
    for (int i = 0; i < prob.l; ++i) {
      s[i] += t * w[i] * ds_scaled[i];
      z[i] += t * w_inv[i] * dz_scaled[i];
    }
    for (int k = 0, row = prob.l; k < prob.num_soc; row += prob.soc_dim[k], ++k) {
      const int dim = prob.soc_dim[k];
      double ds[MMax], dz[MMax];
      detail::soc_apply_W(soc_v + row, eta[k], ds_scaled + row, ds, dim);
      detail::soc_apply_Winv(soc_v + row, eta[k], dz_scaled + row, dz, dim);
      for (int i = 0; i < dim; ++i) {
        s[row + i] += t * ds[i];
        z[row + i] += t * dz[i];
      }
    }
  }
}

}  // namespace dcol
