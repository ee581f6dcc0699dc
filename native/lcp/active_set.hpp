// Solutions of a (boxed) LCP on given index sets (Nimble App. B): each entry clamps (lo < f < hi,
// w = 0) or sits at its lower or upper bound. With the bounded entries written f_B = E f_C + c (a
// friction entry at ±mu times its normal: a column of E when the normal clamps), the clamping ones
// solve K f_C = −(b_C + A_CB c), K = A_CC + A_CB E, least-squares-minimally when K is singular (the
// even spread of an impulse over identical contacts). Used to try the previous step's sets first
// (warm start) and to turn Gauss–Seidel's approximate iterate into the exact solution on its sets.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/dot.hpp"
#include "lcp/lcp.hpp"

namespace dcol::lcp {

enum class EntrySet : int8_t { clamping = 0, lower = 1, upper = 2 };

// Thresholds for "zero" in f and in w, relative to the problem's scale.
struct Tolerances {
  double f, w;
};

// An f beyond kImpulseCap times |b|∞ over A's smallest positive diagonal entry (an entry of that size
// moves its own w a thousand times further than any b asks) is no solution but an iterate run off (an
// LCP without a solution, friction that jams its normal, or a contact NCP drifting along its null
// space): the scale of f is capped there, or the tolerances would grow with the iterate and call it a
// solution.
constexpr double kImpulseCap = 1e3;

// The largest impulse the data can call for: kImpulseCap |b|∞ over A's smallest positive diagonal entry
// (infinite when none is positive, or when b = 0 leaves only the bounds to set the impulses' size).
inline double impulse_cap(double b_max, double A_min_diagonal) {
  return A_min_diagonal > 0.0 && b_max > 0.0 ? kImpulseCap * b_max / A_min_diagonal
                                             : std::numeric_limits<double>::infinity();
}

// The smallest positive diagonal entry of A (n × n row-major), 0 when none is positive.
inline double smallest_positive_diagonal(int n, const double* A) {
  double smallest = std::numeric_limits<double>::infinity();
  for (int i = 0; i < n; ++i)
    if (A[static_cast<size_t>(i) * n + i] > 0.0) smallest = std::min(smallest, A[static_cast<size_t>(i) * n + i]);
  return std::isfinite(smallest) ? smallest : 0.0;
}

// From the largest magnitudes of f, b and A and A's smallest positive diagonal entry. Relative to the
// data alone (no floor): w to W = max(|b|∞, |A|∞ F), F = min(|f|∞, cap), and f to W / |A|∞ (the
// impulse that changes a w by W). With a floor: f to max(floor, F), w to max(floor, |b|∞, |A|∞ f's).
inline Tolerances scaled_tolerances(double f_max, double b_max, double A_max, double A_min_diagonal, Tolerance tol) {
  const double f_bounded = std::min(f_max, impulse_cap(std::max(b_max, tol.floor), A_min_diagonal));
  if (tol.floor > 0.0) {
    const double f_scale = std::max(tol.floor, f_bounded);
    return {tol.relative * f_scale, tol.relative * std::max({tol.floor, b_max, A_max * f_scale})};
  }
  const double w_scale = std::max(b_max, A_max * f_bounded);
  const double f_scale = A_max > 0.0 ? w_scale / A_max : f_bounded;
  return {tol.relative * f_scale, tol.relative * w_scale};
}

inline Tolerances tolerances(int n, const double* A, const double* b, const double* f, Tolerance tol) {
  double f_max = 0.0, b_max = 0.0, A_max = 0.0;
  for (int i = 0; i < n; ++i) f_max = std::max(f_max, std::abs(f[i])), b_max = std::max(b_max, std::abs(b[i]));
  for (int i = 0; i < n * n; ++i) A_max = std::max(A_max, std::abs(A[i]));
  return scaled_tolerances(f_max, b_max, A_max, smallest_positive_diagonal(n, A), tol);
}

// The sets of an (approximate) solution: of each complementary pair the smaller one is the zero one.
inline void classify(int n, const double* A, const double* b, const double* f, const double* w, const LcpBounds& bounds,
                     Tolerance tol, EntrySet* sets) {
  const Tolerances t = tolerances(n, A, b, f, tol);
  for (int i = 0; i < n; ++i) {
    double low, high;
    bounds.at(i, f, low, high);
    if (f[i] - low <= std::max(w[i], t.f) && w[i] >= -t.w)
      sets[i] = EntrySet::lower;
    else if (high - f[i] <= std::max(-w[i], t.f) && w[i] <= t.w)
      sets[i] = EntrySet::upper;
    else
      sets[i] = EntrySet::clamping;
  }
}

// Whether (f, w) solves the problem with these sets, within the tolerances.
inline bool verified(int n, const double* A, const double* b, const double* f, const double* w, const LcpBounds& bounds,
                     const EntrySet* sets, Tolerance tol) {
  const Tolerances t = tolerances(n, A, b, f, tol);
  for (int i = 0; i < n; ++i) {
    double low, high;
    bounds.at(i, f, low, high);
    switch (sets[i]) {
      case EntrySet::clamping:
        if (f[i] < low - t.f || f[i] > high + t.f || std::abs(w[i]) > t.w) return false;
        break;
      case EntrySet::lower:
        if (w[i] < -t.w) return false;
        break;
      case EntrySet::upper:
        if (w[i] > t.w) return false;
        break;
    }
  }
  return true;
}

namespace detail {

// Householder reflection of x (m contiguous entries) onto −sign(x₀)‖x‖ e₀: v overwrites x with
// v₀ = 1 implied; returns β (0 when x = 0) and sets *alpha to the new leading entry.
inline double householder(int m, double* x, double* alpha) {
  const double norm2 = dot(x, x, m);
  if (norm2 == 0.0) {
    *alpha = 0.0;
    return 0.0;
  }
  const double norm = std::sqrt(norm2);
  *alpha = x[0] > 0.0 ? -norm : norm;
  const double v0 = x[0] - *alpha;
  for (int i = 1; i < m; ++i) x[i] /= v0;
  x[0] = 1.0;
  return -v0 / *alpha;  // β = 2 / vᵀv with v scaled to v₀ = 1
}

}  // namespace detail

// Complete orthogonal decomposition of a square K (Golub & Van Loan §5.5.2): QR with column
// pivoting K P = Q R, and for a rank-deficient K a QR of R's leading rows transposed, R₁ᵀ = Z [T; 0],
// so that K = Q [Tᵀ 0; 0 0] Zᵀ Pᵀ. It applies the pseudo-inverse K⁺ = P Z [T⁻ᵀ 0; 0 0] Qᵀ, its
// transpose, and the projector I − K⁺K = P Z [0 0; 0 I] Zᵀ Pᵀ onto K's null space, each in O(m²).
// The rank ends where |R_kk| ≤ kRankCutoff |R_00|: contact rows that are dependent in exact
// arithmetic (coplanar contacts) are so only to round-off, and a cut-off at ε would invert that
// round-off into huge impulses.
constexpr double kRankCutoff = 1e-10;

class OrthogonalDecomposition {
 public:
  // Factors K (m × m row-major). R_ and W_ are stored by columns, so that the Householder
  // reflections and the pivots' column norms run over contiguous memory. It factors K / s with s the
  // power of two nearest above |K|∞, whose squared column norms neither underflow nor overflow whatever
  // the units of K, and the solves divide by s again: a power of two, so that for K of ordinary size
  // every result is exactly that of K itself.
  void factor(int m, const double* K) {
    m_ = m;
    rank_ = m;
    scale_ = power_of_two_above(largest_magnitude(static_cast<std::size_t>(m) * m, K));
    R_.resize(static_cast<size_t>(m) * m);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m; ++j) R_[j * m + i] = K[i * m + j] / scale_;
    perm_.resize(m);
    for (int j = 0; j < m; ++j) perm_[j] = j;
    diag_.resize(m);
    q_betas_.resize(m);
    for (int k = 0; k < m; ++k) {
      int pivot = k;
      double best = -1.0;
      for (int j = k; j < m; ++j) {
        const double s = dot(R_.data() + j * m + k, R_.data() + j * m + k, m - k);
        if (s > best) best = s, pivot = j;
      }
      if (pivot != k) {
        std::swap_ranges(R_.begin() + k * m, R_.begin() + (k + 1) * m, R_.begin() + pivot * m);
        std::swap(perm_[k], perm_[pivot]);
      }
      double alpha;
      q_betas_[k] = detail::householder(m - k, R_.data() + k * m + k, &alpha);
      diag_[k] = alpha;
      if (k == 0 ? alpha == 0.0 : std::abs(alpha) <= kRankCutoff * std::abs(diag_[0])) {
        rank_ = k;
        break;
      }
      for (int j = k + 1; j < m; ++j) reflect(q_betas_[k], R_.data() + k * m + k, R_.data() + j * m + k, m - k);
    }
    if (rank_ == m || rank_ == 0) return;
    // Rows 0..rank−1 of R, transposed into W (m × rank), W = Z [T; 0] by Householder QR.
    const int r = rank_;
    W_.assign(static_cast<size_t>(m) * r, 0.0);
    for (int row = 0; row < r; ++row) {
      W_[row * m + row] = diag_[row];
      for (int j = row + 1; j < m; ++j) W_[row * m + j] = R_[j * m + row];
    }
    z_betas_.resize(r);
    t_diag_.resize(r);
    for (int k = 0; k < r; ++k) {
      z_betas_[k] = detail::householder(m - k, W_.data() + k * m + k, &t_diag_[k]);
      for (int j = k + 1; j < r; ++j) reflect(z_betas_[k], W_.data() + k * m + k, W_.data() + j * m + k, m - k);
    }
  }

