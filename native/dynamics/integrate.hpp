// q ⊕ v on the configuration manifold: 1-dof joints add v; a floating joint's pose M becomes
// M · exp(ξ), exp of the body-frame twist ξ = [v; ω] (as Pinocchio's integrate). It defines the
// tangent space of every derivative with respect to q. The simulation step moves q by its own update,
// step_integrate below, which differs from it only in a floating joint's translation.
#pragma once

#include <algorithm>
#include <cmath>

#include "core/rotations.hpp"
#include "dynamics/model.hpp"

namespace dcol::dyn {

namespace detail {

// The coefficients of V(θ) = I + a [θ]× + b [θ]×², a = (1 − cos θ)/θ², b = (θ − sin θ)/θ³ (series
// near θ = 0): SO(3)'s left Jacobian, and with −θ its right Jacobian.
inline void so3_jacobian_coefficients(double theta, double& a, double& b) {
  const bool small = theta < 1e-4;
  a = small ? 0.5 - theta * theta / 24.0 : (1.0 - std::cos(theta)) / (theta * theta);
  b = small ? 1.0 / 6.0 - theta * theta / 120.0 : (theta - std::sin(theta)) / (theta * theta * theta);
}

// Quaternion [w, x, y, z] of exp(ω): the rotation by |ω| about ω.
inline void exp_rotation(const Vec3& w, double* quaternion) {
  const double theta = std::sqrt(dot(w, w));
  const double sinc_half = theta < 1e-8 ? 0.5 - theta * theta / 48.0 : std::sin(0.5 * theta) / theta;
  quaternion[0] = std::cos(0.5 * theta);
  quaternion[1] = sinc_half * w.x, quaternion[2] = sinc_half * w.y, quaternion[3] = sinc_half * w.z;
}

// A floating joint's quaternion q[qi + 3 …] normalized into unit, and its pose M⁺ = M · (s, t)
// written to out[qi …]: translation q[qi …] + R(unit) t, quaternion unit ⊗ s. out may alias q.
inline void move_floating_joint(const double* q, int qi, const double* s, const Vec3& t, double* out) {
  const double* rho = q + qi + 3;
  const double norm = quaternion_norm(rho);
  const double p[4] = {rho[0] / norm, rho[1] / norm, rho[2] / norm, rho[3] / norm};
  const Vec3 moved = quaternion_matrix(p) * t;
  for (int k = 0; k < 3; ++k) out[qi + k] = q[qi + k];
  out[qi] += moved.x, out[qi + 1] += moved.y, out[qi + 2] += moved.z;
  out[qi + 3] = p[0] * s[0] - p[1] * s[1] - p[2] * s[2] - p[3] * s[3];
  out[qi + 4] = p[0] * s[1] + p[1] * s[0] + p[2] * s[3] - p[3] * s[2];
  out[qi + 5] = p[0] * s[2] - p[1] * s[3] + p[2] * s[0] + p[3] * s[1];
  out[qi + 6] = p[0] * s[3] + p[1] * s[2] - p[2] * s[1] + p[3] * s[0];
}

}  // namespace detail

// Quaternion [w, x, y, z] and translation of exp([v; ω]): rotation by |ω| about ω, translation
// V(ω) v (detail::so3_jacobian_coefficients).
inline void exp_twist(const double* twist, double* quaternion, Vec3& translation) {
  const Vec3 v{twist[0], twist[1], twist[2]}, w{twist[3], twist[4], twist[5]};
  detail::exp_rotation(w, quaternion);
  double a, b;
  detail::so3_jacobian_coefficients(std::sqrt(dot(w, w)), a, b);
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
    double s[4];
    Vec3 translation;
    exp_twist(v + vi, s, translation);
    detail::move_floating_joint(q, qi, s, translation, out);
  }
}

// The simulation step's position update q⁺ = q ⊞ u (out may alias q), u = Δt v⁺ + δq. A floating
// joint moves its origin straight, p⁺ = p + R u_lin (R u_lin is the origin's displacement in the
// joint's parent frame, u_lin being body-frame as the velocity), and turns as integrate does,
// R⁺ = R exp(u_ang); every other joint as integrate. The step's contact rows constrain the velocity
// of the contact points at q, and a ball rolling without slipping has a twist that turns about its
// contact point: integrate's exp moves its centre along that arc, into the ground by
// r (1 − cos |ω| Δt) every step, which no row sees; the straight update keeps it at its height
// (as MuJoCo's free joints, whose translation integrates the world-frame velocity).
inline void step_integrate(const Model& model, const double* q, const double* u, double* out) {
  for (int i = 0; i < model.nbodies(); ++i) {
    const int qi = model.q_index[i], vi = model.v_index[i];
    if (model.kind[i] != JointKind::floating) {
      out[qi] = q[qi] + u[vi];
      continue;
    }
    double s[4];
    detail::exp_rotation({u[vi + 3], u[vi + 4], u[vi + 5]}, s);
    detail::move_floating_joint(q, qi, s, {u[vi], u[vi + 1], u[vi + 2]}, out);
  }
}

