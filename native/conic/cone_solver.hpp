// Primal-dual interior-point method for small cone programs
//
//     minimize cᵀx   subject to   s = h − G x ∈ K,
//
// K = (nonnegative orthant of size l) × (second-order cones of sizes q_1 … q_k), in that row order.
// Dual: z ∈ K with c + Gᵀz = 0. The method is the one of CVXOPT's conelp/coneqp as DCOL §II-A uses
// it: Nesterov–Todd scaling, Mehrotra predictor–corrector, the Newton system reduced to the normal
// equations Gᵀ W⁻² G Δx = r (n ≤ NMax is tiny), initialization by least squares (CVXOPT's, for any
// program) or on the central path along one variable (for DCOL's problems).
//
// All storage is inside the solver object, sized by template parameters, so a solve never touches
// the heap. W problems of one structure (the same n, l and cone sizes) can be solved at once, one
// per SIMD lane (lanes.hpp); each lane stops and keeps its own status when it converges.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/lanes.hpp"

namespace dcol::conic {

enum class SolveStatus : int {
  solved = 0,
  solved_inaccurate = 1,  // stopped early but within inaccurate_factor × tolerances
  max_iterations = 2,
  numerical_error = 3,
  // Proximity derivatives only: solved, but exact derivatives (barrier = 0) were asked for where the
  // solution is not differentiable or too near such a point to tell (exact_kkt.hpp); those given are
  // the barrier-smoothed problem's at μ = 1e-9.
  smoothed = 4,
};

// The worse of two outcomes of solves that give values only (no derivatives: never smoothed).
inline SolveStatus worse(SolveStatus a, SolveStatus b) { return static_cast<int>(a) > static_cast<int>(b) ? a : b; }

// The gap tolerances are ECOS's and Clarabel's defaults, 1e-8 (DCOL.jl's is 1e-6); each further
// digit of the gap costs iterations. The residuals, which the ray start makes small from the first
// iteration, are held to 1e-9: solves with barrier > 0 (the derivative and distance functions) stop
// on them.
struct SolverSettings {
  double feastol = 1e-9;  // relative primal/dual residual
  double abstol = 1e-8;   // absolute duality gap sᵀz
  double reltol = 1e-8;   // duality gap relative to the objective
  int max_iter = 50;
  double inaccurate_factor = 1e4;  // looser tolerances for solved_inaccurate
  // With barrier = μ > 0 the solve ends on the central path at μ: the solution of the problem with
  // μ times the cones' log barriers (−log s_i, −log(s0² − ‖s1‖²)/2) added to cᵀx, where the gap
  // tolerances do not apply. The iterations aim no lower than μ and stop when λ∘λ is within
  // centrality_tol of μe (relative), or within what rounding allows when that is more
  // (ConeSolver::centrality_floor). proximity_derivatives.hpp differentiates this smoothed problem.
  double barrier = 0.0;
  double centrality_tol = 1e-2;
};

// Outcome per lane, and the last iterate's measures of optimality.
template <int W = 1>
struct SolveInfo {
  using V = Lanes<W>;
  SolveStatus status[W];
  int iterations[W];
  V primal_objective{}, dual_objective{}, gap{}, primal_residual{}, dual_residual{};
};

// Problem data, dense, row-major with a fixed row stride NMax, for W lanes.
template <int NMax, int MMax, int KMax, int W = 1>
struct ConeProgram {
  using V = Lanes<W>;
  static constexpr int n_max = NMax;
  static constexpr int m_max = MMax;
  static constexpr int k_max = KMax;
  static constexpr int lanes = W;
  int n = 0;          // variables
  int m = 0;          // rows
  int l = 0;          // orthant rows (the first l rows)
  int num_soc = 0;    // second-order cones after the orthant
  int soc_dim[KMax];  // their sizes
  // Rows with zeros outside a range of columns, which the solver then skips (ConeSolver): the
  // orthant rows before narrow_rows and the cones flagged in narrow_cone use the first NNarrow
  // columns; with tail_orthant, the other orthant rows use the columns from NTail on.
  int narrow_rows = 0;
  bool tail_orthant = false;
  bool narrow_cone[KMax];
  V c[NMax];
  V h[MMax];
  V G[MMax][NMax];

