// Analytic derivatives of RNEA, ∂τ/∂q, ∂τ/∂q̇ and ∂τ/∂q̈ = M, in world axes (the approach of
// Carpentier & Mansard, RSS 2018, credited in Nimble App. F), at O(nv · depth) cost.
//
// A change of q_k moves the subtree of joint k rigidly by the screw S_k: every quantity X carried by
// that subtree changes by S_k acting on it (S_k × X for motions, S_k ×* X for forces, and for the axes
// ∂S_j/∂q_k = S_k × S_j). With λ the parent of k's body, ν_λ and a_λ do not change, and for a body i
// of the subtree (e_v = ν_λ × S_k):
//   ∂ν_i/∂q_k = S_k × ν_i + e_v,
//   ∂a_i/∂q_k = S_k × a_i + a_λ × S_k + e_v × (ν_i − ν_λ),
//   ∂I_i/∂q_k = S_k ×* I_i − I_i S_k×.
// Summed over a subtree with composite inertia Iᶜ = Σ I_i, composite rate Ċ = Σ (ν_i ×* I_i − I_i ν_i×)
// and momentum H = Σ I_i ν_i, the force F = Σ f_i changes by
//   ∂F/∂q_k = S_k ×* F + Iᶜ (a_λ × S_k + ν_λ × e_v) + e_v ×* H + Ċ e_v.
// For the velocity, with b the body of k, ∂a_i/∂q̇_k = S_k × ν_i + (ν_b + ν_λ) × S_k, so
//   ∂F/∂q̇_k = Iᶜ (ν_b + ν_λ) × S_k + Ċ S_k + S_k ×* H.
// τ_j = S_jᵀ F_j, F_j summed over j's subtree. If k is on j's joint or above it, the subtree is j's and
// the S_k ×* F_j term cancels against ∂S_j/∂q_k = S_k × S_j; if k is below j, the subtree is k's.
#pragma once

#include <algorithm>

#include "dynamics/crba.hpp"
#include "dynamics/rnea.hpp"

