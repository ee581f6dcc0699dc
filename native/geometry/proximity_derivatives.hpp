// Derivatives of DCOL proximity (DCOL §II-B, §III) by the implicit function theorem at the
// interior-point solution (x, s, z).
//
// Linearizing  Gᵀz + c = 0,  G x + s = h,  s∘z = const  (the level set of the complementarity
// through the final iterate: exact for the barrier-smoothed problem the iterate solves) for a change
// (dG, dh) of the data gives, with M⁻¹ = diag(z/s) on the orthant and arrow(s)⁻¹arrow(z) on a cone,
//     H dx = Gᵀ M⁻¹ r − dGᵀ z,   H = Gᵀ M⁻¹ G,   r = dh − dG x,   dz = M⁻¹ (G dx − r).
// One output e_xᵀdx + e_zᵀdz costs one solve with Hᵀ (adjoint): u = M⁻ᵀ e_z, v = H⁻ᵀ(e_x + Gᵀu),
// ω = M⁻ᵀ G v − u, and
//     e_xᵀdx + e_zᵀdz = ωᵀ r − zᵀ dG v.
// Every term is a contraction Σ_i ω_i d f_i(u) of the rows f(u) = h − G u of one shape, for some
// weights ω and point u. For a rigid motion (δp, δθ) of that shape's frame these contractions take a
// closed form (normalized_jacobian), so the data's derivatives are never formed.
//
// H differs from the solver's last normal matrix Gᵀ W⁻² G (Nesterov–Todd scaling W) only in the cone
// blocks, where NT linearizes the scaled complementarity λ∘(W⁻¹ds + W dz): the two agree on the
// central path, but away from it the NT form is off by the iterate's distance from the path, which
// even a centred final iterate keeps too large for derivatives. So H is the solver's factor L D Lᵀ plus the
// cone blocks' correction, factored again (n ≤ 8).
//
// With barrier = 0 the derivatives are those of the exact problem instead (exact_kkt.hpp), through the
// same contractions from an adjoint (v, ω) of the same form.
#pragma once

#include <algorithm>
#include <cmath>
#include <utility>

#include "conic/cone_solver.hpp"
#include "conic/exact_kkt.hpp"
#include "geometry/primitives.hpp"
#include "geometry/proximity_types.hpp"

