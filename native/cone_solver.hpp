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
inline double orthant_step(const double* u, const double* du, int k, double t_max) {
  for (int i = 0; i < k; ++i)
    if (du[i] < 0.0) t_max = std::min(t_max, -u[i] / du[i]);
  return t_max;
}

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
  // with vᵀJv = 1, v stored in soc_v over the cone's rows. λ = W z = W⁻¹ s.
  double w[MMax], w_inv[MMax];
  double soc_v[MMax];
  double eta[KMax];
  double lambda[MMax];
  double L[NMax][NMax];  // Cholesky factor of Gᵀ W⁻² G

 private:
  const Program* p_ = nullptr;
  double Gs_[MMax][NMax];  // W⁻¹ G
  double rx_[NMax], rz_[MMax];
  double h_scale_ = 1.0, c_scale_ = 1.0;  // max(1, ‖h‖), max(1, ‖c‖)

  int num_vars() const { return NFixed > 0 ? NFixed : p_->n; }
  void set_identity_scaling();
  bool compute_scaling();
  bool factor_normal_matrix();
  void apply_W(const double* v, double* out) const;
  void apply_Winv(const double* v, double* out) const;
  void cone_product(const double* u, const double* v, double* out) const;
  double max_step(const double* u, const double* du) const;
  bool shift_into_cone(double* u) const;
  void cholesky_solve(double* b) const;
  void solve_newton(const double* comp_rhs, double* dx, double* ds_scaled, double* dz_scaled) const;
  void residuals();
};

// ---------------------------------------------------------------------------------------------

template <class Program, int NFixed>
void ConeSolver<Program, NFixed>::apply_W(const double* v, double* out) const {
  const Program& p = *p_;
  for (int i = 0; i < p.l; ++i) out[i] = w[i] * v[i];
  for (int k = 0, row = p.l; k < p.num_soc; row += p.soc_dim[k], ++k)
    detail::soc_apply_W(soc_v + row, eta[k], v + row, out + row, p.soc_dim[k]);
}

template <class Program, int NFixed>
void ConeSolver<Program, NFixed>::apply_Winv(const double* v, double* out) const {
  const Program& p = *p_;
  for (int i = 0; i < p.l; ++i) out[i] = w_inv[i] * v[i];
  for (int k = 0, row = p.l; k < p.num_soc; row += p.soc_dim[k], ++k)
    detail::soc_apply_Winv(soc_v + row, eta[k], v + row, out + row, p.soc_dim[k]);
}

// Jordan product: orthant elementwise; cone (uᵀv, u0 v1 + v0 u1).
template <class Program, int NFixed>
void ConeSolver<Program, NFixed>::cone_product(const double* u, const double* v, double* out) const {
  const Program& p = *p_;
  for (int i = 0; i < p.l; ++i) out[i] = u[i] * v[i];
  for (int k = 0, row = p.l; k < p.num_soc; row += p.soc_dim[k], ++k) {
    const int dim = p.soc_dim[k];
    const double* uk = u + row;
    const double* vk = v + row;
    double* ok = out + row;
    const double u0 = uk[0], v0 = vk[0];
    ok[0] = detail::dot(uk, vk, dim);
    for (int i = 1; i < dim; ++i) ok[i] = u0 * vk[i] + v0 * uk[i];
  }
}

template <class Program, int NFixed>
double ConeSolver<Program, NFixed>::max_step(const double* u, const double* du) const {
  const Program& p = *p_;
  double t = detail::orthant_step(u, du, p.l, std::numeric_limits<double>::infinity());
  for (int k = 0, row = p.l; k < p.num_soc; row += p.soc_dim[k], ++k)
    t = detail::soc_step(u + row, du + row, p.soc_dim[k], t);
  return t;
}

// CVXOPT's initialization: u ← u + (1 + a) e when u is not strictly inside (a: how far outside).
template <class Program, int NFixed>
bool ConeSolver<Program, NFixed>::shift_into_cone(double* u) const {
  const Program& p = *p_;
  double outside = -std::numeric_limits<double>::infinity();
  for (int i = 0; i < p.l; ++i) outside = std::max(outside, -u[i]);
  for (int k = 0, row = p.l; k < p.num_soc; row += p.soc_dim[k], ++k) {
    const int dim = p.soc_dim[k];
    outside = std::max(outside, std::sqrt(detail::dot(u + row + 1, u + row + 1, dim - 1)) - u[row]);
  }
  if (!std::isfinite(outside)) return false;
  if (outside >= 0.0) {
    const double shift = 1.0 + outside;
    for (int i = 0; i < p.l; ++i) u[i] += shift;
    for (int k = 0, row = p.l; k < p.num_soc; row += p.soc_dim[k], ++k) u[row] += shift;
  }
  return true;
}

