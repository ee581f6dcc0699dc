// Mixed LCP by a primal-dual interior-point method (Mattingley & Boyd, "CVXGEN", 2012, as
// LCP-physics App. B.1 uses it, LCP-physics eqs. 24–27):
//   M x + Aᵀ y + Gᵀ z + q = 0,   A x = 0,   G x + F z + s = h,   s ≥ 0, z ≥ 0, sᵀz = 0.
// Each iteration eliminates Δs from the Newton system (LCP-physics eq. 25) and solves the reduced
// system
//   [M  Gᵀ  Aᵀ; G  F − Z⁻¹S  0; A  0  0] [Δx; Δz; Δy] = rhs
// by one dense LU factorization, used for the affine and the centering-corrector directions
// (LCP-physics eq. 26).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/dense_lu.hpp"
#include "lcp/lcp.hpp"

namespace dcol::lcp {

struct MlcpProblem {
  int n = 0, p = 0, m = 0;                  // sizes of x, y (equalities), z and s (complementarity)
  const double *M = nullptr, *q = nullptr;  // n × n, n
  const double* A = nullptr;                // p × n
  const double *G = nullptr, *F = nullptr;  // m × n, m × m
  const double* h = nullptr;                // m
};

struct MlcpSettings {
  double tol = 1e-10;  // residuals relative to the data's scale, and the mean complementarity sᵀz/m
  int max_iterations = 100;
};

struct MlcpSolver {
  std::vector<double> K, rhs, rx, ry, rz, dx, dy, dz, ds, target;
  std::vector<int> pivot;
  std::vector<double> scaled_M, scaled_q, scaled_A, scaled_G, scaled_F, scaled_h;

  // x (n), y (p), z (m), s (m) receive the solution. Small data are brought to order one: the
  // matrices divided by their largest entry σ and the vectors q, h by theirs, ν, where these are below
  // one, which multiplies x, y, z by σ / ν and s by 1 / ν. The tolerances are then relative for small
  // data (whose products would also underflow), and stay absolute, the stricter test, for large ones
  // (degenerate pairs of s and z are accurate only to about the square root of the gap).
  LcpReport solve(const MlcpProblem& P, const MlcpSettings& settings, double* x, double* y, double* z, double* s) {
    const int n = P.n, p = P.p, m = P.m;
    double sigma = std::max(
        {largest_magnitude(static_cast<size_t>(n) * n, P.M), largest_magnitude(static_cast<size_t>(p) * n, P.A),
         largest_magnitude(static_cast<size_t>(m) * n, P.G), largest_magnitude(static_cast<size_t>(m) * m, P.F)});
    double nu = std::max(largest_magnitude(n, P.q), largest_magnitude(m, P.h));
    if (!(sigma > 0.0 && sigma < 1.0)) sigma = 1.0;
    if (!(nu > 0.0 && nu < 1.0)) nu = 1.0;
    if (sigma == 1.0 && nu == 1.0) return interior_point(P, settings, x, y, z, s);
    auto divided = [](const double* values, size_t count, double by, std::vector<double>& out) {
      out.resize(count);
      for (size_t i = 0; i < count; ++i) out[i] = values[i] / by;
      return out.data();
    };
    MlcpProblem normalized = P;
    normalized.M = divided(P.M, static_cast<size_t>(n) * n, sigma, scaled_M);
    normalized.A = divided(P.A, static_cast<size_t>(p) * n, sigma, scaled_A);
    normalized.G = divided(P.G, static_cast<size_t>(m) * n, sigma, scaled_G);
    normalized.F = divided(P.F, static_cast<size_t>(m) * m, sigma, scaled_F);
    normalized.q = divided(P.q, n, nu, scaled_q);
    normalized.h = divided(P.h, m, nu, scaled_h);
    const LcpReport report = interior_point(normalized, settings, x, y, z, s);
    const double unknowns = nu / sigma;
    for (int i = 0; i < n; ++i) x[i] *= unknowns;
    for (int k = 0; k < p; ++k) y[k] *= unknowns;
    for (int k = 0; k < m; ++k) z[k] *= unknowns, s[k] *= nu;
    return report;
  }

 private:
  LcpReport interior_point(const MlcpProblem& P, const MlcpSettings& settings, double* x, double* y, double* z,
                           double* s) {
    const int n = P.n, p = P.p, m = P.m, N = n + m + p;
    K.resize(static_cast<size_t>(N) * N);
    rhs.resize(N), pivot.resize(N);
    rx.resize(n), ry.resize(p), rz.resize(m), dx.resize(n), dy.resize(p), dz.resize(m), ds.resize(m);
    target.resize(m);
    double scale = 1.0;
    for (int i = 0; i < n; ++i) scale = std::max(scale, std::abs(P.q[i]));
    for (int i = 0; i < m; ++i) scale = std::max(scale, std::abs(P.h[i]));
    // Reduced Newton matrix [M Gᵀ Aᵀ; G F − Z⁻¹S 0; A 0 0] at the current s, z, factorized.
    auto factorize = [&]() {
      std::fill(K.begin(), K.end(), 0.0);
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) K[i * N + j] = P.M[i * n + j];
        for (int k = 0; k < m; ++k) K[i * N + n + k] = P.G[k * n + i];
        for (int k = 0; k < p; ++k) K[i * N + n + m + k] = P.A[k * n + i];
      }
      for (int k = 0; k < m; ++k) {
        for (int j = 0; j < n; ++j) K[(n + k) * N + j] = P.G[k * n + j];
        for (int j = 0; j < m; ++j) K[(n + k) * N + n + j] = P.F[k * m + j];
        K[(n + k) * N + n + k] -= s[k] / z[k];
      }
      for (int k = 0; k < p; ++k)
        for (int j = 0; j < n; ++j) K[(n + m + k) * N + j] = P.A[k * n + j];
      return lu_factor(N, K.data(), N, pivot.data());
    };