  void clear(int n_vars) {
    n = n_vars;
    m = l = num_soc = narrow_rows = 0;
    tail_orthant = false;
    std::fill(c, c + n, V{});
  }
  // Appends a row of zeros to the orthant part (all orthant rows must come before any cone).
  // Rows are zeroed over all NMax columns: a count known when compiling, which makes the fills
  // straight-line code; proximity's programs have n = NMax, so no column is zeroed in vain.
  V* add_orthant_row(V h_value) {
    V* row = G[m];
    std::fill(row, row + NMax, V{});
    h[m++] = h_value;
    ++l;
    return row;
  }
  // Opens a second-order cone of size dim; its rows are G[first]… and h[first]….
  int add_soc(int dim) {
    const int first = m;
    for (int i = 0; i < dim; ++i) {
      std::fill(G[m + i], G[m + i] + NMax, V{});
      h[m + i] = V{};
    }
    m += dim;
    narrow_cone[num_soc] = false;
    soc_dim[num_soc++] = dim;
    return first;
  }
};

namespace detail {

template <class V>
inline V dot(const V* a, const V* b, int k) {
  V acc{};
  for (int i = 0; i < k; ++i) acc += a[i] * b[i];
  return acc;
}

// u0² − ‖u1‖², factored so that it stays accurate near the cone boundary.
template <class V>
inline V soc_residual(const V* u, int dim) {
  const V tail = lane_sqrt(dot(u + 1, u + 1, dim - 1));
  return (u[0] - tail) * (u[0] + tail);
}

// What the line search and the corrector need of a point u strictly inside a cone; they use it
// several times per iteration, so its square root and divisions are computed once.
template <class V>
struct SocPoint {
  V inv_delta;            // 1/δ, δ² = u0² − ‖u1‖²
  V inv_det;              // 1/δ²
  V u0_bar;               // u0/δ
  V inv_one_plus_u0_bar;  // 1/(1 + u0/δ)
  V inv_u0;               // 1/u0
};

template <class V>
inline SocPoint<V> soc_point(const V* u, int dim) {
  const V inv_delta = 1.0 / lane_sqrt(soc_residual(u, dim));
  const V u0_bar = u[0] * inv_delta;
  return {inv_delta, inv_delta * inv_delta, u0_bar, 1.0 / (1.0 + u0_bar), 1.0 / u[0]};
}

// 1/t for the largest t with u + t du in the cone (≤ 0: no bound). The Lorentz transformation B
// that maps u/δ to e = (1, 0) keeps the cone, so the bound is the one of e + t ρ with
// ρ = B du / δ: 1/t = ‖ρ1‖ − ρ0 (ECOS's line search). Unlike the roots of
// (u0 + t du0)² = ‖u1 + t du1‖², this stays exact when du is along u (the affine step on a cone
// that the solution reaches at its apex), where those roots are a double root that rounding can
// hide.
template <class V>
inline V soc_inverse_step(const V* u, const SocPoint<V>& pt, const V* du, int dim) {
  const V rho0_delta = pt.u0_bar * du[0] - pt.inv_delta * dot(u + 1, du + 1, dim - 1);  // ρ0 δ
  const V coef = (rho0_delta + du[0]) * pt.inv_one_plus_u0_bar * pt.inv_delta;          // of u1 in δ ρ1
  V rho1_delta2{};
  for (int i = 1; i < dim; ++i) {
    const V rho_i_delta = du[i] - coef * u[i];
    rho1_delta2 += rho_i_delta * rho_i_delta;
  }
  return pt.inv_delta * (lane_sqrt(rho1_delta2) - rho0_delta);
}

// Nesterov–Todd scaling of one second-order cone in closed form, W = η (k c cᵀ − J): the usual
// η (2 v vᵀ − J) with 2 v vᵀ = k c cᵀ, c = s̄ + J z̄ + 2γ e and k = 1/(2γ c0) (s̄, z̄: s and z
// normalized to the cone's unit hyperboloid, γ² = (1 + s̄ᵀz̄)/2). Unlike v it needs no square root
// beyond γ's: a shorter chain of dependent roots and divisions, which bounds the speed of these
// small solves, in lanes as well as one at a time. The vector c is stored apart, over the cone's
// rows or in a packet.
template <class V>
struct SocScaling {
  V k, eta, inv_eta;
};

// The scaling of a cone at s and z strictly inside it, from s_res = sᵀJs, z_res = zᵀJz, sᵀz and the
// heads s0, z0; with λ = W z in closed form (CVXOPT's coneprog notes, §4), using
// λᵀJλ = ‖s‖_J ‖z‖_J.
template <class V>
struct SocScalingPoint {
  SocScaling<V> w;
  V s_inv, z_inv;                 // 1/‖s‖_J, 1/‖z‖_J: c's tail is s1 s_inv − z1 z_inv
  V c0;                           // c's head
  V lambda0, lambda_s, lambda_z;  // λ = (λ0, lambda_s s1 + lambda_z z1)
  SocPoint<V> lambda_point;
};

template <class V>
inline SocScalingPoint<V> soc_scaling(V s_res, V z_res, V s_dot_z, V s0, V z0) {
  const V s_norm = lane_sqrt(s_res), z_norm = lane_sqrt(z_res);
  const V s_inv = s_norm * (1.0 / s_res), z_inv = z_norm * (1.0 / z_res);  // not after the roots
  const V gamma = lane_sqrt(0.5 * (1.0 + s_dot_z * s_inv * z_inv));
  const V s0_bar = s0 * s_inv, z0_bar = z0 * z_inv;
  const V c0 = s0_bar + z0_bar + 2.0 * gamma;
  const V inv_c0 = 1.0 / c0, inv_gamma = 1.0 / gamma;
  const V inv_delta = lane_sqrt(s_inv * z_inv), delta = s_norm * z_norm * inv_delta;
  return {{0.5 * inv_gamma * inv_c0, lane_sqrt(s_norm * z_inv), lane_sqrt(z_norm * s_inv)},
          s_inv,
          z_inv,
          c0,
          delta * gamma,
          (gamma + z0_bar) * s_inv * delta * inv_c0,
          (gamma + s0_bar) * z_inv * delta * inv_c0,
          {inv_delta, s_inv * z_inv, gamma, 1.0 / (1.0 + gamma), inv_delta * inv_gamma}};
}

// out = W x and out = W⁻¹ x = J (k (cᵀJx) c − x)/η in one cone.
template <class V>
inline void soc_apply_W(const V* c, const SocScaling<V>& w, const V* x, V* out, int dim) {
  const V t = w.k * dot(c, x, dim);
  out[0] = w.eta * (t * c[0] - x[0]);
  for (int i = 1; i < dim; ++i) out[i] = w.eta * (t * c[i] + x[i]);
}

template <class V>
inline void soc_apply_Winv(const V* c, const SocScaling<V>& w, const V* x, V* out, int dim) {
  if (dim < 1) return;  // a cone has a row; saying so lets GCC see that x[0] was written by the caller
  const V t = w.k * (c[0] * x[0] - dot(c + 1, x + 1, dim - 1));
  out[0] = w.inv_eta * (t * c[0] - x[0]);
  for (int i = 1; i < dim; ++i) out[i] = w.inv_eta * (x[i] - t * c[i]);
}

// Jordan product in one cone: (uᵀv, u0 v1 + v0 u1).
template <class V>
inline void soc_product(const V* u, const V* v, V* out, int dim) {
  out[0] = dot(u, v, dim);
  for (int i = 1; i < dim; ++i) out[i] = u[0] * v[i] + v[0] * u[i];
}

// Solves u ∘ out = v in one cone (u strictly inside): the inverse of the arrow matrix of u.
template <class V>
inline void soc_divide(const V* u, const SocPoint<V>& pt, const V* v, V* out, int dim) {
  const V o0 = (u[0] * v[0] - dot(u + 1, v + 1, dim - 1)) * pt.inv_det;
  out[0] = o0;
  for (int i = 1; i < dim; ++i) out[i] = (v[i] - o0 * u[i]) * pt.inv_u0;
}

// Factor H = L D Lᵀ (L unit lower triangular; no square roots, which would lengthen the chain of
// dependent operations that bounds the speed of these tiny solves); a tiny relative floor on the
// pivots keeps the last iterations usable when the scaling has become extreme. False lanes: H is
// not finite.
template <class V, int NMax>
inline auto ldl_factor(const V (&H)[NMax][NMax], int n, V (&L)[NMax][NMax], V* D, V* D_inv) {
  V max_diag{};
  for (int a = 0; a < n; ++a) max_diag = lane_max(max_diag, H[a][a]);
  const V floor = 1e-15 * max_diag;
  V LD[NMax][NMax];  // L[i][k] D[k]
  for (int j = 0; j < n; ++j) {
    V d = H[j][j];
    for (int k = 0; k < j; ++k) d -= LD[j][k] * L[j][k];
    d = select(d > floor, d, floor);
    const V d_inv = 1.0 / d;
    D[j] = d;
    D_inv[j] = d_inv;
    for (int i = j + 1; i < n; ++i) {
      V v = H[i][j];
      for (int k = 0; k < j; ++k) v -= LD[i][k] * L[j][k];
      LD[i][j] = v;
      L[i][j] = v * d_inv;
    }
  }
  return (max_diag > 0.0) & lane_finite(max_diag);
}

// b ← (L D Lᵀ)⁻¹ b. Both substitutions subtract the entry solved last at the end of each sum, so
// the chain of dependent operations is one multiply-add per entry, not a whole sum: the solve is
// bound by that chain's latency, not by the number of operations.
template <class V, int NMax>
inline void ldl_solve(const V (&L)[NMax][NMax], const V* D_inv, int n, V* b) {
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < i; ++k) b[i] -= L[i][k] * b[k];
  for (int i = 0; i < n; ++i) b[i] *= D_inv[i];
  for (int i = n - 1; i >= 0; --i)
    for (int k = n - 1; k > i; --k) b[i] -= L[k][i] * b[k];
}

// How far a Newton direction may go: the largest t keeping λ + t W⁻¹Δs (primal) and λ + t WΔz
// (dual) in the cone, +∞ where nothing bounds it.
template <class V>
struct StepBounds {
  V primal, dual;
  // From the inverse steps 1/t (≤ 0: nothing bounds the step).
  static StepBounds from_inverse(V inv_primal, V inv_dual) {
    auto length = [](V inv_t) {
      return select(inv_t > 0.0, 1.0 / inv_t, splat<V>(std::numeric_limits<double>::infinity()));
    };
    return {length(inv_primal), length(inv_dual)};
  }
  V both() const { return lane_min(primal, dual); }
};

// Sums over the rows of the scaled directions ds = W⁻¹Δs, dz = WΔz: with them the complementarity
// after separate primal and dual steps is (s + t_p Δs)ᵀ(z + t_d Δz) = (λ + t_p ds)ᵀ(λ + t_d dz)
// = sᵀz + t_p Σλᵀds + t_d Σλᵀdz + t_p t_d Σdsᵀdz (W is symmetric).
template <class V>
struct DirectionProducts {
  V lambda_ds{}, lambda_dz{}, ds_dz{};
};

// The centering parameter σ = μ_aff/μ, μ_aff the complementarity after the predictor's longest
// primal step and longest dual step, each taken on its own (as LP codes with separate primal and
// dual step lengths compute it). In DCOL's problems one side of one cone alone often blocks the
// predictor, and σ = (1 − t_aff)³ of the common step then asks for too much centring. The ratio
// itself, rather than its square (Mehrotra's rule) or another power, centres more where it is not
// small, which the slow solves need: there a cone's s and z both near its boundary drift off centre
// and the predictor stalls part of the way for iteration after iteration. inv_gap: 1/sᵀz, divided
// before the predictor ends.
template <class V>
inline V centering_parameter(V inv_gap, const StepBounds<V>& affine, const DirectionProducts<V>& products) {
  const V t_p = lane_min(splat<V>(1.0), affine.primal), t_d = lane_min(splat<V>(1.0), affine.dual);
  const V ratio = 1.0 + (t_p * products.lambda_ds + t_d * products.lambda_dz + t_p * t_d * products.ds_dz) * inv_gap;
  return lane_min(splat<V>(1.0), lane_max(V{}, ratio));
}

// The fraction of the way to the boundary of the cone that a step goes. 0.99 keeps the iterates
// central, but once the predictor reaches (almost) all the way the Newton direction is accurate
// and that fraction alone would cut the gap no more than 100-fold per iteration (superlinear
// convergence needs it to tend to 1). Going 0.9995 of the way there ends the iterations sooner;
// closer still, the iterates can come so near the boundary that a solve fails to finish.
template <class V>
inline V step_fraction(V t_affine) {
  return select(t_affine >= 0.99, splat<V>(0.9995), splat<V>(0.99));
}

// The least t putting an orthant row h − g t ≥ 0 (rise = −g > 0), or a cone's rows h − g t in the
// cone (g nonzero on the head only, rise = −g0 > 0), as ConeSolver::ray_start needs them.
template <class V>
inline V orthant_ray_bound(V h, V rise) {
  return -h / rise;
}

template <class V>
inline V cone_ray_bound(const V* h, int dim, V rise) {
  return (lane_sqrt(dot(h + 1, h + 1, dim - 1)) - h[0]) / rise;
}

// The start of ConeSolver::ray_start on its ray: 1.3 times the least value putting s in K, plus 0.01
// (in units where the ray's variable is about 1 at the solution) to stay clear of the boundary. From
// the balanced point of proximity.hpp a start this near the least value saves iterations over a
// larger factor; nearer still costs iterations again, and at the least value itself some problems
// are not solved.
template <class V>
inline V ray_start_value(V least) {
  return 1.3 * least + 0.01;
}

// The lanes whose last iterate meets the tolerances, each relaxed by factor.
template <int W>
inline auto within_tolerances(const SolveInfo<W>& info, const SolverSettings& settings, double factor) {
  const auto rel_gap = info.gap / lane_max(lane_abs(info.primal_objective), lane_abs(info.dual_objective));
  return (info.primal_residual <= factor * settings.feastol) & (info.dual_residual <= factor * settings.feastol) &
         ((info.gap <= factor * settings.abstol) | (rel_gap <= factor * settings.reltol));
}

}  // namespace detail

