// Recursive Newton–Euler inverse dynamics τ = M(q) q̈ + c(q, q̇) (Featherstone §5.3), in world
// axes: ν_i = ν_λ + S_i q̇_i, a_i = a_λ + S_i q̈_i + ν_i × S_i q̇_i (Ṡ_i = ν_i × S_i), with gravity as
// the base acceleration a_0 = [−g; 0]; f_i = I_i a_i + ν_i ×* I_i ν_i; τ_i = S_iᵀ Σ_{subtree} f.
#pragma once

#include "dynamics/kinematics.hpp"

namespace dcol::dyn {

// With gravity off, RNEA gives M q̈ + (velocity terms) only, as ∂(M⁻¹z)/∂q needs.
inline Vec6 base_acceleration(const Model& model, bool gravity = true) {
  return {gravity ? -model.gravity : Vec3{}, {}};
}

// Joint motion Σ_k S_k x_k of a body for a joint-space vector x.
inline Vec6 joint_motion(const Model& model, const Data& data, int body, const double* x) {
  Vec6 m;
  for (int k = model.v_index[body]; k < model.v_index[body] + model.nv_of(body); ++k) m += x[k] * data.S[k];
  return m;
}

// After forward_kinematics: velocities, accelerations and world inertias of every body, and the
// body's own force f_i in data.force.
inline void rnea_forward_pass(const Model& model, Data& data, const double* v, const double* a, bool gravity = true) {
  for (int i = 0; i < model.nbodies(); ++i) {
    const int p = model.parent[i];
    const Vec6 joint_velocity = joint_motion(model, data, i, v);
    const Vec6 parent_velocity = p < 0 ? Vec6{} : data.velocity[p];
    data.velocity[i] = parent_velocity + joint_velocity;
    data.acceleration[i] = (p < 0 ? base_acceleration(model, gravity) : data.acceleration[p]) +
                           joint_motion(model, data, i, a) + cross_motion(parent_velocity, joint_velocity);
    data.world_inertia[i] = spatial_inertia(model.inertia[i], data.body_pose[i]);
    const SpatialInertia& I = data.world_inertia[i];
    data.force[i] = I.apply(data.acceleration[i]) + cross_force(data.velocity[i], I.apply(data.velocity[i]));
  }
}

// Sums forces over subtrees and projects them on the joint axes.
inline void rnea_backward_pass(const Model& model, Data& data, double* tau) {
  for (int i = model.nbodies() - 1; i >= 0; --i) {
    for (int k = model.v_index[i]; k < model.v_index[i] + model.nv_of(i); ++k) tau[k] = dot(data.S[k], data.force[i]);
    if (model.parent[i] >= 0) data.force[model.parent[i]] += data.force[i];
  }
}

inline void rnea(const Model& model, Data& data, const double* q, const double* v, const double* a, double* tau) {
  forward_kinematics(model, data, q);
  rnea_forward_pass(model, data, v, a);
  rnea_backward_pass(model, data, tau);
}

}  // namespace dcol::dyn