  int size() const { return m_; }
  int rank() const { return rank_; }
  bool full_rank() const { return rank_ == m_; }

  // y (m) ← K⁺ y: the minimum-norm least-squares solution of K x = y.
  void solve(double* y) {
    const int m = m_, r = rank_;
    for (int k = 0; k < r; ++k) reflect(q_betas_[k], R_.data() + k * m + k, y + k, m - k);  // Qᵀ y
    x_.assign(m, 0.0);
    if (r == m) {
      for (int k = m - 1; k >= 0; --k) {  // R x = Qᵀ y
        double s = y[k];
        for (int j = k + 1; j < m; ++j) s -= R_[j * m + k] * x_[j];
        x_[k] = s / diag_[k];
      }
    } else if (r > 0) {
      for (int k = 0; k < r; ++k) {  // Tᵀ t = (Qᵀ y)[0:r], x = Z [t; 0]
        double s = y[k];
        for (int j = 0; j < k; ++j) s -= W_[k * m + j] * x_[j];
        x_[k] = s / t_diag_[k];
      }
      for (int k = r - 1; k >= 0; --k) reflect(z_betas_[k], W_.data() + k * m + k, x_.data() + k, m - k);
    }
    for (int j = 0; j < m; ++j) y[perm_[j]] = x_[j] / scale_;
  }

