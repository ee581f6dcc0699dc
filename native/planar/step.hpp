// The planar engine's step (LCP-physics §A.1): contacts, the dynamics LCP (§A.5, eq. 23) solved by the
// mixed-LCP interior point, explicit Euler integration with optional rejection by dt halving, and
// post-stabilization (§A.7).
//
// Eq. 23 maps onto the mixed LCP  M x + Aᵀ y + Gᵀ z + q = 0, A x = 0, G x + F z + s = h  with
// x = v_{t+dt}, y = −λ_e, z = (λ_c, λ_f, γ), s = (a, σ, ζ) and
//   q = −(𝓜 v_t + dt f),  A = 𝓙_e,  G = [−𝓙_c; −𝓙_f; 0],  h = [c; 0; 0],
//   F = [0 0 0; 0 0 −E; −μ Eᵀ 0]
// (the right-hand side's friction rows are zero: σ = 𝓙_f v + E γ, eq. 22); 𝓙_f, E and the γ rows cover
// the contacts whose combined μ is positive (a frictionless contact's λ_f and ζ would both be zero, a
// degenerate complementarity that leaves the backward pass's KKT matrix singular).
//
// The contact Jacobian of body b enters with the opposite sign of body a's (eq. 15 writes both alike):
// with the normal n pointing from b to a, a = 𝓙_c v + c is then the separating speed, which eq. 21 asks
// to be ≥ 0. The friction rows of eq. 17 follow the same rule.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/dense_lu.hpp"
#include "lcp/mlcp_ipm.hpp"
#include "planar/contacts.hpp"