namespace dcol::geometry {

// Rows of DCOL's problem (DCOL eq. 9) that belong to each shape: its orthant rows [lin_begin, lin_end) and its cone
// (first row cone, or −1).
struct ShapeRows {
  int lin_begin, lin_end, cone, cone_dim;
};

// Normalized-coordinate derivatives of one proximity problem: columns are rigid motions
// [δp'(3), δθ(3)] of shape a's own frame, then of b's (δp' in units of the normalizing length);
// rows x'(3), α, and g(3), the unnormalized normal Σ σ_i z_i G_i,x (σ = +1 on a's rows, −1 on b's).
template <class V>
struct NormalizedJacobian {
  V alpha[12];
  V x[3][12];
  V g[3][12];
  V g_value[3];
};

namespace detail {

template <class V>
inline void cross(const V* a, const V* b, V* out) {
  out[0] = a[1] * b[2] - a[2] * b[1];
  out[1] = a[2] * b[0] - a[0] * b[2];
  out[2] = a[0] * b[1] - a[1] * b[0];
}

// Shapes whose rows see the point through Qᵀ(x − r) (polytope, cylinder, cone, ellipsoid): moving the
// frame by (δp, δθ) is moving the point by −(δp + δθ × (x − r)). The sphere, capsule and polygon cone
// rows are in world axes, x − r − Q S(slack), S the capsule's γ e1 or the polygon's (y1, y2, 0).
inline bool body_axes_rows(const Shape& sh) {
  return sh.kind == ShapeKind::polytope || sh.kind == ShapeKind::cylinder || sh.kind == ShapeKind::cone ||
         sh.kind == ShapeKind::ellipsoid;
}

// The point about which a rotation of the frame moves f(u), less its value at u = 0: u's point for
// body-axes rows, Q S(u's slack variables) for world-axes rows. (At u = 0 the lever is −r or 0.)
// GCC inlines this into every size class, including those of shapes without slack variables whose u
// ends before col.slack, and cannot see that only capsules and polygons, whose classes hold their
// slack columns, reach those reads: its -Warray-bounds about them is silenced here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
template <class V>
inline void lever_change(const Shape& sh, const Mat3T<V>& Q, Columns col, const V* u, V* out) {
  if (body_axes_rows(sh)) {
    for (int i = 0; i < 3; ++i) out[i] = u[col.x + i];
    return;
  }
  for (int i = 0; i < 3; ++i) out[i] = V{};
  if (sh.kind == ShapeKind::capsule || sh.kind == ShapeKind::polygon)
    for (int i = 0; i < 3; ++i) out[i] += Q.m[i][0] * u[col.slack];
  if (sh.kind == ShapeKind::polygon)
    for (int i = 0; i < 3; ++i) out[i] += Q.m[i][1] * u[col.slack + 1];
}
#pragma GCC diagnostic pop

template <class V>
inline void lever(const Shape& sh, const V* r, const Mat3T<V>& Q, Columns col, const V* u, V* out) {
  lever_change(sh, Q, col, u, out);
  if (body_axes_rows(sh))
    for (int i = 0; i < 3; ++i) out[i] -= r[i];
}

// g(ω) = Σ_i ω_i G_i,x over one shape's rows, x the shape's point columns.
template <class Program, class V>
inline void contract_rows(const Program& p, const ShapeRows& rows, Columns col, const V* omega, V* g) {
  for (int i = 0; i < 3; ++i) g[i] = V{};
  auto add = [&](int begin, int end) {
    for (int r = begin; r < end; ++r)
      for (int i = 0; i < 3; ++i) g[i] += omega[r] * p.G[r][col.x + i];
  };
  add(rows.lin_begin, rows.lin_end);
  if (rows.cone >= 0) add(rows.cone, rows.cone + rows.cone_dim);
}

}  // namespace detail

// H = Gᵀ M⁻¹ G of the problem just solved and the products with M⁻ᵀ and G the adjoints need.
template <class Solver, class Program>
class LinearizedKKT {
  using V = typename Program::V;
  static constexpr int NMax = Program::n_max, MMax = Program::m_max, KMax = Program::k_max;