  // y (m) ← K⁺ᵀ y.
  void solve_transposed(double* y) {
    const int m = m_, r = rank_;
    x_.resize(m);
    for (int j = 0; j < m; ++j) x_[j] = y[perm_[j]];  // Pᵀ y
    if (r < m && r > 0)
      for (int k = 0; k < r; ++k) reflect(z_betas_[k], W_.data() + k * m + k, x_.data() + k, m - k);  // Zᵀ
    std::fill(y, y + m, 0.0);
    if (r == m) {
      for (int k = 0; k < m; ++k) {  // Rᵀ t = Pᵀ y
        double s = x_[k];
        for (int j = 0; j < k; ++j) s -= R_[k * m + j] * y[j];
        y[k] = s / diag_[k];
      }
    } else {
      for (int k = r - 1; k >= 0; --k) {  // T t = (Zᵀ Pᵀ y)[0:r]
        double s = x_[k];
        for (int j = k + 1; j < r; ++j) s -= W_[j * m + k] * y[j];
        y[k] = s / t_diag_[k];
      }
    }
    for (int k = r - 1; k >= 0; --k) reflect(q_betas_[k], R_.data() + k * m + k, y + k, m - k);  // Q
    for (int j = 0; j < m; ++j) y[j] /= scale_;
  }

