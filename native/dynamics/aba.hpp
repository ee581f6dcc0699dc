// Articulated-body algorithm for forward dynamics q̈ = M⁻¹(τ − c) (Featherstone §7.3), in world axes, where
// the articulated inertias and bias forces of children add to their parents without transforms.
#pragma once

#include "dynamics/rnea.hpp"

namespace dcol::dyn {

// Inverse of a small symmetric positive definite matrix (n ≤ 6, row-major) by Cholesky.
inline void invert_spd(const double* A, int n, double* out) {
  double L[6][6] = {};
  for (int j = 0; j < n; ++j) {
    double d = A[j * n + j];
    for (int k = 0; k < j; ++k) d -= L[j][k] * L[j][k];
    L[j][j] = std::sqrt(d);
    for (int i = j + 1; i < n; ++i) {
      double s = A[i * n + j];
      for (int k = 0; k < j; ++k) s -= L[i][k] * L[j][k];
      L[i][j] = s / L[j][j];
    }
  }
  for (int c = 0; c < n; ++c) {  // column c of A⁻¹: L y = e_c, Lᵀ x = y
    double y[6];
    for (int i = 0; i < n; ++i) {
      double s = i == c ? 1.0 : 0.0;
      for (int k = 0; k < i; ++k) s -= L[i][k] * y[k];
      y[i] = s / L[i][i];
    }
    for (int i = n - 1; i >= 0; --i) {
      double s = y[i];
      for (int k = i + 1; k < n; ++k) s -= L[k][i] * out[k * n + c];
      out[i * n + c] = s / L[i][i];
    }
  }
}

inline void aba(const Model& model, Data& data, const double* q, const double* v, const double* tau, double* qdd) {
  forward_kinematics(model, data, q);
  const int nb = model.nbodies();
  for (int i = 0; i < nb; ++i) {
    const int p = model.parent[i];
    const Vec6 joint_velocity = joint_motion(model, data, i, v);
    const Vec6 parent_velocity = p < 0 ? Vec6{} : data.velocity[p];
    data.velocity[i] = parent_velocity + joint_velocity;
    data.velocity_product[i] = cross_motion(parent_velocity, joint_velocity);
    data.world_inertia[i] = spatial_inertia(model.inertia[i], data.body_pose[i]);
    data.articulated[i] = matrix(data.world_inertia[i]);
    data.bias[i] = cross_force(data.velocity[i], data.world_inertia[i].apply(data.velocity[i]));
  }
  for (int i = nb - 1; i >= 0; --i) {
    const int n = model.nv_of(i), first = model.v_index[i];
    const Vec6* S = &data.S[first];
    Vec6* U = &data.U[first];
    double D[36];
    for (int k = 0; k < n; ++k) {
      U[k] = data.articulated[i].apply(S[k]);
      data.u[first + k] = tau[first + k] - dot(S[k], data.bias[i]);
      for (int j = 0; j < n; ++j) D[j * n + k] = dot(S[j], U[k]);
    }
    double* D_inverse = &data.D_inverse[36 * i];
    invert_spd(D, n, D_inverse);
    const int p = model.parent[i];
    if (p < 0) continue;
    // Iᵃ = Iᴬ − U D⁻¹ Uᵀ and pᵃ = pᴬ + Iᵃ c + U D⁻¹ u pass to the parent.
    Mat6 Ia = data.articulated[i];
    Vec6 U_D_inverse_u;
    for (int j = 0; j < n; ++j) {
      Vec6 UDj;  // column j of U D⁻¹
      for (int k = 0; k < n; ++k) UDj += D_inverse[k * n + j] * U[k];
      U_D_inverse_u += data.u[first + j] * UDj;
      const double col[6] = {U[j].lin.x, U[j].lin.y, U[j].lin.z, U[j].ang.x, U[j].ang.y, U[j].ang.z};
      const double row[6] = {UDj.lin.x, UDj.lin.y, UDj.lin.z, UDj.ang.x, UDj.ang.y, UDj.ang.z};
      for (int r = 0; r < 6; ++r)
        for (int c = 0; c < 6; ++c) Ia.m[r][c] -= row[r] * col[c];
    }
    data.articulated[p] += Ia;
    data.bias[p] += data.bias[i] + Ia.apply(data.velocity_product[i]) + U_D_inverse_u;
  }
  for (int i = 0; i < nb; ++i) {
    const int n = model.nv_of(i), first = model.v_index[i], p = model.parent[i];
    const Vec6 a = (p < 0 ? base_acceleration(model) : data.acceleration[p]) + data.velocity_product[i];
    const double* D_inverse = &data.D_inverse[36 * i];
    double rhs[6];
    for (int k = 0; k < n; ++k) rhs[k] = data.u[first + k] - dot(data.U[first + k], a);
    Vec6 joint_acceleration;
    for (int k = 0; k < n; ++k) {
      double s = 0.0;
      for (int j = 0; j < n; ++j) s += D_inverse[k * n + j] * rhs[j];
      qdd[first + k] = s;
      joint_acceleration += s * data.S[first + k];
    }
    data.acceleration[i] = a + joint_acceleration;
  }
}

}  // namespace dcol::dyn