// The solver proper. With NFixed > 0 the number of variables is a compile-time constant (the
// proximity problems have 4–8), which lets the compiler unroll every short loop over them; the
// program's narrow rows then use the first NNarrow columns only and its tail rows the columns from
// NTail on (a proximity problem's rows of shape a do not involve the slack variables of shape b,
// and the bounds on b's slack variables not x).
//
// Each iteration makes a few passes over the rows; on the orthant rows, where W is diagonal, every
// pass does all of its work for a row at once (scaling, residuals, the row of W⁻¹G and its share of
// the normal matrix; later the directions and the step bound), so the data of a row is touched
// once per pass. The cones, at most a few small blocks, go through the per-cone helpers.
// Columns [lo, hi) of a block of rows, compile-time or not.
template <int Lo, int Hi>
struct FixedColumns {
  static constexpr int lo = Lo, hi = Hi;
};
struct RuntimeColumns {
  int lo, hi;
};

template <class Program, int NFixed = 0, int NNarrow = NFixed, int NTail = 0>
class ConeSolver {
  static constexpr int NMax = Program::n_max;
  static constexpr int MMax = Program::m_max;
  static constexpr int KMax = Program::k_max;
  static constexpr int W = Program::lanes;
  static_assert(NFixed >= 0 && NFixed <= NMax, "NFixed exceeds the program's column capacity");
  static_assert(NNarrow >= 0 && NNarrow <= NFixed, "narrow rows must use a prefix of the columns");
  static_assert(NTail >= 0 && NTail <= NFixed, "tail rows must use a suffix of the columns");

