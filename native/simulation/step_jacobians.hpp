// Jacobians of one step, ∂(q⁺, v⁺)/∂(q, v, τ, θ) with θ = [π (10 per body), μ, e], in forward mode
// (the module docstring of dynamics/simulation.py has the equations; Nimble §IV–VI, App. A, C, F),
// after a step(…, derivatives = true) in the same workspace or at a given LCP solution
// (linearize_step, for World.step's Step in Python):
//   * v_free = v + Δt a_free, M̃ a_free + c(q, v_mid) + D v = τ at v_mid = v + Δt a_free / 2, through inverse
//     dynamics: ∂ moves it by −Δt (M̃ + Δt/2 ∂rnea/∂v)⁻¹ ∂rnea(q, v_mid, a_free);
//   * the rows J and their gaps through the contacts' derivatives and the body Jacobians' derivatives;
//   * M̃⁻¹ Jᵀ u at fixed u by M̃⁻¹ (dJᵀ u − (δM) y), y = M̃⁻¹ Jᵀ u, (δM) y = δrnea(q, 0, y) without gravity;
//   * the LCP by its clamping set C: f_B = E f_C + c on the bounded set, K = A_CC + A_CB E,
//     df_C = −K⁺ (dA f + A_CB d(f_B) + db)_C + (I − K⁺K) dKᵀ K⁺ᵀ f_C (the pseudo-inverse's term, zero
//     for an invertible K), with dA only ever applied to two vectors;
//   * the elastic-bounce (saltation) correction and q⁺ = q ⊕ Δt v⁺;
//   * the misprediction projection's corrections, where it acted (projection_derivatives).
// Columns: [q tangent (nv), v (nv), τ (nv)] and optionally [π (10 nbodies), μ, e]; rows: q⁺ tangent
// (nv), v⁺ (nv).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/dense_product.hpp"
#include "dynamics/aba_derivatives.hpp"
#include "dynamics/integrate.hpp"
#include "dynamics/kinematics.hpp"
#include "dynamics/regressor.hpp"
#include "dynamics/rnea_derivatives.hpp"
#include "simulation/simulation.hpp"