namespace dcol::dyn {

// After forward_kinematics and rnea_forward_pass: the per-dof chain-rule columns and the subtree sums
// of composite inertia, composite rate, momentum and force.
inline void rnea_derivative_terms(const Model& model, Data& data, bool gravity) {
  const int nb = model.nbodies();
  for (int i = 0; i < nb; ++i) {
    const int p = model.parent[i];
    const Vec6 parent_velocity = p < 0 ? Vec6{} : data.velocity[p];
    const Vec6 parent_acceleration = p < 0 ? base_acceleration(model, gravity) : data.acceleration[p];
    for (int k = model.v_index[i]; k < model.v_index[i] + model.nv_of(i); ++k) {
      const Vec6& s = data.S[k];
      data.dv_dq[k] = cross_motion(parent_velocity, s);
      data.da_dq[k] = cross_motion(parent_acceleration, s) + cross_motion(parent_velocity, data.dv_dq[k]);
      data.da_dv[k] = cross_motion(data.velocity[i], s) + data.dv_dq[k];
    }
    const SpatialInertia& I = data.world_inertia[i];
    data.composite_rate[i] = inertia_rate(I, data.velocity[i]);
    data.momentum[i] = I.apply(data.velocity[i]);
  }
  composite_inertias(model, data);
  for (int i = nb - 1; i >= 0; --i) {
    const int p = model.parent[i];
    if (p < 0) continue;
    data.composite_rate[p] += data.composite_rate[i];
    data.momentum[p] += data.momentum[i];
    data.force[p] += data.force[i];
  }
}

// dtau_dq, dtau_dv, M: nv × nv row-major.
inline void rnea_derivatives(const Model& model, Data& data, const double* q, const double* v, const double* a,
                             double* dtau_dq, double* dtau_dv, double* M, bool gravity = true) {
  forward_kinematics(model, data, q);
  rnea_forward_pass(model, data, v, a, gravity);
  rnea_derivative_terms(model, data, gravity);
  const int nv = model.nv;
  for (int r = 0; r < nv * nv; ++r) dtau_dq[r] = dtau_dv[r] = M[r] = 0.0;
  for (int b = 0; b < model.nbodies(); ++b) {
    const SpatialInertia& Ic = data.composite[b];
    const Mat6& C = data.composite_rate[b];
    const Vec6& H = data.momentum[b];
    const int first = model.v_index[b], last = first + model.nv_of(b);
    for (int j = first; j < last; ++j) {
      // Rows of τ_j against dofs k on j's joint or above it.
      const Vec6& s = data.S[j];
      const Vec6 r1 = Ic.apply(s);
      const Vec6 r2 = C.transpose_apply(s) - cross_force(s, H);
      auto row_entry = [&](int k) {
        dtau_dq[j * nv + k] = dot(r1, data.da_dq[k]) + dot(r2, data.dv_dq[k]);
        dtau_dv[j * nv + k] = dot(r1, data.da_dv[k]) + dot(r2, data.S[k]);
        M[j * nv + k] = dot(r1, data.S[k]);
      };
      for (int k = first; k < last; ++k) row_entry(k);
      for (int k = model.dof_parent[first]; k >= 0; k = model.dof_parent[k]) row_entry(k);
    }
    for (int k = first; k < last; ++k) {
      // Columns of dof k for the joints strictly above it.
      const Vec6& s = data.S[k];
      const Vec6 dF_dq = cross_force(s, data.force[b]) + Ic.apply(data.da_dq[k]) + cross_force(data.dv_dq[k], H) +
                         C.apply(data.dv_dq[k]);
      const Vec6 dF_dv = Ic.apply(data.da_dv[k]) + C.apply(s) + cross_force(s, H);
      const Vec6 Ic_s = Ic.apply(s);
      for (int j = model.dof_parent[first]; j >= 0; j = model.dof_parent[j]) {
        dtau_dq[j * nv + k] = dot(data.S[j], dF_dq);
        dtau_dv[j * nv + k] = dot(data.S[j], dF_dv);
        M[j * nv + k] = dot(data.S[j], Ic_s);
      }
    }
  }
}

// ∂(M(q) y)/∂q (nv × nv row-major): rnea_derivatives' ∂τ/∂q at q̇ = 0, q̈ = y without gravity, where
// every velocity term vanishes (ν = 0: no composite rate, momentum or ∂ν/∂q), and without the ∂τ/∂q̇
// and M that rnea_derivatives also forms. ∂(M⁻¹z)/∂q = −M⁻¹ (∂M/∂q) M⁻¹z needs only this, several
// times per step Jacobian. After crba or rnea_derivatives at q, whose S, world inertias and composite
// inertias it takes; overwrites data.acceleration, data.force and data.da_dq.
inline void mass_product_derivative(const Model& model, Data& data, const double* y, double* out) {
  const int nb = model.nbodies(), nv = model.nv;
  for (int i = 0; i < nb; ++i) {
    const int p = model.parent[i];
    const Vec6 parent_acceleration = p < 0 ? Vec6{} : data.acceleration[p];
    for (int k = model.v_index[i]; k < model.v_index[i] + model.nv_of(i); ++k)
      data.da_dq[k] = cross_motion(parent_acceleration, data.S[k]);
    data.acceleration[i] = parent_acceleration + joint_motion(model, data, i, y);
    data.force[i] = data.world_inertia[i].apply(data.acceleration[i]);
  }
  for (int i = nb - 1; i >= 0; --i)
    if (model.parent[i] >= 0) data.force[model.parent[i]] += data.force[i];
  std::fill(out, out + static_cast<size_t>(nv) * nv, 0.0);
  for (int b = 0; b < nb; ++b) {  // rnea_derivatives' entries with ν = 0
    const SpatialInertia& Ic = data.composite[b];
    const int first = model.v_index[b], last = first + model.nv_of(b);
    for (int j = first; j < last; ++j) {
      const Vec6 r1 = Ic.apply(data.S[j]);
      for (int k = first; k < last; ++k) out[j * nv + k] = dot(r1, data.da_dq[k]);
      for (int k = model.dof_parent[first]; k >= 0; k = model.dof_parent[k]) out[j * nv + k] = dot(r1, data.da_dq[k]);
    }
    for (int k = first; k < last; ++k) {
      const Vec6 dF_dq = cross_force(data.S[k], data.force[b]) + Ic.apply(data.da_dq[k]);
      for (int j = model.dof_parent[first]; j >= 0; j = model.dof_parent[j]) out[j * nv + k] = dot(data.S[j], dF_dq);
    }
  }
}

}  // namespace dcol::dyn