 public:
  using V = Lanes<W>;
  using Mask = LaneMask<W>;

  V x[NMax], s[MMax], z[MMax];
  SolveInfo<W> info;

  // Solves prob (with prob.n == NFixed when NFixed > 0); the result is in x, s, z and info.
  // With ray_column ≥ 0 the iterations start on the central path along that column from ray_base
  // (ray_start; nullptr: from 0), otherwise at CVXOPT's least-squares point. With settings.barrier
  // > 0, barrier (nullptr: settings.barrier in every lane) gives each lane its own μ > 0.
  const SolveInfo<W>& solve(const Program& prob, const SolverSettings& settings, int ray_column = -1,
                            const V* ray_base = nullptr, const V* barrier = nullptr);

  // Nesterov–Todd scaling at the last iterate: orthant W = diag(w); cone k: W = η_k (k c cᵀ − J)
  // (detail::SocScaling) with c stored in soc_c over the cone's rows. λ = W z = W⁻¹ s. L, D:
  // factors L D Lᵀ of Gᵀ W⁻² G (L unit lower triangular). At a solved status they belong to the
  // returned solution.
  V w[MMax], w_inv[MMax];
  V soc_c[MMax];
  detail::SocScaling<V> soc_w[KMax];
  V lambda[MMax];
  V L[NMax][NMax], D[NMax];

  // Largest relative deviation of λ∘λ from μe at the last iterate: 0 on the central path at μ.
  V centrality(V mu) const;
  // The least deviation rounding lets Newton's steps reach: the steps carry errors of ε times the
  // size of s and z, and λ∘λ = μe is met within ~ε‖s‖‖z‖/μ at best (ten times that here). Far-apart
  // shapes (α ≫ 1) reach it above the usual centrality tolerances.
  V centrality_floor(V mu) const;

  // Calls f(begin, end, cols) for blocks of rows covering all of them, for loops that treat every
  // row alike (rows of the program last solved; cols: the columns a row involves).
  template <class F>
  void for_each_row_block(F&& f) const {
    for_each_orthant_block(f);
    for (int k = 0, row = p_->l; k < p_->num_soc; row += p_->soc_dim[k], ++k)
      with_columns(cone_kind(k), [&](auto cols) { f(row, row + p_->soc_dim[k], cols); });
  }

 private:
  V lambda_inv_[MMax];                    // 1/λ on the orthant (divisions are the slowest vector instructions)
  detail::SocPoint<V> lambda_soc_[KMax];  // λ in each cone
  V D_inv_[NMax];
  const Program* p_ = nullptr;
  V Gs_[MMax][NMax];         // W⁻¹ G
  V rx_[NMax];               // c + Gᵀz
  V u_[MMax];                // W⁻¹ (G x + s − h)
  V h_scale_{}, c_scale_{};  // max(1, ‖h‖), max(1, ‖c‖)

  int num_vars() const { return NFixed > 0 ? NFixed : p_->n; }
  enum class RowKind { narrow, full, tail };
  // Calls f(cols) with the columns a kind of row uses, compile-time constants when known.
  template <class F>
  void with_columns(RowKind kind, F&& f) const {
    if constexpr (NFixed > 0) {
      switch (kind) {
        case RowKind::narrow:
          f(FixedColumns<0, NNarrow>{});
          break;
        case RowKind::full:
          f(FixedColumns<0, NFixed>{});
          break;
        case RowKind::tail:
          f(FixedColumns<NTail, NFixed>{});
          break;
      }
    } else {
      f(RuntimeColumns{0, p_->n});
    }
  }
  // Calls f(begin, end, cols) for the narrow and the other orthant rows.
  template <class F>
  void for_each_orthant_block(F&& f) const {
    with_columns(RowKind::narrow, [&](auto cols) { f(0, p_->narrow_rows, cols); });
    with_columns(p_->tail_orthant ? RowKind::tail : RowKind::full, [&](auto cols) { f(p_->narrow_rows, p_->l, cols); });
  }
  RowKind cone_kind(int k) const { return p_->narrow_cone[k] ? RowKind::narrow : RowKind::full; }
  // Calls f(k, row, dim, cols) for each cone k with first row `row`. The sizes of the proximity
  // cones, 3 and 4, come as compile-time constants so that the loops over a cone's rows unroll.
  template <class F>
  void for_each_cone(F&& f) const {
    for (int k = 0, row = p_->l; k < p_->num_soc; row += p_->soc_dim[k], ++k) {
      with_columns(cone_kind(k), [&](auto cols) {
        switch (p_->soc_dim[k]) {
          case 3:
            f(k, row, std::integral_constant<int, 3>{}, cols);
            break;
          case 4:
            f(k, row, std::integral_constant<int, 4>{}, cols);
            break;
          default:
            if (p_->soc_dim[k] < 1) __builtin_unreachable();  // cones have a row at least
            f(k, row, p_->soc_dim[k], cols);
        }
      });
    }
  }
  Mask least_squares_start();
  bool ray_start(int column, const V* base);
  Mask scale_and_assemble();
  Mask factor(const V (&H)[NMax][NMax]);
  void factor_solve(V* b) const;
  detail::StepBounds<V> newton_direction(const V* t1, V* dx, V* ds_scaled, V* dz_scaled,
                                         detail::DirectionProducts<V>* products = nullptr);
  void shift_into_cone(V* v) const;
};