namespace dcol::sim {

struct LinearizationWorkspace {
  // The inverse dynamics' derivatives and regressor, and the free motion's (M̃ + Δt/2 ∂τ/∂v)⁻¹ (mass
  // holds the matrix, K_lu its LU by trees).
  std::vector<double> dtau_dq, dtau_dv, mass, regressor, Kinv;
  TreeBlockLU K_lu;
  std::vector<double> body_dJ;       // scene body → 6 × nv × nv, [row][column][direction]
  std::vector<uint8_t> has_body_dJ;  // scene body → whether body_dJ holds it this step
  std::vector<int> active;           // the dofs that move a contact's bodies
  std::vector<int> non_breaking;     // the NCP's non-breaking contacts
  std::vector<uint8_t> is_active;
  // Each kept row's derivative dJ_r ([column][direction], nv × nv) over the dofs that move its bodies
  // only: its dJ_count[r] dofs at dJ_dofs[dJ_start[r]...] and the count² values at dJ[dJ_offset[r]...]
  // (limit rows: none). d_gap: n × nv.
  std::vector<int> dJ_start, dJ_count, dJ_dofs;
  std::vector<size_t> dJ_offset;
  std::vector<double> dJ, d_gap;
  std::vector<double> d_free, db, df, v_jac, q_jac;  // (nv or n) × columns
  // The LCP's linearization: its own f, each bounded entry's sign (+1 upper, −1 lower) and change
  // with μ, K, right-hand sides (columns × |C|), z = K⁺ᵀ f_C and dA products.
  std::vector<double> f_clamped, sign, d_bounded, K, rhs, z, z_full, dAz;
  // The NCP's: sliding directions and U blocks, B = −L⁺T + PQ, T, q0 and I − B.
  std::vector<double> mode_u, mode_U, mode_B, mode_T, mode_q0, mode_M;
  lcp::OrthogonalDecomposition bounce_decomposition;
  // The LCP's clamped matrix by contact island (block-diagonal), and each clamping row's island; the
  // NCP's mode system L and I − B likewise, with each of their entries' island.
  lcp::BlockDecomposition clamped_decomposition, K_decomposition, mode_decomposition;
  std::vector<int> clamped_island, mode_island;
  // drop_idle_rows: the rows kept, and each row's place among them (−1: dropped).
  std::vector<int> kept_rows, kept_position;
  // M̃⁻¹ Jᵀ f = v⁺ − v_free for the step's impulses f, and its derivatives at fixed f (nv × nv, nv × np).
  std::vector<double> impulse_response, impulse_d_q, impulse_d_params;
  // Scratch of the products and of one contact's row derivatives.
  std::vector<double> y, u, d_q, d_params, tau_q, regressor_y;
  std::vector<double> relative, G, d_point, d_frame, d_separation, d_relative;
  std::vector<double> integrate_q, integrate_v, impulse_map, bounce_scratch, bounce_position, v_next, q_next;
  std::vector<int> bounce_rows;
  std::vector<double> d_step;  // ∂(Δt v⁺ + δq) (nv × columns)
  // The position correction's derivatives (correction_derivatives): its rows that push, dA products,
  // the system (A_CC + κ diag A_CC, LU) and its right-hand sides and solutions, ∂δq/∂X (nv × columns)
  // and ∂(M̃⁻¹ Jᵀ f_c) at fixed f_c (nv × nv, nv × np).
  std::vector<int> correction_clamped, correction_pivot;
  std::vector<double> correction_dA, correction_rhs, correction_K, correction_column, correction_df, correction_jac,
      correction_d_q, correction_d_params;
  // The misprediction projection's derivatives (projection_derivatives): each of the step's contacts'
  // predicted depth and its derivative (K × columns), ∂p/∂X of the pose being projected, one
  // correction's ∂δq_c/∂X and its allowed depths' share of df_c, each pushing row's contact whose
  // predicted depth is its allowed one (−1: none), and the linearization of the corrections' own
  // problems (made on the first step that needs it).
  std::vector<double> predicted_depth, depth_jac, pose_jac, projection_dq, projection_df, next_pose_jac;
  std::vector<int> depth_source;
  std::unique_ptr<LinearizationWorkspace> projection;
};

namespace detail {

// The Jacobian's columns: [q tangent, v, τ] and, with parameters, [π (10 nbodies), μ, e]; np is
// π's count (0 without parameters, and then mu = e = −1).
struct Columns {
  int nv, np, D, q, v, tau, params, mu, e;
  Columns(const dyn::Model& model, bool parameters)
      : nv(model.nv),
        np(parameters ? 10 * model.nbodies() : 0),
        D(3 * model.nv + (parameters ? 10 * model.nbodies() + 2 : 0)),
        q(0),
        v(model.nv),
        tau(2 * model.nv),
        params(3 * model.nv),
        mu(parameters ? params + np : -1),
        e(parameters ? params + np + 1 : -1) {}
};

// ∂(M̃⁻¹ Jᵀ u)/∂q into d_q (nv × nv) and /∂π into d_params (nv × np) at fixed u (n), for
// y = M̃⁻¹ Jᵀ u (after lw holds dJ, and ws.data the dynamics at q and M̃'s factor): M̃⁻¹ (dJᵀ u − (δM) y)
// with (δM) y the derivative of rnea(q, 0, y) without gravity (dyn::mass_product_derivative), and
// −M̃⁻¹ (∂M/∂π) y with (∂M/∂π) y its regressor; M̃⁻¹ by the tree-sparse factor.
inline void minv_JT_derivatives(const WorldSpec& world, const Columns& cols, StepWorkspace& ws,
                                LinearizationWorkspace& lw, const double* q, const double* u, const double* y,
                                double* d_q, double* d_params) {
  const dyn::Model& model = *world.model;
  const int nv = model.nv, n = static_cast<int>(ws.kept.size()), np = cols.np;
  dyn::mass_product_derivative(model, ws.data, y, d_q);
  for (int i = 0; i < nv * nv; ++i) d_q[i] = -d_q[i];  // −(δM) y
  for (int r = 0; r < n; ++r) {                        // + dJᵀ u
    if (u[r] == 0.0) continue;
    const int* dofs = lw.dJ_dofs.data() + lw.dJ_start[r];
    const int a = lw.dJ_count[r];
    const double* dJr = lw.dJ.data() + lw.dJ_offset[r];
    for (int ci = 0; ci < a; ++ci)
      for (int di = 0; di < a; ++di) d_q[dofs[ci] * nv + dofs[di]] += u[r] * dJr[ci * a + di];
  }
  dyn::solve_mass_matrix(model, ws.data, d_q, nv);
  if (np == 0) return;
  dyn::joint_torque_regressor(model, ws.data, q, ws.zero.data(), y, d_params, false);
  dyn::negated_mass_matrix_solve(model, ws.data, d_params, np);
}

// (∂A/∂X) u into out (n × columns) for A = J M̃⁻¹ Jᵀ (only q and π move it), from y = M̃⁻¹ Jᵀ u and
// ∂(M̃⁻¹ Jᵀ u) at fixed u (minv_JT_derivatives' d_q and d_params): dJ y + J ∂(M̃⁻¹ Jᵀ u).
inline void dA_from(const Columns& cols, StepWorkspace& ws, LinearizationWorkspace& lw, const double* y,
                    const double* d_q, const double* d_params, double* out) {
  const int nv = cols.nv, n = static_cast<int>(ws.kept.size()), np = cols.np;
  std::fill(out, out + static_cast<size_t>(n) * cols.D, 0.0);
  for (int r = 0; r < n; ++r) {
    double* row = out + static_cast<size_t>(r) * cols.D + cols.q;
    const int* dofs = lw.dJ_dofs.data() + lw.dJ_start[r];
    const int a = lw.dJ_count[r];
    const double* dJr = lw.dJ.data() + lw.dJ_offset[r];
    for (int ci = 0; ci < a; ++ci)
      for (int di = 0; di < a; ++di) row[dofs[di]] += dJr[ci * a + di] * y[dofs[ci]];
  }
  dense_product(n, nv, nv, 1.0, ws.J.data(), nv, d_q, nv, out + cols.q, cols.D, true);
  dense_product(n, nv, np, 1.0, ws.J.data(), nv, d_params, np, out + cols.params, cols.D, true);
}

// (∂A/∂X) u (n × columns) for any u (n).
inline void dA_product(const WorldSpec& world, const Columns& cols, StepWorkspace& ws, LinearizationWorkspace& lw,
                       const double* q, const double* u, double* out) {
  const int nv = cols.nv, n = static_cast<int>(ws.kept.size());
  lw.y.assign(nv, 0.0);
  for (int i = 0; i < nv; ++i)
    for (int r = 0; r < n; ++r) lw.y[i] += ws.minv_JT[static_cast<size_t>(i) * n + r] * u[r];
  minv_JT_derivatives(world, cols, ws, lw, q, u, lw.y.data(), lw.d_q.data(), lw.d_params.data());
  dA_from(cols, ws, lw, lw.y.data(), lw.d_q.data(), lw.d_params.data(), out);
}

// (∂A/∂X) f (n × columns) for the step's impulses f, from what step_jacobians formed before the
// contact derivatives: M̃⁻¹ Jᵀ f = v⁺ − v_free (lw.impulse_response) and ∂(M̃⁻¹ Jᵀ f) at fixed f, which
// v⁺'s Jacobian needs too (lw.impulse_d_q, lw.impulse_d_params).
inline void dA_impulses(const Columns& cols, StepWorkspace& ws, LinearizationWorkspace& lw, double* out) {
  dA_from(cols, ws, lw, lw.impulse_response.data(), lw.impulse_d_q.data(), lw.impulse_d_params.data(), out);
}

// dJ (n × nv × nv) and d_gap (n × nv) of the kept rows (Nimble §V, App. C): a contact row is
// n_r · (J_b − J_a) at the contact point, differentiated through the contact's point and frame
// (their derivatives along the two bodies' rigid motions) and the body Jacobians' derivatives.
inline void row_derivatives(const WorldSpec& world, StepWorkspace& ws, LinearizationWorkspace& lw) {
  const dyn::Model& model = *world.model;
  const int nv = model.nv, n = static_cast<int>(ws.kept.size()), K = static_cast<int>(ws.contacts.size());
  const size_t block = static_cast<size_t>(nv) * nv;
  lw.dJ_start.assign(n, 0);
  lw.dJ_count.assign(n, 0);
  lw.dJ_offset.assign(n, 0);
  lw.dJ_dofs.clear();
  lw.dJ.clear();
  lw.d_gap.assign(static_cast<size_t>(n) * nv, 0.0);
  lw.body_dJ.resize(6 * block * world.num_bodies());
  lw.has_body_dJ.assign(world.num_bodies(), 0);
  lw.relative.resize(3 * nv);
  for (int k = 0; k < K; ++k) {
    const int normal_row = ws.new_index[3 * k];
    if (normal_row < 0) continue;  // its tangents went with it
    const Contact& c = ws.contacts[k];
    const ContactDerivatives& dc = ws.contact_derivatives[k];
    relative_jacobian(world, ws, k, lw.relative.data());
    const int bodies[2] = {world.shape_body[ws.keys[k].shape_a], world.shape_body[ws.keys[k].shape_b]};
    // The active dofs: those moving either body (the rows' other columns and directions are zero); G
    // (12 × active): the rigid motions [δp_a, δθ_a, δp_b, δθ_b] of the two bodies per tangent step of
    // each active dof.
    lw.active.clear();
    lw.is_active.assign(nv, 0);
    for (int side = 0; side < 2; ++side) {
      const int body = bodies[side], frame = world.body_frame[body];
      if (frame < 0) continue;
      if (!lw.has_body_dJ[body]) {  // the kinematics are at q
        dyn::frame_jacobian_derivative(model, ws.data, frame, lw.body_dJ.data() + 6 * block * body);
        lw.has_body_dJ[body] = 1;
      }
      for (int b = model.frame_body[frame]; b >= 0; b = model.parent[b])
        for (int dof = model.v_index[b]; dof < model.v_index[b] + model.nv_of(b); ++dof)
          if (!lw.is_active[dof]) lw.is_active[dof] = 1, lw.active.push_back(dof);
    }
    const int a = static_cast<int>(lw.active.size());
    lw.G.resize(12 * static_cast<size_t>(a));
    for (int side = 0; side < 2; ++side) {
      const int body = bodies[side];
      double* Gs = lw.G.data() + static_cast<size_t>(6 * side) * a;
      if (world.body_frame[body] < 0) {
        std::fill(Gs, Gs + 6 * a, 0.0);
        continue;
      }
      const double* Jb = ws.body_jacobian.data() + 6 * static_cast<size_t>(nv) * body;
      for (int r = 0; r < 6; ++r)
        for (int di = 0; di < a; ++di) Gs[r * a + di] = Jb[r * nv + lw.active[di]];
    }
    // The point's, the frame's and the separation's derivatives along the active dofs (3, 9, 1 × a).
    lw.d_point.resize(3 * static_cast<size_t>(a));
    lw.d_frame.resize(9 * static_cast<size_t>(a));
    lw.d_separation.resize(a);
    const double (*frame_derivatives[3])[12] = {dc.normal, dc.tangent1, dc.tangent2};
    dense_product(3, 12, a, 1.0, &dc.point[0][0], 12, lw.G.data(), a, lw.d_point.data(), a, false);
    for (int r = 0; r < 3; ++r)
      dense_product(3, 12, a, 1.0, &frame_derivatives[r][0][0], 12, lw.G.data(), a, lw.d_frame.data() + 3 * r * a, a,
                    false);
    dense_product(1, 12, a, 1.0, dc.separation, 12, lw.G.data(), a, lw.d_separation.data(), a, false);
    // d_relative[i][col][dir] = Σ_sides sign (dJ_lin − d_lever × ω − lever × dω), d_lever = d_point − J_lin,
    // over the active dofs (their positions in lw.active).
    lw.d_relative.assign(3 * static_cast<size_t>(a) * a, 0.0);
    for (int side = 0; side < 2; ++side) {
      const int body = bodies[side];
      if (world.body_frame[body] < 0) continue;
      const double sign = side == 0 ? -1.0 : 1.0;
      const double* Jb = ws.body_jacobian.data() + 6 * static_cast<size_t>(nv) * body;
      const double* dJb = lw.body_dJ.data() + 6 * block * body;
      const double lever[3] = {c.point[0] - ws.poses[body].r[0], c.point[1] - ws.poses[body].r[1],
                               c.point[2] - ws.poses[body].r[2]};
      for (int ci = 0; ci < a; ++ci) {
        const int col = lw.active[ci];
        const double w[3] = {Jb[3 * nv + col], Jb[4 * nv + col], Jb[5 * nv + col]};
        for (int di = 0; di < a; ++di) {
          const int dir = lw.active[di];
          const double dl[3] = {lw.d_point[di] - Jb[dir], lw.d_point[a + di] - Jb[nv + dir],
                                lw.d_point[2 * a + di] - Jb[2 * nv + dir]};
          const double dw[3] = {dJb[(3 * nv + col) * nv + dir], dJb[(4 * nv + col) * nv + dir],
                                dJb[(5 * nv + col) * nv + dir]};
          const double term[3] = {
              dJb[(0 * nv + col) * nv + dir] - (dl[1] * w[2] - dl[2] * w[1]) - (lever[1] * dw[2] - lever[2] * dw[1]),
              dJb[(1 * nv + col) * nv + dir] - (dl[2] * w[0] - dl[0] * w[2]) - (lever[2] * dw[0] - lever[0] * dw[2]),
              dJb[(2 * nv + col) * nv + dir] - (dl[0] * w[1] - dl[1] * w[0]) - (lever[0] * dw[1] - lever[1] * dw[0])};
          for (int i = 0; i < 3; ++i) lw.d_relative[(i * a + ci) * a + di] += sign * term[i];
        }
      }
    }
    const double* directions[3] = {c.normal, c.tangent1, c.tangent2};
    for (int r = 0; r < 3; ++r) {
      const int row = ws.new_index[3 * k + r];
      if (row < 0) continue;
      lw.dJ_start[row] = static_cast<int>(lw.dJ_dofs.size());
      lw.dJ_count[row] = a;
      lw.dJ_offset[row] = lw.dJ.size();
      lw.dJ_dofs.insert(lw.dJ_dofs.end(), lw.active.begin(), lw.active.end());
      for (int ci = 0; ci < a; ++ci)
        for (int di = 0; di < a; ++di) {
          const int col = lw.active[ci];
          double s = 0.0;
          for (int i = 0; i < 3; ++i)
            s += lw.d_frame[(3 * r + i) * a + di] * lw.relative[i * nv + col] +
                 directions[r][i] * lw.d_relative[(i * a + ci) * a + di];
          lw.dJ.push_back(s);
        }
    }
    for (int di = 0; di < a; ++di) lw.d_gap[static_cast<size_t>(normal_row) * nv + lw.active[di]] = lw.d_separation[di];
  }
  for (size_t l = K; l < ws.keys.size(); ++l) {  // limit rows: the gap moves with its joint
    const int row = ws.new_index[3 * K + (l - K)];
    if (row >= 0) lw.d_gap[static_cast<size_t>(row) * nv + ws.keys[l].shape_b] = ws.keys[l].kind;
  }
}

// df (n × columns) of the LCP from db (n × columns), through its clamping set (solvers/lcp.py's lcp_jvp).
inline void lcp_derivatives(const WorldSpec& world, const Columns& cols, StepWorkspace& ws, LinearizationWorkspace& lw,
                            const double* q) {
  const int n = static_cast<int>(ws.kept.size()), D = cols.D;
  const double* A = ws.A.data();
  const double* f = ws.f.data();
  // f_B = E f_C + c (lcp/active_set.hpp), and the linearization's own f: f_C, then E f_C + c.
  const lcp::LcpBounds bounds{ws.lo.data(), ws.hi.data(), ws.friction_index.data(), ws.mu.data()};
  lcp::ActiveSetWorkspace& split = ws.active_set;
  lcp::split_sets(n, bounds, ws.sets.data(), split);
  const std::vector<int>&C = split.C, &B = split.B, &E_column = split.E_column;
  const std::vector<double>& E_value = split.E_value;
  const int nc = static_cast<int>(C.size()), nb = static_cast<int>(B.size());
  lw.f_clamped.assign(n, 0.0);
  for (int p = 0; p < nc; ++p) lw.f_clamped[C[p]] = f[C[p]];
  for (int r = 0; r < nb; ++r)
    lw.f_clamped[B[r]] = (E_column[r] >= 0 ? E_value[r] * f[C[E_column[r]]] : 0.0) + split.c[r];
  // d(f_B)/dμ (nb): a friction entry at ±μ f_normal moves by ±f_normal.
  lw.d_bounded.assign(nb, 0.0);
  lw.sign.resize(nb);
  for (int r = 0; r < nb; ++r) {
    lw.sign[r] = ws.sets[B[r]] == lcp::EntrySet::upper ? 1.0 : -1.0;
    const int normal = ws.friction_index[B[r]];
    if (normal >= 0) lw.d_bounded[r] = lw.sign[r] * lw.f_clamped[normal];
  }
  lw.df.assign(static_cast<size_t>(n) * D, 0.0);
  if (nc > 0) {
    lcp::clamped_matrix(n, A, split, lw.K);
    lw.clamped_island.resize(nc);
    for (int p = 0; p < nc; ++p) lw.clamped_island[p] = ws.island_of[C[p]];
    lw.clamped_decomposition.factor(nc, lw.K.data(), lw.clamped_island.data());
    // rhs (columns × nc) = (dA f + db)_C, plus A_CB d(f_B) in μ's column; df_C = −K⁺ rhs.
    // At a solution the bounded entries sit at their bounds and f_clamped is f itself: its dA product
    // is the step's own (an iterate stopped at the limit may differ).
    if (std::equal(lw.f_clamped.begin(), lw.f_clamped.end(), ws.f.begin()))
      dA_impulses(cols, ws, lw, lw.dAz.data());
    else
      dA_product(world, cols, ws, lw, q, lw.f_clamped.data(), lw.dAz.data());
    lw.rhs.resize(static_cast<size_t>(D) * nc);
    for (int p = 0; p < nc; ++p) {
      const size_t i = C[p];
      for (int d = 0; d < D; ++d) lw.rhs[d * nc + p] = lw.dAz[i * D + d] + lw.db[i * D + d];
      if (cols.mu >= 0)
        for (int r = 0; r < nb; ++r) lw.rhs[cols.mu * nc + p] += A[i * n + B[r]] * lw.d_bounded[r];
    }
    lw.clamped_decomposition.solve_many(lw.rhs.data(), D);
    for (int p = 0; p < nc; ++p)
      for (int d = 0; d < D; ++d) lw.df[static_cast<size_t>(C[p]) * D + d] = -lw.rhs[d * nc + p];
    if (!lw.clamped_decomposition.full_rank()) {
      // + (I − K⁺K) dKᵀ z, z = K⁺ᵀ f_C: dKᵀ z = (dA ẑ)_C + Eᵀ (dA ẑ)_B + dEᵀ A_CBᵀ z (dA symmetric).
      lw.z.resize(nc);
      for (int p = 0; p < nc; ++p) lw.z[p] = f[C[p]];
      lw.clamped_decomposition.solve_transposed(lw.z.data());
      lw.z_full.assign(n, 0.0);
      for (int p = 0; p < nc; ++p) lw.z_full[C[p]] = lw.z[p];
      dA_product(world, cols, ws, lw, q, lw.z_full.data(), lw.dAz.data());
      for (int p = 0; p < nc; ++p)
        for (int d = 0; d < D; ++d) lw.rhs[d * nc + p] = lw.dAz[static_cast<size_t>(C[p]) * D + d];
      for (int r = 0; r < nb; ++r) {
        if (E_column[r] < 0) continue;
        const size_t i = B[r];
        for (int d = 0; d < D; ++d) lw.rhs[d * nc + E_column[r]] += E_value[r] * lw.dAz[i * D + d];
        if (cols.mu < 0) continue;
        double ACBz = 0.0;  // (A_CBᵀ z)_r
        for (int p = 0; p < nc; ++p) ACBz += A[static_cast<size_t>(C[p]) * n + i] * lw.z[p];
        lw.rhs[cols.mu * nc + E_column[r]] += lw.sign[r] * ACBz;
      }
      lw.clamped_decomposition.project_null_many(lw.rhs.data(), D);
      for (int p = 0; p < nc; ++p)
        for (int d = 0; d < D; ++d) lw.df[static_cast<size_t>(C[p]) * D + d] += lw.rhs[d * nc + p];
    }
  }
  for (int r = 0; r < nb; ++r) {  // df_B = E df_C + d(f_B)
    double* out = lw.df.data() + static_cast<size_t>(B[r]) * D;
    if (E_column[r] >= 0) {
      const double* from = lw.df.data() + static_cast<size_t>(C[E_column[r]]) * D;
      for (int d = 0; d < D; ++d) out[d] = E_value[r] * from[d];
    }
    if (cols.mu >= 0) out[cols.mu] += lw.d_bounded[r];
  }
}

// df (n × columns) of the contact NCP from db (n × columns), its modes held fixed (Simple §III-B),
// as the derivative of what the solver returns (lcp/ncp.hpp's mode polishing): over the entries R of
// the non-breaking contacts, at the sliding directions u_i = v_t,i/|v_t,i|, the least-norm λ_R of
//     L(u) λ_R = r:   v_i = 0 (sticking), v_n,i = 0 and λ_t,i + μ λ_n,i u_i = 0 (sliding), v = G λ + g,
// with u self-consistent. The least-norm solution moves by L⁺(dr − dL λ) + P dLᵀ z, P = I − L⁺L,
// z = L⁺ᵀ λ (the pseudo-inverse's term: sliding contacts whose normal impulses the equations leave
// undetermined), and du_i = U_i dv_t,i, U_i = (I − u_i u_iᵀ)/|v_t,i|, dv = G dλ + dG λ + dg, which
// makes it a linear system (I − B) dλ = a in dλ.
inline void ncp_derivatives(const WorldSpec& world, const Columns& cols, StepWorkspace& ws, LinearizationWorkspace& lw,
                            const double* q) {
  const int n = static_cast<int>(ws.kept.size()), D = cols.D, nc = static_cast<int>(ws.ncp_mu.size()), m = 3 * nc;
  lw.df.assign(static_cast<size_t>(n) * D, 0.0);
  lw.non_breaking.clear();
  for (int c = 0; c < nc; ++c)
    if (ws.modes[c] != static_cast<int8_t>(lcp::ContactMode::breaking)) lw.non_breaking.push_back(c);
  const int contacts = static_cast<int>(lw.non_breaking.size()), r = 3 * contacts;
  if (r == 0) return;
  const auto sliding = [&](int k) {
    return ws.modes[lw.non_breaking[k]] == static_cast<int8_t>(lcp::ContactMode::sliding);
  };
  const auto entry = [&](int k, int j) { return 3 * lw.non_breaking[k] + j; };  // NCP entry of λ_R's k, j
  // The sliding directions and U_i (2 × 2 each).
  lw.mode_u.assign(2 * contacts, 0.0);
  lw.mode_U.assign(4 * contacts, 0.0);
  for (int k = 0; k < contacts; ++k) {
    if (!sliding(k)) continue;
    const double* v = ws.ncp_v.data() + entry(k, 0);
    const double slip = std::hypot(v[0], v[1]), u[2] = {v[0] / slip, v[1] / slip};
    for (int i = 0; i < 2; ++i) {
      lw.mode_u[2 * k + i] = u[i];
      for (int j = 0; j < 2; ++j) lw.mode_U[4 * k + 2 * i + j] = ((i == j ? 1.0 : 0.0) - u[i] * u[j]) / slip;
    }
  }
  const auto G = [&](int a, int b) { return ws.ncp_G[static_cast<size_t>(a) * m + b]; };
  // L (r × r): equations by contact, [t1, t2, n] rows; a G-type row is v_entry = 0.
  lw.K.assign(static_cast<size_t>(r) * r, 0.0);
  for (int k = 0; k < contacts; ++k)
    for (int i = 0; i < 3; ++i) {
      double* row = lw.K.data() + static_cast<size_t>(3 * k + i) * r;
      if (sliding(k) && i < 2) {
        row[3 * k + i] = 1.0;
        row[3 * k + 2] = ws.ncp_mu[lw.non_breaking[k]] * lw.mode_u[2 * k + i];
      } else {
        for (int k2 = 0; k2 < contacts; ++k2)
          for (int j = 0; j < 3; ++j) row[3 * k2 + j] = G(entry(k, i), entry(k2, j));
      }
    }
  lw.mode_island.resize(r);
  for (int e = 0; e < r; ++e) lw.mode_island[e] = ws.island_of[ws.ncp_row[entry(e / 3, 2)]];
  lw.K_decomposition.factor(r, lw.K.data(), lw.mode_island.data());
  const bool singular = !lw.K_decomposition.full_rank();
  // z = L⁺ᵀ λ_R, and ẑ: z on the NCP entries of the G-type rows (for dG's share of dLᵀ z).
  lw.z.resize(r);
  for (int k = 0; k < contacts; ++k)
    for (int j = 0; j < 3; ++j) lw.z[3 * k + j] = ws.ncp_lambda[entry(k, j)];
  lw.K_decomposition.solve_transposed(lw.z.data());
  // dv's explicit part dG λ + dg by NCP entry (via the entries' rows), and dG ẑ.
  dA_impulses(cols, ws, lw, lw.dAz.data());
  const auto explicit_dv = [&](int e, int d) {
    const int row = ws.ncp_row[e];
    return row < 0 ? 0.0 : lw.dAz[static_cast<size_t>(row) * D + d] + lw.db[static_cast<size_t>(row) * D + d];
  };
  // a (columns × r): −L⁺ rhs + P q0, with rhs = dG λ + dg on G-type rows, μ λ_n U (dG λ + dg)_t +
  // dμ λ_n u on tangent rows; q0 = dG ẑ on R + on each sliding n entry μ z_tᵀ U (dG λ + dg)_t + dμ z_tᵀ u.
  lw.rhs.assign(static_cast<size_t>(D) * r, 0.0);
  lw.mode_q0.assign(static_cast<size_t>(D) * r, 0.0);
  for (int k = 0; k < contacts; ++k) {
    const int c = lw.non_breaking[k];
    const double mu = ws.ncp_mu[c], lambda_n = ws.ncp_lambda[entry(k, 2)];
    for (int d = 0; d < D; ++d) {
      double* rhs = lw.rhs.data() + static_cast<size_t>(d) * r + 3 * k;
      if (!sliding(k)) {
        for (int i = 0; i < 3; ++i) rhs[i] = explicit_dv(entry(k, i), d);
        continue;
      }
      const double dvt[2] = {explicit_dv(entry(k, 0), d), explicit_dv(entry(k, 1), d)};
      const double dmu = d == cols.mu ? 1.0 : 0.0;
      for (int i = 0; i < 2; ++i)
        rhs[i] = mu * lambda_n * (lw.mode_U[4 * k + 2 * i] * dvt[0] + lw.mode_U[4 * k + 2 * i + 1] * dvt[1]) +
                 dmu * lambda_n * lw.mode_u[2 * k + i];
      rhs[2] = explicit_dv(entry(k, 2), d);
      if (!singular) continue;
      const double* zt = lw.z.data() + 3 * k;
      double zU_dvt = 0.0;
      for (int i = 0; i < 2; ++i)
        zU_dvt += zt[i] * (lw.mode_U[4 * k + 2 * i] * dvt[0] + lw.mode_U[4 * k + 2 * i + 1] * dvt[1]);
      lw.mode_q0[static_cast<size_t>(d) * r + 3 * k + 2] +=
          mu * zU_dvt + dmu * (zt[0] * lw.mode_u[2 * k] + zt[1] * lw.mode_u[2 * k + 1]);
    }
  }
  for (int d = 0; d < D; ++d) {
    double* a = lw.rhs.data() + static_cast<size_t>(d) * r;
    lw.K_decomposition.solve(a);
    for (int i = 0; i < r; ++i) a[i] = -a[i];
  }
  // B = −L⁺ T + P Q: T's tangent rows μ λ_n U G_t,R; Q's sliding n rows μ z_tᵀ U G_t,R (r × r each).
  lw.mode_B.assign(static_cast<size_t>(r) * r, 0.0);  // column-major: column j at j r
  lw.mode_T.assign(static_cast<size_t>(r) * r, 0.0);  // column-major too, Q after T
  for (int k = 0; k < contacts; ++k) {
    if (!sliding(k)) continue;
    const double mu = ws.ncp_mu[lw.non_breaking[k]], lambda_n = ws.ncp_lambda[entry(k, 2)];
    const double* zt = lw.z.data() + 3 * k;
    for (int col = 0; col < r; ++col) {
      const int e = entry(col / 3, col % 3);
      const double gt[2] = {G(entry(k, 0), e), G(entry(k, 1), e)};
      for (int i = 0; i < 2; ++i)
        lw.mode_T[static_cast<size_t>(col) * r + 3 * k + i] =
            mu * lambda_n * (lw.mode_U[4 * k + 2 * i] * gt[0] + lw.mode_U[4 * k + 2 * i + 1] * gt[1]);
      if (singular)
        lw.mode_B[static_cast<size_t>(col) * r + 3 * k + 2] =
            mu * (zt[0] * (lw.mode_U[4 * k] * gt[0] + lw.mode_U[4 * k + 1] * gt[1]) +
                  zt[1] * (lw.mode_U[4 * k + 2] * gt[0] + lw.mode_U[4 * k + 3] * gt[1]));
    }
  }
  for (int col = 0; col < r; ++col) {
    double* Bc = lw.mode_B.data() + static_cast<size_t>(col) * r;
    double* Tc = lw.mode_T.data() + static_cast<size_t>(col) * r;
    if (singular) lw.K_decomposition.project_null(Bc);  // P Q
    lw.K_decomposition.solve(Tc);                       // L⁺ T
    for (int i = 0; i < r; ++i) Bc[i] -= Tc[i];
  }
  if (singular) {
    lw.z_full.assign(n, 0.0);  // ẑ in row order
    for (int k = 0; k < contacts; ++k)
      for (int i = 0; i < 3; ++i) {
        if (sliding(k) && i < 2) continue;
        const int row = ws.ncp_row[entry(k, i)];
        if (row >= 0) lw.z_full[row] = lw.z[3 * k + i];
      }
    dA_product(world, cols, ws, lw, q, lw.z_full.data(), lw.dAz.data());
    for (int d = 0; d < D; ++d) {
      double* q0 = lw.mode_q0.data() + static_cast<size_t>(d) * r;
      for (int k = 0; k < contacts; ++k)
        for (int j = 0; j < 3; ++j) {
          const int row = ws.ncp_row[entry(k, j)];
          if (row >= 0) q0[3 * k + j] += lw.dAz[static_cast<size_t>(row) * D + d];
        }
      lw.K_decomposition.project_null(q0);
      double* a = lw.rhs.data() + static_cast<size_t>(d) * r;
      for (int i = 0; i < r; ++i) a[i] += q0[i];
    }
  }
  // (I − B) dλ = a: row-major I − B, one factorization, every column.
  lw.mode_M.assign(static_cast<size_t>(r) * r, 0.0);
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < r; ++j)
      lw.mode_M[static_cast<size_t>(i) * r + j] = (i == j ? 1.0 : 0.0) - lw.mode_B[static_cast<size_t>(j) * r + i];
  lw.mode_decomposition.factor(r, lw.mode_M.data(), lw.mode_island.data());
  lw.mode_decomposition.solve_many(lw.rhs.data(), D);
  for (int k = 0; k < contacts; ++k)
    for (int j = 0; j < 3; ++j) {
      const int row = ws.ncp_row[entry(k, j)];
      if (row < 0) continue;
      for (int d = 0; d < D; ++d)
        lw.df[static_cast<size_t>(row) * D + d] = lw.rhs[static_cast<size_t>(d) * r + 3 * k + j];
    }
}

// Drops from the workspace's rows (before the LCP's derivatives) those that take no part in them: a
// normal or limit row at its lower bound 0 with no impulse that does not bounce, and its friction rows
// unless they clamp (their bounds ±μ·0 pin them at zero). Their impulses stay zero inside the step's
// mode, and the derivatives of their rows of A and b only reach their own w, which the step does not
// use: the derivatives are the same without them. A robot's speculative contacts are most of its rows.
// Forms the Delassus matrix ws.A over the rows it keeps (delassus_rows).
inline void drop_idle_rows(const WorldSpec& world, StepWorkspace& ws, LinearizationWorkspace& lw) {
  const int n = static_cast<int>(ws.kept.size()), nv = world.model->nv;
  // The position correction's rows that push stay too, and where the misprediction projection acted,
  // every row: its allowed depths are the contacts' predicted ones (projection_derivatives).
  auto idle_normal = [&](int r) {
    return ws.sets[r] == lcp::EntrySet::lower && ws.lo[r] == 0.0 && ws.f[r] == 0.0 &&
           ws.restitution_velocity[r] == 0.0 && ws.correction_f[r] == 0.0 && ws.projection_poses.empty();
  };
  std::vector<int>& kept = lw.kept_rows;
  kept.clear();
  for (int r = 0; r < n; ++r) {
    const int normal = ws.friction_index[r] >= 0 ? ws.friction_index[r] : r;
    if (!idle_normal(normal) || ws.sets[r] == lcp::EntrySet::clamping) kept.push_back(r);
  }
  delassus_rows(ws, kept);
  const int m = static_cast<int>(kept.size());
  if (m == n) return;
  std::vector<int>& position = lw.kept_position;
  position.assign(n, -1);
  for (int p = 0; p < m; ++p) position[kept[p]] = p;
  auto compact = [&](auto& values) {
    for (int p = 0; p < m; ++p) values[p] = values[kept[p]];
    values.resize(m);
  };
  for (auto* values : {&ws.b, &ws.f, &ws.w, &ws.lo, &ws.hi, &ws.mu, &ws.extra, &ws.gap_rate, &ws.restitution_velocity,
                       &ws.correction_f})
    compact(*values);
  compact(ws.sets);
  compact(ws.island_of);
  for (int p = 0; p < m; ++p) {
    const int normal = ws.friction_index[kept[p]];
    ws.friction_index[p] = normal >= 0 ? position[normal] : -1;
  }
  ws.friction_index.resize(m);
  for (int& index : ws.new_index) index = index >= 0 ? position[index] : -1;
  compact(ws.kept);
  for (int p = 0; p < m; ++p)
    std::copy_n(ws.J.data() + static_cast<size_t>(kept[p]) * nv, nv, ws.J.data() + static_cast<size_t>(p) * nv);
  ws.J.resize(static_cast<size_t>(m) * nv);
  for (int i = 0; i < nv; ++i)
    for (int p = 0; p < m; ++p)
      ws.minv_JT[static_cast<size_t>(i) * m + p] = ws.minv_JT[static_cast<size_t>(i) * n + kept[p]];
  ws.minv_JT.resize(static_cast<size_t>(nv) * m);
}

// ∂δq/∂X (nv × columns) into lw.correction_jac for the position correction δq = M̃⁻¹ Jᵀ f_c
// (detail::correct_positions with its β: the step's Baumgarte factor, or 1 in the misprediction
// projection), its allowed depths s held fixed: on its rows C with f_c > 0,
// (A_CC + κ diag A_CC) f_C = −β (φ_C + s), so
//   (A_CC + κ diag A_CC) df_C = −(dA f_c)_C − κ diag(dA)_C f_C − β dφ_C,
// and dδq = M̃⁻¹ Jᵀ df_c + ∂(M̃⁻¹ Jᵀ f_c) at fixed f_c. Returns false when there is none (no row pushes,
// or A_CC is singular): correction_jac is zero then. The LU of A_CC + κ diag A_CC stays in
// lw.correction_K and lw.correction_pivot.
inline bool correction_derivatives(const WorldSpec& world, const Columns& cols, StepWorkspace& ws,
                                   LinearizationWorkspace& lw, const double* q, double beta) {
  const dyn::Model& model = *world.model;
  const int nv = cols.nv, n = static_cast<int>(ws.kept.size()), D = cols.D, np = cols.np;
  lw.correction_jac.assign(static_cast<size_t>(nv) * D, 0.0);
  std::vector<int>& C = lw.correction_clamped;
  C.clear();
  for (int r = 0; r < n; ++r)
    if (ws.correction_f[r] > 0.0) C.push_back(r);
  const int c = static_cast<int>(C.size());
  if (c == 0) return false;
  // ∂(M̃⁻¹ Jᵀ f_c) at fixed f_c (M̃⁻¹ Jᵀ f_c = δq), for dA f_c and for dδq.
  lw.correction_d_q.resize(static_cast<size_t>(nv) * nv);
  lw.correction_d_params.resize(static_cast<size_t>(nv) * np);
  minv_JT_derivatives(world, cols, ws, lw, q, ws.correction_f.data(), ws.correction_dq.data(), lw.correction_d_q.data(),
                      lw.correction_d_params.data());
  lw.correction_dA.resize(static_cast<size_t>(n) * D);
  lw.correction_rhs.assign(static_cast<size_t>(c) * D, 0.0);
  dA_from(cols, ws, lw, ws.correction_dq.data(), lw.correction_d_q.data(), lw.correction_d_params.data(),
          lw.correction_dA.data());
  for (int a = 0; a < c; ++a) {
    double* row = lw.correction_rhs.data() + static_cast<size_t>(a) * D;
    const double* dAf = lw.correction_dA.data() + static_cast<size_t>(C[a]) * D;
    for (int d = 0; d < D; ++d) row[d] = -dAf[d];
    for (int d = 0; d < nv; ++d) row[cols.q + d] -= beta * lw.d_gap[static_cast<size_t>(C[a]) * nv + d];
  }
  // κ d(A_ii) f_i: A_ii = J_i y_i with y_i = M̃⁻¹ J_iᵀ (column i of M̃⁻¹Jᵀ), and J_i M̃⁻¹ dJ_iᵀ = dJ_i y_i,
  // so d(A_ii) = 2 dJ_i y_i − y_iᵀ (δM) y_i, and −y_iᵀ (∂M/∂π) y_i in π's columns.
  lw.y.resize(nv);
  for (int a = 0; a < c; ++a) {
    const int i = C[a];
    for (int j = 0; j < nv; ++j) lw.y[j] = ws.minv_JT[static_cast<size_t>(j) * n + i];
    const double weight = kCorrectionRegularization * ws.correction_f[i];
    double* row = lw.correction_rhs.data() + static_cast<size_t>(a) * D;
    const int* dofs = lw.dJ_dofs.data() + lw.dJ_start[i];
    const int count = lw.dJ_count[i];
    const double* dJi = lw.dJ.data() + lw.dJ_offset[i];
    for (int ci = 0; ci < count; ++ci)
      for (int di = 0; di < count; ++di) row[cols.q + dofs[di]] -= weight * 2.0 * dJi[ci * count + di] * lw.y[dofs[ci]];
    dyn::mass_product_derivative(model, ws.data, lw.y.data(), lw.tau_q.data());
    for (int j = 0; j < nv; ++j)
      for (int d = 0; d < nv; ++d) row[cols.q + d] += weight * lw.y[j] * lw.tau_q[j * nv + d];
    if (np == 0) continue;
    dyn::joint_torque_regressor(model, ws.data, q, ws.zero.data(), lw.y.data(), lw.regressor_y.data(), false);
    for (int j = 0; j < nv; ++j)
      for (int p = 0; p < np; ++p)
        row[cols.params + p] += weight * lw.y[j] * lw.regressor_y[static_cast<size_t>(j) * np + p];
  }
  // A_CC + κ diag A_CC by LU, solved for each column.
  lw.correction_K.resize(static_cast<size_t>(c) * c);
  for (int a = 0; a < c; ++a) {
    for (int b = 0; b < c; ++b)
      lw.correction_K[static_cast<size_t>(a) * c + b] = ws.A[static_cast<size_t>(C[a]) * n + C[b]];
    lw.correction_K[static_cast<size_t>(a) * c + a] *= 1.0 + kCorrectionRegularization;
  }
  lw.correction_pivot.resize(c);
  if (!lu_factor(c, lw.correction_K.data(), c, lw.correction_pivot.data())) return false;
  lw.correction_df.assign(static_cast<size_t>(n) * D, 0.0);
  lw.correction_column.resize(c);
  for (int d = 0; d < D; ++d) {
    for (int a = 0; a < c; ++a) lw.correction_column[a] = lw.correction_rhs[static_cast<size_t>(a) * D + d];
    lu_solve(c, lw.correction_K.data(), c, lw.correction_pivot.data(), lw.correction_column.data());
    for (int a = 0; a < c; ++a) lw.correction_df[static_cast<size_t>(C[a]) * D + d] = lw.correction_column[a];
  }
  dense_product(nv, n, D, 1.0, ws.minv_JT.data(), n, lw.correction_df.data(), D, lw.correction_jac.data(), D, false);
  for (int i = 0; i < nv; ++i) {
    double* row = lw.correction_jac.data() + static_cast<size_t>(i) * D;
    for (int d = 0; d < nv; ++d) row[cols.q + d] += lw.correction_d_q[i * nv + d];
    for (int p = 0; p < np; ++p) row[cols.params + p] += lw.correction_d_params[static_cast<size_t>(i) * np + p];
  }
  return true;
}

// ∂q⁺/∂X through the misprediction projection (detail::project_mispredicted_contacts) into lw.q_jac,
// which holds on entry that of the pose q ⊕ dq it started from (dq = Δt v⁺ + δq, the step's move).
// Each of its corrections, p' = p ⊕ δq_c at a pose p it acted at, is the position correction's LCP
// with β = 1 there, and its allowed depths s move with X too:
//   dδq_c = (∂δq_c/∂p) dp + ∂δq_c/∂π dπ − M̃⁻¹ J_Cᵀ (A_CC + κ diag A_CC)⁻¹ ds_C
// (the first two by correction_derivatives at p, chained through ∂p/∂X), dp' = (∂p'/∂p) dp +
// (∂p'/∂δq_c) dδq_c by step_integrate's Jacobians. A row's s is the deepest depth its pair's contacts in
// the step predicted, −(φ_k + J_k dq) for contact k when beyond the allowed penetration, whose
// derivative is −(dφ_k + (dJ_k) dq + J_k (Δt ∂v⁺ + ∂δq)); below it, s is constant.
inline void projection_derivatives(const WorldSpec& world, const Columns& cols, StepWorkspace& ws,
                                   LinearizationWorkspace& lw, const double* dq) {
  const dyn::Model& model = *world.model;
  const int nv = cols.nv, nq = model.nq, D = cols.D, np = cols.np, K = static_cast<int>(ws.contacts.size());
  const double allowed = kAllowedPenetration * world.contact.margin;
  lw.predicted_depth.assign(K, allowed);
  lw.depth_jac.assign(static_cast<size_t>(K) * D, 0.0);
  for (int k = 0; k < K; ++k) {
    const int row = ws.new_index[3 * k];
    if (row < 0) {  // no dof moves it: its separation is what the step predicted
      lw.predicted_depth[k] = std::max(allowed, -ws.contacts[k].separation);
      continue;
    }
    const double* J = ws.J.data() + static_cast<size_t>(row) * nv;
    double predicted = ws.contacts[k].separation;
    for (int i = 0; i < nv; ++i) predicted += J[i] * dq[i];
    if (-predicted <= allowed) continue;
    lw.predicted_depth[k] = -predicted;
    double* out = lw.depth_jac.data() + static_cast<size_t>(k) * D;
    for (int i = 0; i < nv; ++i) {
      const double* v_row = lw.v_jac.data() + static_cast<size_t>(i) * D;
      const double* c_row = lw.correction_jac.data() + static_cast<size_t>(i) * D;
      for (int d = 0; d < D; ++d) out[d] -= J[i] * (world.dt * v_row[d] + c_row[d]);
    }
    for (int d = 0; d < nv; ++d) out[cols.q + d] -= lw.d_gap[static_cast<size_t>(row) * nv + d];
    const int* dofs = lw.dJ_dofs.data() + lw.dJ_start[row];
    const int a = lw.dJ_count[row];
    const double* dJr = lw.dJ.data() + lw.dJ_offset[row];
    for (int ci = 0; ci < a; ++ci)
      for (int di = 0; di < a; ++di) out[cols.q + dofs[di]] -= dJr[ci * a + di] * dq[dofs[ci]];
  }
  // The step's contact whose predicted depth sets the allowed depth of row r of the projection's
  // workspace (its pair's deepest beyond the allowed penetration), or −1.
  StepWorkspace& at = *ws.projection;
  auto deepest_contact = [&](int r) {
    const int i = at.kept[r];
    if (i >= 3 * static_cast<int>(at.contacts.size())) return -1;
    const auto pair = contact_pair(at, i / 3);
    int deepest = -1;
    for (int k = 0; k < K; ++k)
      if (contact_pair(ws, k) == pair && lw.predicted_depth[k] > allowed &&
          (deepest < 0 || lw.predicted_depth[k] > lw.predicted_depth[deepest]))
        deepest = k;
    return deepest;
  };
  if (!lw.projection) lw.projection = std::make_unique<LinearizationWorkspace>();
  LinearizationWorkspace& at_lw = *lw.projection;
  at_lw.tau_q.resize(static_cast<size_t>(nv) * nv);
  at_lw.regressor_y.resize(static_cast<size_t>(nv) * np);
  at_lw.integrate_q.resize(static_cast<size_t>(nv) * nv);
  at_lw.integrate_v.resize(static_cast<size_t>(nv) * nv);
  lw.pose_jac = lw.q_jac;
  const int poses = static_cast<int>(ws.projection_poses.size()) / nq;
  for (int p = 0; p < poses; ++p) {
    const double* pose = ws.projection_poses.data() + static_cast<size_t>(p) * nq;
    // The correction again at that pose, with the derivatives of its contacts.
    prepare_step(world, at, pose, at.zero.data(), at.zero.data(), true);
    dense_delassus(at);
    StepReport report;
    correct_positions(world, at, report, 1.0, [&](int row) { return projection_allowed_depth(world, ws, at, row); });
    row_derivatives(world, at, at_lw);
    if (!correction_derivatives(world, cols, at, at_lw, pose, 1.0)) continue;
    const int n = static_cast<int>(at.kept.size());
    const std::vector<int>& C = at_lw.correction_clamped;
    const int c = static_cast<int>(C.size());
    // The allowed depths' share: df_C = −(A_CC + κ diag A_CC)⁻¹ ds_C, column by column.
    lw.projection_df.assign(static_cast<size_t>(n) * D, 0.0);
    at_lw.correction_column.resize(c);
    std::vector<int>& source = lw.depth_source;
    source.resize(c);
    bool moves = false;
    for (int a = 0; a < c; ++a) moves = (source[a] = deepest_contact(C[a])) >= 0 || moves;
    if (moves)
      for (int d = 0; d < D; ++d) {
        for (int a = 0; a < c; ++a)
          at_lw.correction_column[a] = source[a] < 0 ? 0.0 : -lw.depth_jac[static_cast<size_t>(source[a]) * D + d];
        lu_solve(c, at_lw.correction_K.data(), c, at_lw.correction_pivot.data(), at_lw.correction_column.data());
        for (int a = 0; a < c; ++a) lw.projection_df[static_cast<size_t>(C[a]) * D + d] = at_lw.correction_column[a];
      }
    // ∂δq_c/∂X = (∂δq_c/∂p) ∂p/∂X + ∂δq_c/∂π + M̃⁻¹ Jᵀ df.
    lw.projection_dq.resize(static_cast<size_t>(nv) * D);
    dense_product(nv, nv, D, 1.0, at_lw.correction_jac.data() + cols.q, D, lw.pose_jac.data(), D,
                  lw.projection_dq.data(), D, false);
    for (int i = 0; i < nv; ++i)
      for (int j = 0; j < np; ++j)
        lw.projection_dq[static_cast<size_t>(i) * D + cols.params + j] +=
            at_lw.correction_jac[static_cast<size_t>(i) * D + cols.params + j];
    if (moves)
      dense_product(nv, n, D, 1.0, at.minv_JT.data(), n, lw.projection_df.data(), D, lw.projection_dq.data(), D, true);
    // p' = p ⊕ δq_c.
    dyn::step_integrate_jacobians(model, at.correction_dq.data(), at_lw.integrate_q.data(), at_lw.integrate_v.data());
    lw.next_pose_jac.resize(static_cast<size_t>(nv) * D);
    dense_product(nv, nv, D, 1.0, at_lw.integrate_q.data(), nv, lw.pose_jac.data(), D, lw.next_pose_jac.data(), D,
                  false);
    dense_product(nv, nv, D, 1.0, at_lw.integrate_v.data(), nv, lw.projection_dq.data(), D, lw.next_pose_jac.data(), D,
                  true);
    std::swap(lw.pose_jac, lw.next_pose_jac);
  }
  lw.q_jac = lw.pose_jac;
}

// The bounce (saltation) terms (module docstring of dynamics/simulation.py): v_jac's q columns gain
// impulse_map diag(a_n / v_n) N, and lw.bounce_position = integrate_v impulse_map N (for q_jac's q
// columns to lose), with impulse_map = (1 + e) M̃⁻¹Nᵀ (N M̃⁻¹ Nᵀ)⁺ over the bouncing normal rows N.
// Returns whether any contact bounces. Derivation: docs/math/elastic-bounce.md.
inline bool bounce_terms(const WorldSpec& world, const Columns& cols, StepWorkspace& ws, LinearizationWorkspace& lw,
                         const double* v) {
  const int nv = cols.nv, n = static_cast<int>(ws.kept.size()), D = cols.D;
  std::vector<int>& rows = lw.bounce_rows;
  rows.clear();
  for (int r = 0; r < n; ++r)
    if (ws.restitution_velocity[r] != 0.0) rows.push_back(r);
  const int m = static_cast<int>(rows.size());
  if (m == 0) return false;
  // S = N M̃⁻¹ Nᵀ from the step's M̃⁻¹Jᵀ; impulse_map rows (1 + e) S⁺ (M̃⁻¹ Nᵀ)ᵀ as S is symmetric.
  lw.bounce_scratch.assign(static_cast<size_t>(m) * m, 0.0);
  for (int a = 0; a < m; ++a)
    for (int b = 0; b < m; ++b)
      for (int i = 0; i < nv; ++i)
        lw.bounce_scratch[a * m + b] +=
            ws.J[static_cast<size_t>(rows[a]) * nv + i] * ws.minv_JT[static_cast<size_t>(i) * n + rows[b]];
  lw.bounce_decomposition.factor(m, lw.bounce_scratch.data());
  lw.impulse_map.resize(static_cast<size_t>(nv) * m);
  for (int i = 0; i < nv; ++i) {
    double* row = lw.impulse_map.data() + static_cast<size_t>(i) * m;
    for (int a = 0; a < m; ++a) row[a] = ws.minv_JT[static_cast<size_t>(i) * n + rows[a]];
    lw.bounce_decomposition.solve(row);
    for (int a = 0; a < m; ++a) row[a] *= 1.0 + world.restitution;
  }
  // H = diag(a_n / v_n) N, a_n = N a_free + vᵀ dN v.
  lw.bounce_scratch.assign(static_cast<size_t>(m) * nv, 0.0);
  for (int a = 0; a < m; ++a) {
    const double* N = ws.J.data() + static_cast<size_t>(rows[a]) * nv;
    const double* dN = lw.dJ.data() + lw.dJ_offset[rows[a]];
    const int* dofs = lw.dJ_dofs.data() + lw.dJ_start[rows[a]];
    const int count = lw.dJ_count[rows[a]];
    double velocity = 0.0, acceleration = 0.0;
    for (int c = 0; c < nv; ++c) {
      velocity += N[c] * v[c];
      acceleration += N[c] * ws.a_free[c];
    }
    for (int ci = 0; ci < count; ++ci)
      for (int di = 0; di < count; ++di) acceleration += dN[ci * count + di] * v[dofs[ci]] * v[dofs[di]];
    for (int c = 0; c < nv; ++c) lw.bounce_scratch[a * nv + c] = acceleration / velocity * N[c];
  }
  dense_product(nv, m, nv, 1.0, lw.impulse_map.data(), m, lw.bounce_scratch.data(), nv, lw.v_jac.data() + cols.q, D,
                true);
  // integrate_v impulse_map N (N's rows gathered into the scratch).
  for (int a = 0; a < m; ++a)
    std::copy_n(ws.J.data() + static_cast<size_t>(rows[a]) * nv, nv, lw.bounce_scratch.data() + a * nv);
  lw.tau_q.resize(static_cast<size_t>(nv) * nv);
  dense_product(nv, m, nv, 1.0, lw.impulse_map.data(), m, lw.bounce_scratch.data(), nv, lw.tau_q.data(), nv, false);
  lw.bounce_position.resize(static_cast<size_t>(nv) * nv);
  dense_product(nv, nv, nv, 1.0, lw.integrate_v.data(), nv, lw.tau_q.data(), nv, lw.bounce_position.data(), nv, false);
  return true;
}

}  // namespace detail

