// q ⊕ v on the configuration manifold: 1-dof joints add v; a floating joint's pose M becomes
// M · exp(ξ), exp of the body-frame twist ξ = [v; ω] (as Pinocchio's integrate).
#pragma once

#include <algorithm>
#include <cmath>

#include "core/rotations.hpp"
#include "dynamics/model.hpp"

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
    const double norm = quaternion_norm(rho);
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

namespace detail {

// C = A B for 6 × 6 row-major matrices (C must not alias A or B).
inline void multiply6(const double* A, const double* B, double* C) {
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j) {
      double s = 0.0;
      for (int k = 0; k < 6; ++k) s += A[i * 6 + k] * B[k * 6 + j];
      C[i * 6 + j] = s;
    }
}

// exp(X) and φ₁(X) = Σₖ Xᵏ/(k+1)! of a 6 × 6 X: Taylor series of X / 2ˢ (norm ≤ 1/2, the terms
// beyond the 17th below 1e-20), then s doublings exp(2Y) = exp(Y)², φ₁(2Y) = ½ φ₁(Y)(exp(Y) + I).
inline void exp_and_phi1(const double* X, double* exponential, double* phi1) {
  double norm = 0.0;  // ∞-norm
  for (int i = 0; i < 6; ++i) {
    double row = 0.0;
    for (int j = 0; j < 6; ++j) row += std::abs(X[i * 6 + j]);
    norm = std::max(norm, row);
  }
  const int s = norm > 0.5 ? static_cast<int>(std::ceil(std::log2(norm / 0.5))) : 0;
  const double scale = std::ldexp(1.0, -s);
  double Y[36], term[36], next[36];
  for (int i = 0; i < 36; ++i) {
    Y[i] = scale * X[i];
    term[i] = exponential[i] = phi1[i] = i % 7 == 0 ? 1.0 : 0.0;
  }
  for (int k = 1; k <= 17; ++k) {  // term = Yᵏ/k!
    multiply6(term, Y, next);
    for (int i = 0; i < 36; ++i) {
      term[i] = next[i] / k;
      exponential[i] += term[i];
      phi1[i] += term[i] / (k + 1);
    }
  }
  for (int d = 0; d < s; ++d) {
    double sum[36];
    for (int i = 0; i < 36; ++i) sum[i] = 0.5 * (exponential[i] + (i % 7 == 0 ? 1.0 : 0.0));
    multiply6(phi1, sum, next);
    std::copy(next, next + 36, phi1);
    multiply6(exponential, exponential, next);
    std::copy(next, next + 36, exponential);
  }
}

}  // namespace detail

// (∂q⁺/∂q, ∂q⁺/∂v) of q⁺ = q ⊕ v in the tangent spaces at q and q⁺ (Pinocchio's dIntegrate), nv × nv
// row-major each: identity blocks for 1-dof joints; for a floating joint with twist ξ = [v; ω],
// Ad(exp(−ξ)) = exp(−ad ξ) and the SE(3) right Jacobian φ₁(−ad ξ), ad ξ = [[ω×, v×], [0, ω×]].
inline void integrate_jacobians(const Model& model, const double* v, double* d_q, double* d_v) {
  const int nv = model.nv;
  std::fill(d_q, d_q + nv * nv, 0.0);
  std::fill(d_v, d_v + nv * nv, 0.0);
  for (int i = 0; i < nv; ++i) d_q[i * nv + i] = d_v[i * nv + i] = 1.0;
  for (int body = 0; body < model.nbodies(); ++body) {
    if (model.kind[body] != JointKind::floating) continue;
    const int start = model.v_index[body];
    const double* xi = v + start;
    // −ad ξ: rows [−ω×, −v×; 0, −ω×].
    double X[36] = {};
    const auto minus_skew = [&](const double* a, int row, int col) {
      X[(row + 0) * 6 + col + 1] = a[2], X[(row + 0) * 6 + col + 2] = -a[1];
      X[(row + 1) * 6 + col + 0] = -a[2], X[(row + 1) * 6 + col + 2] = a[0];
      X[(row + 2) * 6 + col + 0] = a[1], X[(row + 2) * 6 + col + 1] = -a[0];
    };
    minus_skew(xi + 3, 0, 0);
    minus_skew(xi + 3, 3, 3);
    minus_skew(xi, 0, 3);
    double exponential[36], phi1[36];
    detail::exp_and_phi1(X, exponential, phi1);
    for (int r = 0; r < 6; ++r)
      for (int c = 0; c < 6; ++c) {
        d_q[(start + r) * nv + start + c] = exponential[r * 6 + c];
        d_v[(start + r) * nv + start + c] = phi1[r * 6 + c];
      }
  }
}

}  // namespace dcol::dyn