// ---------------------------------------------------------------------------------------------

template <class Program, int NFixed, int NNarrow, int NTail>
auto ConeSolver<Program, NFixed, NNarrow, NTail>::centrality(V mu) const -> V {
  const V inv_mu = 1.0 / mu;
  V worst{};
  for (int i = 0; i < p_->l; ++i) worst = lane_max(worst, lane_abs(lambda[i] * lambda[i] * inv_mu - 1.0));
  for_each_cone([&](int, int row, auto dim, auto) {
    // λ∘λ = (λᵀλ, 2 λ0 λ1)
    const V* u = lambda + row;
    const V head = detail::dot(u, u, dim) * inv_mu - 1.0;
    V deviation2 = head * head;
    for (int i = 1; i < dim; ++i) {
      const V tail = 2.0 * u[0] * u[i] * inv_mu;
      deviation2 += tail * tail;
    }
    worst = lane_max(worst, lane_sqrt(deviation2));
  });
  return worst;
}

template <class Program, int NFixed, int NNarrow, int NTail>
auto ConeSolver<Program, NFixed, NNarrow, NTail>::centrality_floor(V mu) const -> V {
  V s_max{}, z_max{};
  for (int i = 0; i < p_->m; ++i) {
    s_max = lane_max(s_max, lane_abs(s[i]));
    z_max = lane_max(z_max, lane_abs(z[i]));
  }
  return (10.0 * std::numeric_limits<double>::epsilon() / mu) * s_max * z_max;
}

// CVXOPT's initialization: v ← v + (1 + a) e when v is not well inside (a: how far outside, < 0
// inside). "Well inside" is CVXOPT's rule too: more than 1e-8 max(1, ‖v‖) from the boundary. A point
// only rounding errors inside, such as s = h − G x at the least-squares x of a square G (s = 0 up to
// rounding), would start the iterations on the boundary, where the scaling is singular.
template <class Program, int NFixed, int NNarrow, int NTail>
void ConeSolver<Program, NFixed, NNarrow, NTail>::shift_into_cone(V* v) const {
  const Program& p = *p_;
  V outside = splat<V>(-std::numeric_limits<double>::infinity());
  for (int i = 0; i < p.l; ++i) outside = lane_max(outside, -v[i]);
  for (int k = 0, row = p.l; k < p.num_soc; row += p.soc_dim[k], ++k)
    outside = lane_max(outside, lane_sqrt(detail::dot(v + row + 1, v + row + 1, p.soc_dim[k] - 1)) - v[row]);
  const V margin = 1e-8 * lane_max(splat<V>(1.0), lane_sqrt(detail::dot(v, v, p.m)));
  const V shift = select(outside >= -margin, 1.0 + outside, V{});
  for (int i = 0; i < p.l; ++i) v[i] += shift;
  for (int k = 0, row = p.l; k < p.num_soc; row += p.soc_dim[k], ++k) v[row] += shift;
}