 public:
  LinearizedKKT(const Solver& solver, const Program& prob) : solver_(solver), p_(prob) {
    const int n = p_.n;
    V H[NMax][NMax];
    auto unit_lower = [&](int i, int k) { return i == k ? splat<V>(1.0) : solver.L[i][k]; };
    for (int i = 0; i < n; ++i)  // L D Lᵀ: Gᵀ W⁻² G, with z/s on the orthant as M⁻¹ has
      for (int j = 0; j <= i; ++j) {
        V acc{};
        for (int k = 0; k <= j; ++k) acc += unit_lower(i, k) * solver.D[k] * unit_lower(j, k);
        H[i][j] = H[j][i] = acc;
      }
    for (int k = 0, row = p_.l; k < p_.num_soc; row += p_.soc_dim[k], ++k) {
      s_point_[k] = conic::detail::soc_point(solver.s + row, p_.soc_dim[k]);
      const int dim = p_.soc_dim[k];
      int used[NMax], num_used = 0;  // the columns the cone's rows involve (a few of n)
      for (int j = 0; j < n; ++j) {
        bool zero = true;
        for (int i = 0; i < dim; ++i) zero = zero && all_lanes(p_.G[row + i][j] == 0.0);
        if (!zero) used[num_used++] = j;
      }
      for (int jj = 0; jj < num_used; ++jj) {  // column j: (M⁻¹ − W⁻²) G_k e_j
        const int j = used[jj];
        V g[MMax], m_inv[MMax], t[MMax], w_inv2[MMax];
        for (int i = 0; i < dim; ++i) g[i] = p_.G[row + i][j];
        conic::detail::soc_product(solver.z + row, g, t, dim);
        conic::detail::soc_divide(solver.s + row, s_point_[k], t, m_inv, dim);
        conic::detail::soc_apply_Winv(solver.soc_c + row, solver.soc_w[k], g, t, dim);
        conic::detail::soc_apply_Winv(solver.soc_c + row, solver.soc_w[k], t, w_inv2, dim);
        for (int aa = 0; aa < num_used; ++aa) {
          const int a = used[aa];
          V acc{};
          for (int i = 0; i < dim; ++i) acc += p_.G[row + i][a] * (m_inv[i] - w_inv2[i]);
          H[a][j] += acc;
        }
      }
    }
    // L U without pivoting (lanes cannot pivot apart); H is near the positive definite NT matrix.
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i <= j; ++i) {  // U[i][j]
        V acc = H[i][j];
        for (int k = 0; k < i; ++k) acc -= lu_[i][k] * lu_[k][j];
        lu_[i][j] = acc;
      }
      const V inv_pivot = 1.0 / lu_[j][j];
      for (int i = j + 1; i < n; ++i) {  // L[i][j]
        V acc = H[i][j];
        for (int k = 0; k < j; ++k) acc -= lu_[i][k] * lu_[k][j];
        lu_[i][j] = acc * inv_pivot;
      }
    }
  }

  // For r < K: the adjoint v[r], omega[r] of the output e_x[r]ᵀdx + e_z[r]ᵀdz (see top); e_x or e_z
  // null stands for zeros.
  template <int K>
  void adjoint(const V (*e_x)[NMax], const V (*e_z)[MMax], V (*v)[NMax], V (*omega)[MMax]) const {
    V u[K][MMax], t[K][MMax];
    if (e_z) {
      apply_M_inverse_transposed<K>(e_z, u);
      G_transpose_times<K>(u, v);
    } else {
      for (int r = 0; r < K; ++r) std::fill(v[r], v[r] + p_.n, V{});
    }
    if (e_x)
      for (int r = 0; r < K; ++r)
        for (int j = 0; j < p_.n; ++j) v[r][j] += e_x[r][j];
    solve_transposed<K>(v);
    G_times<K>(v, t);
    apply_M_inverse_transposed<K>(t, omega);
    if (e_z)
      for (int r = 0; r < K; ++r)
        for (int i = 0; i < p_.m; ++i) omega[r][i] -= u[r][i];
  }

 private:
  // The products below take K vectors at once (b[0 … K−1]), so that their chains of dependent
  // operations overlap.

  // b[r] ← H⁻ᵀ b[r] = (Uᵀ Lᵀ)⁻¹ b[r].
  template <int K>
  void solve_transposed(V (*b)[NMax]) const {
    const int n = p_.n;
    for (int i = 0; i < n; ++i) {
      const V inv_pivot = 1.0 / lu_[i][i];
      for (int r = 0; r < K; ++r) {
        V acc = b[r][i];
        for (int k = 0; k < i; ++k) acc -= lu_[k][i] * b[r][k];
        b[r][i] = acc * inv_pivot;
      }
    }
    for (int i = n - 1; i >= 0; --i)
      for (int r = 0; r < K; ++r) {
        V acc = b[r][i];
        for (int k = i + 1; k < n; ++k) acc -= lu_[k][i] * b[r][k];
        b[r][i] = acc;
      }
  }
  // out[r] = M⁻ᵀ u[r]: z/s (= w⁻², the solver's orthant scaling) on the orthant, arrow(z) arrow(s)⁻¹
  // on a cone.
  template <int K>
  void apply_M_inverse_transposed(const V (*u)[MMax], V (*out)[MMax]) const {
    for (int i = 0; i < p_.l; ++i) {
      const V z_over_s = solver_.w_inv[i] * solver_.w_inv[i];
      for (int r = 0; r < K; ++r) out[r][i] = z_over_s * u[r][i];
    }
    for (int k = 0, row = p_.l; k < p_.num_soc; row += p_.soc_dim[k], ++k)
      for (int r = 0; r < K; ++r) {
        V t[MMax];
        conic::detail::soc_divide(solver_.s + row, s_point_[k], u[r] + row, t, p_.soc_dim[k]);
        conic::detail::soc_product(solver_.z + row, t, out[r] + row, p_.soc_dim[k]);
      }
  }
  // out[r] = G v[r], each row over the columns it involves.
  template <int K>
  void G_times(const V (*v)[NMax], V (*out)[MMax]) const {
    solver_.for_each_row_block([&](int begin, int end, auto cols) {
      for (int i = begin; i < end; ++i)
        for (int r = 0; r < K; ++r) {
          V acc{};
          for (int j = cols.lo; j < cols.hi; ++j) acc += p_.G[i][j] * v[r][j];
          out[r][i] = acc;
        }
    });
  }
  // out[r] = Gᵀ u[r].
  template <int K>
  void G_transpose_times(const V (*u)[MMax], V (*out)[NMax]) const {
    for (int r = 0; r < K; ++r) std::fill(out[r], out[r] + p_.n, V{});
    solver_.for_each_row_block([&](int begin, int end, auto cols) {
      for (int i = begin; i < end; ++i)
        for (int r = 0; r < K; ++r)
          for (int j = cols.lo; j < cols.hi; ++j) out[r][j] += p_.G[i][j] * u[r][i];
    });
  }

  const Solver& solver_;
  const Program& p_;
  conic::detail::SocPoint<V> s_point_[KMax];
  V lu_[NMax][NMax];
};

