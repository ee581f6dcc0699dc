// Mixed LCP by a primal-dual interior-point method (Mattingley & Boyd, "CVXGEN", 2012, as
// LCP-physics App. B.1 uses it, LCP-physics eqs. 24–27):
//   M x + Aᵀ y + Gᵀ z + q = 0,   A x = 0,   G x + F z + s = h,   s ≥ 0, z ≥ 0, sᵀz = 0.
// Each iteration eliminates Δs from the Newton system (LCP-physics eq. 25) and solves the reduced
// system
//   [M  Gᵀ  Aᵀ; G  F − Z⁻¹S  0; A  0  0] [Δx; Δz; Δy] = rhs
// by one LU factorization (MlcpNewtonSystem), used for the affine and the centering-corrector
// directions (LCP-physics eq. 26). The backward pass (LCP-physics eqs. 28–29) solves with the
// transpose of the same matrix at the solution (mlcp_kkt_adjoint; MlcpSolver::kkt_adjoint on what the
// solver prepared for the problem it last solved).
#pragma once

#include <algorithm>
#include <cmath>
#include <initializer_list>
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

// K = [M  Gᵀ  Aᵀ; G  F − W  0; A  0  0] for W = diag(w) ≥ 0, factorized, and solves with K and Kᵀ
// over vectors [x (n); z (m); y (p)].
//
// Where M is diagonal with a nonzero diagonal (the mass matrix of bodies in maximal coordinates,
// LCP-physics §A.3), x is eliminated first and the Schur complement on (z, y),
//   S = [F − W − G M⁻¹ Gᵀ   −G M⁻¹ Aᵀ; −A M⁻¹ Gᵀ   −A M⁻¹ Aᵀ],
// is factorized in K's place: its size is m + p instead of n + m + p, and its part without W is
// formed once per problem from the nonzeros of each column of G and A (a contact's row touches
// the columns of two bodies only). S is sparse where the bodies are many (rows meet only where they
// share a body), so its rows and columns are put in reverse Cuthill–McKee order, which gathers its
// nonzeros in a band that the LU's fill stays in (lu_factor updates rows up to the pivot row's last
// nonzero). Otherwise K itself is factorized.
class MlcpNewtonSystem {
 public:
  // Sizes the work buffers for P (no allocation afterwards for problems no larger) and forms
  // the constant part of S.
  void prepare(const MlcpProblem& P) {
    problem_ = P;
    const int n = P.n;
    eliminates_x_ = true;
    for (int i = 0; i < n && eliminates_x_; ++i)
      for (int j = 0; j < n; ++j)
        if ((i == j) == (P.M[i * n + j] == 0.0)) {
          eliminates_x_ = false;
          break;
        }
    size_ = eliminates_x_ ? P.m + P.p : n + P.m + P.p;
    matrix_.resize(static_cast<size_t>(size_) * size_);
    pivot_.resize(size_);
    if (!eliminates_x_) return;
    inverse_mass_.resize(n), reduced_.resize(size_), scaled_rhs_x_.resize(n);
    for (int i = 0; i < n; ++i) inverse_mass_[i] = 1.0 / P.M[i * n + i];
    // The rows of [G; A] with a nonzero in each column of x, and their values.
    column_start_.assign(n + 1, 0);
    for (int pass = 0; pass < 2; ++pass) {
      filled_.assign(column_start_.begin(), column_start_.end() - 1);
      for (int row = 0; row < P.m + P.p; ++row) {
        const double* values =
            row < P.m ? P.G + static_cast<size_t>(row) * n : P.A + static_cast<size_t>(row - P.m) * n;
        for (int j = 0; j < n; ++j) {
          if (values[j] == 0.0) continue;
          if (pass == 0) {
            ++column_start_[j + 1];
          } else {
            column_row_[filled_[j]] = row, column_value_[filled_[j]] = values[j];
            ++filled_[j];
          }
        }
      }
      if (pass == 0) {
        for (int j = 0; j < n; ++j) column_start_[j + 1] += column_start_[j];
        column_row_.resize(column_start_[n]), column_value_.resize(column_start_[n]);
      }
    }
    constant_.assign(static_cast<size_t>(size_) * size_, 0.0);
    for (int k = 0; k < P.m; ++k)
      for (int j = 0; j < P.m; ++j) constant_[k * size_ + j] = P.F[k * P.m + j];
    for (int j = 0; j < n; ++j)
      for (int a = column_start_[j]; a < column_start_[j + 1]; ++a) {
        const double scaled = column_value_[a] * inverse_mass_[j];
        for (int b = column_start_[j]; b < column_start_[j + 1]; ++b)
          constant_[column_row_[a] * size_ + column_row_[b]] -= scaled * column_value_[b];
      }
    order_rows();
    const int N = size_;
    permuted_.resize(static_cast<size_t>(N) * N);
    for (int a = 0; a < N; ++a)
      for (int b = 0; b < N; ++b) permuted_[a * N + b] = constant_[order_[a] * N + order_[b]];
    constant_.swap(permuted_);
    ordered_.resize(N);
  }