    LcpReport report;
    std::fill(x, x + n, 0.0);  // what a problem whose first factorization fails returns
    std::fill(y, y + p, 0.0);
    // Start (CVXOPT's coneqp): with S = Z = I, solve for x, z, y with s = −z, then shift s and z
    // into the positive orthant.
    std::fill(z, z + m, 1.0);
    std::fill(s, s + m, 1.0);
    if (!factorize()) {
      report.status = LcpStatus::invalid_problem;
      return report;
    }
    for (int i = 0; i < n; ++i) rhs[i] = -P.q[i];
    for (int k = 0; k < m; ++k) rhs[n + k] = P.h[k];
    for (int k = 0; k < p; ++k) rhs[n + m + k] = 0.0;
    lu_solve(N, K.data(), N, pivot.data(), rhs.data());
    std::copy(rhs.begin(), rhs.begin() + n, x);
    std::copy(rhs.begin() + n + m, rhs.end(), y);
    double lowest_s = 0.0, lowest_z = 0.0;
    for (int k = 0; k < m; ++k) {
      z[k] = rhs[n + k], s[k] = -rhs[n + k];
      lowest_s = std::min(lowest_s, s[k]), lowest_z = std::min(lowest_z, z[k]);
    }
    for (int k = 0; k < m; ++k) s[k] += 1.0 - lowest_s, z[k] += 1.0 - lowest_z;

    for (report.iterations = 0; report.iterations < settings.max_iterations; ++report.iterations) {
      // Residuals of LCP-physics eq. 24.
      double worst = 0.0, gap = 0.0;
      for (int i = 0; i < n; ++i) {
        double r = P.q[i];
        for (int j = 0; j < n; ++j) r += P.M[i * n + j] * x[j];
        for (int k = 0; k < p; ++k) r += P.A[k * n + i] * y[k];
        for (int k = 0; k < m; ++k) r += P.G[k * n + i] * z[k];
        rx[i] = r, worst = std::max(worst, std::abs(r));
      }
      for (int k = 0; k < p; ++k) {
        double r = 0.0;
        for (int j = 0; j < n; ++j) r += P.A[k * n + j] * x[j];
        ry[k] = r, worst = std::max(worst, std::abs(r));
      }
      for (int k = 0; k < m; ++k) {
        double r = s[k] - P.h[k];
        for (int j = 0; j < n; ++j) r += P.G[k * n + j] * x[j];
        for (int j = 0; j < m; ++j) r += P.F[k * m + j] * z[j];
        rz[k] = r, worst = std::max(worst, std::abs(r));
        gap += s[k] * z[k];
      }
      const double mu = m > 0 ? gap / m : 0.0;
      report.residual = std::max(worst / scale, mu);
      if (worst <= settings.tol * scale && mu <= settings.tol) return report;

      if (!factorize()) {
        report.status = LcpStatus::invalid_problem;
        return report;
      }
      // Direction for the complementarity target s∘z → target (Δs from the second row of LCP-physics eq. 25).
      auto direction = [&]() {
        for (int i = 0; i < n; ++i) rhs[i] = -rx[i];
        for (int k = 0; k < m; ++k) rhs[n + k] = -rz[k] - (target[k] - s[k] * z[k]) / z[k];
        for (int k = 0; k < p; ++k) rhs[n + m + k] = -ry[k];
        lu_solve(N, K.data(), N, pivot.data(), rhs.data());
        for (int i = 0; i < n; ++i) dx[i] = rhs[i];
        for (int k = 0; k < m; ++k) dz[k] = rhs[n + k], ds[k] = (target[k] - s[k] * z[k] - s[k] * dz[k]) / z[k];
        for (int k = 0; k < p; ++k) dy[k] = rhs[n + m + k];
      };
      auto max_step = [&]() {
        double alpha = 1.0;
        for (int k = 0; k < m; ++k) {
          if (ds[k] < 0.0) alpha = std::min(alpha, -s[k] / ds[k]);
          if (dz[k] < 0.0) alpha = std::min(alpha, -z[k] / dz[k]);
        }
        return alpha;
      };
      std::fill(target.begin(), target.end(), 0.0);  // the affine direction
      direction();
      const double alpha_affine = max_step();
      double gap_affine = 0.0;
      for (int k = 0; k < m; ++k) gap_affine += (s[k] + alpha_affine * ds[k]) * (z[k] + alpha_affine * dz[k]);
      const double sigma = m > 0 ? std::pow(gap_affine / gap, 3) : 0.0;
      // Mehrotra's combined target σμ − Δs_aff∘Δz_aff.
      for (int k = 0; k < m; ++k) target[k] = sigma * mu - ds[k] * dz[k];
      direction();
      const double alpha = std::min(1.0, 0.99 * max_step());
      for (int i = 0; i < n; ++i) x[i] += alpha * dx[i];
      for (int k = 0; k < p; ++k) y[k] += alpha * dy[k];
      for (int k = 0; k < m; ++k) z[k] += alpha * dz[k], s[k] += alpha * ds[k];
    }
    report.status = LcpStatus::iteration_limit;
    return report;
  }
};

}  // namespace dcol::lcp
