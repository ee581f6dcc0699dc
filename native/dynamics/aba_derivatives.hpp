// Derivatives of forward dynamics through those of inverse dynamics (Carpentier & Mansard 2018):
// from RNEA(q, q̇, ABA(q, q̇, τ)) = τ, ∂q̈/∂(q, q̇) = −M⁻¹ ∂τ/∂(q, q̇) and ∂q̈/∂τ = M⁻¹; and
// ∂(M⁻¹z)/∂q = −M⁻¹ (∂M/∂q) M⁻¹z (Nimble eq. 39), ∂M/∂q · y being RNEA's ∂τ/∂q at q̇ = 0, q̈ = y
// without gravity; ∂q̈/∂π = −M⁻¹ ∂τ/∂π for the inertial parameters π.
#pragma once

#include <algorithm>

#include "dynamics/aba.hpp"
#include "dynamics/crba.hpp"
#include "dynamics/regressor.hpp"
#include "dynamics/rnea_derivatives.hpp"

namespace dcol::dyn {

// Factorizes M (nv × nv row-major) into data.mass_matrix.
inline void factorize_mass_matrix(const Model& model, Data& data, const double* M) {
  std::copy(M, M + static_cast<size_t>(model.nv) * model.nv, data.mass_matrix.begin());
  factorize_mass_matrix(model, data);
}

// X ← −M⁻¹ X (nv × cols) with the factor in data.mass_matrix.
inline void negated_mass_matrix_solve(const Model& model, const Data& data, double* X, int cols) {
  solve_mass_matrix(model, data, X, cols);
  for (int r = 0; r < model.nv * cols; ++r) X[r] = -X[r];
}

inline void identity(int n, double* out) {
  for (int r = 0; r < n * n; ++r) out[r] = 0.0;
  for (int k = 0; k < n; ++k) out[k * n + k] = 1.0;
}

// Outputs nv × nv row-major; qdd (nv) receives q̈.
inline void aba_derivatives(const Model& model, Data& data, const double* q, const double* v, const double* tau,
                            double* qdd, double* dqdd_dq, double* dqdd_dv, double* dqdd_dtau) {
  aba(model, data, q, v, tau, qdd);
  rnea_derivatives(model, data, q, v, qdd, dqdd_dq, dqdd_dv, dqdd_dtau);
  factorize_mass_matrix(model, data, dqdd_dtau);
  negated_mass_matrix_solve(model, data, dqdd_dq, model.nv);
  negated_mass_matrix_solve(model, data, dqdd_dv, model.nv);
  identity(model.nv, dqdd_dtau);
  solve_mass_matrix(model, data, dqdd_dtau, model.nv);
}

// ∂(M⁻¹z)/∂q (nv × nv row-major); y (nv) receives M⁻¹z.
inline void minverse_derivative(const Model& model, Data& data, const double* q, const double* z, double* y,
                                double* out) {
  crba(model, data, q);
  factorize_mass_matrix(model, data);
  std::copy(z, z + model.nv, y);
  solve_mass_matrix(model, data, y);
  mass_product_derivative(model, data, y, out);
  negated_mass_matrix_solve(model, data, out, model.nv);
}

// ∂q̈/∂π (nv × 10 nbodies row-major) for the inertial parameters of regressor.hpp; qdd receives q̈.
inline void aba_parameter_derivatives(const Model& model, Data& data, const double* q, const double* v,
                                      const double* tau, double* qdd, double* out) {
  aba(model, data, q, v, tau, qdd);
  joint_torque_regressor(model, data, q, v, qdd, out);
  crba(model, data, q);
  factorize_mass_matrix(model, data);
  negated_mass_matrix_solve(model, data, out, 10 * model.nbodies());
}

}  // namespace dcol::dyn
