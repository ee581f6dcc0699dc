// Exact derivatives of a small cone program's solution (barrier = 0), one problem at a time.
//
// At a strictly complementary solution each block of K has one of three roles: inactive (z = 0, s
// strictly inside), active (s = 0, z strictly inside: an orthant row at its bound, a cone at its
// apex) or, for a second-order cone only, boundary (s and z nonzero on the boundary, s∘z = 0). With
// the roles fixed, the solution (x, z_R) over the blocks R with z ≠ 0 is a root of
//     F = [c + G_Rᵀ z_R;  s_b (active blocks);  s_b ∘ z_b (boundary cones)],   s = h − G x,
// whose Jacobian J = [[0, G_Rᵀ], [−E G_R, D]] (E = I and D = 0 on an active block, E = arrow(z_b) and
// D = arrow(s_b) on a boundary cone) is nonsingular when the solution is also nondegenerate.
// Linearizing F = 0 for a change (dG, dh) of the data gives J (dx, dz_R) = (−dGᵀz, −E r) with
// r = dh − dG x, so an output e_xᵀdx + e_zᵀdz has the adjoint λ = J⁻ᵀ(e_x, e_z) and equals
// ωᵀr − zᵀdG v with v = λ_x and ω = −Eᵀλ_z (0 on inactive blocks): the form the contractions of
// proximity_derivatives.hpp take, as from LinearizedKKT::adjoint, its μ > 0 counterpart.
//
// The roles are read at a central point of small μ (exact_start_settings), where a block's s and z
// share their Jordan frame with eigenvalue products μ: in each eigenvalue pair one side is far
// larger than the other unless the solution is within ~1e-4 of a degenerate one (a contact at an
// edge or corner, or face on face). Newton's method on F then reaches the exact solution in one or
// two steps from there.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "conic/cone_solver.hpp"
#include "core/dense_lu.hpp"

namespace dcol::conic {

// The solve whose central point ExactKKT starts from: the user's settings at μ = 1e-9, centred to
// 1e-5 (DERIVATIVE_SETTINGS of the Python package).
inline SolverSettings exact_start_settings(SolverSettings settings) {
  settings.barrier = 1e-9;
  settings.centrality_tol = 1e-5;
  return settings;
}

template <class Program>
class ExactKKT {
  static_assert(Program::lanes == 1, "exact derivatives take one problem at a time");
  static constexpr int NMax = Program::n_max, MMax = Program::m_max;
  // A nondegenerate solution has at most n active constraints, a boundary cone counting as one:
  // n + 2·3 rows for the two cones of a proximity problem, 8 more for any other program.
  static constexpr int kMaxSize = 2 * NMax + 8;

 public:
  // Reads the roles at the solver's central point and refines its (x, s, z) to the exact solution.
  // valid() is false, and the solver left as it was, when a role is unclear, Newton's method does
  // not converge, or its result breaks a role: the solution is then at, or too near, a point where
  // it is not differentiable.
  template <class Solver>
  ExactKKT(Solver& solver, const Program& prob) : p_(prob) {
    valid_ = find_roles(solver.s, solver.z) && refine(solver);
  }

  bool valid() const { return valid_; }

  // For r < K: v[r] = λ_x and omega[r] = −Eᵀλ_z (over all rows) with λ = J⁻ᵀ(e_x[r], e_z[r]);
  // e_x or e_z null stands for zeros.
  template <int K>
  void adjoint(const double (*e_x)[NMax], const double (*e_z)[MMax], double (*v)[NMax], double (*omega)[MMax]) const {
    const int n = p_.n;
    for (int r = 0; r < K; ++r) {
      double b[kMaxSize], lambda[kMaxSize];
      for (int j = 0; j < n; ++j) b[j] = e_x ? e_x[r][j] : 0.0;
      for_each_block_row([&](int row, int eq) { b[eq] = e_z ? e_z[r][row] : 0.0; });
      solve_transposed(b, lambda);
      std::copy(lambda, lambda + n, v[r]);
      std::fill(omega[r], omega[r] + p_.m, 0.0);
      for (int k = 0; k < num_blocks_; ++k) {
        const Block& blk = blocks_[k];
        if (blk.boundary)  // arrow(z) λ = z∘λ
          detail::soc_product(y_ + blk.eq, lambda + blk.eq, omega[r] + blk.row, blk.dim);
        else
          std::copy(lambda + blk.eq, lambda + blk.eq + blk.dim, omega[r] + blk.row);
        for (int i = 0; i < blk.dim; ++i) omega[r][blk.row + i] = -omega[r][blk.row + i];
      }
    }
  }