  // The problem prepare() last took (its sizes, and the data factorize and solve read).
  const MlcpProblem& problem() const { return problem_; }
  // Whether x is eliminated: then factorize and solve read only what prepare() copied, not the
  // problem's arrays.
  bool eliminates_x() const { return eliminates_x_; }

  // Frees the factorization and prepare()'s scratch; what factorize and solve need for the
  // prepared problem stays (factorize allocates the matrix again).
  void release_factorization() {
    for (std::vector<double>* buffer : {&matrix_, &permuted_}) *buffer = std::vector<double>();
    for (std::vector<int>* buffer : {&filled_, &adjacency_start_, &adjacency_}) *buffer = std::vector<int>();
    visited_ = std::vector<char>();
  }

  // False where the matrix is singular.
  bool factorize(const double* w) {
    const MlcpProblem& P = problem_;
    const int n = P.n, m = P.m, N = size_;
    // assign, not copy: the matrix may have been released (release_factorization).
    if (eliminates_x_) {
      matrix_.assign(constant_.begin(), constant_.end());
      double* K = matrix_.data();
      for (int k = 0; k < m; ++k) K[position_[k] * N + position_[k]] -= w[k];
      return lu_factor(N, K, N, pivot_.data());
    }
    matrix_.assign(static_cast<size_t>(N) * N, 0.0);
    double* K = matrix_.data();
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) K[i * N + j] = P.M[i * n + j];
      for (int k = 0; k < m; ++k) K[i * N + n + k] = P.G[k * n + i];
      for (int k = 0; k < P.p; ++k) K[i * N + n + m + k] = P.A[k * n + i];
    }
    for (int k = 0; k < m; ++k) {
      for (int j = 0; j < n; ++j) K[(n + k) * N + j] = P.G[k * n + j];
      for (int j = 0; j < m; ++j) K[(n + k) * N + n + j] = P.F[k * m + j];
      K[(n + k) * N + n + k] -= w[k];
    }
    for (int k = 0; k < P.p; ++k)
      for (int j = 0; j < n; ++j) K[(n + m + k) * N + j] = P.A[k * n + j];
    return lu_factor(N, K, N, pivot_.data());
  }

  // K u = rhs (transposed: Kᵀ u = rhs), u over rhs. Kᵀ differs from K only in F's place, so the
  // elimination of x is the same with Sᵀ in S's place.
  void solve(double* rhs, bool transposed = false) {
    const int N = size_;
    if (!eliminates_x_) {
      (transposed ? lu_solve_transposed : lu_solve)(N, matrix_.data(), N, pivot_.data(), rhs);
      return;
    }
    const int n = problem_.n;
    double* rhs_x = rhs;
    std::copy(rhs + n, rhs + n + N, reduced_.begin());
    for (int j = 0; j < n; ++j) {
      scaled_rhs_x_[j] = rhs_x[j] * inverse_mass_[j];
      for (int a = column_start_[j]; a < column_start_[j + 1]; ++a)
        reduced_[column_row_[a]] -= column_value_[a] * scaled_rhs_x_[j];
    }
    // S and Sᵀ in the same order: (P S Pᵀ)ᵀ = P Sᵀ Pᵀ.
    for (int a = 0; a < N; ++a) ordered_[a] = reduced_[order_[a]];
    (transposed ? lu_solve_transposed : lu_solve)(N, matrix_.data(), N, pivot_.data(), ordered_.data());
    for (int a = 0; a < N; ++a) reduced_[order_[a]] = ordered_[a];
    for (int j = 0; j < n; ++j) {
      double r = rhs_x[j];
      for (int a = column_start_[j]; a < column_start_[j + 1]; ++a) r -= column_value_[a] * reduced_[column_row_[a]];
      rhs_x[j] = r * inverse_mass_[j];
    }
    std::copy(reduced_.begin(), reduced_.end(), rhs + n);
  }

 private:
  // Reverse Cuthill–McKee: breadth-first from a row of least degree, each row's unvisited neighbours
  // (in the pattern of S + Sᵀ) by increasing degree, component after component, the whole reversed.
  // order_[a] is the row of S at position a, position_ its inverse.
  void order_rows() {
    const int N = size_;
    adjacency_start_.assign(N + 1, 0);
    adjacency_.clear();
    for (int i = 0; i < N; ++i) {
      for (int j = 0; j < N; ++j)
        if (j != i && (constant_[i * N + j] != 0.0 || constant_[j * N + i] != 0.0)) adjacency_.push_back(j);
      adjacency_start_[i + 1] = static_cast<int>(adjacency_.size());
    }
    auto degree = [this](int row) { return adjacency_start_[row + 1] - adjacency_start_[row]; };
    auto fewer_neighbours = [&degree](int a, int b) { return degree(a) != degree(b) ? degree(a) < degree(b) : a < b; };
    order_.clear();
    visited_.assign(N, 0);
    while (static_cast<int>(order_.size()) < N) {
      int start = -1;
      for (int i = 0; i < N; ++i)
        if (!visited_[i] && (start < 0 || degree(i) < degree(start))) start = i;
      visited_[start] = 1;
      order_.push_back(start);
      for (size_t head = order_.size() - 1; head < order_.size(); ++head) {
        const int row = order_[head];
        const size_t first = order_.size();
        for (int e = adjacency_start_[row]; e < adjacency_start_[row + 1]; ++e)
          if (!visited_[adjacency_[e]]) visited_[adjacency_[e]] = 1, order_.push_back(adjacency_[e]);
        std::sort(order_.begin() + first, order_.end(), fewer_neighbours);
      }
    }
    std::reverse(order_.begin(), order_.end());
    position_.resize(N);
    for (int a = 0; a < N; ++a) position_[order_[a]] = a;
  }

  MlcpProblem problem_;
  bool eliminates_x_ = false;
  int size_ = 0;
  std::vector<double> matrix_, constant_, permuted_, inverse_mass_, reduced_, ordered_, scaled_rhs_x_, column_value_;
  std::vector<int> pivot_, column_start_, column_row_, filled_, order_, position_, adjacency_start_, adjacency_;
  std::vector<char> visited_;
};