namespace dcol::planar {

// Equality constraints (LCP-physics §A.4.1). A hinge: the point anchor_a of body_a (its frame) and the
// point anchor_b of body_b (its frame; a world point where body_b is −1) coincide, two rows. A fixed
// joint: body_a's centre stays at anchor_b of body_b (or of the world) and θ_a − θ_b (θ_a for the
// world) stays `angle`, three rows. An axis constraint: coordinate `axis` (0 angle, 1 x, 2 y) of
// body_a stays `value`, one row.
struct PlanarJoint {
  enum class Kind : int { hinge = 0, fixed = 1, axis = 2 };
  Kind kind = Kind::hinge;
  int body_a = 0, body_b = -1;
  double anchor_a[2] = {}, anchor_b[2] = {};
  double angle = 0.0;
  int axis = 0;
  double value = 0.0;
  int rows() const { return kind == Kind::hinge ? 2 : kind == Kind::fixed ? 3 : 1; }
};

// A planar scene: its bodies' shapes, mass m, moment of inertia 𝓘, ∂𝓘/∂m (the shape's 𝓘 per unit
// mass, or 0 where 𝓘 is given apart from the mass), restitution k and friction μ, its joints, the
// pairs not tested for contact (skipped[i·n + j] nonzero for i < j), and the step's settings (see
// dcol.dynamics.planar.PlanarWorld).
struct PlanarModel {
  PlanarShapes shapes;
  std::vector<double> mass, inertia, inertia_per_mass, restitution, friction;
  std::vector<PlanarJoint> joints;
  std::vector<int> skipped;
  double gravity[2] = {0.0, -9.81};
  double dt = 0.01, margin = 1e-3, tol = 1e-10, penetration_tolerance = 1e-9;
  bool post_stabilization = true;
  int max_halvings = 0;
  int bodies() const { return shapes.bodies(); }
  int equality_rows() const {
    int rows = 0;
    for (const PlanarJoint& joint : joints) rows += joint.rows();
    return rows;
  }
};

// A mixed LCP (dense, row-major) and its solution.
struct PlanarMlcp {
  int n = 0, p = 0, m = 0;
  std::vector<double> M, q, A, G, F, h;
  std::vector<double> x, y, z, s;
  lcp::LcpReport report;
  bool solved() const { return report.status == lcp::LcpStatus::solved; }
  lcp::MlcpProblem problem() const { return {n, p, m, M.data(), q.data(), A.data(), G.data(), F.data(), h.data()}; }
  void resize(int variables, int equalities, int complementary) {
    n = variables, p = equalities, m = complementary;
    M.assign(static_cast<size_t>(n) * n, 0.0), q.assign(n, 0.0), A.assign(static_cast<size_t>(p) * n, 0.0);
    G.assign(static_cast<size_t>(m) * n, 0.0), F.assign(static_cast<size_t>(m) * m, 0.0), h.assign(m, 0.0);
    x.resize(n), y.resize(p), z.resize(m), s.resize(m);
  }
  void solve(lcp::MlcpSolver& solver, double tol) {
    report = solver.solve(problem(), lcp::MlcpSettings{tol, 100}, x.data(), y.data(), z.data(), s.data());
  }
};

// A step's results and work buffers (kept from step to step so that steps of one size allocate
// nothing). The dynamics LCP (`dynamics`) and the Jacobians it is built from: J_e (p × 3n),
// J_c (m × 3n), J_f (2r × 3n) of the r contacts with friction (`rubbing`, their indices), the combined
// μ and k (m each); the stabilization LCP where one was solved (`stabilized`). `solver` keeps what
// its interior point prepared for the dynamics LCP, which the backward pass (planar_step_vjp)
// reuses; the stabilization LCP has a solver of its own so as not to overwrite it.
struct PlanarStepData {
  std::vector<PlanarContact> contacts, next_contacts;
  PlanarMlcp dynamics, stabilization;
  std::vector<double> J_e, J_c, J_f, mu, k;
  std::vector<int> rubbing;
  std::vector<double> next_positions, next_velocities;
  double dt = 0.0;
  bool stabilized = false;
  // Work buffers.
  PlanarContactWorkspace detection;
  lcp::MlcpSolver solver, stabilization_solver;
  std::vector<double> adjoint;
  std::vector<double> correction, friction_rows, delta_0, error, schur, multipliers, inverse_mass, contact_rows;
  std::vector<int> pivot;
};

namespace detail {

// The angle column of the block of the world velocity of the point at arm r (world-frame offset from
// the body's centre): (−r_y, r_x); its x and y columns are the identity.
inline void add_point_rows(double* row_x, double* row_y, int body, const double* r, double sign) {
  row_x[3 * body] += -sign * r[1], row_x[3 * body + 1] += sign;
  row_y[3 * body] += sign * r[0], row_y[3 * body + 2] += sign;
}

}  // namespace detail

// 𝓙_e (rows × 3n, row-major, zeroed first) and the joints' position errors (rows) at positions (n × 3),
// LCP-physics eqs. 11–12; either output may be null.
inline void planar_equality_rows(const PlanarModel& model, const double* positions, double* jacobian, double* error) {
  const int columns = 3 * model.bodies();
  if (jacobian) std::fill(jacobian, jacobian + static_cast<size_t>(model.equality_rows()) * columns, 0.0);
  int row = 0;
  for (const PlanarJoint& joint : model.joints) {
    double* J = jacobian ? jacobian + static_cast<size_t>(row) * columns : nullptr;
    const double* pose_a = positions + 3 * joint.body_a;
    const double* pose_b = joint.body_b >= 0 ? positions + 3 * joint.body_b : nullptr;
    if (joint.kind == PlanarJoint::Kind::axis) {
      if (J) J[3 * joint.body_a + joint.axis] = 1.0;
      if (error) error[row] = pose_a[joint.axis] - joint.value;
      row += 1;
      continue;
    }
    // A hinge, or the fixed joint's hinge at body_a's centre.
    const double zero[2] = {0.0, 0.0};
    const detail::Vec2<double> arm_a =
        detail::Pose<double>(pose_a).turned(joint.kind == PlanarJoint::Kind::hinge ? joint.anchor_a : zero);
    const detail::Vec2<double> arm_b = pose_b ? detail::Pose<double>(pose_b).turned(joint.anchor_b)
                                              : detail::Vec2<double>{joint.anchor_b[0], joint.anchor_b[1]};
    const double r_a[2] = {arm_a.x, arm_a.y}, r_b[2] = {arm_b.x, arm_b.y};
    if (J) {
      detail::add_point_rows(J, J + columns, joint.body_a, r_a, 1.0);
      if (pose_b) detail::add_point_rows(J, J + columns, joint.body_b, r_b, -1.0);
    }
    if (error)
      for (int c = 0; c < 2; ++c) error[row + c] = pose_a[1 + c] + r_a[c] - (pose_b ? pose_b[1 + c] + r_b[c] : r_b[c]);
    if (joint.kind == PlanarJoint::Kind::fixed) {
      if (J) {
        J[2 * columns + 3 * joint.body_a] = 1.0;
        if (pose_b) J[2 * columns + 3 * joint.body_b] = -1.0;
      }
      if (error) error[row + 2] = pose_a[0] - (pose_b ? pose_b[0] : 0.0) - joint.angle;
    }
    row += joint.rows();
  }
}

// 𝓙_c (m × 3n) and, where J_f is not null, the friction rows (2m × 3n) of every contact, LCP-physics
// eqs. 15–17 (body b with the opposite sign), zeroed first.
inline void planar_contact_rows(int bodies, const std::vector<PlanarContact>& contacts, double* J_c, double* J_f) {
  const int columns = 3 * bodies, m = static_cast<int>(contacts.size());
  std::fill(J_c, J_c + static_cast<size_t>(m) * columns, 0.0);
  if (J_f) std::fill(J_f, J_f + static_cast<size_t>(2 * m) * columns, 0.0);
  auto add = [columns](double* row, int body, const double* arm, const double* direction, double sign) {
    row[3 * body] += sign * (arm[0] * direction[1] - arm[1] * direction[0]);
    row[3 * body + 1] += sign * direction[0], row[3 * body + 2] += sign * direction[1];
  };
  for (int i = 0; i < m; ++i) {
    const PlanarContact& c = contacts[i];
    const double* n = c.geometry.normal;
    const double tangent[2] = {-n[1], n[0]}, opposite[2] = {n[1], -n[0]};  // d, the left orthogonal of n (§A.4.3)
    for (int side = 0; side < 2; ++side) {
      const int body = side == 0 ? c.body_a : c.body_b;
      const double* arm = side == 0 ? c.geometry.arm_a : c.geometry.arm_b;
      const double sign = side == 0 ? 1.0 : -1.0;
      add(J_c + static_cast<size_t>(i) * columns, body, arm, n, sign);
      if (!J_f) continue;
      add(J_f + static_cast<size_t>(2 * i) * columns, body, arm, tangent, sign);
      add(J_f + static_cast<size_t>(2 * i + 1) * columns, body, arm, opposite, sign);
    }
  }
}

// The contacts at positions into contacts.
inline void planar_contacts(const PlanarModel& model, const double* positions, PlanarStepData& data,
                            std::vector<PlanarContact>& contacts) {
  const int n = model.bodies();
  const int* skipped = model.skipped.data();
  planar_detect_contacts(
      model.shapes, positions, model.margin, [skipped, n](int i, int j) { return skipped[i * n + j] != 0; },
      data.detection, contacts);
}

// The dynamics LCP (eq. 23) at positions, velocities and external forces (n × 3 each; forces null for
// none) into data.dynamics, with its contacts and Jacobians.
inline void planar_dynamics_lcp(const PlanarModel& model, const double* positions, const double* velocities,
                                const double* forces, PlanarStepData& data) {
  const int bodies = model.bodies(), columns = 3 * bodies, p = model.equality_rows();
  planar_contacts(model, positions, data, data.contacts);
  const int m = static_cast<int>(data.contacts.size());
  data.J_e.resize(static_cast<size_t>(p) * columns);
  planar_equality_rows(model, positions, data.J_e.data(), nullptr);
  data.J_c.resize(static_cast<size_t>(m) * columns);
  data.friction_rows.resize(static_cast<size_t>(2 * m) * columns);
  planar_contact_rows(bodies, data.contacts, data.J_c.data(), data.friction_rows.data());
  // Combined coefficients: the means of the two bodies' (LCP-physics §A.4.2–3).
  data.mu.resize(m), data.k.resize(m), data.rubbing.clear();
  for (int i = 0; i < m; ++i) {
    const int a = data.contacts[i].body_a, b = data.contacts[i].body_b;
    data.k[i] = 0.5 * (model.restitution[a] + model.restitution[b]);
    data.mu[i] = 0.5 * (model.friction[a] + model.friction[b]);
    if (data.mu[i] > 0.0) data.rubbing.push_back(i);
  }
  const int r = static_cast<int>(data.rubbing.size());
  data.J_f.resize(static_cast<size_t>(2 * r) * columns);
  for (int j = 0; j < r; ++j)
    std::copy_n(data.friction_rows.data() + static_cast<size_t>(2 * data.rubbing[j]) * columns, 2 * columns,
                data.J_f.data() + static_cast<size_t>(2 * j) * columns);
  PlanarMlcp& lcp = data.dynamics;
  lcp.resize(columns, p, m + 3 * r);
  for (int i = 0; i < bodies; ++i) {
    const double diagonal[3] = {model.inertia[i], model.mass[i], model.mass[i]};
    const double weight[3] = {0.0, model.mass[i] * model.gravity[0], model.mass[i] * model.gravity[1]};
    for (int c = 0; c < 3; ++c) {
      const int index = 3 * i + c;
      lcp.M[static_cast<size_t>(index) * columns + index] = diagonal[c];
      lcp.q[index] = -(diagonal[c] * velocities[index] + model.dt * ((forces ? forces[index] : 0.0) + weight[c]));
    }
  }
  std::copy(data.J_e.begin(), data.J_e.end(), lcp.A.begin());
  const int rows = m + 3 * r;
  for (int i = 0; i < m; ++i) {
    const double* row = data.J_c.data() + static_cast<size_t>(i) * columns;
    double normal_speed = 0.0;
    for (int j = 0; j < columns; ++j)
      lcp.G[static_cast<size_t>(i) * columns + j] = -row[j], normal_speed += row[j] * velocities[j];
    lcp.h[i] = data.k[i] * normal_speed;  // c = k ∘ (𝓙_c v_t), LCP-physics eq. 14
  }
  for (int j = 0; j < 2 * r; ++j)
    for (int c = 0; c < columns; ++c)
      lcp.G[static_cast<size_t>(m + j) * columns + c] = -data.J_f[static_cast<size_t>(j) * columns + c];
  for (int j = 0; j < r; ++j) {
    // E's column j has ones at rows 2j, 2j + 1 (§A.4.3).
    lcp.F[static_cast<size_t>(m + 2 * j) * rows + m + 2 * r + j] = -1.0;
    lcp.F[static_cast<size_t>(m + 2 * j + 1) * rows + m + 2 * r + j] = -1.0;
    lcp.F[static_cast<size_t>(m + 2 * r + j) * rows + data.rubbing[j]] = -data.mu[data.rubbing[j]];
    lcp.F[static_cast<size_t>(m + 2 * r + j) * rows + m + 2 * j] = 1.0;
    lcp.F[static_cast<size_t>(m + 2 * r + j) * rows + m + 2 * j + 1] = 1.0;
  }
}

// The post-stabilization correction δ (3n) at positions after integration (LCP-physics §A.7) into
// data.correction: 𝓜δ = 𝓙_eᵀλ_e + 𝓙_cᵀλ_c, 𝓙_e δ = −g_e, 𝓙_c δ + g_c ≥ 0 ⊥ λ_c ≥ 0, with contacts
// those at the positions (data.next_contacts). The errors are per unit time (g_e the joints' position
// errors / dt, g_c the contacts' gaps / dt), as in Cline's post-stabilization, so that p + dt δ removes
// them to first order. The mixed LCP has homogeneous equalities: δ = δ₀ + δ' with δ₀ the 𝓜-least
// correction of the joints, 𝓙_e δ₀ = −g_e, leaves 𝓙_e δ' = 0 to the solver. Returns whether the
// correction is to be applied: false where none is needed (no contacts, no joints; data.stabilized
// false), and where the joints' rows are dependent (status invalid_problem) or the solve did not
// converge (data.stabilized true, data.stabilization says which).
inline bool planar_stabilization(const PlanarModel& model, const double* positions, PlanarStepData& data) {
  const int bodies = model.bodies(), columns = 3 * bodies, p = model.equality_rows();
  const int m = static_cast<int>(data.next_contacts.size());
  data.stabilized = false;
  if (m == 0 && p == 0) return false;
  PlanarMlcp& lcp = data.stabilization;
  lcp.resize(columns, p, m);
  planar_equality_rows(model, positions, lcp.A.data(), nullptr);
  data.error.resize(p);
  planar_equality_rows(model, positions, nullptr, data.error.data());
  std::vector<double>& inverse_mass = data.inverse_mass;
  inverse_mass.resize(columns);
  for (int i = 0; i < bodies; ++i) {
    const double diagonal[3] = {model.inertia[i], model.mass[i], model.mass[i]};
    for (int c = 0; c < 3; ++c) {
      lcp.M[static_cast<size_t>(3 * i + c) * columns + 3 * i + c] = diagonal[c];
      inverse_mass[3 * i + c] = 1.0 / diagonal[c];
    }
  }
  // δ₀ = −𝓜⁻¹𝓙_eᵀ (𝓙_e 𝓜⁻¹ 𝓙_eᵀ)⁻¹ g_e.
  std::vector<double>& delta_0 = data.delta_0;
  delta_0.assign(columns, 0.0);
  if (p > 0) {
    data.schur.assign(static_cast<size_t>(p) * p, 0.0);
    for (int a = 0; a < p; ++a)
      for (int b = 0; b < p; ++b) {
        double sum = 0.0;
        for (int j = 0; j < columns; ++j)
          sum += lcp.A[static_cast<size_t>(a) * columns + j] * inverse_mass[j] *
                 lcp.A[static_cast<size_t>(b) * columns + j];
        data.schur[static_cast<size_t>(a) * p + b] = sum;
      }
    data.pivot.resize(p);
    if (!lu_factor(p, data.schur.data(), p, data.pivot.data())) {
      // Redundant joints: no correction, and the stabilization says why.
      std::fill(lcp.x.begin(), lcp.x.end(), 0.0);
      lcp.report = lcp::LcpReport{};
      lcp.report.status = lcp::LcpStatus::invalid_problem;
      data.stabilized = true;
      return false;
    }
    std::vector<double>& multipliers = data.multipliers;
    multipliers.resize(p);
    for (int a = 0; a < p; ++a) multipliers[a] = data.error[a] / model.dt;
    lu_solve(p, data.schur.data(), p, data.pivot.data(), multipliers.data());
    for (int j = 0; j < columns; ++j) {
      double sum = 0.0;
      for (int a = 0; a < p; ++a) sum += lcp.A[static_cast<size_t>(a) * columns + j] * multipliers[a];
      delta_0[j] = -inverse_mass[j] * sum;
    }
  }
  std::vector<double>& contact_rows = data.contact_rows;
  contact_rows.resize(static_cast<size_t>(m) * columns);
  planar_contact_rows(bodies, data.next_contacts, contact_rows.data(), nullptr);
  for (int j = 0; j < columns; ++j) lcp.q[j] = lcp.M[static_cast<size_t>(j) * columns + j] * delta_0[j];
  for (int i = 0; i < m; ++i) {
    double along = 0.0;
    for (int j = 0; j < columns; ++j) {
      const double value = contact_rows[static_cast<size_t>(i) * columns + j];
      lcp.G[static_cast<size_t>(i) * columns + j] = -value;
      along += value * delta_0[j];
    }
    lcp.h[i] = data.next_contacts[i].geometry.gap / model.dt + along;
  }
  lcp.solve(data.stabilization_solver, model.tol);
  data.stabilized = true;
  if (!lcp.solved()) return false;
  data.correction.resize(columns);
  for (int j = 0; j < columns; ++j) data.correction[j] = delta_0[j] + lcp.x[j];
  return true;
}

// One step (LCP-physics §A.1) from positions, velocities, forces (n × 3 each; forces null for none):
// the dynamics LCP's v_{t+dt}, p_{t+dt} = p_t + dt v_{t+dt}, with max_halvings > 0 the rejection of an
// interpenetrating p_{t+dt} by halving dt (item 5), then, with post_stabilization and a solved dynamics
// LCP, p_{t+dt} + dt δ (§A.7). Results in data.
inline void planar_step(const PlanarModel& model, const double* positions, const double* velocities,
                        const double* forces, PlanarStepData& data) {
  const int columns = 3 * model.bodies();
  planar_dynamics_lcp(model, positions, velocities, forces, data);
  data.dynamics.solve(data.solver, model.tol);
  data.next_velocities.assign(data.dynamics.x.begin(), data.dynamics.x.end());
  // The appendix assumes no interpenetration at the start; a start that has some may keep it.
  double allowed = model.penetration_tolerance;
  for (const PlanarContact& contact : data.contacts) allowed = std::max(allowed, -contact.geometry.gap);
  data.dt = model.dt;
  data.next_positions.resize(columns);
  auto integrate = [&]() {
    for (int j = 0; j < columns; ++j) data.next_positions[j] = positions[j] + data.dt * data.next_velocities[j];
  };
  integrate();
  data.next_contacts.clear();
  if (model.max_halvings > 0 || model.post_stabilization)
    planar_contacts(model, data.next_positions.data(), data, data.next_contacts);
  for (int halving = 0; halving < model.max_halvings; ++halving) {
    bool apart = true;
    for (const PlanarContact& contact : data.next_contacts) apart = apart && contact.geometry.gap >= -allowed;
    if (apart) break;
    data.dt /= 2.0;
    integrate();
    planar_contacts(model, data.next_positions.data(), data, data.next_contacts);
  }
  data.stabilized = false;
  if (!model.post_stabilization || !data.dynamics.solved()) return;
  if (planar_stabilization(model, data.next_positions.data(), data))
    for (int j = 0; j < columns; ++j) data.next_positions[j] += model.dt * data.correction[j];
}

}  // namespace dcol::planar