template <class Program, int NFixed>
void ConeSolver<Program, NFixed>::set_identity_scaling() {
  const Program& p = *p_;
  std::fill(w, w + p.l, 1.0);
  std::fill(w_inv, w_inv + p.l, 1.0);
  for (int k = 0, row = p.l; k < p.num_soc; row += p.soc_dim[k], ++k) {
    eta[k] = 1.0;
    std::fill(soc_v + row, soc_v + row + p.soc_dim[k], 0.0);
    soc_v[row] = 1.0;  // 2 e eᵀ − J = I
  }
}

template <class Program, int NFixed>
bool ConeSolver<Program, NFixed>::compute_scaling() {
  const Program& p = *p_;
  for (int i = 0; i < p.l; ++i) {
    if (!(s[i] > 0.0 && z[i] > 0.0)) return false;
    w[i] = std::sqrt(s[i] / z[i]);
    w_inv[i] = 1.0 / w[i];
    lambda[i] = w[i] * z[i];
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
  }
  for (int k = 0, row = p.l; k < p.num_soc; row += p.soc_dim[k], ++k)
    detail::soc_apply_W(soc_v + row, eta[k], z + row, lambda + row, p.soc_dim[k]);
  return true;
}

// Forms Gs = W⁻¹G row by row and the Cholesky factor of GsᵀGs = GᵀW⁻²G.
template <class Program, int NFixed>
bool ConeSolver<Program, NFixed>::factor_normal_matrix() {
  const Program& p = *p_;
  const int n = num_vars(), m = p.m;
  for (int i = 0; i < p.l; ++i)
    for (int j = 0; j < n; ++j) Gs_[i][j] = p.G[i][j] * w_inv[i];
  for (int k = 0, row = p.l; k < p.num_soc; row += p.soc_dim[k], ++k) {
    const int dim = p.soc_dim[k];
    const double* v = soc_v + row;
    const double inv_eta = 1.0 / eta[k];
    double t[NMax];  // 2 (Jv)ᵀ G_k, column by column
    for (int j = 0; j < n; ++j) t[j] = v[0] * p.G[row][j];
    for (int i = 1; i < dim; ++i)
      for (int j = 0; j < n; ++j) t[j] -= v[i] * p.G[row + i][j];
    for (int j = 0; j < n; ++j) Gs_[row][j] = inv_eta * (2.0 * t[j] * v[0] - p.G[row][j]);
    for (int i = 1; i < dim; ++i)
      for (int j = 0; j < n; ++j) Gs_[row + i][j] = inv_eta * (p.G[row + i][j] - 2.0 * t[j] * v[i]);
  }
  double H[NMax][NMax] = {};
  for (int i = 0; i < m; ++i) {
    const double* g = Gs_[i];
    for (int a = 0; a < n; ++a)
      for (int b = 0; b <= a; ++b) H[a][b] += g[a] * g[b];
  }
  // Cholesky; a tiny relative floor on the pivots keeps the last iterations usable when the
  // scaling has become extreme.
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

// Newton step for  Gᵀ dz = −r_x,  G dx + ds = −r_z,  λ ∘ (W⁻¹ds + W dz) = comp_rhs.
// Returns dx and the scaled directions W⁻¹ds, W dz (CVXOPT's elimination).
template <class Program, int NFixed>
void ConeSolver<Program, NFixed>::solve_newton(const double* comp_rhs, double* dx, double* ds_scaled,
                                               double* dz_scaled) const {
  const Program& p = *p_;
  const int n = num_vars(), m = p.m;
  double t1[MMax], v[MMax], t2[MMax];  // W⁻¹ds + W dz = t1 = λ \ comp_rhs;  v = W⁻¹(r_z + W t1)
  for (int i = 0; i < p.l; ++i) {
    t1[i] = comp_rhs[i] / lambda[i];
    v[i] = rz_[i] * w_inv[i] + t1[i];
  }
  for (int k = 0, row = p.l; k < p.num_soc; row += p.soc_dim[k], ++k) {
    const int dim = p.soc_dim[k];
    detail::soc_divide(lambda + row, comp_rhs + row, t1 + row, dim);
    detail::soc_apply_W(soc_v + row, eta[k], t1 + row, t2, dim);
    for (int i = 0; i < dim; ++i) t2[i] += rz_[row + i];
    detail::soc_apply_Winv(soc_v + row, eta[k], t2, v + row, dim);
  }
  for (int j = 0; j < n; ++j) dx[j] = -rx_[j];
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) dx[j] -= Gs_[i][j] * v[i];
  cholesky_solve(dx);
  for (int i = 0; i < m; ++i) {
    double wdz = v[i];  // W dz = W⁻¹(G dx + r_z + W t1)
    for (int j = 0; j < n; ++j) wdz += Gs_[i][j] * dx[j];
    dz_scaled[i] = wdz;
    ds_scaled[i] = t1[i] - wdz;
  }
}