// One pass at the current iterate: the scaling W and λ, the residuals r_x = c + Gᵀz and
// u = W⁻¹(Gx + s − h), the gap, objectives and residual norms in info, Gs = W⁻¹G and the factor of
// GsᵀGs. The mask marks the lanes where s and z are inside the cone and the factorization worked.
template <class Program, int NFixed, int NNarrow, int NTail>
typename ConeSolver<Program, NFixed, NNarrow, NTail>::Mask
ConeSolver<Program, NFixed, NNarrow, NTail>::scale_and_assemble() {
  const Program& p = *p_;
  const int n = num_vars();
  // Accumulate in locals: the compiler cannot keep members in registers across the stores to Gs_.
  V H[NMax][NMax], rx[NMax], xl[NMax];
  for (int j = 0; j < n; ++j) {
    rx[j] = p.c[j];
    xl[j] = x[j];
    for (int k = 0; k <= j; ++k) H[j][k] = V{};
  }
  V rz2{}, gap{}, hz{};
  Mask interior = splat<V>(1.0) > 0.0;  // s and z strictly inside K (NaN is not)
  for_each_orthant_block([&](int begin, int end, auto cols) {
    for (int i = begin; i < end; ++i) {
      const V si = s[i], zi = z[i];
      interior = interior & (si > 0.0) & (zi > 0.0);
      // One square root and one division give w = √(s/z), 1/w, λ = √(sz) and 1/λ.
      const V rsqrt_sz = 1.0 / lane_sqrt(si * zi);
      const V wi_inv = zi * rsqrt_sz;
      w[i] = si * rsqrt_sz;
      w_inv[i] = wi_inv;
      lambda[i] = si * zi * rsqrt_sz;
      lambda_inv_[i] = rsqrt_sz;
      const V* g = p.G[i];
      V gs[NMax];
      V gx{};
      for (int j = cols.lo; j < cols.hi; ++j) {
        gx += g[j] * xl[j];
        rx[j] += g[j] * zi;
        gs[j] = g[j] * wi_inv;
      }
      for (int a = cols.lo; a < cols.hi; ++a) {
        Gs_[i][a] = gs[a];
        for (int b = cols.lo; b <= a; ++b) H[a][b] += gs[a] * gs[b];
      }
      const V rz = gx + si - p.h[i];
      rz2 += rz * rz;
      gap += si * zi;
      hz += p.h[i] * zi;
      u_[i] = rz * wi_inv;
    }
  });
  for_each_cone([&](int k, int row, auto dim, auto cols) {
    const V* sk = s + row;
    const V* zk = z + row;
    const V s_res = detail::soc_residual(sk, dim);
    const V z_res = detail::soc_residual(zk, dim);
    interior = interior & (s_res > 0.0) & (z_res > 0.0) & (sk[0] > 0.0) & (zk[0] > 0.0);
    const detail::SocScalingPoint<V> sc = detail::soc_scaling(s_res, z_res, detail::dot(sk, zk, dim), sk[0], zk[0]);
    const detail::SocScaling<V>& scaling = soc_w[k] = sc.w;
    V* c = soc_c + row;
    c[0] = sc.c0;
    lambda[row] = sc.lambda0;
    for (int i = 1; i < dim; ++i) {
      c[i] = sk[i] * sc.s_inv - zk[i] * sc.z_inv;
      lambda[row + i] = sc.lambda_s * sk[i] + sc.lambda_z * zk[i];
    }
    lambda_soc_[k] = sc.lambda_point;

    V rz[MMax];
    for (int i = 0; i < dim; ++i) {
      const V* g = p.G[row + i];
      V gx{};
      for (int j = cols.lo; j < cols.hi; ++j) {
        gx += g[j] * xl[j];
        rx[j] += g[j] * zk[i];
      }
      rz[i] = gx + sk[i] - p.h[row + i];
      rz2 += rz[i] * rz[i];
      gap += sk[i] * zk[i];
      hz += p.h[row + i] * zk[i];
    }
    detail::soc_apply_Winv(c, scaling, rz, u_ + row, dim);
    // Rows of W⁻¹G: W⁻¹ = J (k c cᵀJ − I)/η acts on each column of the block.
    V t[NMax];  // k (Jc)ᵀ G_k
    for (int j = cols.lo; j < cols.hi; ++j) t[j] = c[0] * p.G[row][j];
    for (int i = 1; i < dim; ++i)
      for (int j = cols.lo; j < cols.hi; ++j) t[j] -= c[i] * p.G[row + i][j];
    for (int j = cols.lo; j < cols.hi; ++j) t[j] *= scaling.k;
    for (int i = 0; i < dim; ++i) {
      const V* g = p.G[row + i];
      const V signed_inv_eta = i == 0 ? scaling.inv_eta : -scaling.inv_eta;
      V gs[NMax];
      for (int j = cols.lo; j < cols.hi; ++j) gs[j] = signed_inv_eta * (t[j] * c[i] - g[j]);
      for (int a = cols.lo; a < cols.hi; ++a) {
        Gs_[row + i][a] = gs[a];
        for (int b = cols.lo; b <= a; ++b) H[a][b] += gs[a] * gs[b];
      }
    }
  });
  for (int a = 0; a < n; ++a) rx_[a] = rx[a];
  info.gap = gap;
  info.primal_objective = detail::dot(p.c, xl, n);
  info.dual_objective = -hz;
  info.primal_residual = lane_sqrt(rz2) / h_scale_;
  info.dual_residual = lane_sqrt(detail::dot(rx, rx, n)) / c_scale_;
  return interior & factor(H);
}

template <class Program, int NFixed, int NNarrow, int NTail>
typename ConeSolver<Program, NFixed, NNarrow, NTail>::Mask ConeSolver<Program, NFixed, NNarrow, NTail>::factor(
    const V (&H)[NMax][NMax]) {
  return detail::ldl_factor(H, num_vars(), L, D, D_inv_);
}

template <class Program, int NFixed, int NNarrow, int NTail>
void ConeSolver<Program, NFixed, NNarrow, NTail>::factor_solve(V* b) const {
  detail::ldl_solve(L, D_inv_, num_vars(), b);
}

// Newton step for  Gᵀ dz = −r_x,  G dx + ds = −r_z,  W⁻¹ds + W dz = t1  (t1 = λ \ the
// complementarity right-hand side). With v = W⁻¹ r_z + t1 (CVXOPT's elimination):
// GsᵀGs dx = −r_x − Gsᵀv,  W dz = Gs dx + v,  W⁻¹ds = t1 − W dz.
// Returns dx, the scaled directions, how far they may go and, if asked, their products.
template <class Program, int NFixed, int NNarrow, int NTail>
auto ConeSolver<Program, NFixed, NNarrow, NTail>::newton_direction(const V* t1, V* dx, V* ds_scaled, V* dz_scaled,
                                                                   detail::DirectionProducts<V>* products)
    -> detail::StepBounds<V> {
  const Program& p = *p_;
  const int n = num_vars();
  V v[MMax], step[NMax];  // step: a local copy of dx the compiler can keep in registers
  for (int j = 0; j < n; ++j) step[j] = -rx_[j];
  for_each_row_block([&](int begin, int end, auto cols) {
    for (int i = begin; i < end; ++i) {
      v[i] = u_[i] + t1[i];
      for (int j = cols.lo; j < cols.hi; ++j) step[j] -= Gs_[i][j] * v[i];
    }
  });
  factor_solve(step);
  for_each_row_block([&](int begin, int end, auto cols) {
    for (int i = begin; i < end; ++i) {
      V wdz = v[i];
      for (int j = cols.lo; j < cols.hi; ++j) wdz += Gs_[i][j] * step[j];
      dz_scaled[i] = wdz;
      ds_scaled[i] = t1[i] - wdz;
    }
  });
  // Step bounds: 1/t_max is the largest inverse step of any row or cone (on the orthant −d_i/λ_i),
  // so no branches on the signs, which are unpredictable.
  V inv_t_primal{}, inv_t_dual{};
  for (int i = 0; i < p.l; ++i) {
    inv_t_primal = lane_max(inv_t_primal, -ds_scaled[i] * lambda_inv_[i]);
    inv_t_dual = lane_max(inv_t_dual, -dz_scaled[i] * lambda_inv_[i]);
  }
  for_each_cone([&](int k, int row, auto dim, auto) {
    inv_t_primal = lane_max(inv_t_primal, detail::soc_inverse_step(lambda + row, lambda_soc_[k], ds_scaled + row, dim));
    inv_t_dual = lane_max(inv_t_dual, detail::soc_inverse_step(lambda + row, lambda_soc_[k], dz_scaled + row, dim));
  });
  if (products) {
    *products = {detail::dot(lambda, ds_scaled, p.m), detail::dot(lambda, dz_scaled, p.m),
                 detail::dot(ds_scaled, dz_scaled, p.m)};
  }
  std::copy(step, step + n, dx);
  return detail::StepBounds<V>::from_inverse(inv_t_primal, inv_t_dual);
}