// Number of shape parameters shape_parameter_row writes, in this order: polytope A (m×3), b (m);
// sphere R; capsule, cylinder R, L; cone H, β; ellipsoid U (3×3, upper Cholesky factor of P, lower
// entries zero); polygon C (m×2), d (m), R.
inline int shape_parameter_count(const Shape& sh) {
  switch (sh.kind) {
    case ShapeKind::polytope:
      return 4 * sh.num_faces;
    case ShapeKind::polygon:
      return 3 * sh.num_faces + 1;
    case ShapeKind::sphere:
      return 1;
    case ShapeKind::ellipsoid:
      return 9;
    default:
      return 2;
  }
}

// One output's derivatives (of x' or α, with its adjoint v, ω from a KKT's adjoint) with respect to one
// shape's own parameters: Σ_i ω_i ∂f_i(x)/∂θ + z_i [∂f_i(v) − ∂f_i(0)]/∂θ over its rows f(u) = h − G u.
// r, Q: the shape's normalized frame; len: the normalizing length (lengths enter divided by it).
template <class V>
void shape_parameter_row(const Shape& sh, const ShapeRows& rows, const V* r, const Mat3T<V>& Q, Columns col, double len,
                         const V* x, const V* z, const V* v, const V* omega, V* out) {
  const int ax = col.alpha;
  // ∂f/∂θ = u_α·scale for a length entering as α·θ/ℓ in row i
  auto alpha_term = [&](int i, double scale) { return scale * (omega[i] * x[ax] + z[i] * v[ax]); };
  const int l0 = rows.lin_begin, c0 = rows.cone;
  switch (sh.kind) {
    case ShapeKind::polytope:
      // DCOL eq. 11, row f: (Q a_f)·(r − u_x) + u_α b_f/ℓ
      for (int f = 0; f < sh.num_faces; ++f) {
        const int i = l0 + f;
        for (int j = 0; j < 3; ++j) {
          V acc{};
          for (int c = 0; c < 3; ++c) acc += Q.m[c][j] * (omega[i] * (r[c] - x[c]) - z[i] * v[c]);
          out[3 * f + j] = acc;
        }
        out[3 * sh.num_faces + f] = alpha_term(i, 1.0 / len);
      }
      break;
    case ShapeKind::sphere:
      out[0] = alpha_term(c0, 1.0 / len);
      break;
    case ShapeKind::capsule:
    case ShapeKind::cylinder:
      // R in the cone's first row, L/2 in both linear rows (DCOL eqs. 14, 18)
      out[0] = alpha_term(c0, 1.0 / len);
      out[1] = alpha_term(l0, 0.5 / len) + alpha_term(l0 + 1, 0.5 / len);
      break;
    case ShapeKind::cone: {
      // DCOL eq. 21: u_α H/4ℓ; DCOL eq. 22, first row: tanβ (b̂xᵀ(u_x − r) + 3 u_α H/4ℓ)
      out[0] = alpha_term(l0, 0.25 / len) + alpha_term(c0, 0.75 * sh.tan_beta / len);
      V axial_x{}, axial_v{};
      for (int c = 0; c < 3; ++c) {
        axial_x += Q.m[c][0] * (x[c] - r[c]);
        axial_v += Q.m[c][0] * v[c];
      }
      const V d_tan = omega[c0] * (axial_x + 0.75 * sh.H / len * x[ax]) + z[c0] * (axial_v + 0.75 * sh.H / len * v[ax]);
      out[1] = (1.0 + sh.tan_beta * sh.tan_beta) * d_tan;  // d tanβ/dβ
      break;
    }
    case ShapeKind::ellipsoid:
      // DCOL eq. 24, row 1 + k: ℓ (U Qᵀ(u_x − r))_k
      for (int k = 0; k < 3; ++k)
        for (int j = 0; j < 3; ++j) {
          if (j < k) {
            out[3 * k + j] = V{};
            continue;
          }
          V body_x{}, body_v{};
          for (int c = 0; c < 3; ++c) {
            body_x += Q.m[c][j] * (x[c] - r[c]);
            body_v += Q.m[c][j] * v[c];
          }
          out[3 * k + j] = len * (omega[c0 + 1 + k] * body_x + z[c0 + 1 + k] * body_v);
        }
      break;
    case ShapeKind::polygon:
      // DCOL eq. 27, row f: u_α d_f/ℓ − C_f·y; DCOL eq. 28, first row: u_α R/ℓ
      for (int f = 0; f < sh.num_faces; ++f) {
        const int i = l0 + f;
        for (int j = 0; j < 2; ++j) out[2 * f + j] = -(omega[i] * x[col.slack + j] + z[i] * v[col.slack + j]);
        out[2 * sh.num_faces + f] = alpha_term(i, 1.0 / len);
      }
      out[3 * sh.num_faces] = alpha_term(c0, 1.0 / len);
      break;
  }
}

