// The Cholesky factorization of a symmetric positive definite matrix and its solves.
#pragma once

#include <cmath>
#include <vector>

namespace dcol {

// Lower Cholesky factor L of G + ρI (n × n row-major; only G's lower triangle is read) into L; false
// when a pivot is not above min_pivot (G + ρI not positive definite, or not by that margin).
inline bool cholesky(int n, const double* G, double rho, std::vector<double>& L, double min_pivot = 0.0) {
  L.assign(static_cast<size_t>(n) * n, 0.0);
  for (int j = 0; j < n; ++j) {
    double d = G[j * n + j] + rho;
    for (int k = 0; k < j; ++k) d -= L[j * n + k] * L[j * n + k];
    if (!(d > min_pivot)) return false;
    L[j * n + j] = std::sqrt(d);
    for (int i = j + 1; i < n; ++i) {
      double s = G[i * n + j];
      for (int k = 0; k < j; ++k) s -= L[i * n + k] * L[j * n + k];
      L[i * n + j] = s / L[j * n + j];
    }
  }
  return true;
}

// x (n) ← (L Lᵀ)⁻¹ x for the factor L of cholesky.
inline void cholesky_solve(int n, const std::vector<double>& L, double* x) {
  for (int i = 0; i < n; ++i) {
    double s = x[i];
    for (int k = 0; k < i; ++k) s -= L[i * n + k] * x[k];
    x[i] = s / L[i * n + i];
  }
  for (int i = n - 1; i >= 0; --i) {
    double s = x[i];
    for (int k = i + 1; k < n; ++k) s -= L[k * n + i] * x[k];
    x[i] = s / L[i * n + i];
  }
}

}  // namespace dcol