  // y (m) ← (I − K⁺K) y, zero for a full-rank K.
  void project_null(double* y) {
    const int m = m_, r = rank_;
    if (r == m) {
      std::fill(y, y + m, 0.0);
      return;
    }
    x_.resize(m);
    for (int j = 0; j < m; ++j) x_[j] = y[perm_[j]];
    for (int k = 0; k < r; ++k) reflect(z_betas_[k], W_.data() + k * m + k, x_.data() + k, m - k);
    std::fill(x_.begin(), x_.begin() + r, 0.0);
    for (int k = r - 1; k >= 0; --k) reflect(z_betas_[k], W_.data() + k * m + k, x_.data() + k, m - k);
    for (int j = 0; j < m; ++j) y[perm_[j]] = x_[j];
  }

 private:
  // x ← (I − β v vᵀ) x over `length` contiguous entries, v₀ = 1 implied.
  static void reflect(double beta, const double* v, double* x, int length) {
    if (beta == 0.0) return;
    const double s = beta * (x[0] + dot(v + 1, x + 1, length - 1));
    x[0] -= s;
    for (int i = 1; i < length; ++i) x[i] -= s * v[i];
  }

  int m_ = 0, rank_ = 0;
  double scale_ = 1.0;  // a power of two near |K|∞
  std::vector<double> R_, diag_, q_betas_, W_, z_betas_, t_diag_, x_;
  std::vector<int> perm_;
};

// The pseudo-inverse of a block-diagonal matrix whose blocks are scattered over its rows (each row's
// block given; a row couples only with rows of its block, columns in the same order): one
// OrthogonalDecomposition per block, so that the cost is the sum of the blocks' cubes instead of the
// cube of their sum (the clamped matrices of contact islands).
class BlockDecomposition {
 public:
  // Factors K (m × m row-major); block[i] ≥ 0 labels row i's block.
  void factor(int m, const double* K, const int* block) {
    m_ = m;
    rank_ = 0;
    int labels = 0;
    for (int i = 0; i < m; ++i) labels = std::max(labels, block[i] + 1);
    group_of_label_.assign(labels, -1);
    start_.assign(1, 0);
    int groups = 0;
    for (int i = 0; i < m; ++i)
      if (group_of_label_[block[i]] < 0) group_of_label_[block[i]] = groups++;
    start_.assign(groups + 1, 0);
    for (int i = 0; i < m; ++i) ++start_[group_of_label_[block[i]] + 1];
    for (int g = 0; g < groups; ++g) start_[g + 1] += start_[g];
    members_.resize(m);
    fill_.assign(start_.begin(), start_.end() - 1);
    for (int i = 0; i < m; ++i) members_[fill_[group_of_label_[block[i]]]++] = i;
    if (static_cast<int>(blocks_.size()) < groups) blocks_.resize(groups);
    for (int g = 0; g < groups; ++g) {
      const int* rows = members_.data() + start_[g];
      const int size = start_[g + 1] - start_[g];
      scratch_.resize(static_cast<size_t>(size) * size);
      for (int p = 0; p < size; ++p)
        for (int q = 0; q < size; ++q)
          scratch_[static_cast<size_t>(p) * size + q] = K[static_cast<size_t>(rows[p]) * m + rows[q]];
      blocks_[g].factor(size, scratch_.data());
      rank_ += blocks_[g].rank();
    }
    groups_ = groups;
  }

  int size() const { return m_; }
  int rank() const { return rank_; }
  bool full_rank() const { return rank_ == m_; }

  // y (m) ← K⁺ y, K⁺ᵀ y, (I − K⁺K) y: block by block.
  void solve(double* y) { apply(y, &OrthogonalDecomposition::solve); }
  void solve_transposed(double* y) { apply(y, &OrthogonalDecomposition::solve_transposed); }
  void project_null(double* y) { apply(y, &OrthogonalDecomposition::project_null); }