// A solved proximity problem: its program, solution (x, z), and its two shapes in the order of its
// columns, each with its normalized frame, columns and rows.
template <class Program>
struct SolvedProximity {
  using V = typename Program::V;
  const Program& prob;
  const V* x;
  const V* z;
  const Shape* shape[2];
  const V* r[2];
  const Mat3T<V>* Q[2];
  Columns col[2];
  ShapeRows rows[2];
};

// Every output's derivative with respect to rigid motions [δp'(3), δθ(3)] of a's frame, then b's (12
// columns), is a sum over the shapes of contractions of their rows (see top) with the output's
// adjoint from KKT: LinearizedKKT (μ > 0) or ExactKKT (μ = 0).
template <class Program, class KKT>
class PoseAdjoint {
  using V = typename Program::V;
  static constexpr int NMax = Program::n_max, MMax = Program::m_max;

 public:
  PoseAdjoint(const KKT& kkt, const SolvedProximity<Program>& sp) : kkt_(kkt), sp_(sp) {
    for (int s = 0; s < 2; ++s) {
      detail::contract_rows(sp.prob, sp.rows[s], sp.col[s], sp.z, g_z_[s]);
      detail::lever(*sp.shape[s], sp.r[s], *sp.Q[s], sp.col[s], sp.x, lever_x_[s]);
    }
  }

  // Σ z_i G_i,x over shape s's rows.
  const V* g_z(int s) const { return g_z_[s]; }

