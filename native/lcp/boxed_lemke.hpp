// The boxed LCP of lcp.hpp solved by pivoting: written as a plain LCP over nonnegative variables, the
// form of Stewart & Trinkle (IJNME 39, 1996) for friction, which Lemke's method solves in a number of
// pivots instead of sweeps. Projected Gauss–Seidel converges on every positive semidefinite A, but on
// a Delassus matrix whose smallest nonzero eigenvalues are far below its largest (a light box under a
// heavy one, tilted contact patches) its iterate creeps for millions of sweeps, and the exact solves on
// its sets (active_set.hpp) need sets it has not yet found.
//
// Each entry is f_i = c_i + Σ σ x over its variables x ≥ 0: f = lo + x (lo finite), f = hi − x (only hi
// finite), f = x⁺ − x⁻ (free, or friction). A variable's complement is σ w_i, plus the multiplier λ ≥ 0
// of the entry's width when it is bounded on both sides, and λ ⊥ width − Σ x: width = hi − lo, or μ f_n
// for a friction entry (linear in its normal's variable, f_n = lo_n + x_n). At a solution f is within
// its bounds and each entry is at a bound or has w = 0: x⁺ > 0 makes w = −λ, x⁻ > 0 makes w = λ, and
// λ > 0 only where the variables fill the width.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "lcp/lcp.hpp"

