// q ⊕ v on the configuration manifold: 1-dof joints add v; a floating joint's pose M becomes
// M · exp(ξ), exp of the body-frame twist ξ = [v; ω] (as Pinocchio's integrate).
#pragma once

#include <cmath>

#include "model.hpp"

namespace dcol::dyn {

// Quaternion [w, x, y, z] and translation of exp([v; ω]): rotation by |ω| about ω, translation
// V v with V = I + a [ω]× + b [ω]×², a = (1 − cos θ)/θ², b = (θ − sin θ)/θ³ (series near θ = 0).
inline void exp_twist(const double* twist, double* quaternion, Vec3& translation) {
  const Vec3 v{twist[0], twist[1], twist[2]}, w{twist[3], twist[4], twist[5]};
  const double theta = std::sqrt(dot(w, w));
  const double sinc_half = theta < 1e-8 ? 0.5 - theta * theta / 48.0 : std::sin(0.5 * theta) / theta;
  quaternion[0] = std::cos(0.5 * theta);
  quaternion[1] = sinc_half * w.x, quaternion[2] = sinc_half * w.y, quaternion[3] = sinc_half * w.z;
  const bool small = theta < 1e-4;
  const double a = small ? 0.5 - theta * theta / 24.0 : (1.0 - std::cos(theta)) / (theta * theta);
  const double b = small ? 1.0 / 6.0 - theta * theta / 120.0 : (theta - std::sin(theta)) / (theta * theta * theta);
  const Vec3 wv = cross(w, v);
  translation = v + a * wv + b * cross(w, wv);
}

// out = q ⊕ v (out may alias q). A floating joint's quaternion is normalized first.
inline void integrate(const Model& model, const double* q, const double* v, double* out) {
  for (int i = 0; i < model.nbodies(); ++i) {
    const int qi = model.q_index[i], vi = model.v_index[i];
    if (model.kind[i] != JointKind::floating) {
      out[qi] = q[qi] + v[vi];
      continue;
    }
    const double* rho = q + qi + 3;
    const double norm = std::sqrt(rho[0] * rho[0] + rho[1] * rho[1] + rho[2] * rho[2] + rho[3] * rho[3]);
    const double p[4] = {rho[0] / norm, rho[1] / norm, rho[2] / norm, rho[3] / norm};
    double s[4];
    Vec3 translation;
    exp_twist(v + vi, s, translation);
    const Vec3 moved = quaternion_matrix(p) * translation;
    for (int k = 0; k < 3; ++k) out[qi + k] = q[qi + k];
    out[qi] += moved.x, out[qi + 1] += moved.y, out[qi + 2] += moved.z;
    // p ⊗ s
    out[qi + 3] = p[0] * s[0] - p[1] * s[1] - p[2] * s[2] - p[3] * s[3];
    out[qi + 4] = p[0] * s[1] + p[1] * s[0] + p[2] * s[3] - p[3] * s[2];
    out[qi + 5] = p[0] * s[2] - p[1] * s[3] + p[2] * s[0] + p[3] * s[1];
    out[qi + 6] = p[0] * s[3] + p[1] * s[2] - p[2] * s[1] + p[3] * s[0];
  }
}

}  // namespace dcol::dyn