  // row += the derivative of the output with adjoint (ω, v): dL(x, ω) + [dL(v, z) − dL(0, z)] summed
  // over the shapes, dL(u, ω) = g(ω)·δp + δθ·(lever(u) × g(ω)) for a rigid motion of a shape.
  void accumulate(const V* omega, const V* v, V* row) const {
    for (int s = 0; s < 2; ++s) {
      V g[3], lever_v[3], t1[3], t2[3];
      detail::contract_rows(sp_.prob, sp_.rows[s], sp_.col[s], omega, g);
      detail::lever_change(*sp_.shape[s], *sp_.Q[s], sp_.col[s], v, lever_v);
      detail::cross(lever_x_[s], g, t1);
      detail::cross(lever_v, g_z_[s], t2);
      for (int i = 0; i < 3; ++i) {
        row[6 * s + i] += g[i];
        row[6 * s + 3 + i] += t1[i] + t2[i];
      }
    }
  }

  // rows[k] = the derivative of variable k for k < K, with its adjoint v[k], ω[k] (returned for
  // further use).
  template <int K>
  void variable_rows(V (*rows)[12], V (*v)[NMax], V (*omega)[MMax]) const {
    V unit[K][NMax];
    for (int k = 0; k < K; ++k) {
      std::fill(rows[k], rows[k] + 12, V{});
      std::fill(unit[k], unit[k] + sp_.prob.n, V{});
      unit[k][k] = splat<V>(1.0);
    }
    kkt_.template adjoint<K>(unit, nullptr, v, omega);
    for (int k = 0; k < K; ++k) accumulate(omega[k], v[k], rows[k]);
  }

 private:
  const KKT& kkt_;
  const SolvedProximity<Program>& sp_;
  V g_z_[2][3], lever_x_[2][3];
};

// The derivatives of x', α and the normal direction g of a solved problem, from the adjoints of KKT;
// with shape_parameters, also those of x' and α with respect to each shape's parameters (4 rows of
// shape_parameter_count entries each).
template <class Program, class KKT, class V = typename Program::V>
void normalized_jacobian(const KKT& kkt, const SolvedProximity<Program>& sp, double len, bool with_normal,
                         NormalizedJacobian<V>& out, V* const shape_parameters[2] = nullptr) {
  constexpr int NMax = Program::n_max, MMax = Program::m_max;
  const int m = sp.prob.m;
  const PoseAdjoint<Program, KKT> adjoint(kkt, sp);
  for (int i = 0; i < 3; ++i) out.g_value[i] = adjoint.g_z(0)[i] - adjoint.g_z(1)[i];

  V rows_x_alpha[4][12], v[4][NMax], omega[4][MMax];  // x'0, x'1, x'2, α
  adjoint.template variable_rows<4>(rows_x_alpha, v, omega);
  for (int k = 0; k < 4; ++k) {
    std::copy(rows_x_alpha[k], rows_x_alpha[k] + 12, k < 3 ? out.x[k] : out.alpha);
    if (shape_parameters)  // rows (x'0, x'1, x'2, α) of each shape's parameter block
      for (int s = 0; s < 2; ++s)
        shape_parameter_row(*sp.shape[s], sp.rows[s], sp.r[s], *sp.Q[s], sp.col[s], len, sp.x, sp.z, v[k], omega[k],
                            shape_parameters[s] + k * shape_parameter_count(*sp.shape[s]));
  }
  if (!with_normal) return;
  double sigma[MMax];  // +1 on a's rows, −1 on b's
  for (int s = 0; s < 2; ++s) {
    const ShapeRows& rows = sp.rows[s];
    for (int i = rows.lin_begin; i < rows.lin_end; ++i) sigma[i] = s == 0 ? 1.0 : -1.0;
    if (rows.cone >= 0)
      for (int i = rows.cone; i < rows.cone + rows.cone_dim; ++i) sigma[i] = s == 0 ? 1.0 : -1.0;
  }
  // g_c = a_cᵀz with a_c = σ∘G e_c. Its derivative is a_cᵀdz + σ zᵀdG e_c.
  V a[3][MMax];
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < m; ++i) a[c][i] = sigma[i] * sp.prob.G[i][c];
  kkt.template adjoint<3>(nullptr, a, v, omega);
  for (int c = 0; c < 3; ++c) {
    V* row = out.g[c];
    std::fill(row, row + 12, V{});
    adjoint.accumulate(omega[c], v[c], row);
    V e_c[NMax] = {};
    e_c[c] = splat<V>(1.0);
    for (int s = 0; s < 2; ++s) {
      V lever_e[3], t3[3];
      detail::lever_change(*sp.shape[s], *sp.Q[s], sp.col[s], e_c, lever_e);
      detail::cross(lever_e, adjoint.g_z(s), t3);
      const double sign = s == 0 ? 1.0 : -1.0;
      for (int i = 0; i < 3; ++i) row[6 * s + 3 + i] -= sign * t3[i];
    }
  }
}