 private:
  void apply(double* y, void (OrthogonalDecomposition::*operation)(double*)) {
    for (int g = 0; g < groups_; ++g) {
      const int* rows = members_.data() + start_[g];
      const int size = start_[g + 1] - start_[g];
      scratch_.resize(size);
      bool zero = true;
      for (int p = 0; p < size; ++p) scratch_[p] = y[rows[p]], zero = zero && scratch_[p] == 0.0;
      if (zero) continue;  // each operation maps 0 to 0: a block the column does not reach stays zero
      (blocks_[g].*operation)(scratch_.data());
      for (int p = 0; p < size; ++p) y[rows[p]] = scratch_[p];
    }
  }

  int m_ = 0, rank_ = 0, groups_ = 0;
  std::vector<int> group_of_label_, start_, members_, fill_;
  std::vector<OrthogonalDecomposition> blocks_;
  std::vector<double> scratch_;
};

struct ActiveSetWorkspace {
  // solve_on_sets: the sets C and B, each entry's column in C, f_B = E f_C + c (one E entry per row
  // of B at most), and the system K f_C = y.
  std::vector<int> C, B, column, E_column;
  std::vector<double> E_value, c, K, y;
  OrthogonalDecomposition decomposition;  // of K
  // polish
  std::vector<double> f_trial, w_trial, f_found, w_found;
  std::vector<EntrySet> sets_trial;
};

// The split of the entries by their sets: the clamping ones C and the bounded ones B, each entry's
// column in C, and f_B = E f_C + c with one E entry per row of B at most (a friction entry at ±mu
// times its normal: a column of E when the normal clamps, else ±mu times the normal's bound).
inline void split_sets(int n, const LcpBounds& bounds, const EntrySet* sets, ActiveSetWorkspace& ws) {
  ws.C.clear();
  ws.B.clear();
  ws.column.assign(n, -1);
  for (int i = 0; i < n; ++i) {
    if (sets[i] == EntrySet::clamping) {
      ws.column[i] = static_cast<int>(ws.C.size());
      ws.C.push_back(i);
    } else {
      ws.B.push_back(i);
    }
  }
  const int nb = static_cast<int>(ws.B.size());
  ws.E_column.assign(nb, -1);
  ws.E_value.assign(nb, 0.0);
  ws.c.assign(nb, 0.0);
  for (int r = 0; r < nb; ++r) {
    const int i = ws.B[r];
    const double sign = sets[i] == EntrySet::upper ? 1.0 : -1.0;
    const int normal = bounds.friction_index != nullptr ? bounds.friction_index[i] : -1;
    if (normal >= 0 && ws.column[normal] >= 0) {
      ws.E_column[r] = ws.column[normal];
      ws.E_value[r] = sign * bounds.mu[i];
    } else if (normal >= 0) {
      ws.c[r] = sign * bounds.mu[i] * (sets[normal] == EntrySet::upper ? bounds.hi[normal] : bounds.lo[normal]);
    } else if (bounds.lo == nullptr) {
      ws.c[r] = 0.0;  // the plain LCP: only f = 0 is a bound
    } else {
      ws.c[r] = sign > 0.0 ? bounds.hi[i] : bounds.lo[i];
    }
  }
}

// K = A_CC + A_CB E (|C| × |C|, row-major) of the split in ws.
inline void clamped_matrix(int n, const double* A, const ActiveSetWorkspace& ws, std::vector<double>& K) {
  const int nc = static_cast<int>(ws.C.size()), nb = static_cast<int>(ws.B.size());
  K.assign(static_cast<size_t>(nc) * nc, 0.0);
  for (int p = 0; p < nc; ++p) {
    const double* row = A + static_cast<size_t>(ws.C[p]) * n;
    double* K_row = K.data() + static_cast<size_t>(p) * nc;
    for (int q = 0; q < nc; ++q) K_row[q] = row[ws.C[q]];
    for (int r = 0; r < nb; ++r)
      if (ws.E_column[r] >= 0) K_row[ws.E_column[r]] += row[ws.B[r]] * ws.E_value[r];
  }
}