// A start for programs in which raising one variable x_k moves every row into the cone: G_ik < 0
// on the orthant rows and on each cone's first row, 0 on the cones' other rows, and c_k > 0, as
// for DCOL's α (proximity.hpp). x is base (0 without one) but for x_k, which is
// detail::ray_start_value of the least x_k putting s = h − Gx in K; z = μ s⁻¹ then puts (s, z) on
// the central path at μ, and μ is the one for which column k of c + Gᵀz = 0 holds. It needs no
// factorization and, on proximity problems, starts nearer the solution than the least-squares start
// on average. False when a lane does not meet the conditions; x is then untouched (s and z are not).
template <class Program, int NFixed, int NNarrow, int NTail>
bool ConeSolver<Program, NFixed, NNarrow, NTail>::ray_start(int column, const V* base) {
  const Program& p = *p_;
  const int n = num_vars();
  // s = h − G base at x_k = 0, kept in s until s is set
  for (int i = 0; i < p.m; ++i) s[i] = base ? p.h[i] - detail::dot(p.G[i], base, n) : p.h[i];
  V least{};  // the least x_k putting s in K, not below 0
  Mask valid = p.c[column] > 0.0;
  for (int i = 0; i < p.l; ++i) {
    const V rise = -p.G[i][column];
    valid = valid & (rise > 0.0);
    least = lane_max(least, detail::orthant_ray_bound(s[i], rise));
  }
  for_each_cone([&](int, int row, auto dim, auto) {
    const V rise = -p.G[row][column];
    valid = valid & (rise > 0.0);
    for (int i = 1; i < dim; ++i) valid = valid & (p.G[row + i][column] == 0.0);
    least = lane_max(least, detail::cone_ray_bound(s + row, dim, rise));
  });
  const V start = detail::ray_start_value(least);
  // z = s⁻¹: 1/s_i on the orthant, J s / (sᵀJs) in a cone; dual_k: its column-k sum −(Gᵀz)_k.
  V dual_k{};
  for (int i = 0; i < p.l; ++i) {
    s[i] -= p.G[i][column] * start;
    z[i] = 1.0 / s[i];
    dual_k -= p.G[i][column] * z[i];
  }
  for_each_cone([&](int, int row, auto dim, auto) {
    s[row] -= p.G[row][column] * start;
    const V inv_det = 1.0 / detail::soc_residual(s + row, dim);
    z[row] = s[row] * inv_det;
    for (int i = 1; i < dim; ++i) z[row + i] = -s[row + i] * inv_det;
    dual_k -= p.G[row][column] * z[row];
  });
  const V mu = p.c[column] / dual_k;
  valid = valid & (mu > 0.0) & lane_finite(mu);
  if (!all_lanes(valid)) return false;
  if (base) std::copy(base, base + n, x);
  x[column] += start;
  for (int i = 0; i < p.m; ++i) z[i] *= mu;
  return true;
}

// CVXOPT's initialization: x minimizes ‖Gx − h‖, z minimizes ‖z‖ subject to Gᵀz + c = 0, both then
// shifted into the cone interior; both use the factor of GᵀG. Returns the lanes without a factor
// (they stop with numerical_error).
template <class Program, int NFixed, int NNarrow, int NTail>
auto ConeSolver<Program, NFixed, NNarrow, NTail>::least_squares_start() -> Mask {
  const Program& p = *p_;
  const int n = num_vars();
  V H[NMax][NMax] = {};
  for_each_row_block([&](int begin, int end, auto cols) {
    for (int i = begin; i < end; ++i) {
      const V* g = p.G[i];
      for (int a = cols.lo; a < cols.hi; ++a) {
        x[a] += g[a] * p.h[i];
        for (int b = cols.lo; b <= a; ++b) H[a][b] += g[a] * g[b];
      }
    }
  });
  const Mask factored = factor(H);
  factor_solve(x);
  V y[NMax];
  for (int j = 0; j < n; ++j) y[j] = -p.c[j];
  factor_solve(y);
  for_each_row_block([&](int begin, int end, auto cols) {
    for (int i = begin; i < end; ++i) {
      s[i] = p.h[i] - detail::dot(p.G[i] + cols.lo, x + cols.lo, cols.hi - cols.lo);
      z[i] = detail::dot(p.G[i] + cols.lo, y + cols.lo, cols.hi - cols.lo);
    }
  });
  shift_into_cone(s);
  shift_into_cone(z);
  return lane_not(factored);
}