// The α row alone from the Lagrangian α + zᵀ(G x − h) at the optimum (envelope theorem):
// dα = −Σ_shapes dL(x, z), no solve. Agrees with normalized_jacobian's α row up to the duality gap.
template <class Program, class V = typename Program::V>
void normalized_gradient(const SolvedProximity<Program>& sp, V* alpha_row) {
  for (int s = 0; s < 2; ++s) {
    V g[3], lever_x[3], t[3];
    detail::contract_rows(sp.prob, sp.rows[s], sp.col[s], sp.z, g);
    detail::lever(*sp.shape[s], sp.r[s], *sp.Q[s], sp.col[s], sp.x, lever_x);
    detail::cross(lever_x, g, t);
    for (int i = 0; i < 3; ++i) {
      alpha_row[6 * s + i] = -g[i];
      alpha_row[6 * s + 3 + i] = -t[i];
    }
  }
}

// One output's derivative row with respect to rigid motions of the two frames, from the normalized
// problem's row of lane k. Positions enter that problem as r'_a = −r'_b = (r_a − r_b)/2ℓ; the output
// is scale times the normalized one (1 for α, ℓ for a point).
template <class V>
void world_columns(const V* from, int k, double len, double scale, double* to) {
  for (int i = 0; i < 3; ++i) {
    const double d = 0.5 * scale / len * (lane(from[i], k) - lane(from[6 + i], k));
    to[i] = d;
    to[6 + i] = -d;
    to[3 + i] = scale * lane(from[3 + i], k);
    to[9 + i] = scale * lane(from[9 + i], k);
  }
}

// The row of a point center + ℓ x' (center = (r_a + r_b)/2) from x''s normalized row.
template <class V>
void world_point_columns(const V* from, int k, double len, int coordinate, double* to) {
  world_columns(from, k, len, len, to);
  to[coordinate] += 0.5;
  to[6 + coordinate] += 0.5;
}