struct MlcpSettings {
  double tol = 1e-10;  // residuals relative to the data's scale, and the mean complementarity sᵀz/m
  int max_iterations = 100;
};

struct MlcpSolver {
  MlcpNewtonSystem newton;
  std::vector<double> rhs, rx, ry, rz, dx, dy, dz, ds, target, weights;
  std::vector<double> scaled_M, scaled_q, scaled_A, scaled_G, scaled_F, scaled_h;
  double matrix_scale = 1.0;  // σ of the last solve: the interior point worked on the matrices / σ

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
    matrix_scale = sigma;
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
    const int n = P.n, p = P.p, m = P.m;
    newton.prepare(P);
    rhs.resize(n + m + p);
    rx.resize(n), ry.resize(p), rz.resize(m), dx.resize(n), dy.resize(p), dz.resize(m), ds.resize(m);
    target.resize(m), weights.resize(m);
    double scale = 1.0;
    for (int i = 0; i < n; ++i) scale = std::max(scale, std::abs(P.q[i]));
    for (int i = 0; i < m; ++i) scale = std::max(scale, std::abs(P.h[i]));
    // The Newton matrix at the current s, z, factorized.
    auto factorize = [&]() {
      for (int k = 0; k < m; ++k) weights[k] = s[k] / z[k];
      return newton.factorize(weights.data());
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
    newton.solve(rhs.data());
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
        newton.solve(rhs.data());
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

 public:
  // The backward pass's solve (LCP-physics eq. 29, as mlcp_kkt_adjoint below) for the problem this
  // solver's last solve took, at the solution (z, s) it returned: rhs (n + m + p) = [∂ℓ/∂x; ∂ℓ/∂z;
  // ∂ℓ/∂y] is overwritten by [d_x; z∘d_z; d_y]; false where the matrix is singular. The problem's
  // arrays must be those of that solve, unchanged.
  //
  // What is kept from the forward solve is everything of the Newton system that does not depend on
  // the iterate: the sparsity of [G; A] by column, M⁻¹, the W-free part of the Schur complement S
  // and its reverse Cuthill–McKee order (MlcpNewtonSystem::prepare), in the data's scaling σ. The
  // matrix of eqs. 28–29 is K_back = diag(I, Z, I) K with K the Newton matrix at W = Z⁻¹S of the
  // solution (mlcp_kkt_adjoint). The interior point's last factorization is at W of the iterate
  // before its last step, which differs from the solution's W by that step (the ratios s/z of the
  // pairs that are becoming degenerate change by orders of magnitude near convergence), so it is
  // not that matrix: S is refactorized once at the solution's W, the only part that has to be. The
  // scaled problem's Newton matrix at the scaled solution (W / σ) is K / σ, hence the 1 / σ.
  bool kkt_adjoint(const double* z, const double* s, double* rhs) {
    const MlcpProblem& P = newton.problem();
    weights.resize(P.m);
    for (int k = 0; k < P.m; ++k) weights[k] = s[k] / (z[k] * matrix_scale);
    if (!newton.factorize(weights.data())) return false;
    newton.solve(rhs, /*transposed=*/true);
    for (int i = 0; i < P.n + P.m + P.p; ++i) rhs[i] /= matrix_scale;
    return true;
  }

  // Frees what kkt_adjoint does not need after a solve, for a solver kept only for it: the
  // iterations' vectors, the factorization, and, where x is eliminated (the Newton system then
  // holds what it needs), the scaled copy of the problem.
  void release_all_but_adjoint() {
    for (std::vector<double>* buffer : {&rhs, &rx, &ry, &rz, &dx, &dy, &dz, &ds, &target})
      *buffer = std::vector<double>();
    newton.release_factorization();
    if (!newton.eliminates_x()) return;
    for (std::vector<double>* buffer : {&scaled_M, &scaled_q, &scaled_A, &scaled_G, &scaled_F, &scaled_h})
      *buffer = std::vector<double>();
  }
};

// The backward pass's solve (LCP-physics eq. 29): K_backᵀ [d_x; d_z; d_y] = [∂ℓ/∂x; ∂ℓ/∂z; ∂ℓ/∂y]
// for K_back = [M  Gᵀ  Aᵀ; D(z)G  D(Gx + Fz − h) + D(z)F  0; A  0  0] at a solution (x, y, z, s).
// There Gx + Fz − h = −s, so that K_back = diag(I, Z, I) K with K the interior point's Newton matrix
// at W = Z⁻¹S: one factorization of K (structured as the forward solves have it) and a solve with
// Kᵀ give [d_x; z∘d_z; d_y], which is what the cotangents of LCP-physics eq. 32 use. rhs (n + m + p)
// is overwritten by that; false where K is singular.
inline bool mlcp_kkt_adjoint(const MlcpProblem& P, const double* z, const double* s, double* rhs,
                             MlcpNewtonSystem& newton, std::vector<double>& weights) {
  newton.prepare(P);
  weights.resize(P.m);
  for (int k = 0; k < P.m; ++k) weights[k] = s[k] / z[k];
  if (!newton.factorize(weights.data())) return false;
  newton.solve(rhs, /*transposed=*/true);
  return true;
}

}  // namespace dcol::lcp