template <class Program, int NFixed>
void ConeSolver<Program, NFixed>::residuals() {
  const Program& p = *p_;
  const int n = num_vars(), m = p.m;
  for (int j = 0; j < n; ++j) rx_[j] = p.c[j];
  double rz2 = 0.0;
  for (int i = 0; i < m; ++i) {
    const double* g = p.G[i];
    const double zi = z[i];
    double gx = 0.0;
    for (int j = 0; j < n; ++j) {
      rx_[j] += g[j] * zi;
      gx += g[j] * x[j];
    }
    rz_[i] = gx + s[i] - p.h[i];
    rz2 += rz_[i] * rz_[i];
  }
  info.primal_residual = std::sqrt(rz2) / h_scale_;
  info.dual_residual = std::sqrt(detail::dot(rx_, rx_, n)) / c_scale_;
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
  // shifted into the cone interior. With W = I the normal matrix is GᵀG.
  set_identity_scaling();
  if (!factor_normal_matrix()) return info;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) x[j] += prob.G[i][j] * prob.h[i];
  cholesky_solve(x);
  double u[NMax];
  for (int j = 0; j < n; ++j) u[j] = -prob.c[j];
  cholesky_solve(u);
  for (int i = 0; i < m; ++i) {
    s[i] = prob.h[i] - detail::dot(prob.G[i], x, n);
    z[i] = detail::dot(prob.G[i], u, n);
  }
  if (!shift_into_cone(s) || !shift_into_cone(z)) return info;

  double dx[NMax], ds[MMax], dz[MMax], ds_scaled[MMax], dz_scaled[MMax], rhs[MMax], tmp[MMax];
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
    residuals();
    info.gap = detail::dot(s, z, m);
    info.primal_objective = detail::dot(prob.c, x, n);
    info.dual_objective = -detail::dot(prob.h, z, m);
    info.iterations = iter;
    if (within(1.0)) {
      info.status = SolveStatus::solved;
      return info;
    }
    if (iter == settings.max_iter) return finish_early(SolveStatus::max_iterations);
    if (!compute_scaling() || !factor_normal_matrix()) return finish_early(SolveStatus::numerical_error);

    // Predictor (affine scaling): λ∘(W⁻¹ds + W dz) = −λ∘λ.
    cone_product(lambda, lambda, rhs);
    for (int i = 0; i < m; ++i) rhs[i] = -rhs[i];
    solve_newton(rhs, dx, ds_scaled, dz_scaled);
    const double t_aff = std::min(1.0, std::min(max_step(lambda, ds_scaled), max_step(lambda, dz_scaled)));
    const double one_minus = 1.0 - t_aff;
    const double sigma = one_minus * one_minus * one_minus;
    const double mu = info.gap / degree;

    // Corrector: add σμe and Mehrotra's second-order term.
    cone_product(ds_scaled, dz_scaled, tmp);
    for (int i = 0; i < m; ++i) rhs[i] -= tmp[i];
    for (int i = 0; i < prob.l; ++i) rhs[i] += sigma * mu;
    for (int k = 0, row = prob.l; k < prob.num_soc; row += prob.soc_dim[k], ++k) rhs[row] += sigma * mu;
    solve_newton(rhs, dx, ds_scaled, dz_scaled);
    const double t = std::min(1.0, 0.99 * std::min(max_step(lambda, ds_scaled), max_step(lambda, dz_scaled)));

    apply_W(ds_scaled, ds);
    apply_Winv(dz_scaled, dz);
    // ds and dz are finite whenever dx is (λ > 0 and W are finite inside the cone); a NaN fails
    // these tests too, leaving the iterate intact.
    if (!(t > 1e-12) || !std::isfinite(detail::dot(dx, dx, n))) return finish_early(SolveStatus::numerical_error);
    for (int j = 0; j < n; ++j) x[j] += t * dx[j];
    for (int i = 0; i < m; ++i) {
      s[i] += t * ds[i];
      z[i] += t * dz[i];
    }
  }
}

}  // namespace dcol
