// Linear complementarity problems: find f with w = A f + b, f ≥ 0, w ≥ 0, fᵀw = 0 — and the boxed
// variant lo ≤ f ≤ hi with w ≥ 0 where f = lo, w ≤ 0 where f = hi, w = 0 in between, whose bounds
// may scale with another entry of f (Coulomb friction, Nimble App. A; ODE's "findex").
//
// Two solvers: Lemke's complementary pivoting (exact, for the plain LCP; processes P-matrices and
// positive semidefinite A whenever a solution exists) and projected Gauss–Seidel (iterative, boxed,
// warm-startable). Both work in caller-sized buffers (LcpWorkspace), allocated once per size.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/magnitudes.hpp"

namespace dcol::lcp {

// numerical_error: the returned solution holds a number that is not finite, whatever the iterations
// reported (solvers/lcp.py's NUMERICAL_ERROR; the simulation's step tells it by its solution).
enum class LcpStatus { solved, unsolvable, iteration_limit, invalid_problem, numerical_error };

// A solve's tolerance: relative to the problem's own scale, so that a problem and the same problem
// in other units have the same solutions; or, with a positive floor, in the caller's units, the
// scales of f and w taken no smaller than the floor (the simulation's, in SI units: 1 N s, 1 m/s).
struct Tolerance {
  double relative;
  double floor = 0.0;
  Tolerance(double relative_tolerance, double scale_floor = 0.0)  // NOLINT: a plain double is relative
      : relative(relative_tolerance), floor(scale_floor) {}
};

struct LcpReport {
  LcpStatus status = LcpStatus::solved;
  int iterations = 0;
  double residual = 0.0;  // natural_residual below, zero exactly at a solution
};

struct LcpWorkspace {
  std::vector<double> tableau;  // Lemke: n × (2n + 2)
  std::vector<int> basis;       // Lemke: row → basic variable
  std::vector<double> w;        // n
  void reserve(int n) {
    tableau.resize(static_cast<size_t>(n) * (2 * n + 2));
    basis.resize(n);
    w.resize(n);
  }
};

// w = A f + b (A row-major n × n).
inline void lcp_velocity(int n, const double* A, const double* b, const double* f, double* w) {
  for (int i = 0; i < n; ++i) {
    double s = b[i];
    for (int j = 0; j < n; ++j) s += A[i * n + j] * f[j];
    w[i] = s;
  }
}

// Bounds of entry i: fixed lo/hi, or ±mu_i f[friction_index_i] when friction_index_i ≥ 0.
struct LcpBounds {
  const double* lo = nullptr;  // null: the plain LCP (lo = 0, hi = +inf)
  const double* hi = nullptr;
  const int* friction_index = nullptr;  // null: no scaled bounds
  const double* mu = nullptr;