namespace detail {

// A and B = the nv × nv identity (row-major): the Jacobians' blocks of 1-dof joints.
inline void identities(int nv, double* A, double* B) {
  std::fill(A, A + nv * nv, 0.0);
  std::fill(B, B + nv * nv, 0.0);
  for (int i = 0; i < nv; ++i) A[i * nv + i] = B[i * nv + i] = 1.0;
}

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
  detail::identities(nv, d_q, d_v);
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

namespace detail {

inline Mat3 skew(const Vec3& a) {
  Mat3 S;
  S.m[0][1] = -a.z, S.m[0][2] = a.y, S.m[1][0] = a.z, S.m[1][2] = -a.x, S.m[2][0] = -a.y, S.m[2][1] = a.x;
  return S;
}

inline Mat3 transpose(const Mat3& A) {
  Mat3 T;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) T.m[r][c] = A.m[c][r];
  return T;
}

// exp(θ) and SO(3)'s right Jacobian J_r(θ) = I − a [θ]× + b [θ]×² (so3_jacobian_coefficients):
// exp(θ + δ) = exp(θ) exp(J_r(θ) δ) to first order.
inline void rotation_and_right_jacobian(const Vec3& theta, Mat3& rotation, Mat3& right_jacobian) {
  double s[4];
  exp_rotation(theta, s);
  rotation = quaternion_matrix(s);
  double a, b;
  so3_jacobian_coefficients(std::sqrt(dot(theta, theta)), a, b);
  const Mat3 W = skew(theta), W2 = W * W;
  right_jacobian = Mat3::identity();
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) right_jacobian.m[r][c] += -a * W.m[r][c] + b * W2.m[r][c];
}

inline Vec3 linear_part(const double* twist) { return {twist[0], twist[1], twist[2]}; }
inline Vec3 angular_part(const double* twist) { return {twist[3], twist[4], twist[5]}; }

}  // namespace detail

// (∂q⁺/∂q, ∂q⁺/∂u) of the step's update q⁺ = q ⊞ u (step_integrate) in integrate's tangent spaces at
// q and q⁺, nv × nv row-major each: identity blocks for 1-dof joints. A floating joint with
// u = [u_lin; u_ang] and E = exp(u_ang): a tangent δ = [δv; δω] at q moves p by R δv and R to
// R exp(δω), so p⁺ by R (δv − u_lin × δω) and R⁺ to R⁺ exp(Eᵀ δω), which at q⁺ reads
// ∂q⁺/∂q = [[Eᵀ, −Eᵀ [u_lin]×], [0, Eᵀ]]; ∂q⁺/∂u = [[Eᵀ, 0], [0, J_r(u_ang)]].
inline void step_integrate_jacobians(const Model& model, const double* u, double* d_q, double* d_u) {
  const int nv = model.nv;
  detail::identities(nv, d_q, d_u);
  for (int body = 0; body < model.nbodies(); ++body) {
    if (model.kind[body] != JointKind::floating) continue;
    const int start = model.v_index[body];
    Mat3 E, right_jacobian;
    detail::rotation_and_right_jacobian(detail::angular_part(u + start), E, right_jacobian);
    const Mat3 Et = detail::transpose(E), turned = Et * detail::skew(detail::linear_part(u + start));
    const auto at = [&](double* m, int r, int c) -> double& { return m[(start + r) * nv + start + c]; };
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) {
        at(d_q, r, c) = at(d_q, 3 + r, 3 + c) = at(d_u, r, c) = Et.m[r][c];
        at(d_q, r, 3 + c) = -turned.m[r][c];
        at(d_u, 3 + r, 3 + c) = right_jacobian.m[r][c];
      }
  }
}