// Least-squares-minimal f (n) on the sets and its w = A f + b; with an anchor (n), the f on the sets
// nearest to it instead (a singular K leaves a family of solutions: Gauss–Seidel's iterate picks a
// feasible member more often than the least-norm one). A friction entry at a bound whose normal is
// at a bound too sits at ±mu times that normal's bound.
inline void solve_on_sets(int n, const double* A, const double* b, const LcpBounds& bounds, const EntrySet* sets,
                          double* f, double* w, ActiveSetWorkspace& ws, const double* anchor = nullptr) {
  split_sets(n, bounds, sets, ws);
  const int nc = static_cast<int>(ws.C.size()), nb = static_cast<int>(ws.B.size());
  std::fill(f, f + n, 0.0);
  for (int r = 0; r < nb; ++r) f[ws.B[r]] = ws.c[r];
  if (nc > 0) {
    clamped_matrix(n, A, ws, ws.K);
    ws.y.resize(nc);
    for (int p = 0; p < nc; ++p) {
      const double* row = A + static_cast<size_t>(ws.C[p]) * n;
      double s = b[ws.C[p]];
      for (int r = 0; r < nb; ++r) s += row[ws.B[r]] * ws.c[r];
      ws.y[p] = -s;
      if (anchor != nullptr)  // solve for the change from the anchor
        for (int q = 0; q < nc; ++q) ws.y[p] -= ws.K[static_cast<size_t>(p) * nc + q] * anchor[ws.C[q]];
    }
    ws.decomposition.factor(nc, ws.K.data());
    ws.decomposition.solve(ws.y.data());
    for (int p = 0; p < nc; ++p) f[ws.C[p]] = ws.y[p] + (anchor != nullptr ? anchor[ws.C[p]] : 0.0);
    for (int r = 0; r < nb; ++r)
      if (ws.E_column[r] >= 0) f[ws.B[r]] = ws.E_value[r] * ws.y[ws.E_column[r]] + ws.c[r];
  }
  lcp_velocity(n, A, b, f, w);
}

// The sets with clamping entries within `loose` of a bound moved to it (a normal impulse decaying to
// zero under Gauss–Seidel, and its friction, whose bounds close on zero with it: to the bound w
// pushes against). Returns whether anything moved.
inline bool settle_near_bounds(int n, const double* f, const double* w, const LcpBounds& bounds, const EntrySet* sets,
                               double loose, std::vector<EntrySet>& trial) {
  trial.assign(sets, sets + n);
  bool moved = false;
  for (int i = 0; i < n; ++i) {
    if (sets[i] != EntrySet::clamping) continue;
    double low, high;
    bounds.at(i, f, low, high);
    EntrySet to = EntrySet::clamping;
    if (high - low <= 2.0 * loose)
      to = w[i] >= 0.0 ? EntrySet::lower : EntrySet::upper;
    else if (f[i] - low <= loose)
      to = EntrySet::lower;
    else if (high - f[i] <= loose)
      to = EntrySet::upper;
    if (to != EntrySet::clamping) trial[i] = to, moved = true;
  }
  return moved;
}

// Moves, for a solution (f, w) on `trial`, every clamping entry that left its bounds to the bound it
// crossed and every bounded entry whose w pushes it inside to the clamping set: one block principal
// pivot (Júdice & Pires, Comput. Oper. Res. 21, 1994). Returns whether anything moved.
inline bool pivot(int n, const double* f, const double* w, const LcpBounds& bounds, const Tolerances& t,
                  std::vector<EntrySet>& trial) {
  bool moved = false;
  for (int i = 0; i < n; ++i) {
    double low, high;
    bounds.at(i, f, low, high);
    EntrySet to = trial[i];
    if (trial[i] == EntrySet::clamping)
      to = f[i] < low - t.f ? EntrySet::lower : f[i] > high + t.f ? EntrySet::upper : to;
    else if ((trial[i] == EntrySet::lower && w[i] < -t.w) || (trial[i] == EntrySet::upper && w[i] > t.w))
      to = EntrySet::clamping;
    if (to != trial[i]) trial[i] = to, moved = true;
  }
  return moved;
}