 private:
  // A block with z ≠ 0: rows [row, row + dim) of the program, equations and z variables
  // [eq, eq + dim) of F.
  struct Block {
    int row, dim, eq;
    bool boundary;
  };

  // f(row, eq) for each program row of the blocks and its index in F.
  template <class F>
  void for_each_block_row(F&& f) const {
    for (int k = 0; k < num_blocks_; ++k)
      for (int i = 0; i < blocks_[k].dim; ++i) f(blocks_[k].row + i, blocks_[k].eq + i);
  }

  // +1 when s is the larger side of an eigenvalue pair by a clear margin, −1 when z is, 0 if unclear.
  static int larger_side(double s, double z) {
    constexpr double kMargin = 100.0;
    if (s > 0.0 && s > kMargin * z) return 1;
    if (z > 0.0 && z > kMargin * s) return -1;
    return 0;
  }

  bool add_block(int row, int dim, bool boundary) {
    if (size_ + dim > kMaxSize) return false;
    blocks_[num_blocks_++] = {row, dim, size_, boundary};
    size_ += dim;
    return true;
  }

  bool find_roles(const double* s, const double* z) {
    size_ = p_.n;
    for (int i = 0; i < p_.l; ++i) {
      const int side = larger_side(s[i], z[i]);
      if (side == 0 || (side < 0 && !add_block(i, 1, false))) return false;
    }
    for (int k = 0, row = p_.l; k < p_.num_soc; row += p_.soc_dim[k], ++k) {
      // The shared frame's direction u: s1 is along it and z1 against it.
      const int dim = p_.soc_dim[k];
      double u[MMax], u_norm2 = 0.0;
      for (int i = 1; i < dim; ++i) {
        u[i] = s[row + i] - z[row + i];
        u_norm2 += u[i] * u[i];
      }
      const double inv_norm = u_norm2 > 0.0 ? 1.0 / std::sqrt(u_norm2) : 0.0;
      double s_u = 0.0, z_u = 0.0;
      for (int i = 1; i < dim; ++i) {
        s_u += s[row + i] * u[i] * inv_norm;
        z_u += z[row + i] * u[i] * inv_norm;
      }
      const int plus = larger_side(s[row] + s_u, z[row] + z_u), minus = larger_side(s[row] - s_u, z[row] - z_u);
      if (plus == 0 || minus == 0) return false;
      if ((plus < 0 || minus < 0) && !add_block(row, dim, plus != minus)) return false;
    }
    return true;
  }

  // s_i = h_i − G_i x.
  double slack(const double* x, int row) const {
    double acc = p_.h[row];
    for (int j = 0; j < p_.n; ++j) acc -= p_.G[row][j] * x[j];
    return acc;
  }
  // s_b over a block's rows.
  void block_slack(const double* x, const Block& blk, double* s) const {
    for (int i = 0; i < blk.dim; ++i) s[i] = slack(x, blk.row + i);
  }

  void residual(const double* y, double* F) const {
    const int n = p_.n;
    std::copy(p_.c, p_.c + n, F);
    for_each_block_row([&](int row, int eq) {
      for (int j = 0; j < n; ++j) F[j] += p_.G[row][j] * y[eq];
    });
    for (int k = 0; k < num_blocks_; ++k) {
      const Block& blk = blocks_[k];
      double s[MMax];
      block_slack(y, blk, s);
      if (blk.boundary)
        detail::soc_product(s, y + blk.eq, F + blk.eq, blk.dim);
      else
        std::copy(s, s + blk.dim, F + blk.eq);
    }
  }

  // J at y, factored as P J = L U (dense_lu.hpp); false if singular.
  bool factor(const double* y) {
    const int n = p_.n, size = size_;
    for (int i = 0; i < size; ++i) std::fill(lu_[i], lu_[i] + size, 0.0);
    for (int k = 0; k < num_blocks_; ++k) {
      const Block& blk = blocks_[k];
      for (int i = 0; i < blk.dim; ++i)
        for (int j = 0; j < n; ++j) lu_[j][blk.eq + i] = p_.G[blk.row + i][j];
      if (!blk.boundary) {
        for (int i = 0; i < blk.dim; ++i)
          for (int j = 0; j < n; ++j) lu_[blk.eq + i][j] = -p_.G[blk.row + i][j];
        continue;
      }
      double s[MMax], column[MMax], arrow_column[MMax];
      block_slack(y, blk, s);
      for (int j = 0; j < n; ++j) {  // −arrow(z) G e_j
        for (int i = 0; i < blk.dim; ++i) column[i] = p_.G[blk.row + i][j];
        detail::soc_product(y + blk.eq, column, arrow_column, blk.dim);
        for (int i = 0; i < blk.dim; ++i) lu_[blk.eq + i][j] = -arrow_column[i];
      }
      for (int i = 0; i < blk.dim; ++i) {  // arrow(s)
        lu_[blk.eq + i][blk.eq + i] = s[0];
        if (i > 0) lu_[blk.eq][blk.eq + i] = lu_[blk.eq + i][blk.eq] = s[i];
      }
    }
    double largest = 0.0;
    for (int i = 0; i < size; ++i)
      for (int j = 0; j < size; ++j) largest = std::max(largest, std::abs(lu_[i][j]));
    return lu_factor(size, lu_[0], kMaxSize, pivot_, 1e-13 * largest);
  }