  void at(int i, const double* f, double& low, double& high) const {
    if (lo == nullptr) {
      low = 0.0, high = std::numeric_limits<double>::infinity();
    } else if (friction_index != nullptr && friction_index[i] >= 0) {
      high = mu[i] * std::max(f[friction_index[i]], 0.0);
      low = -high;
    } else {
      low = lo[i], high = hi[i];
    }
  }
};

// The natural residual. Without a floor, max_i |f_i − clamp(f_i − w_i / d_i, lo_i, hi_i)|, d_i = A_ii
// (the size of a Gauss–Seidel update, an impulse; |A|∞ for a diagonal entry that is not positive),
// relative to the impulses' scale max(|f|∞, max_i |b_i| / d_i): the same for a problem and for the
// same problem in other units. With a floor (the simulation's SI units), max_i |f_i − clamp(f_i − w_i,
// lo_i, hi_i)| as it is, the rule the simulation's contact solves were tuned with. Zero exactly at a
// solution either way.
// natural_residual of a matrix given by its diagonal entries, diagonal(i), and its largest magnitude,
// largest() (asked for only when a diagonal entry is not positive): for a matrix that is not formed.
template <class Diagonal, class Largest>
inline double natural_residual_of(int n, Diagonal diagonal, Largest largest, const double* b, const double* f,
                                  const double* w, const LcpBounds& bounds, double floor = 0.0) {
  double A_max = -1.0;  // computed only for a diagonal entry that is not positive
  auto fallback_diagonal = [&] {
    if (A_max < 0.0) A_max = largest();
    return A_max > 0.0 ? A_max : 1.0;
  };
  double worst = 0.0, f_scale = 0.0;
  for (int i = 0; i < n; ++i) {
    const double A_ii = floor > 0.0 ? 1.0 : diagonal(i);
    const double scale = floor > 0.0 ? 1.0 : A_ii > 0.0 ? A_ii : fallback_diagonal();
    double low, high;
    bounds.at(i, f, low, high);
    worst = std::max(worst, std::abs(f[i] - std::clamp(f[i] - w[i] / scale, low, high)));
    f_scale = std::max({f_scale, std::abs(f[i]), std::abs(b[i]) / scale});
  }
  if (floor > 0.0 || worst == 0.0) return worst;
  return f_scale > 0.0 ? worst / f_scale : std::numeric_limits<double>::infinity();
}

inline double natural_residual(int n, const double* A, const double* b, const double* f, const double* w,
                               const LcpBounds& bounds, double floor = 0.0) {
  return natural_residual_of(
      n, [&](int i) { return A[static_cast<size_t>(i) * n + i]; },
      [&] { return largest_magnitude(static_cast<size_t>(n) * n, A); }, b, f, w, bounds, floor);
}

// Projected Gauss–Seidel: f_i ← clamp(f_i − w_i / A_ii, lo_i, hi_i) sweep after sweep, from the
// warm start in f, until the natural residual is ≤ tol. Converges for symmetric positive
// semidefinite A with a positive diagonal (the Delassus matrices of contact).
inline LcpReport solve_pgs(int n, const double* A, const double* b, const LcpBounds& bounds, double* f,
                           LcpWorkspace& work, int max_iterations, Tolerance tol) {
  LcpReport report;
  for (int i = 0; i < n; ++i)
    if (!(A[i * n + i] > 0.0)) {
      report.status = LcpStatus::invalid_problem;  // Gauss–Seidel divides by the diagonal
      return report;
    }
  double* w = work.w.data();
  for (int sweep = 0; sweep < max_iterations; ++sweep) {
    for (int i = 0; i < n; ++i) {
      double wi = b[i];
      for (int j = 0; j < n; ++j) wi += A[i * n + j] * f[j];
      double low, high;
      bounds.at(i, f, low, high);
      f[i] = std::clamp(f[i] - wi / A[i * n + i], low, high);
    }
    report.iterations = sweep + 1;
    lcp_velocity(n, A, b, f, w);
    report.residual = natural_residual(n, A, b, f, w, bounds, tol.floor);
    if (report.residual <= tol.relative) return report;
  }
  report.status = LcpStatus::iteration_limit;
  return report;
}

// Lemke's method with the covering vector 1 (Cottle, Pang & Stone, "The Linear Complementarity
// Problem", §4.4) on the tableau of w − A f − z0·1 = b, with the lexicographic ratio test against
// cycling. Returns f in `f`; unsolvable on ray termination.
inline LcpReport solve_lemke(int n, const double* A, const double* b, double* f, LcpWorkspace& work, int max_pivots) {
  LcpReport report;
  std::fill(f, f + n, 0.0);
  const int r = static_cast<int>(std::min_element(b, b + n) - b);
  if (n == 0 || b[r] >= 0.0) return report;  // f = 0 solves it

  const int cols = 2 * n + 2, z0 = 2 * n, rhs = 2 * n + 1;
  double* T = work.tableau.data();
  int* basis = work.basis.data();
  // The tableau holds A / s and b / s, s = |A|∞, which has the same f: its columns then share one
  // scale whatever the data's units, and the pivot tolerance below is relative.
  double scale = 0.0;
  for (int i = 0; i < n * n; ++i) scale = std::max(scale, std::abs(A[i]));
  const double inverse_scale = scale > 0.0 ? 1.0 / scale : 1.0;
  for (int i = 0; i < n; ++i) {
    double* row = T + static_cast<size_t>(i) * cols;
    std::fill(row, row + cols, 0.0);
    row[i] = 1.0;
    for (int j = 0; j < n; ++j) row[n + j] = -A[i * n + j] * inverse_scale;
    row[z0] = -1.0;
    row[rhs] = b[i] * inverse_scale;
    basis[i] = i;
  }
  auto pivot = [&](int row, int col) {
    double* p = T + static_cast<size_t>(row) * cols;
    const double inv = 1.0 / p[col];
    for (int j = 0; j < cols; ++j) p[j] *= inv;
    p[col] = 1.0;
    for (int i = 0; i < n; ++i) {
      if (i == row) continue;
      double* q = T + static_cast<size_t>(i) * cols;
      const double factor = q[col];
      if (factor == 0.0) continue;
      for (int j = 0; j < cols; ++j) q[j] -= factor * p[j];
      q[col] = 0.0;
    }
    const int leaving = basis[row];
    basis[row] = col;
    return leaving;
  };

  int leaving = pivot(r, z0);
  constexpr double pivot_tol = 1e-12;
  for (report.iterations = 1; report.iterations <= max_pivots; ++report.iterations) {
    const int entering = leaving < n ? leaving + n : leaving - n;  // the complement of what left
    int row = -1;
    for (int i = 0; i < n; ++i) {
      const double* q = T + static_cast<size_t>(i) * cols;
      if (q[entering] <= pivot_tol) continue;
      if (row < 0) {
        row = i;
        continue;
      }
      // Smaller ratio rhs/column wins; ties go to z0 (ending the path), then lexicographically
      // smaller rows of B⁻¹ (the w columns) divided by the column entry.
      const double* best = T + static_cast<size_t>(row) * cols;
      const double a = q[rhs] * best[entering], c = best[rhs] * q[entering];
      const double tie = 1e-12 * (std::abs(a) + std::abs(c)) + 1e-300;
      if (a < c - tie) {
        row = i;
      } else if (a <= c + tie) {
        if (basis[row] == z0) continue;
        if (basis[i] == z0) {
          row = i;
          continue;
        }
        for (int k = 0; k < n; ++k) {
          const double x = q[k] * best[entering], y = best[k] * q[entering];
          if (x != y) {
            if (x < y) row = i;
            break;
          }
        }
      }
    }
    if (row < 0) {
      report.status = LcpStatus::unsolvable;  // ray termination
      return report;
    }
    leaving = pivot(row, entering);
    if (leaving == z0) break;
  }
  if (report.iterations > max_pivots) {
    report.status = LcpStatus::iteration_limit;
    return report;
  }
  for (int i = 0; i < n; ++i)
    if (basis[i] >= n && basis[i] < 2 * n) f[basis[i] - n] = std::max(0.0, T[static_cast<size_t>(i) * cols + rhs]);
  lcp_velocity(n, A, b, f, work.w.data());
  report.residual = natural_residual(n, A, b, f, work.w.data(), LcpBounds{});
  return report;
}

}  // namespace dcol::lcp