// Solves exactly on the sets of an approximate solution (f, w) and keeps the result when it verifies:
// first with the tied entries (at a bound with w = 0) moved to the clamping set, which spreads an
// impulse evenly over identical contacts, then with the sets as found (least-norm, then nearest to
// f), then with the entries near a bound (√tol, relative) at it, and last by up to `pivots` block
// principal pivots from the sets as found. On success f, w and sets are replaced (sets reclassified)
// and true is returned; otherwise they are left as they were.
inline bool polish(int n, const double* A, const double* b, const LcpBounds& bounds, double* f, double* w,
                   EntrySet* sets, Tolerance tol, ActiveSetWorkspace& ws, int pivots = 8) {
  std::vector<double>&f_new = ws.f_trial, &w_new = ws.w_trial;
  std::vector<EntrySet>& trial = ws.sets_trial;
  f_new.resize(n);
  w_new.resize(n);
  auto solves = [&](const double* anchor) {
    solve_on_sets(n, A, b, bounds, trial.data(), f_new.data(), w_new.data(), ws, anchor);
    if (!verified(n, A, b, f_new.data(), w_new.data(), bounds, trial.data(), tol)) return false;
    std::copy(f_new.begin(), f_new.end(), f);
    std::copy(w_new.begin(), w_new.end(), w);
    classify(n, A, b, f, w, bounds, tol, sets);
    return true;
  };
  const Tolerances t = tolerances(n, A, b, f, tol);
  trial.assign(sets, sets + n);
  bool tied = false;
  for (int i = 0; i < n; ++i)
    if (sets[i] != EntrySet::clamping && std::abs(w[i]) <= t.w) trial[i] = EntrySet::clamping, tied = true;
  if (tied && solves(nullptr)) return true;
  trial.assign(sets, sets + n);
  if (solves(nullptr)) return true;
  ws.f_found.assign(f_new.begin(), f_new.end());  // the pivots start from this solve
  ws.w_found.assign(w_new.begin(), w_new.end());
  if (solves(f)) return true;
  if (settle_near_bounds(n, f, w, bounds, sets, std::sqrt(tol.relative) * t.f / tol.relative, trial) && solves(nullptr))
    return true;
  trial.assign(sets, sets + n);
  const double *f_pivot = ws.f_found.data(), *w_pivot = ws.w_found.data();
  for (int round = 0; round < pivots; ++round) {
    if (!pivot(n, f_pivot, w_pivot, bounds, tolerances(n, A, b, f_pivot, tol), trial)) return false;
    if (solves(nullptr)) return true;
    f_pivot = f_new.data(), w_pivot = w_new.data();
  }
  return false;
}

}  // namespace dcol::lcp

namespace dcol::lcp {

// Projected Gauss–Seidel whose iterate's sets are solved on exactly (polish) after 16, 32, 64, …
// sweeps, stopping at the first that verifies: on the rank-deficient problems of many contacts the
// sets settle in a few sweeps while the iterate creeps along the null space for thousands. Ends as
// solve_pgs otherwise (and polishes a converged iterate once more). w receives A f + b, sets the sets.
inline LcpReport solve_pgs_polished(int n, const double* A, const double* b, const LcpBounds& bounds, double* f,
                                    double* w, EntrySet* sets, LcpWorkspace& work, ActiveSetWorkspace& active,
                                    int max_iterations, Tolerance tol) {
  LcpReport report;
  int sweeps = 0;
  for (int chunk = 16;; chunk *= 2) {
    const int budget = std::min(chunk, max_iterations - sweeps);
    const LcpReport part = solve_pgs(n, A, b, bounds, f, work, budget, tol);
    sweeps += part.iterations;
    report = part;
    report.iterations = sweeps;
    if (part.status == LcpStatus::invalid_problem) return report;
    lcp_velocity(n, A, b, f, w);
    classify(n, A, b, f, w, bounds, tol, sets);
    if (polish(n, A, b, bounds, f, w, sets, tol, active)) {
      report.status = LcpStatus::solved;
      report.residual = natural_residual(n, A, b, f, w, bounds, tol.floor);
      return report;
    }
    if (part.status == LcpStatus::solved || sweeps >= max_iterations) return report;
  }
}

}  // namespace dcol::lcp
