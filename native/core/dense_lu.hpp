// Dense LU factorization with partial pivoting, P A = L U, in place on a row-major n × n matrix with
// row stride `stride` (L unit lower triangular below the diagonal, U on and above it). pivot[k] is the
// row swapped with row k at step k, whole rows with their multipliers, as LAPACK's getrf records it.
#pragma once

#include <algorithm>
#include <cmath>

namespace dcol {

// False when a pivot's magnitude is at most min_pivot (0: exactly zero), the matrix then counting as
// singular.
inline bool lu_factor(int n, double* a, int stride, int* pivot, double min_pivot = 0.0) {
  for (int k = 0; k < n; ++k) {
    double* row_k = a + k * stride;
    int p = k;
    for (int i = k + 1; i < n; ++i)
      if (std::abs(a[i * stride + k]) > std::abs(a[p * stride + k])) p = i;
    pivot[k] = p;
    if (std::abs(a[p * stride + k]) <= min_pivot) return false;
    if (p != k) std::swap_ranges(row_k, row_k + n, a + p * stride);
    const double inv = 1.0 / row_k[k];
    // Rows are updated up to the pivot row's last nonzero only, so that a banded (or suitably
    // ordered sparse) matrix costs its band, not n³.
    int last = n - 1;
    while (last > k && row_k[last] == 0.0) --last;
    for (int i = k + 1; i < n; ++i) {
      double* row_i = a + i * stride;
      const double factor = (row_i[k] *= inv);
      if (factor == 0.0) continue;
      for (int j = k + 1; j <= last; ++j) row_i[j] -= factor * row_k[j];
    }
  }
  return true;
}

// A x = b, x overwriting b. Each entry is summed in a local (the same order as an update in place), so
// that the loops need not store x after every product for fear that a aliases it.
inline void lu_solve(int n, const double* a, int stride, const int* pivot, double* x) {
  for (int k = 0; k < n; ++k) std::swap(x[k], x[pivot[k]]);
  for (int i = 1; i < n; ++i) {
    double s = x[i];
    for (int k = 0; k < i; ++k) s -= a[i * stride + k] * x[k];
    x[i] = s;
  }
  for (int k = n - 1; k >= 0; --k) {
    double s = x[k];
    for (int j = k + 1; j < n; ++j) s -= a[k * stride + j] * x[j];
    x[k] = s / a[k * stride + k];
  }
}

// A X = B for cols right-hand sides at once, X (n × cols, row stride ldx) overwriting B: row operations
// over whole rows of X, which vectorize across the columns.
inline void lu_solve_many(int n, const double* a, int stride, const int* pivot, double* X, int cols, int ldx) {
  auto row = [&](int i) { return X + static_cast<size_t>(i) * ldx; };
  for (int k = 0; k < n; ++k)
    if (pivot[k] != k) std::swap_ranges(row(k), row(k) + cols, row(pivot[k]));
  for (int i = 1; i < n; ++i)
    for (int k = 0; k < i; ++k) {
      const double factor = a[i * stride + k];
      if (factor == 0.0) continue;
      const double* source = row(k);
      double* target = row(i);
      for (int c = 0; c < cols; ++c) target[c] -= factor * source[c];
    }
  for (int k = n - 1; k >= 0; --k) {
    double* target = row(k);
    for (int j = k + 1; j < n; ++j) {
      const double factor = a[k * stride + j];
      if (factor == 0.0) continue;
      const double* source = row(j);
      for (int c = 0; c < cols; ++c) target[c] -= factor * source[c];
    }
    const double pivot_value = a[k * stride + k];
    for (int c = 0; c < cols; ++c) target[c] /= pivot_value;
  }
}

// Aᵀ x = b, x overwriting b: Uᵀ Lᵀ (P x) = b.
inline void lu_solve_transposed(int n, const double* a, int stride, const int* pivot, double* x) {
  for (int i = 0; i < n; ++i) {
    double s = x[i];
    for (int k = 0; k < i; ++k) s -= a[k * stride + i] * x[k];
    x[i] = s / a[i * stride + i];
  }
  for (int i = n - 2; i >= 0; --i) {
    double s = x[i];
    for (int k = i + 1; k < n; ++k) s -= a[k * stride + i] * x[k];
    x[i] = s;
  }
  for (int k = n - 1; k >= 0; --k) std::swap(x[k], x[pivot[k]]);
}

}  // namespace dcol