namespace dcol::lcp {

struct BoxedLemkeWorkspace {
  std::vector<int> first_variable, multiplier;  // per entry: its first variable, its λ's index (−1: none)
  std::vector<int> entry_of;                    // per variable x: its entry
  std::vector<double> sign, offset;             // per variable x: σ; per entry: c
  std::vector<double> M, q, shifted_q, z, velocity;
  LcpWorkspace lemke;
};

// Lemke's method on a shifted M: A of contact is rank-deficient, and on the degenerate pivots that
// leaves, floating-point ties can end Lemke's path on a ray although a solution exists. M + ε I, with ε
// this share of A's largest diagonal entry, breaks those ties; the proximal rounds below take the shift
// back out. Where the path still ends on a ray (two contacts of one link whose rows agree to a few
// digits: the shift is then below the tableau's round-off), the solve starts again with the shift
// kLemkeShiftGrowth times larger, kLemkeShifts shifts in all: M + εI is strictly copositive for any
// ε > 0, so in exact arithmetic its path ends at a solution, and a larger ε keeps it above the round-off.
constexpr double kLemkeShift = 1e-9, kLemkeShiftGrowth = 1e3;
constexpr int kLemkeShifts = 3;
// Proximal rounds at most: each solves LCP(M + ε I, q − ε z_previous), whose fixed point is a solution
// of LCP(M, q), the error shrinking by a factor ε / (ε + eigenvalue) each round on the directions the
// solution fixes.
constexpr int kLemkeRounds = 8;
// Largest boxed LCP the fallback of solve_pgs_polished takes on: the form's dense tableau grows as the
// square of the entries and Lemke's pivots as their cube, so a larger problem keeps Gauss–Seidel's
// iterate and its iteration_limit status rather than a solve of minutes and gigabytes.
constexpr int kLemkeMaxEntries = 192;

// Solves the boxed LCP (A n × n symmetric positive semidefinite, bounds as LcpBounds) by Lemke's method
// on the form above, into f (n). Each round's f is first offered to finish(f), which may replace it by
// a solution (an exact solve on its sets: the proximal rounds' last digits come from there) and returns
// whether it did. solved when finish did or the natural residual (lcp.hpp; with tol's floor) is
// ≤ tol.relative; otherwise iteration_limit (rounds or pivots ran out) or unsolvable (Lemke's path ended on
// a ray at every shift), f then scratch; invalid_problem, f untouched, for a friction entry whose normal can be
// negative (lo_n < 0: its bound μ max(f_n, 0) is not linear) or is a friction entry itself.
// report.iterations counts the pivots, report.residual is f's natural residual.
template <class Finish>
inline LcpReport solve_boxed_lemke(int n, const double* A, const double* b, const LcpBounds& bounds, double* f,
                                   BoxedLemkeWorkspace& ws, Tolerance tol, Finish finish) {
  LcpReport report;
  constexpr double inf = std::numeric_limits<double>::infinity();
  auto friction_normal = [&](int i) { return bounds.friction_index != nullptr ? bounds.friction_index[i] : -1; };
  auto low = [&](int i) { return bounds.lo != nullptr ? bounds.lo[i] : 0.0; };
  auto high = [&](int i) { return bounds.hi != nullptr ? bounds.hi[i] : inf; };
  // The variables of each entry and the multipliers of the entries bounded on both sides.
  ws.first_variable.assign(n + 1, 0);
  ws.multiplier.assign(n, -1);
  ws.offset.assign(n, 0.0);
  ws.entry_of.clear();
  ws.sign.clear();
  int multipliers = 0;
  for (int i = 0; i < n; ++i) {
    ws.first_variable[i] = static_cast<int>(ws.entry_of.size());
    const int normal = friction_normal(i);
    if (normal >= 0 && (friction_normal(normal) >= 0 || !(low(normal) >= 0.0))) {
      report.status = LcpStatus::invalid_problem;
      return report;
    }
    const bool two_sided = normal >= 0 || (std::isfinite(low(i)) && std::isfinite(high(i)));
    if (normal >= 0 || (!std::isfinite(low(i)) && !std::isfinite(high(i)))) {
      ws.entry_of.insert(ws.entry_of.end(), {i, i});
      ws.sign.insert(ws.sign.end(), {1.0, -1.0});
    } else {
      ws.entry_of.push_back(i);
      ws.sign.push_back(std::isfinite(low(i)) ? 1.0 : -1.0);
      ws.offset[i] = std::isfinite(low(i)) ? low(i) : high(i);
    }
    if (two_sided) ws.multiplier[i] = multipliers++;
  }
  const int variables = static_cast<int>(ws.entry_of.size());
  ws.first_variable[n] = variables;
  const int N = variables + multipliers;
  // M z + q: rows of x, then rows of λ.
  ws.M.assign(static_cast<size_t>(N) * N, 0.0);
  ws.q.assign(N, 0.0);
  ws.velocity.resize(n);
  lcp_velocity(n, A, b, ws.offset.data(), ws.velocity.data());  // w at x = 0
  double largest_diagonal = 0.0;
  for (int k = 0; k < variables; ++k) {
    const int i = ws.entry_of[k];
    double* row = ws.M.data() + static_cast<size_t>(k) * N;
    for (int l = 0; l < variables; ++l)
      row[l] = ws.sign[k] * ws.sign[l] * A[static_cast<size_t>(i) * n + ws.entry_of[l]];
    if (ws.multiplier[i] >= 0) row[variables + ws.multiplier[i]] = 1.0;
    ws.q[k] = ws.sign[k] * ws.velocity[i];
    largest_diagonal = std::max(largest_diagonal, row[k]);
  }
  for (int i = 0; i < n; ++i) {
    if (ws.multiplier[i] < 0) continue;
    const int r = variables + ws.multiplier[i];
    double* row = ws.M.data() + static_cast<size_t>(r) * N;
    for (int k = ws.first_variable[i]; k < ws.first_variable[i + 1]; ++k) row[k] = -1.0;
    const int normal = friction_normal(i);
    if (normal >= 0) {
      row[ws.first_variable[normal]] += bounds.mu[i];  // the normal's one variable: f_n = lo_n + x_n
      ws.q[r] = bounds.mu[i] * low(normal);
    } else {
      ws.q[r] = high(i) - low(i);
    }
  }
  const double diagonal_scale = largest_diagonal > 0.0 ? largest_diagonal : 1.0;
  ws.lemke.reserve(N);
  ws.shifted_q.resize(N);
  const int max_pivots = 20 * N + 100;
  double applied = 0.0;  // the shift on M's diagonal
  double share = kLemkeShift;
  for (int attempt = 0; attempt < kLemkeShifts; ++attempt, share *= kLemkeShiftGrowth) {
    const double shift = share * diagonal_scale;
    for (int k = 0; k < N; ++k) ws.M[static_cast<size_t>(k) * N + k] += shift - applied;
    applied = shift;
    ws.z.assign(N, 0.0);
    bool on_ray = false;
    for (int round = 0; round < kLemkeRounds; ++round) {
      for (int k = 0; k < N; ++k) ws.shifted_q[k] = ws.q[k] - shift * ws.z[k];
      const LcpReport pivoting = solve_lemke(N, ws.M.data(), ws.shifted_q.data(), ws.z.data(), ws.lemke, max_pivots);
      report.iterations += pivoting.iterations;
      report.residual = inf;
      if (pivoting.status == LcpStatus::unsolvable) {
        report.status = LcpStatus::unsolvable;
        on_ray = true;
        break;
      }
      if (pivoting.status != LcpStatus::solved) {
        report.status = LcpStatus::iteration_limit;
        return report;
      }
      for (int i = 0; i < n; ++i) {
        f[i] = ws.offset[i];
        for (int k = ws.first_variable[i]; k < ws.first_variable[i + 1]; ++k) f[i] += ws.sign[k] * ws.z[k];
      }
      const bool finished = finish(f);
      lcp_velocity(n, A, b, f, ws.velocity.data());
      report.residual = natural_residual(n, A, b, f, ws.velocity.data(), bounds, tol.floor);
      report.status = finished || report.residual <= tol.relative ? LcpStatus::solved : LcpStatus::iteration_limit;
      if (report.status == LcpStatus::solved) return report;
    }
    if (!on_ray) return report;  // the rounds ran out
  }
  return report;  // on a ray at every shift
}

// solve_boxed_lemke on Lemke's f alone.
inline LcpReport solve_boxed_lemke(int n, const double* A, const double* b, const LcpBounds& bounds, double* f,
                                   BoxedLemkeWorkspace& ws, Tolerance tol) {
  return solve_boxed_lemke(n, A, b, bounds, f, ws, tol, [](const double*) { return false; });
}

}  // namespace dcol::lcp
