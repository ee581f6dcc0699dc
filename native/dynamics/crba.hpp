// Composite rigid-body algorithm for the joint-space inertia matrix (Featherstone §6.2), in world axes:
// M_jk = S_jᵀ Iᶜ_i S_k for k in body i's joint and j on the path from i to the root, Iᶜ_i the
// composite inertia of the subtree of i. Then the tree-sparse factorization M = LᵀDL (Featherstone §6.5),
// whose fill-in stays on the dof → parent-dof paths, and solves and M⁻¹ from it.
#pragma once

#include "dynamics/kinematics.hpp"

namespace dcol::dyn {

// Composite inertias of every subtree after forward_kinematics (needs data.world_inertia).
inline void composite_inertias(const Model& model, Data& data) {
  for (int i = 0; i < model.nbodies(); ++i) data.composite[i] = data.world_inertia[i];
  for (int i = model.nbodies() - 1; i >= 0; --i)
    if (model.parent[i] >= 0) data.composite[model.parent[i]] += data.composite[i];
}

// M into data.mass_matrix (full, symmetric) after forward_kinematics.
inline void crba(const Model& model, Data& data, const double* q) {
  forward_kinematics(model, data, q);
  for (int i = 0; i < model.nbodies(); ++i)
    data.world_inertia[i] = spatial_inertia(model.inertia[i], data.body_pose[i]);
  composite_inertias(model, data);
  const int nv = model.nv;
  double* M = data.mass_matrix.data();
  for (int k = nv - 1; k >= 0; --k) {
    const Vec6 F = data.composite[model.dof_body[k]].apply(data.S[k]);
    for (int j = k; j >= 0; j = model.dof_parent[j]) M[j * nv + k] = M[k * nv + j] = dot(data.S[j], F);
  }
}

// Factorizes data.mass_matrix in place into M = LᵀDL: D on the diagonal, L's entries below it on the
// dof → parent-dof paths (unit diagonal implied). Entries off those paths are left unused.
inline void factorize_mass_matrix(const Model& model, Data& data) {
  const int nv = model.nv;
  double* H = data.mass_matrix.data();
  for (int k = nv - 1; k >= 0; --k)
    for (int i = model.dof_parent[k]; i >= 0; i = model.dof_parent[i]) {
      const double a = H[k * nv + i] / H[k * nv + k];
      for (int j = i; j >= 0; j = model.dof_parent[j]) H[i * nv + j] -= a * H[k * nv + j];
      H[k * nv + i] = a;
    }
}

// X ← M⁻¹ X for X (nv × cols, row-major) with the factor from factorize_mass_matrix: Lᵀ, D and L
// solves, each touching only the dof → parent-dof paths.
inline void solve_mass_matrix(const Model& model, const Data& data, double* X, int cols = 1) {
  const int nv = model.nv;
  const double* H = data.mass_matrix.data();
  auto subtract_row = [&](int target, double factor, int source) {
    for (int c = 0; c < cols; ++c) X[target * cols + c] -= factor * X[source * cols + c];
  };
  for (int k = nv - 1; k >= 0; --k)
    for (int i = model.dof_parent[k]; i >= 0; i = model.dof_parent[i]) subtract_row(i, H[k * nv + i], k);
  for (int k = 0; k < nv; ++k)
    for (int c = 0; c < cols; ++c) X[k * cols + c] /= H[k * nv + k];
  for (int k = 0; k < nv; ++k)
    for (int i = model.dof_parent[k]; i >= 0; i = model.dof_parent[i]) subtract_row(k, H[k * nv + i], i);
}

// The two halves of M⁻¹ = (L⁻¹ D^{-1/2}) (D^{-1/2} L⁻ᵀ) for the factor M = Lᵀ D L, on the dofs
// dofs[0..count) only (ascending; whole trees, so closed under dof_parent; local[dof] their
// positions), X (count × cols): whiten_on applies D^{-1/2} L⁻ᵀ, unwhiten_on L⁻¹ D^{-1/2}. For contact
// rows J, Z = whiten(Jᵀ) gives the Delassus matrix J M⁻¹ Jᵀ = Zᵀ Z, symmetric by construction, and
// unwhiten(Z) = M⁻¹ Jᵀ.
inline void whiten_on(const Model& model, const Data& data, const int* dofs, int count, const int* local, double* X,
                      int cols) {
  const int nv = model.nv;
  const double* H = data.mass_matrix.data();
  for (int t = count - 1; t >= 0; --t) {
    const int k = dofs[t];
    for (int i = model.dof_parent[k]; i >= 0; i = model.dof_parent[i])
      for (int c = 0; c < cols; ++c) X[local[i] * cols + c] -= H[k * nv + i] * X[t * cols + c];
  }
  for (int t = 0; t < count; ++t) {
    const double scale = 1.0 / std::sqrt(H[dofs[t] * nv + dofs[t]]);
    for (int c = 0; c < cols; ++c) X[t * cols + c] *= scale;
  }
}

inline void unwhiten_on(const Model& model, const Data& data, const int* dofs, int count, const int* local, double* X,
                        int cols) {
  const int nv = model.nv;
  const double* H = data.mass_matrix.data();
  for (int t = 0; t < count; ++t) {
    const double scale = 1.0 / std::sqrt(H[dofs[t] * nv + dofs[t]]);
    for (int c = 0; c < cols; ++c) X[t * cols + c] *= scale;
  }
  for (int t = 0; t < count; ++t) {
    const int k = dofs[t];
    for (int i = model.dof_parent[k]; i >= 0; i = model.dof_parent[i])
      for (int c = 0; c < cols; ++c) X[t * cols + c] -= H[k * nv + i] * X[local[i] * cols + c];
  }
}

// M⁻¹ (nv × nv row-major) into out.
inline void minverse(const Model& model, Data& data, const double* q, double* out) {
  crba(model, data, q);
  factorize_mass_matrix(model, data);
  const int nv = model.nv;
  for (int r = 0; r < nv * nv; ++r) out[r] = 0.0;
  for (int k = 0; k < nv; ++k) out[k * nv + k] = 1.0;
  solve_mass_matrix(model, data, out, nv);
}

}  // namespace dcol::dyn