// After step(world, ws, q, v, tau, q_next, v_next, true): jacobian (2 nv × columns, row-major) of that
// step, its columns [q, v, τ] and with parameters [π, μ, e]; bounce: the elastic-bounce correction
// (the default of dynamics/simulation.py's Step.jacobians). v_next: the step's v⁺ in the body frames at
// q (ws.step_velocity; step() returns it re-expressed at q⁺).
inline void step_jacobians(const WorldSpec& world, StepWorkspace& ws, LinearizationWorkspace& lw, const double* q,
                           const double* v, const double* v_next, bool parameters, bool bounce, double* jacobian) {
  const dyn::Model& model = *world.model;
  const detail::Columns cols(model, parameters);
  if (ws.by_ncp) {
    // The whole NCP (the solve kept one island's G at a time) and its velocities v = G λ + g.
    dense_delassus(ws);
    build_ncp(world, ws);
    ws.ncp_v.resize(ws.ncp_lambda.size());
    lcp::lcp_velocity(static_cast<int>(ws.ncp_lambda.size()), ws.ncp_G.data(), ws.ncp_g.data(), ws.ncp_lambda.data(),
                      ws.ncp_v.data());
  } else {
    detail::drop_idle_rows(world, ws, lw);
  }
  const int nv = cols.nv, n = static_cast<int>(ws.kept.size()), D = cols.D, np = cols.np;
  const double dt = world.dt, e = world.restitution;

  // Inverse dynamics' derivatives and regressor at (q, v_mid, a_free): the free motion solves
  // rnea(q, v_mid, a) + Δt D a + D v = τ with v_mid = v + Δt a / 2 (detail::free_motion), so
  // (M̃ + Δt/2 ∂τ/∂v) da = dτ − ∂τ/∂q dq − (∂τ/∂v + D) dv − Y dπ, inverted by LU (not symmetric).
  for (auto* buffer : {&lw.dtau_dq, &lw.dtau_dv, &lw.mass, &lw.tau_q, &lw.d_q, &lw.Kinv})
    buffer->resize(static_cast<size_t>(nv) * nv);
  for (auto* buffer : {&lw.regressor, &lw.regressor_y, &lw.d_params}) buffer->resize(static_cast<size_t>(nv) * np);
  dyn::rnea_derivatives(model, ws.data, q, ws.v_mid.data(), ws.a_free.data(), lw.dtau_dq.data(), lw.dtau_dv.data(),
                        lw.mass.data());
  if (parameters)
    dyn::joint_torque_regressor(model, ws.data, q, ws.v_mid.data(), ws.a_free.data(), lw.regressor.data());
  for (int i = 0; i < nv; ++i) {
    for (int j = 0; j < nv; ++j) lw.mass[i * nv + j] += 0.5 * dt * lw.dtau_dv[i * nv + j];
    lw.mass[i * nv + i] += dt * world.damping[i];
    lw.dtau_dv[i * nv + i] += world.damping[i];
  }
  if (factor_by_trees(ws, nv, lw.mass.data(), lw.K_lu)) {
    inverse_by_trees(ws, lw.K_lu, nv, lw.Kinv.data(), lw.y);
  } else {
    // An exactly singular midpoint equation: the explicit step's linearization, M̃⁻¹ from the step's
    // factorization, symmetrized.
    std::fill(lw.Kinv.begin(), lw.Kinv.end(), 0.0);
    for (int i = 0; i < nv; ++i) lw.Kinv[i * nv + i] = 1.0;
    dyn::solve_mass_matrix(model, ws.data, lw.Kinv.data(), nv);
    for (int i = 0; i < nv; ++i)
      for (int j = 0; j < i; ++j)
        lw.Kinv[i * nv + j] = lw.Kinv[j * nv + i] = 0.5 * (lw.Kinv[i * nv + j] + lw.Kinv[j * nv + i]);
  }

  // d_free = ∂v_free/∂(q, v, τ, θ) (nv × D).
  lw.d_free.assign(static_cast<size_t>(nv) * D, 0.0);
  dense_product(nv, nv, nv, -dt, lw.Kinv.data(), nv, lw.dtau_dq.data(), nv, lw.d_free.data() + cols.q, D, true);
  dense_product(nv, nv, nv, -dt, lw.Kinv.data(), nv, lw.dtau_dv.data(), nv, lw.d_free.data() + cols.v, D, true);
  for (int i = 0; i < nv; ++i) {
    lw.d_free[static_cast<size_t>(i) * D + cols.v + i] += 1.0;
    for (int j = 0; j < nv; ++j) lw.d_free[static_cast<size_t>(i) * D + cols.tau + j] = dt * lw.Kinv[i * nv + j];
  }
  dense_product(nv, nv, np, -dt, lw.Kinv.data(), nv, lw.regressor.data(), np, lw.d_free.data() + cols.params, D, true);
  dyn::step_velocity_at_start_jacobian(model, dt, ws.v_mid.data(), D, cols.v, lw.d_free.data());

  // The rows' derivatives, then db = ∂(J v_free + b_extra) (n × D).
  detail::row_derivatives(world, ws, lw);
  lw.db.resize(static_cast<size_t>(n) * D);
  dense_product(n, nv, D, 1.0, ws.J.data(), nv, lw.d_free.data(), D, lw.db.data(), D, false);
  for (int r = 0; r < n; ++r) {
    double* row = lw.db.data() + static_cast<size_t>(r) * D;
    const double* dJr = lw.dJ.data() + lw.dJ_offset[r];
    const int* dofs = lw.dJ_dofs.data() + lw.dJ_start[r];
    const int count = lw.dJ_count[r];
    const bool bouncing = ws.restitution_velocity[r] != 0.0;
    for (int ci = 0; ci < count; ++ci) {
      const double weight = ws.v_free[dofs[ci]] + (bouncing ? e * v[dofs[ci]] : 0.0);  // dJ v_free (+ e dJ v)
      for (int di = 0; di < count; ++di) row[cols.q + dofs[di]] += dJr[ci * count + di] * weight;
    }
    for (int d = 0; d < nv; ++d) row[cols.q + d] += ws.gap_rate[r] * lw.d_gap[static_cast<size_t>(r) * nv + d];
    if (bouncing)
      for (int d = 0; d < nv; ++d) row[cols.v + d] += e * ws.J[static_cast<size_t>(r) * nv + d];
    if (parameters) row[cols.e] = ws.restitution_velocity[r];
  }

  // v_jac = d_free + M̃⁻¹Jᵀ df + ∂(M̃⁻¹Jᵀ f)/∂X at fixed f, the last first: the contact derivatives'
  // dA f is made of it (detail::dA_impulses).
  lw.v_jac = lw.d_free;
  if (n > 0) {
    lw.impulse_response.resize(nv);
    for (int i = 0; i < nv; ++i) lw.impulse_response[i] = v_next[i] - ws.v_free[i];  // M̃⁻¹ Jᵀ f
    lw.impulse_d_q.resize(static_cast<size_t>(nv) * nv);
    lw.impulse_d_params.resize(static_cast<size_t>(nv) * np);
    detail::minv_JT_derivatives(world, cols, ws, lw, q, ws.f.data(), lw.impulse_response.data(), lw.impulse_d_q.data(),
                                lw.impulse_d_params.data());
    lw.dAz.resize(static_cast<size_t>(n) * D);
    if (ws.by_ncp)
      detail::ncp_derivatives(world, cols, ws, lw, q);
    else
      detail::lcp_derivatives(world, cols, ws, lw, q);
    dense_product(nv, n, D, 1.0, ws.minv_JT.data(), n, lw.df.data(), D, lw.v_jac.data(), D, true);
    for (int i = 0; i < nv; ++i) {
      double* row = lw.v_jac.data() + static_cast<size_t>(i) * D;
      for (int d = 0; d < nv; ++d) row[cols.q + d] += lw.impulse_d_q[i * nv + d];
      for (int p = 0; p < np; ++p) row[cols.params + p] += lw.impulse_d_params[static_cast<size_t>(i) * np + p];
    }
  }

  // q⁺ = q ⊞ (Δt v⁺ + δq): q_jac = integrate_v (Δt v_jac + ∂δq) + [integrate_q, 0, …]; then the
  // bounce terms.
  lw.integrate_q.resize(static_cast<size_t>(nv) * nv);
  lw.integrate_v.resize(static_cast<size_t>(nv) * nv);
  lw.u.resize(nv);
  const bool corrected = detail::correction_derivatives(world, cols, ws, lw, q, world.baumgarte);
  for (int i = 0; i < nv; ++i) lw.u[i] = dt * v_next[i] + ws.correction_dq[i];
  dyn::step_integrate_jacobians(model, lw.u.data(), lw.integrate_q.data(), lw.integrate_v.data());
  const bool bounced = bounce && n > 0 && detail::bounce_terms(world, cols, ws, lw, v);
  lw.q_jac.resize(static_cast<size_t>(nv) * D);
  dense_product(nv, nv, D, dt, lw.integrate_v.data(), nv, lw.v_jac.data(), D, lw.q_jac.data(), D, false);
  if (corrected)
    dense_product(nv, nv, D, 1.0, lw.integrate_v.data(), nv, lw.correction_jac.data(), D, lw.q_jac.data(), D, true);
  for (int i = 0; i < nv; ++i)
    for (int d = 0; d < nv; ++d)
      lw.q_jac[static_cast<size_t>(i) * D + cols.q + d] +=
          lw.integrate_q[i * nv + d] - (bounced ? lw.bounce_position[i * nv + d] : 0.0);
  // A passed limit's correction −β gap (1-dof joints: the tangent is the coordinate).
  for (const auto& correction : ws.limit_corrections)
    lw.q_jac[static_cast<size_t>(correction.v_index) * D + cols.q + correction.v_index] -= world.baumgarte;
  // The projection's share, through the step's move u and its derivative before v⁺ turns to q⁺.
  if (!ws.projection_poses.empty()) detail::projection_derivatives(world, cols, ws, lw, lw.u.data());
  // v⁺ re-expressed at q⁺ (dyn::step_velocity_at_end) through u's derivative, the one q_jac takes.
  lw.d_step.resize(static_cast<size_t>(nv) * D);
  for (int i = 0; i < nv; ++i)
    for (int d = 0; d < D; ++d) {
      const size_t at = static_cast<size_t>(i) * D + d;
      lw.d_step[at] = dt * lw.v_jac[at] + lw.correction_jac[at];
      if (bounced && d >= cols.q && d < cols.q + nv) lw.d_step[at] -= lw.tau_q[i * nv + d - cols.q];
    }
  dyn::step_velocity_at_end_jacobian(model, lw.u.data(), v_next, lw.d_step.data(), D, lw.v_jac.data());
  std::copy(lw.q_jac.begin(), lw.q_jac.end(), jacobian);
  std::copy(lw.v_jac.begin(), lw.v_jac.end(), jacobian + static_cast<size_t>(nv) * D);
}

