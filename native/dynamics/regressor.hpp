// Joint torque regressor: τ = Y(q, q̇, q̈) π, RNEA being linear in each body's ten inertial
// parameters π_i = [m, m c, I_O] (c the centre of mass, I_O = [Ixx, Ixy, Iyy, Ixz, Iyz, Izz] the
// rotational inertia about the body origin, both in the body frame; Pinocchio's order). Y is also
// ∂τ/∂π, and ∂q̈/∂π = −M⁻¹ Y(q, q̇, q̈).
//
// In the body frame, with ν = [v; ω], a = [ā; α̇] and w = ā + ω × v, the body force I a + ν ×* I ν is
//   f = m w + (α̇× + ω×ω×) h,   n = −w × h + I_O α̇ + ω × I_O ω,   h = m c;
// its projection on a motion s = [s_l; s_a] (τ's share) has the coefficients written below.
#pragma once

#include "dynamics/rnea.hpp"

namespace dcol::dyn {

// Coefficients of x · (I_O w) in [Ixx, Ixy, Iyy, Ixz, Iyz, Izz].
inline void symmetric_coefficients(const Vec3& x, const Vec3& w, double sign, double* out) {
  out[0] += sign * x.x * w.x;
  out[1] += sign * (x.x * w.y + x.y * w.x);
  out[2] += sign * x.y * w.y;
  out[3] += sign * (x.x * w.z + x.z * w.x);
  out[4] += sign * (x.y * w.z + x.z * w.y);
  out[5] += sign * x.z * w.z;
}

// Y (nv × 10 nbodies, row-major, zeroed here); without gravity, Y(q, 0, a) π = M(q) a.
inline void joint_torque_regressor(const Model& model, Data& data, const double* q, const double* v, const double* a,
                                   double* Y, bool gravity = true) {
  forward_kinematics(model, data, q);
  rnea_forward_pass(model, data, v, a, gravity);
  const int cols = 10 * model.nbodies();
  for (int r = 0; r < model.nv * cols; ++r) Y[r] = 0.0;
  for (int i = 0; i < model.nbodies(); ++i) {
    const Transform& X = data.body_pose[i];
    const Vec6 nu = motion_to_local(X, data.velocity[i]);
    const Vec6 acc = motion_to_local(X, data.acceleration[i]);
    const Vec3& omega = nu.ang;
    const Vec3 w = acc.lin + cross(omega, nu.lin);
    for (int b = i; b >= 0; b = model.parent[b])
      for (int k = model.v_index[b]; k < model.v_index[b] + model.nv_of(b); ++k) {
        const Vec6 s = motion_to_local(X, data.S[k]);
        double* y = Y + static_cast<size_t>(k) * cols + 10 * i;
        y[0] = dot(s.lin, w);
        const Vec3 h = cross(omega, cross(omega, s.lin)) - cross(acc.ang, s.lin) + cross(w, s.ang);
        y[1] = h.x, y[2] = h.y, y[3] = h.z;
        symmetric_coefficients(s.ang, acc.ang, 1.0, y + 4);
        symmetric_coefficients(cross(omega, s.ang), omega, -1.0, y + 4);
      }
  }
}

}  // namespace dcol::dyn
