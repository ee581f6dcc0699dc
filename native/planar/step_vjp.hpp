// The vector–Jacobian product of the planar engine's step (LCP-physics §B): from ∂ℓ/∂v_{t+dt} and
// ∂ℓ/∂p_{t+dt}, the cotangents of the step's inputs and of the scene's parameters, through the KKT
// backward pass of the dynamics LCP (eqs. 28–32, MlcpSolver::kkt_adjoint on the forward solve's
// prepared Newton system) and the chain rule of its assembly (step.hpp, planar_dynamics_lcp) to the
// velocities, forces, masses, inertias, restitution, friction, joint anchors and positions.
//
// Within the step's contact mode, with p_{t+dt} = p_t + dt v_{t+dt} (dt the step's, after any
// halving): post-stabilization's correction is not differentiated (it is a projection onto the
// constraints, zero where they hold). The positions enter through p_{t+dt}, through 𝓙_e (the joints'
// arms turn with the bodies) and through the contacts' normals and arms in 𝓙_c, 𝓙_f, their features
// held (the contact mode).
#pragma once

#include <algorithm>
#include <initializer_list>
#include <vector>

#include "planar/contact_geometry.hpp"
#include "planar/step.hpp"

namespace dcol::planar {

// Where planar_step_vjp writes, row-major: velocities, forces, positions (n × 3); mass (with 𝓘
// moving along where it follows the mass, PlanarModel::inertia_per_mass), inertia (at fixed mass),
// restitution, friction (n each); anchors (joints × 2 × 2: anchor_a, anchor_b, zero where a joint has
// no such parameter or it is a world point).
struct PlanarStepCotangents {
  double *velocities, *forces, *mass, *inertia, *restitution, *friction, *anchors, *positions;
};

namespace detail {

// ∂ℓ/∂arm and ∂ℓ/∂direction (added to grad_arm, grad_direction) from ∂ℓ/∂ of a contact block
// [arm × direction, directionᵀ] of LCP-physics eqs. 15 and 17 (grad_block, 3).
inline void add_block_vjp(const double* grad_block, const double* arm, const double* direction, double* grad_arm,
                          double* grad_direction) {
  grad_arm[0] += grad_block[0] * direction[1], grad_arm[1] -= grad_block[0] * direction[0];
  grad_direction[0] += grad_block[1] - grad_block[0] * arm[1];
  grad_direction[1] += grad_block[2] + grad_block[0] * arm[0];
}

}  // namespace detail

// Frees what planar_step_vjp does not read of a step's data, for data kept only for the backward
// pass (its results taken): the work buffers, the stabilization LCP and its solver, the next
// contacts and state, 𝓙_e and 𝓙_f, the dynamics solver's iterations and, where that solver
// eliminated x (its Newton system then holds what it needs), the dynamics LCP's matrices.
inline void planar_release_all_but_backward(PlanarStepData& data) {
  for (std::vector<double>* buffer : {&data.J_e, &data.J_f, &data.mu, &data.next_positions, &data.next_velocities,
                                      &data.correction, &data.friction_rows, &data.delta_0, &data.error, &data.schur,
                                      &data.multipliers, &data.inverse_mass, &data.contact_rows})
    *buffer = std::vector<double>();
  data.pivot = std::vector<int>();
  data.next_contacts = std::vector<PlanarContact>();
  data.stabilization = PlanarMlcp();
  data.stabilization_solver = lcp::MlcpSolver();
  data.detection = PlanarContactWorkspace();
  data.solver.release_all_but_adjoint();
  if (!data.solver.newton.eliminates_x()) return;
  PlanarMlcp& lcp = data.dynamics;
  for (std::vector<double>* buffer : {&lcp.M, &lcp.q, &lcp.A, &lcp.G, &lcp.F, &lcp.h}) *buffer = std::vector<double>();
}

// The cotangents of the step in data (planar_step of model from positions, velocities: p_t, v_t,
// n × 3 each) from grad_velocities, grad_positions (n × 3 each; null: zero) into out. data's solver
// refactorizes the KKT matrix at the solution (MlcpSolver::kkt_adjoint): a step's data takes one
// backward pass at a time. False where that matrix is singular (out untouched).
inline bool planar_step_vjp(const PlanarModel& model, PlanarStepData& data, const double* positions,
                            const double* velocities, const double* grad_velocities, const double* grad_positions,
                            const PlanarStepCotangents& out) {
  const int bodies = model.bodies(), columns = 3 * bodies;
  const PlanarMlcp& lcp = data.dynamics;
  const int p = lcp.p, rows = lcp.m, m = static_cast<int>(data.contacts.size());
  const int r = static_cast<int>(data.rubbing.size());
  // p_{t+dt} = p_t + dt v_{t+dt}: its cotangent passes to p_t as it is and to v_{t+dt} times dt.
  std::vector<double>& adjoint = data.adjoint;
  adjoint.assign(static_cast<size_t>(columns) + rows + p, 0.0);
  for (int j = 0; j < columns; ++j)
    adjoint[j] = (grad_velocities ? grad_velocities[j] : 0.0) + data.dt * (grad_positions ? grad_positions[j] : 0.0);
  if (!data.solver.kkt_adjoint(lcp.z.data(), lcp.s.data(), adjoint.data())) return false;
  const double *d_x = adjoint.data(), *z_d_z = d_x + columns, *d_y = z_d_z + rows;
  const double *x = lcp.x.data(), *y = lcp.y.data(), *z = lcp.z.data();
  // The mixed LCP's cotangents (eq. 32): ∂ℓ/∂q = −d_x, ∂ℓ/∂h = z∘d_z, ∂ℓ/∂M = −½(d_x xᵀ + x d_xᵀ),
  // ∂ℓ/∂A = −(d_y xᵀ + y d_xᵀ), ∂ℓ/∂G = −(z∘d_z xᵀ + z d_xᵀ), ∂ℓ/∂F = −(z∘d_z) zᵀ, each taken below
  // where the assembly puts a parameter.

  // q = −(𝓜 v_t + dt (f + weights)) and 𝓜's diagonal diag(𝓘, m, m) per body (eq. 23).
  const double gravity[3] = {0.0, model.gravity[0], model.gravity[1]};
  for (int b = 0; b < bodies; ++b) {
    double through_mass = 0.0;
    for (int c = 0; c < 3; ++c) {
      const int j = 3 * b + c;
      const double diagonal = c == 0 ? model.inertia[b] : model.mass[b];
      out.velocities[j] = diagonal * d_x[j];
      out.forces[j] = model.dt * d_x[j];
      const double grad_diagonal = d_x[j] * (velocities[j] - x[j]);  // through 𝓜 and q = −𝓜 v_t − …
      if (c == 0) out.inertia[b] = grad_diagonal;
      through_mass += (c == 0 ? model.inertia_per_mass[b] : 1.0) * grad_diagonal + model.dt * d_x[j] * gravity[c];
      out.positions[j] = grad_positions ? grad_positions[j] : 0.0;
    }
    out.mass[b] = through_mass;
    out.restitution[b] = out.friction[b] = 0.0;
  }

  // The joints: 𝓙_e's angle columns turn with the bodies (eqs. 11–12), the anchors are parameters.
  std::fill(out.anchors, out.anchors + 4 * model.joints.size(), 0.0);
  auto grad_A = [&](int row, int column) { return -(d_y[row] * x[column] + y[row] * d_x[column]); };
  int row = 0;
  for (size_t index = 0; index < model.joints.size(); ++index) {
    const PlanarJoint& joint = model.joints[index];
    if (joint.kind != PlanarJoint::Kind::axis) {  // an axis row is constant
      // A hinge's arm r = R(θ) anchor enters its two rows' angle column as (−r_y, r_x) (body b's with
      // the opposite sign): ∂ℓ/∂r = ±(g_y, −g_x) for g that column's cotangent, ∂ℓ/∂anchor = R(θ)ᵀ ∂ℓ/∂r,
      // and ∂(−r_y, r_x)/∂θ = −r. The fixed joint's hinge is at body_a's centre: no arm there.
      for (int side = 0; side < 2; ++side) {
        const int body = side == 0 ? joint.body_a : joint.body_b;
        if (body < 0 || (side == 0 && joint.kind == PlanarJoint::Kind::fixed)) continue;
        const double sign = side == 0 ? 1.0 : -1.0;
        const double* anchor = side == 0 ? joint.anchor_a : joint.anchor_b;
        const double g[2] = {sign * grad_A(row, 3 * body), sign * grad_A(row + 1, 3 * body)};
        const detail::Pose<double> pose(positions + 3 * body);
        const detail::Vec2<double> arm = pose.turned(anchor);
        const double grad_arm[2] = {g[1], -g[0]};
        double* grad_anchor = out.anchors + 4 * index + 2 * side;
        grad_anchor[0] = pose.c * grad_arm[0] + pose.s * grad_arm[1];
        grad_anchor[1] = -pose.s * grad_arm[0] + pose.c * grad_arm[1];
        out.positions[3 * body] -= g[0] * arm.x + g[1] * arm.y;
      }
    }
    row += joint.rows();
  }

  // The contacts: h = [k ∘ (𝓙_c v_t); 0; 0] with k, μ the means of the two bodies' (§A.4.2–3), F's
  // γ rows −μ, and G = [−𝓙_c; −𝓙_f; 0] through each contact's normal and arms (eqs. 14–17).
  int next_rubbing = 0;  // data.rubbing is in increasing order
  for (int i = 0; i < m; ++i) {
    const PlanarContact& contact = data.contacts[i];
    const int pair[2] = {contact.body_a, contact.body_b};
    double normal_speed = 0.0;
    for (int side = 0; side < 2; ++side)
      for (int c = 0; c < 3; ++c)
        normal_speed +=
            data.J_c[static_cast<size_t>(i) * columns + 3 * pair[side] + c] * velocities[3 * pair[side] + c];
    const double grad_h = z_d_z[i], through_k = data.k[i] * grad_h;
    const int j = next_rubbing < r && data.rubbing[next_rubbing] == i ? next_rubbing++ : -1;  // its friction pair
    // ∂ℓ/∂μ = −∂ℓ/∂F at (γ row j, λ_c of contact i).
    const double grad_k = 0.5 * grad_h * normal_speed, grad_mu = j < 0 ? 0.0 : 0.5 * z_d_z[m + 2 * r + j] * z[i];
    for (int body : pair) out.restitution[body] += grad_k, out.friction[body] += grad_mu;
    // 𝓙_c's rows enter G as −𝓙_c, and c = k ∘ (𝓙_c v_t) makes v_t a second route. 𝓙_f's second row
    // of each pair is minus its first (eq. 17): the pair acts through the difference of their
    // cotangents, taken against the first row's direction, the tangent d = R(π/2) n.
    const double normal_x = grad_h, normal_d = z[i];
    const double friction_x = j < 0 ? 0.0 : z_d_z[m + 2 * j] - z_d_z[m + 2 * j + 1];
    const double friction_d = j < 0 ? 0.0 : z[m + 2 * j] - z[m + 2 * j + 1];
    double jacobian[36];  // ∂(normal, arm_a, arm_b)/∂(pose_a, pose_b)
    const PlanarContactGeometry<double> geometry = planar_feature_geometry(
        contact.feature, positions + 3 * contact.body_a, positions + 3 * contact.body_b, jacobian);
    const double tangent[2] = {-geometry.normal[1], geometry.normal[0]};
    double grad_geometry[6] = {}, grad_tangent[2] = {};  // ∂ℓ/∂(normal, arm_a, arm_b), ∂ℓ/∂d
    for (int side = 0; side < 2; ++side) {
      const double sign = side == 0 ? 1.0 : -1.0;  // body b's block enters with the opposite sign
      const int body = pair[side];
      double normal_block[3], friction_block[3];
      for (int c = 0; c < 3; ++c) {
        const int column = 3 * body + c;
        out.velocities[column] += data.J_c[static_cast<size_t>(i) * columns + column] * through_k;
        normal_block[c] = sign * (normal_x * x[column] + normal_d * d_x[column] + through_k * velocities[column]);
        friction_block[c] = sign * (friction_x * x[column] + friction_d * d_x[column]);
      }
      const double* arm = side == 0 ? geometry.arm_a : geometry.arm_b;
      double* grad_arm = grad_geometry + 2 + 2 * side;
      detail::add_block_vjp(normal_block, arm, geometry.normal, grad_arm, grad_geometry);
      if (j >= 0) detail::add_block_vjp(friction_block, arm, tangent, grad_arm, grad_tangent);
    }
    // d = R(π/2) n: ∂ℓ/∂n gains R(π/2)ᵀ ∂ℓ/∂d.
    grad_geometry[0] += grad_tangent[1], grad_geometry[1] -= grad_tangent[0];
    for (int column = 0; column < 6; ++column) {
      double sum = 0.0;
      for (int output = 0; output < 6; ++output) sum += jacobian[output * 6 + column] * grad_geometry[output];
      out.positions[3 * pair[column / 3] + column % 3] += sum;
    }
  }
  return true;
}

}  // namespace dcol::planar