// The step's velocity is taken in the body frames at q: its contact rows give the velocity of a
// contact point at q, and step_integrate moves a floating joint's origin by R ν. A floating joint's
// body-frame linear velocity, though, changes as ν̇ = Rᵀ p̈ − ω × ν: the −ω × ν of the free motion
// (in c(q, v)) turns ν into the frame the body will have turned to. The step takes that turn out of
// v_free (adds Δt ω × ν back, at the midpoint velocities v_mid of the free motion, so that a free
// body's ν keeps its length exactly) and applies it after the step, as the turn the body did make
// (step_velocity_at_end). Without it, the rows of a ball rolling without slipping see its contact
// point lift off by Δt ω × ν every step.
inline void step_velocity_at_start(const Model& model, double dt, const double* v_mid, double* v_free) {
  for (int body = 0; body < model.nbodies(); ++body) {
    if (model.kind[body] != JointKind::floating) continue;
    const int start = model.v_index[body];
    const Vec3 turn = dt * cross(detail::angular_part(v_mid + start), detail::linear_part(v_mid + start));
    v_free[start] += turn.x, v_free[start + 1] += turn.y, v_free[start + 2] += turn.z;
  }
}

// Its derivative: d_free (nv × D row-major) holds ∂(v + Δt a) with respect to D inputs, among them v
// at columns [v_column, v_column + nv), and gains ∂(Δt ω × ν) at v_mid = v + Δt a / 2.
inline void step_velocity_at_start_jacobian(const Model& model, double dt, const double* v_mid, int D, int v_column,
                                            double* d_free) {
  for (int body = 0; body < model.nbodies(); ++body) {
    if (model.kind[body] != JointKind::floating) continue;
    const int start = model.v_index[body];
    const Vec3 linear = detail::linear_part(v_mid + start), angular = detail::angular_part(v_mid + start);
    for (int c = 0; c < D; ++c) {
      double d_mid[6];  // ∂v_mid of this joint along input c
      for (int k = 0; k < 6; ++k)
        d_mid[k] = 0.5 * ((c == v_column + start + k ? 1.0 : 0.0) + d_free[static_cast<size_t>(start + k) * D + c]);
      const Vec3 turn = dt * (cross(angular, detail::linear_part(d_mid)) + cross(detail::angular_part(d_mid), linear));
      d_free[static_cast<size_t>(start) * D + c] += turn.x;
      d_free[static_cast<size_t>(start + 1) * D + c] += turn.y;
      d_free[static_cast<size_t>(start + 2) * D + c] += turn.z;
    }
  }
}

// The step's velocity v⁺ (in the body frames at q) re-expressed at q⁺ = q ⊞ u, in place: a floating
// joint's linear velocity ν becomes Eᵀ ν, E = exp(u_ang), the same velocity of its origin in the
// turned body. Its angular velocity, which the free motion advances in the body frame (Euler's
// equations), and every other joint's velocity stay as they are.
inline void step_velocity_at_end(const Model& model, const double* u, double* v) {
  for (int body = 0; body < model.nbodies(); ++body) {
    if (model.kind[body] != JointKind::floating) continue;
    const int start = model.v_index[body];
    double s[4];
    detail::exp_rotation(detail::angular_part(u + start), s);
    const Vec3 moved = transpose_times(quaternion_matrix(s), detail::linear_part(v + start));
    v[start] = moved.x, v[start + 1] = moved.y, v[start + 2] = moved.z;
  }
}

// Its derivative: d_v (nv × D row-major) holds ∂v⁺ and becomes ∂(v⁺ at q⁺), given v⁺ (in the frames at
// q) and ∂u (nv × D): d(Eᵀ ν) = Eᵀ dν + [Eᵀ ν]× J_r(u_ang) du_ang.
inline void step_velocity_at_end_jacobian(const Model& model, const double* u, const double* v, const double* d_u,
                                          int D, double* d_v) {
  for (int body = 0; body < model.nbodies(); ++body) {
    if (model.kind[body] != JointKind::floating) continue;
    const int start = model.v_index[body];
    Mat3 E, right_jacobian;
    detail::rotation_and_right_jacobian(detail::angular_part(u + start), E, right_jacobian);
    const Mat3 turn_rate = detail::skew(transpose_times(E, detail::linear_part(v + start))) * right_jacobian;
    for (int c = 0; c < D; ++c) {
      const auto column = [&](const double* m, int row) { return m[static_cast<size_t>(start + row) * D + c]; };
      const Vec3 d_linear{column(d_v, 0), column(d_v, 1), column(d_v, 2)};
      const Vec3 d_turn{column(d_u, 3), column(d_u, 4), column(d_u, 5)};
      const Vec3 moved = transpose_times(E, d_linear) + turn_rate * d_turn;
      d_v[static_cast<size_t>(start) * D + c] = moved.x;
      d_v[static_cast<size_t>(start + 1) * D + c] = moved.y;
      d_v[static_cast<size_t>(start + 2) * D + c] = moved.z;
    }
  }
}

}  // namespace dcol::dyn