// World-unit derivatives with respect to rigid motions of the shapes' own frames from the normalized
// ones of lane k. len: the normalizing length; o: the values; fa, fb: the frames.
template <class V>
void finish_jacobian(const NormalizedJacobian<V>& nj, int k, double len, DerivativeRequest request,
                     const ProximityResult& o, const Pose& fa, const Pose& fb, ProximityJacobian& J) {
  world_columns(nj.alpha, k, len, 1.0, J.alpha);
  if (request == DerivativeRequest::gradient) return;
  for (int r = 0; r < 3; ++r) world_point_columns(nj.x[r], k, len, r, J.x[r]);
  if (request == DerivativeRequest::jacobian) return;
  // n = g/‖g‖: dn = (I − n nᵀ) dg / ‖g‖
  double dg[3][12], g_norm = 0.0;
  for (int r = 0; r < 3; ++r) {
    world_columns(nj.g[r], k, len, 1.0, dg[r]);
    g_norm += lane(nj.g_value[r], k) * lane(nj.g_value[r], k);
  }
  g_norm = std::sqrt(g_norm);
  for (int j = 0; j < 12; ++j) {
    double n_dg = 0.0;
    for (int r = 0; r < 3; ++r) n_dg += o.normal[r] * dg[r][j];
    for (int r = 0; r < 3; ++r) J.normal[r][j] = g_norm > 0.0 ? (dg[r][j] - o.normal[r] * n_dg) / g_norm : 0.0;
  }
  // DCOL eq. 29: p_i = o_i + (x − o_i)/α, with o_i moving with its own frame's δp; at α = 0, p_i = o_i.
  const double alpha = o.alpha;
  auto contact_point = [&](const Pose& f, int side, double (*dp)[12]) {
    for (int r = 0; r < 3; ++r)
      for (int j = 0; j < 12; ++j) {
        const double d_origin = j == 6 * side + r ? 1.0 : 0.0;
        dp[r][j] = alpha > 0.0 ? d_origin * (1.0 - 1.0 / alpha) + J.x[r][j] / alpha -
                                     (o.x[r] - f.r[r]) * J.alpha[j] / (alpha * alpha)
                               : d_origin;
      }
  };
  contact_point(fa, 0, J.p_a);
  contact_point(fb, 1, J.p_b);
  for (int j = 0; j < 12; ++j) {
    double d = 0.0;
    for (int r = 0; r < 3; ++r) d += (o.p_a[r] - o.p_b[r]) * (J.p_a[r][j] - J.p_b[r][j]);
    J.distance[j] = o.distance > 0.0 ? d / o.distance : 0.0;
  }
}

// Calls f(row) for each row of J the request fills, and f_normal(row) for the normal's rows.
template <class F, class FNormal>
void for_each_row(DerivativeRequest request, ProximityJacobian& J, F&& f, FNormal&& f_normal) {
  f(J.alpha);
  if (request == DerivativeRequest::gradient) return;
  for (int r = 0; r < 3; ++r) f(J.x[r]);
  if (request == DerivativeRequest::jacobian) return;
  f(J.distance);
  for (int r = 0; r < 3; ++r) {
    f(J.p_a[r]);
    f(J.p_b[r]);
    f_normal(J.normal[r]);
  }
}

// Moves a derivative row from rigid motions of the shapes' own frames to rigid motions of their
// bodies: a body motion moves the frame by δp + δθ × d (d = frame origin − body origin) and δθ.
inline void frame_to_body_columns(const double d_a[3], const double d_b[3], double* row) {
  const double* d[2] = {d_a, d_b};
  for (int s = 0; s < 2; ++s) {
    double t[3];
    detail::cross(d[s], row + 6 * s, t);
    for (int i = 0; i < 3; ++i) row[6 * s + 3 + i] += t[i];
  }
}

inline void apply_offsets(const double d_a[3], const double d_b[3], DerivativeRequest request, ProximityJacobian& J) {
  auto row = [&](double* jr) { frame_to_body_columns(d_a, d_b, jr); };
  for_each_row(request, J, row, row);
}

// Whether every row of J the request fills is finite: a solve can end SOLVED_INACCURATE with
// derivatives its KKT system could not give (shapes 10⁹ times their size apart), and a status must say
// so rather than hand out NaN as a result.
inline bool finite_jacobian(DerivativeRequest request, ProximityJacobian& J) {
  bool finite = true;
  auto check = [&](const double* jr) {
    for (int j = 0; j < 12; ++j) finite = finite && std::isfinite(jr[j]);
  };
  for_each_row(request, J, check, check);
  return finite;
}

// Swapping the shapes swaps the column blocks, the contact points, and flips the normal.
inline void swap_sides(DerivativeRequest request, ProximityJacobian& J) {
  auto swap_blocks = [](double* jr) { std::swap_ranges(jr, jr + 6, jr + 6); };
  for_each_row(request, J, swap_blocks, [&](double* jr) {
    swap_blocks(jr);
    for (int j = 0; j < 12; ++j) jr[j] = -jr[j];
  });
  std::swap(J.p_a, J.p_b);
}

}  // namespace dcol::geometry