template <class Program, int NFixed, int NNarrow, int NTail>
auto ConeSolver<Program, NFixed, NNarrow, NTail>::solve(const Program& prob, const SolverSettings& settings,
                                                        int ray_column, const V* ray_base, const V* barrier)
    -> const SolveInfo<W>& {
  p_ = &prob;
  const int n = num_vars(), m = prob.m;
  info = SolveInfo<W>{};
  std::fill(info.status, info.status + W, SolveStatus::numerical_error);
  std::fill(info.iterations, info.iterations + W, 0);
  std::fill(x, x + n, V{});
  const int degree = prob.l + prob.num_soc;  // ν: the barrier parameter of K
  h_scale_ = lane_max(splat<V>(1.0), lane_sqrt(detail::dot(prob.h, prob.h, m)));
  c_scale_ = lane_max(splat<V>(1.0), lane_sqrt(detail::dot(prob.c, prob.c, n)));

  Mask done = splat<V>(0.0) > 0.0;  // lanes that have stopped
  if (ray_column < 0 || !ray_start(ray_column, ray_base)) done = least_squares_start();

  // Lanes stop one by one: a stopped lane keeps its iterate (its steps are masked to zero).
  auto within = [&](double factor) { return detail::within_tolerances(info, settings, factor); };
  auto stop = [&](Mask lanes, SolveStatus status, SolveStatus if_inaccurate, int iter) {
    const Mask inaccurate = within(settings.inaccurate_factor);
    for (int i = 0; i < W; ++i)
      if (lane(lanes, i) && !lane(done, i)) {
        info.status[i] = lane(inaccurate, i) ? if_inaccurate : status;
        info.iterations[i] = iter;
      }
    done = done | lanes;
  };

  V dx[NMax], ds_aff[MMax], dz_aff[MMax], ds_scaled[MMax], dz_scaled[MMax], t1[MMax];
  const bool barrier_mode = settings.barrier > 0.0;
  const V mu = barrier_mode && barrier ? *barrier : splat<V>(settings.barrier);
  for (int iter = 0;; ++iter) {
    const Mask valid = scale_and_assemble();
    if (barrier_mode) {
      const V centrality_target = lane_max(splat<V>(settings.centrality_tol), centrality_floor(mu));
      stop(valid & (info.primal_residual <= settings.feastol) & (info.dual_residual <= settings.feastol) &
               (centrality(mu) <= centrality_target),
           SolveStatus::solved, SolveStatus::solved, iter);
    } else {
      stop(valid & within(1.0), SolveStatus::solved, SolveStatus::solved, iter);
    }
    stop(lane_not(valid), SolveStatus::numerical_error, SolveStatus::solved_inaccurate, iter);
    if (all_lanes(done)) return info;
    if (iter == settings.max_iter) {
      stop(lane_not(done), SolveStatus::max_iterations, SolveStatus::solved_inaccurate, iter);
      return info;
    }

    // Predictor (affine scaling): λ∘(W⁻¹ds + W dz) = −λ∘λ, so t1 = −λ. In barrier mode the target
    // never drops below μ, so the iterates approach its central point; once the gap is down to a
    // few times νμ a lane only centres: Newton's steps for λ∘λ = μe, without the predictor's
    // second-order term, which would keep the convergence to the central point linear.
    const Mask centering = (info.gap <= 2.0 * degree * mu) & (mu > 0.0);
    V sigma_mu = mu;
    V fraction = splat<V>(0.99);  // of the way to the cone's boundary (detail::step_fraction)
    if (all_lanes(centering)) {
      std::fill(ds_aff, ds_aff + m, V{});
      std::fill(dz_aff, dz_aff + m, V{});
    } else {
      for (int i = 0; i < m; ++i) t1[i] = -lambda[i];
      const V inv_gap = 1.0 / info.gap;
      detail::DirectionProducts<V> products;
      const detail::StepBounds<V> affine = newton_direction(t1, dx, ds_aff, dz_aff, &products);
      if (!barrier_mode) fraction = detail::step_fraction(lane_min(splat<V>(1.0), affine.both()));
      const V sigma = detail::centering_parameter(inv_gap, affine, products);
      sigma_mu = select(centering, sigma_mu, lane_max(sigma * info.gap / degree, sigma_mu));
      for (int i = 0; i < m; ++i) {
        ds_aff[i] = select(centering, V{}, ds_aff[i]);
        dz_aff[i] = select(centering, V{}, dz_aff[i]);
      }
    }

    // Corrector: λ∘(W⁻¹ds + W dz) = −λ∘λ − (W⁻¹ds_aff)∘(W dz_aff) + σμe.
    for (int i = 0; i < prob.l; ++i) t1[i] = -lambda[i] + (sigma_mu - ds_aff[i] * dz_aff[i]) * lambda_inv_[i];
    for_each_cone([&](int k, int row, auto dim, auto) {
      V rhs[MMax];
      detail::soc_product(ds_aff + row, dz_aff + row, rhs, dim);
      for (int i = 0; i < dim; ++i) rhs[i] = -rhs[i];
      rhs[0] += sigma_mu;
      detail::soc_divide(lambda + row, lambda_soc_[k], rhs, t1 + row, dim);  // λ \ (−λ∘λ + r) = −λ + λ \ r
      for (int i = 0; i < dim; ++i) t1[row + i] -= lambda[row + i];
    });
    V t = lane_min(splat<V>(1.0), fraction * newton_direction(t1, dx, ds_scaled, dz_scaled).both());
    // ds and dz are finite whenever dx is; a NaN fails these tests too.
    stop(lane_not((t > 1e-12) & lane_finite(detail::dot(dx, dx, n))), SolveStatus::numerical_error,
         SolveStatus::solved_inaccurate, iter);
    if (all_lanes(done)) return info;
    t = select(done, V{}, t);

    const auto moving = lane_not(done);
    for (int j = 0; j < n; ++j) x[j] = select(moving, x[j] + t * dx[j], x[j]);
    for (int i = 0; i < prob.l; ++i) {
      s[i] = select(moving, s[i] + t * w[i] * ds_scaled[i], s[i]);
      z[i] = select(moving, z[i] + t * w_inv[i] * dz_scaled[i], z[i]);
    }
    for_each_cone([&](int k, int row, auto dim, auto) {
      V ds[MMax], dz[MMax];
      detail::soc_apply_W(soc_c + row, soc_w[k], ds_scaled + row, ds, dim);
      detail::soc_apply_Winv(soc_c + row, soc_w[k], dz_scaled + row, dz, dim);
      for (int i = 0; i < dim; ++i) {
        s[row + i] = select(moving, s[row + i] + t * ds[i], s[row + i]);
        z[row + i] = select(moving, z[row + i] + t * dz[i], z[row + i]);
      }
    });
  }
}

}  // namespace dcol::conic