// The Jacobians of the step from (q, v, tau) at a given solution: impulses f (n, in row order) and the
// LCP's sets (n), or with by_ncp the NCP contacts' modes (one per contact and joint limit; an NCP world's step
// that fell back to the boxed LCP has its sets). From a World.step of dynamics/simulation.py, whose rows are
// these, or with relabeled sets (Nimble §IV-D). The step's problem again (prepare_step), then step_jacobians at
// that solution. Returns false when the step has other rows (or NCP contacts) than the solution.
inline bool linearize_step(const WorldSpec& world, StepWorkspace& ws, LinearizationWorkspace& lw, const double* q,
                           const double* v, const double* tau, int n, const double* f, bool by_ncp, int num_sets,
                           const int8_t* sets, bool parameters, bool bounce, double* jacobian) {
  if (prepare_step(world, ws, q, v, tau, true) != n) return false;
  const int nv = world.model->nv;
  ws.f.assign(f, f + n);
  ws.by_ncp = by_ncp;
  if (by_ncp) {
    ncp_layout(world, ws);
    const int nc = static_cast<int>(ws.ncp_mu.size()), m = 3 * nc;
    if (num_sets != nc) return false;
    ws.ncp_lambda.assign(m, 0.0);
    for (int a = 0; a < m; ++a)
      if (ws.ncp_row[a] >= 0) ws.ncp_lambda[a] = f[ws.ncp_row[a]];
    ws.modes.assign(sets, sets + nc);
  } else {
    if (num_sets != n) return false;
    ws.sets.resize(n);
    for (int i = 0; i < n; ++i) ws.sets[i] = static_cast<lcp::EntrySet>(sets[i]);
  }
  StepReport correction;
  detail::position_correction(world, ws, correction);
  lw.v_next.resize(nv);
  next_velocity(world, ws, lw.v_next.data());
  // The step's end pose, for the misprediction projection to record where it acts.
  ws.rhs.resize(nv);
  for (int i = 0; i < nv; ++i) ws.rhs[i] = world.dt * lw.v_next[i] + ws.correction_dq[i];
  lw.q_next.resize(world.model->nq);
  dyn::step_integrate(*world.model, q, ws.rhs.data(), lw.q_next.data());
  for (const auto& limit : ws.limit_corrections) lw.q_next[limit.q_index] += limit.delta;
  detail::project_mispredicted_contacts(world, ws, ws.rhs.data(), lw.q_next.data(), correction);
  step_jacobians(world, ws, lw, q, v, lw.v_next.data(), parameters, bounce, jacobian);
  return true;
}

}  // namespace dcol::sim