  // J d = b.
  void solve(const double* b, double* d) const {
    std::copy(b, b + size_, d);
    lu_solve(size_, lu_[0], kMaxSize, pivot_, d);
  }

  // Jᵀ λ = b.
  void solve_transposed(const double* b, double* lambda) const {
    std::copy(b, b + size_, lambda);
    lu_solve_transposed(size_, lu_[0], kMaxSize, pivot_, lambda);
  }

  template <class Solver>
  bool refine(Solver& solver) {
    const int n = p_.n, size = size_;
    std::copy(solver.x, solver.x + n, y_);
    for_each_block_row([&](int row, int eq) { y_[eq] = solver.z[row]; });
    double start_norm = 0.0;
    for (int i = 0; i < size; ++i) start_norm = std::max(start_norm, std::abs(y_[i]));
    // Quadratic convergence from ~1e-9 away: two steps, then one that only shows the rounding floor.
    constexpr int kMaxSteps = 6;
    const double scale = 1.0 + start_norm;
    bool converged = false;
    double moved = 0.0, last_step = std::numeric_limits<double>::infinity();
    for (int step = 0; step < kMaxSteps && !converged; ++step) {
      double F[kMaxSize], d[kMaxSize];
      residual(y_, F);
      if (!factor(y_)) return false;
      solve(F, d);
      double step_norm = 0.0;
      for (int i = 0; i < size; ++i) {
        y_[i] -= d[i];
        step_norm = std::max(step_norm, std::abs(d[i]));
      }
      moved += step_norm;
      // Done at the last digit, or once the steps stop shrinking quadratically at rounding size.
      converged = step_norm <= 1e-15 * scale || (step_norm <= 1e-10 * scale && step_norm > 1e-3 * last_step);
      last_step = step_norm;
    }
    // The roles must hold at the root, which must be the solution next to the central point.
    if (!converged || !(moved <= 1e-4 * scale) || !factor(y_)) return false;
    double s[MMax];
    for (int i = 0; i < p_.m; ++i) s[i] = slack(y_, i);
    bool in_R[MMax] = {};
    for_each_block_row([&](int row, int) { in_R[row] = true; });
    for (int i = 0; i < p_.l; ++i)
      if (!in_R[i] && !(s[i] > 0.0)) return false;
    for (int k = 0, row = p_.l; k < p_.num_soc; row += p_.soc_dim[k], ++k)
      if (!in_R[row] && !(detail::soc_residual(s + row, p_.soc_dim[k]) > 0.0 && s[row] > 0.0)) return false;
    for (int k = 0; k < num_blocks_; ++k) {
      const Block& blk = blocks_[k];
      const double* z = y_ + blk.eq;
      const bool ok = blk.dim == 1   ? z[0] > 0.0
                      : blk.boundary ? z[0] > 0.0 && s[blk.row] > 0.0  // s∘z = 0 puts both on the boundary
                                     : detail::soc_residual(z, blk.dim) > 0.0 && z[0] > 0.0;
      if (!ok) return false;
    }
    std::copy(y_, y_ + n, solver.x);
    std::copy(s, s + p_.m, solver.s);
    std::fill(solver.z, solver.z + p_.m, 0.0);
    for_each_block_row([&](int row, int eq) { solver.z[row] = y_[eq]; });
    return true;
  }

  const Program& p_;
  bool valid_ = false;
  Block blocks_[kMaxSize];
  int num_blocks_ = 0;
  int size_ = 0;        // n + the blocks' rows
  double y_[kMaxSize];  // (x, z_R) at the solution
  double lu_[kMaxSize][kMaxSize];
  int pivot_[kMaxSize];
};

}  // namespace dcol::conic
