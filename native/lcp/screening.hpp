// Boxed LCPs of contact solved on the contacts that can push (Nimble App. B's sets, found on a
// subproblem): a speculative contact whose gap stays open (w_n > 0 at f_n = 0) takes no impulse and its
// friction rows are pinned at zero by their bounds ±μ·0, so the problem restricted to the other rows
// has the same solution as the whole one as long as every left-out normal row keeps w ≥ 0. Starting
// from the rows the free motion violates (b < 0) or that pushed in the warm start, the solve adds the
// left-out contacts whose w turns negative and solves again until none does: an exact solution of the
// whole problem at the cost of the few rows in touch, where a fallen robot has ten apart for each one
// that pushes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/dot.hpp"
#include "lcp/active_set.hpp"
#include "lcp/lcp.hpp"

namespace dcol::lcp {

struct ScreeningWorkspace {
  std::vector<uint8_t> active;
  std::vector<int> rows, local;
  std::vector<double> A, b, lo, hi, mu, f, w, response;
  std::vector<int> friction_index;
  std::vector<EntrySet> sets;
  LcpWorkspace lcp;
  ActiveSetWorkspace active_set;
};

namespace detail {

// Whether entry i may be left out at f_i = 0: a normal (no friction index) whose lower bound is 0.
inline bool can_leave_out(const LcpBounds& bounds, int i) {
  if (bounds.friction_index != nullptr && bounds.friction_index[i] >= 0) return false;
  return bounds.lo == nullptr || bounds.lo[i] == 0.0;
}

// Whether entry i is in the subproblem: its own flag, or its normal's for a friction entry.
inline bool in_subproblem(const LcpBounds& bounds, const uint8_t* active, int i) {
  const int normal = bounds.friction_index != nullptr ? bounds.friction_index[i] : -1;
  return active[normal >= 0 ? normal : i] != 0;
}

}  // namespace detail

// The symmetric matrix A of solve_screened: formed (n × n, row-major) ...
struct DenseMatrix {
  int n;
  const double* A;
  double entry(int i, int j) const { return A[static_cast<size_t>(i) * n + j]; }
  MatrixScale scale() const { return matrix_scale(n, A); }
  // w_i = b_i + Σ_p A_{i, rows_p} f_p for every i.
  void velocities(const double* b, const std::vector<int>& rows, const double* f, double* w,
                  std::vector<double>&) const {
    for (int i = 0; i < n; ++i) {
      const double* row = A + static_cast<size_t>(i) * n;
      double s = b[i];
      for (size_t p = 0; p < rows.size(); ++p) s += row[rows[p]] * f[p];
      w[i] = s;
    }
  }
  double residual(const double* b, const double* f, const double* w, const LcpBounds& bounds, double floor) const {
    return natural_residual(n, A, b, f, w, bounds, floor);
  }
};

// ... or as the Gram matrix A = Z Zᵀ of Z's rows (n × d, row-major; a Delassus matrix whitened by the
// mass matrix's factor), whose entries solve_screened then forms among its subproblem's rows only, and
// w through Zᵀ f: the cost of the rows in touch times d, where forming A costs every row's pairs.
struct GramMatrix {
  int n, d;
  const double* Z;
  const double* row(int i) const { return Z + static_cast<size_t>(i) * d; }
  double entry(int i, int j) const { return dot(row(i), row(j), d); }
  MatrixScale scale() const { return gram_scale(n, d, Z); }
  void velocities(const double* b, const std::vector<int>& rows, const double* f, double* w,
                  std::vector<double>& response) const {
    gram_velocities(n, d, Z, b, static_cast<int>(rows.size()), rows.data(), f, w, response);
  }
  double residual(const double* b, const double* f, const double* w, const LcpBounds& bounds, double floor) const {
    // By Cauchy–Schwarz the largest entry of a Gram matrix is on its diagonal.
    return natural_residual_of(
        n, [&](int i) { return entry(i, i); }, [&] { return scale().largest; }, b, f, w, bounds, floor);
  }
};

// Projected Gauss–Seidel with exact solves on its sets (solve_pgs_polished) on the subproblem of the
// rows that can push, grown until the left-out rows are consistent (file comment), for a symmetric A
// (DenseMatrix or GramMatrix). f holds the warm start on entry (zero where none) and the solution on
// return; w = A f + b and the sets of the whole problem. The report's iterations add up the
// subproblems' sweeps.
template <class Matrix>
inline LcpReport solve_screened(const Matrix& A, const double* b, const LcpBounds& bounds, double* f, double* w,
                                EntrySet* sets, ScreeningWorkspace& ws, int max_iterations, Tolerance tol) {
  const int n = A.n;
  ws.active.assign(n, 0);
  for (int i = 0; i < n; ++i)
    if (!detail::can_leave_out(bounds, i) || b[i] < 0.0 || f[i] != 0.0) ws.active[i] = 1;
  const MatrixScale scale = A.scale();
  LcpReport report;
  int sweeps = 0;
  for (;;) {
    // The subproblem's rows, each entry's place in it, and its bounds with friction indices remapped.
    ws.rows.clear();
    ws.local.assign(n, -1);
    for (int i = 0; i < n; ++i)
      if (detail::in_subproblem(bounds, ws.active.data(), i)) {
        ws.local[i] = static_cast<int>(ws.rows.size());
        ws.rows.push_back(i);
      }
    const int m = static_cast<int>(ws.rows.size());
    ws.A.resize(static_cast<size_t>(m) * m);
    ws.b.resize(m), ws.lo.resize(m), ws.hi.resize(m), ws.mu.resize(m), ws.f.resize(m), ws.w.resize(m);
    ws.friction_index.resize(m);
    ws.sets.resize(m);
    for (int p = 0; p < m; ++p) {
      const int i = ws.rows[p];
      for (int q = p; q < m; ++q)
        ws.A[static_cast<size_t>(p) * m + q] = ws.A[static_cast<size_t>(q) * m + p] = A.entry(i, ws.rows[q]);
      ws.b[p] = b[i];
      ws.f[p] = f[i];
      ws.lo[p] = bounds.lo != nullptr ? bounds.lo[i] : 0.0;
      ws.hi[p] = bounds.hi != nullptr ? bounds.hi[i] : std::numeric_limits<double>::infinity();
      ws.mu[p] = bounds.mu != nullptr ? bounds.mu[i] : 0.0;
      const int normal = bounds.friction_index != nullptr ? bounds.friction_index[i] : -1;
      ws.friction_index[p] = normal >= 0 ? ws.local[normal] : -1;
    }
    if (m > 0) {
      const LcpBounds sub{ws.lo.data(), ws.hi.data(), ws.friction_index.data(), ws.mu.data()};
      ws.lcp.reserve(m);
      // A subproblem that grew after the sweeps ran out still gets its exact solve (solve_pgs_polished
      // pivots when its budget is spent), and the growth ends: it only adds rows.
      report = solve_pgs_polished(m, ws.A.data(), ws.b.data(), sub, ws.f.data(), ws.w.data(), ws.sets.data(), ws.lcp,
                                  ws.active_set, std::max(0, max_iterations - sweeps), tol);
      sweeps += report.iterations;
    }
    std::fill(f, f + n, 0.0);
    for (int p = 0; p < m; ++p) f[ws.rows[p]] = ws.f[p];
    // w of every entry from the subproblem's impulses (the others are zero).
    A.velocities(b, ws.rows, ws.f.data(), w, ws.response);
    if (report.status == LcpStatus::invalid_problem) return report;
    const double w_tolerance = tolerances(n, scale, b, f, tol).w;
    bool grew = false;
    for (int i = 0; i < n; ++i)
      if (!ws.active[i] && w[i] < -w_tolerance) ws.active[i] = 1, grew = true;
    if (!grew) break;
  }
  classify(n, scale, b, f, w, bounds, tol, sets);
  report.iterations = sweeps;
  report.residual = A.residual(b, f, w, bounds, tol.floor);
  return report;
}

}  // namespace dcol::lcp
