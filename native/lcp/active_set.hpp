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

#include "core/cholesky.hpp"
#include "core/dot.hpp"
#include "core/magnitudes.hpp"
#include "lcp/boxed_lemke.hpp"
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

// The two magnitudes of A that the tolerances depend on: its largest entry and its smallest positive
// diagonal entry (0 when none is positive).
struct MatrixScale {
  double largest = 0.0, smallest_positive_diagonal = 0.0;
};

// A's scale (n × n row-major), in O(n²): computed once per solve, not per test of an iterate.
inline MatrixScale matrix_scale(int n, const double* A) {
  return {largest_magnitude(static_cast<size_t>(n) * n, A), smallest_positive_diagonal(n, A)};
}

// The scale of the Gram matrix A = Z Zᵀ of Z's rows (n × d row-major), in O(n d) without forming A: by
// Cauchy–Schwarz its largest entry is on its diagonal, A_ii = |Z_i|².
inline MatrixScale gram_scale(int n, int d, const double* Z) {
  MatrixScale scale;
  double smallest = std::numeric_limits<double>::infinity();
  for (int i = 0; i < n; ++i) {
    const double* row = Z + static_cast<size_t>(i) * d;
    const double diagonal = dot(row, row, d);
    scale.largest = std::max(scale.largest, diagonal);
    if (diagonal > 0.0) smallest = std::min(smallest, diagonal);
  }
  scale.smallest_positive_diagonal = std::isfinite(smallest) ? smallest : 0.0;
  return scale;
}

// w = A f + b for the Gram matrix A = Z Zᵀ of Z's rows (n × d row-major), without forming A: through
// response = Zᵀ f (d). f holds `count` impulses, entry p on row rows[p] (rows ascending; null: rows 0 to
// count − 1); every other row's impulse is zero.
inline void gram_velocities(int n, int d, const double* Z, const double* b, int count, const int* rows, const double* f,
                            double* w, std::vector<double>& response) {
  auto row = [&](int i) { return Z + static_cast<size_t>(i) * d; };
  response.assign(d, 0.0);
  for (int p = 0; p < count; ++p)
    if (f[p] != 0.0)
      for (int e = 0; e < d; ++e) response[e] += f[p] * row(rows != nullptr ? rows[p] : p)[e];
  for (int i = 0; i < n; ++i) w[i] = b[i] + dot(row(i), response.data(), d);
}

// From the largest magnitudes of f and b and A's scale. Relative to the data alone (no floor): w to
// W = max(|b|∞, |A|∞ F), F = min(|f|∞, cap), and f to W / |A|∞ (the impulse that changes a w by W). With
// a floor: f to max(floor, F), w to max(floor, |b|∞, |A|∞ f's).
inline Tolerances scaled_tolerances(double f_max, double b_max, const MatrixScale& A, Tolerance tol) {
  const double f_bounded = std::min(f_max, impulse_cap(std::max(b_max, tol.floor), A.smallest_positive_diagonal));
  if (tol.floor > 0.0) {
    const double f_scale = std::max(tol.floor, f_bounded);
    return {tol.relative * f_scale, tol.relative * std::max({tol.floor, b_max, A.largest * f_scale})};
  }
  const double w_scale = std::max(b_max, A.largest * f_bounded);
  const double f_scale = A.largest > 0.0 ? w_scale / A.largest : f_bounded;
  return {tol.relative * f_scale, tol.relative * w_scale};
}

inline Tolerances tolerances(int n, const MatrixScale& A, const double* b, const double* f, Tolerance tol) {
  return scaled_tolerances(largest_magnitude(n, f), largest_magnitude(n, b), A, tol);
}

// The sets of an (approximate) solution: of each complementary pair the smaller one is the zero one.
inline void classify(int n, const MatrixScale& A, const double* b, const double* f, const double* w,
                     const LcpBounds& bounds, Tolerance tol, EntrySet* sets) {
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
inline bool verified(int n, const MatrixScale& A, const double* b, const double* f, const double* w,
                     const LcpBounds& bounds, const EntrySet* sets, Tolerance tol) {
  const Tolerances t = tolerances(n, A, b, f, tol);
  for (int i = 0; i < n; ++i) {
    double low, high;
    bounds.at(i, f, low, high);
    switch (sets[i]) {
      case EntrySet::clamping:
        if (f[i] < low - t.f || f[i] > high + t.f || std::abs(w[i]) > t.w) return false;
        break;
      case EntrySet::lower:
      case EntrySet::upper:
        // A box of no width (a friction row whose normal takes no impulse: ±μ·0) holds its f
        // whatever the sign of w, so the side it was classified on last step does not matter.
        if (high - low <= t.f) break;
        if (sets[i] == EntrySet::lower ? w[i] < -t.w : w[i] > t.w) return false;
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

// Complete orthogonal decomposition of an m × n matrix K (Golub & Van Loan §5.5.2): QR with column
// pivoting K P = Q R, and for a rank r below n a QR of R's leading rows transposed, R₁ᵀ = Z [T; 0], so
// that K = Q [Tᵀ 0; 0 0] Zᵀ Pᵀ. It applies the pseudo-inverse K⁺ = P Z [T⁻ᵀ 0; 0 0] Qᵀ, its transpose,
// and the projector I − K⁺K = P Z [0 0; 0 I] Zᵀ Pᵀ onto K's null space, each in O(m n). The rank ends
// where |R_kk| ≤ cutoff |R_00| (kRankCutoff by default): contact rows that are dependent in exact
// arithmetic (coplanar contacts) are so only to round-off, and a cut-off at ε would invert that
// round-off into huge impulses.
constexpr double kRankCutoff = 1e-10;

class OrthogonalDecomposition {
 public:
  // Factors K (m × n row-major). R_ and W_ are stored by columns, so that the Householder reflections
  // and the pivots' column norms run over contiguous memory. It factors K / s with s the power of two
  // nearest above |K|∞, whose squared column norms neither underflow nor overflow whatever the units of
  // K, and the solves divide by s again: a power of two, so that for K of ordinary size every result is
  // exactly that of K itself.
  void factor(int m, int n, const double* K, double cutoff = kRankCutoff) {
    m_ = m;
    n_ = n;
    rank_ = std::min(m, n);
    scale_ = power_of_two_above(largest_magnitude(static_cast<size_t>(m) * n, K));
    R_.resize(static_cast<size_t>(m) * n);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) R_[static_cast<size_t>(j) * m + i] = K[static_cast<size_t>(i) * n + j] / scale_;
    perm_.resize(n);
    for (int j = 0; j < n; ++j) perm_[j] = j;
    diag_.resize(rank_);
    q_betas_.resize(rank_);
    for (int k = 0; k < std::min(m, n); ++k) {
      int pivot = k;
      double best = -1.0;
      for (int j = k; j < n; ++j) {
        const double s = dot(column(j) + k, column(j) + k, m - k);
        if (s > best) best = s, pivot = j;
      }
      if (pivot != k) {
        std::swap_ranges(column(k), column(k) + m, column(pivot));
        std::swap(perm_[k], perm_[pivot]);
      }
      double alpha;
      q_betas_[k] = detail::householder(m - k, column(k) + k, &alpha);
      diag_[k] = alpha;
      if (k == 0 ? alpha == 0.0 : std::abs(alpha) <= cutoff * std::abs(diag_[0])) {
        rank_ = k;
        break;
      }
      for (int j = k + 1; j < n; ++j) reflect(q_betas_[k], column(k) + k, column(j) + k, m - k);
    }
    if (rank_ == n || rank_ == 0) return;
    // Rows 0..rank−1 of R, transposed into W (n × rank), W = Z [T; 0] by Householder QR.
    const int r = rank_;
    W_.assign(static_cast<size_t>(n) * r, 0.0);
    for (int row = 0; row < r; ++row) {
      W_[static_cast<size_t>(row) * n + row] = diag_[row];
      for (int j = row + 1; j < n; ++j) W_[static_cast<size_t>(row) * n + j] = column(j)[row];
    }
    z_betas_.resize(r);
    t_diag_.resize(r);
    for (int k = 0; k < r; ++k) {
      z_betas_[k] = detail::householder(n - k, w_column(k) + k, &t_diag_[k]);
      for (int j = k + 1; j < r; ++j) reflect(z_betas_[k], w_column(k) + k, w_column(j) + k, n - k);
    }
  }

  // A square K (m × m).
  void factor(int m, const double* K) { factor(m, m, K); }

  int rank() const { return rank_; }
  bool full_rank() const { return rank_ == n_ && rank_ == m_; }

  // x (n) ← K⁺ y (y: m), the minimum-norm least-squares solution of K x = y; x may be y.
  void solve(const double* y, double* x) {
    const int m = m_, n = n_, r = rank_;
    y_.assign(y, y + m);
    for (int k = 0; k < r; ++k) reflect(q_betas_[k], column(k) + k, y_.data() + k, m - k);  // Qᵀ y
    x_.assign(n, 0.0);
    if (r == n) {
      for (int k = n - 1; k >= 0; --k) {  // R x = (Qᵀ y)[0:n]
        double s = y_[k];
        for (int j = k + 1; j < n; ++j) s -= column(j)[k] * x_[j];
        x_[k] = s / diag_[k];
      }
    } else if (r > 0) {
      for (int k = 0; k < r; ++k) {  // Tᵀ t = (Qᵀ y)[0:r], x = Z [t; 0]
        double s = y_[k];
        for (int j = 0; j < k; ++j) s -= w_column(k)[j] * x_[j];
        x_[k] = s / t_diag_[k];
      }
      for (int k = r - 1; k >= 0; --k) reflect(z_betas_[k], w_column(k) + k, x_.data() + k, n - k);
    }
    for (int j = 0; j < n; ++j) x[perm_[j]] = x_[j] / scale_;
  }

  // y (m) ← K⁺ᵀ x (x: n); y may be x.
  void solve_transposed(const double* x, double* y) {
    const int m = m_, n = n_, r = rank_;
    x_.resize(n);
    for (int j = 0; j < n; ++j) x_[j] = x[perm_[j]];  // Pᵀ x
    if (r < n && r > 0)
      for (int k = 0; k < r; ++k) reflect(z_betas_[k], w_column(k) + k, x_.data() + k, n - k);  // Zᵀ
    y_.assign(m, 0.0);
    if (r == n) {
      for (int k = 0; k < n; ++k) {  // Rᵀ t = Pᵀ x
        double s = x_[k];
        for (int j = 0; j < k; ++j) s -= column(k)[j] * y_[j];
        y_[k] = s / diag_[k];
      }
    } else {
      for (int k = r - 1; k >= 0; --k) {  // T t = (Zᵀ Pᵀ x)[0:r]
        double s = x_[k];
        for (int j = k + 1; j < r; ++j) s -= w_column(j)[k] * y_[j];
        y_[k] = s / t_diag_[k];
      }
    }
    for (int k = r - 1; k >= 0; --k) reflect(q_betas_[k], column(k) + k, y_.data() + k, m - k);  // Q
    for (int i = 0; i < m; ++i) y[i] = y_[i] / scale_;
  }

  // y (m) ← Qᵀ y, which rotates K's column space onto the first rank() entries.
  void apply_qt(double* y) const {
    for (int k = 0; k < rank_; ++k) reflect(q_betas_[k], column(k) + k, y + k, m_ - k);
  }

  // S (rank × n, row-major) ← the leading rows of R in K's own column order, in K's units: K = Q [S; 0]
  // (exactly when factored with cutoff 0, which stops only at an exactly zero column).
  void leading_rows(double* S) const {
    for (int k = 0; k < rank_; ++k)
      for (int j = 0; j < n_; ++j)
        S[static_cast<size_t>(k) * n_ + perm_[j]] = (j == k ? diag_[k] : j > k ? column(j)[k] : 0.0) * scale_;
  }

  // In place, for a square K: y (m) ← K⁺ y, K⁺ᵀ y.
  void solve(double* y) { solve(y, y); }
  void solve_transposed(double* y) { solve_transposed(y, y); }

  // y (n) ← (I − K⁺K) y, zero for K of full column rank.
  void project_null(double* y) {
    const int n = n_, r = rank_;
    if (r == n) {
      std::fill(y, y + n, 0.0);
      return;
    }
    x_.resize(n);
    for (int j = 0; j < n; ++j) x_[j] = y[perm_[j]];
    for (int k = 0; k < r; ++k) reflect(z_betas_[k], w_column(k) + k, x_.data() + k, n - k);
    std::fill(x_.begin(), x_.begin() + r, 0.0);
    for (int k = r - 1; k >= 0; --k) reflect(z_betas_[k], w_column(k) + k, x_.data() + k, n - k);
    for (int j = 0; j < n; ++j) y[perm_[j]] = x_[j];
  }

 private:
  // x ← (I − β v vᵀ) x over `length` contiguous entries, v₀ = 1 implied.
  static void reflect(double beta, const double* v, double* x, int length) {
    if (beta == 0.0) return;
    const double s = beta * (x[0] + dot(v + 1, x + 1, length - 1));
    x[0] -= s;
    for (int i = 1; i < length; ++i) x[i] -= s * v[i];
  }
  double* column(int j) { return R_.data() + static_cast<size_t>(j) * m_; }
  const double* column(int j) const { return R_.data() + static_cast<size_t>(j) * m_; }
  double* w_column(int k) { return W_.data() + static_cast<size_t>(k) * n_; }

  int m_ = 0, n_ = 0, rank_ = 0;
  double scale_ = 1.0;  // a power of two near |K|∞
  std::vector<double> R_, diag_, q_betas_, W_, z_betas_, t_diag_, x_, y_;
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

  // solve and project_null on `count` vectors (X: count × m, each contiguous). A block with fewer rows
  // than there are vectors is applied as its explicit matrix (K⁺ or I − K⁺K of the block, from its
  // decomposition's solves on the unit vectors): products that vectorize in place of the reflections'
  // short dependent loops, one per vector.
  void solve_many(double* X, int count) { apply_many(X, count, &OrthogonalDecomposition::solve); }
  void project_null_many(double* X, int count) { apply_many(X, count, &OrthogonalDecomposition::project_null); }

 private:
  void apply_many(double* X, int count, void (OrthogonalDecomposition::*operation)(double*)) {
    for (int g = 0; g < groups_; ++g) {
      const int* rows = members_.data() + start_[g];
      const int size = start_[g + 1] - start_[g];
      if (count <= size) {
        for (int c = 0; c < count; ++c) apply_block(g, X + static_cast<size_t>(c) * m_, operation);
        continue;
      }
      // The block's matrix by columns: column j is the operation on the j-th unit vector.
      matrix_.assign(static_cast<size_t>(size) * size, 0.0);
      for (int j = 0; j < size; ++j) {
        double* column = matrix_.data() + static_cast<size_t>(j) * size;
        column[j] = 1.0;
        (blocks_[g].*operation)(column);
      }
      scratch_.resize(size);
      for (int c = 0; c < count; ++c) {
        double* x = X + static_cast<size_t>(c) * m_;
        std::fill(scratch_.begin(), scratch_.end(), 0.0);
        for (int j = 0; j < size; ++j) {
          const double value = x[rows[j]];
          if (value == 0.0) continue;
          const double* column = matrix_.data() + static_cast<size_t>(j) * size;
          for (int i = 0; i < size; ++i) scratch_[i] += column[i] * value;
        }
        for (int i = 0; i < size; ++i) x[rows[i]] = scratch_[i];
      }
    }
  }

  void apply_block(int g, double* y, void (OrthogonalDecomposition::*operation)(double*)) {
    const int* rows = members_.data() + start_[g];
    const int size = start_[g + 1] - start_[g];
    scratch_.resize(size);
    bool zero = true;
    for (int p = 0; p < size; ++p) scratch_[p] = y[rows[p]], zero = zero && scratch_[p] == 0.0;
    if (zero) return;  // each operation maps 0 to 0: a block the column does not reach stays zero
    (blocks_[g].*operation)(scratch_.data());
    for (int p = 0; p < size; ++p) y[rows[p]] = scratch_[p];
  }

  void apply(double* y, void (OrthogonalDecomposition::*operation)(double*)) {
    for (int g = 0; g < groups_; ++g) apply_block(g, y, operation);
  }

  int m_ = 0, rank_ = 0, groups_ = 0;
  std::vector<int> group_of_label_, start_, members_, fill_;
  std::vector<OrthogonalDecomposition> blocks_;
  std::vector<double> scratch_, matrix_;
};

struct ActiveSetWorkspace {
  // solve_on_sets: the sets C and B, each entry's column in C, f_B = E f_C + c (one E entry per row
  // of B at most), and the system K f_C = y.
  std::vector<int> C, B, column, E_column;
  std::vector<double> E_value, c, K, y;
  OrthogonalDecomposition decomposition;  // of K, or of Z_C in solve_on_gram_sets
  // solve_on_gram_sets: Zᵀ f, Z_C⁺ y (d) or S (rank × d), H and G = S Hᵀ and G's decomposition;
  // solve_full_rank_product: a normal matrix, the Cholesky factors of Z_Cᵀ Z_C and HᵀH and a row's
  // nonzero columns.
  std::vector<double> response, reduced, H, G, N, L, L_H;
  std::vector<int> nonzero;
  OrthogonalDecomposition product_decomposition;
  // polish, and the first solution on sets that verified with a natural residual above tol
  std::vector<double> f_trial, w_trial, f_found, w_found, f_verified, w_verified;
  std::vector<double> f_best;  // solve_pgs_polished's best verified solution above tol
  double verified_residual = 0.0;
  std::vector<EntrySet> sets_trial;
  // solve_pgs_polished's fallback: Lemke's solution, its w and sets
  std::vector<double> f_pivoted, w_pivoted;
  std::vector<EntrySet> sets_pivoted;
  BoxedLemkeWorkspace lemke;
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

// K's rank cut-off for solve_on_gram_sets when it factors Z_C where solve_on_sets factors K = Z_C Z_Cᵀ:
// K's singular values are Z_C's squared, so √kRankCutoff on Z_C's scale is kRankCutoff on K's.
constexpr double kGramRankCutoff = 1e-5;

// The lower triangle of Xᵀ X (d × d) into out for X (m × d row-major), summed over the nonzeros of X's
// rows only (a pile's contact moves two of its island's bodies); largest: its largest diagonal entry.
inline void normal_matrix(int m, int d, const double* X, std::vector<double>& out, std::vector<int>& nonzero,
                          double& largest) {
  out.assign(static_cast<size_t>(d) * d, 0.0);
  for (int p = 0; p < m; ++p) {
    const double* x = X + static_cast<size_t>(p) * d;
    nonzero.clear();
    for (int e = 0; e < d; ++e)
      if (x[e] != 0.0) nonzero.push_back(e);
    for (const int a : nonzero)
      for (const int b : nonzero) {
        if (b > a) break;
        out[static_cast<size_t>(a) * d + b] += x[a] * x[b];
      }
  }
  largest = 0.0;
  for (int e = 0; e < d; ++e) largest = std::max(largest, out[static_cast<size_t>(e) * d + e]);
}

// y (m) ← (Z Hᵀ)⁺ y for Z and H (m × d row-major) both of full column rank d: Z Hᵀ is then a full-rank
// factorization, whose pseudo-inverse is (Hᵀ)⁺ Z⁺ = H (HᵀH)⁻¹ (ZᵀZ)⁻¹ Zᵀ, two Cholesky factors of d × d
// normal matrices (one when H is Z, given as nullptr). Each costs m d² / 2 at most and d³ / 6. Returns
// false, y untouched, when a pivot falls below kRankCutoff of its matrix's largest diagonal entry (the
// normal matrices' eigenvalues are the squared singular values, and Z Zᵀ's nonzero eigenvalues ZᵀZ's):
// the factors are then not of full column rank.
inline bool solve_full_rank_product(int m, int d, const double* Z, const double* H, double* y, ActiveSetWorkspace& ws) {
  double largest;
  normal_matrix(m, d, Z, ws.N, ws.nonzero, largest);
  if (!cholesky(d, ws.N.data(), 0.0, ws.L, kRankCutoff * largest)) return false;
  if (H != nullptr) {
    normal_matrix(m, d, H, ws.N, ws.nonzero, largest);
    if (!cholesky(d, ws.N.data(), 0.0, ws.L_H, kRankCutoff * largest)) return false;
  }
  ws.reduced.assign(d, 0.0);  // Zᵀ y, then t = (HᵀH)⁻¹ (ZᵀZ)⁻¹ Zᵀ y
  for (int p = 0; p < m; ++p)
    for (int e = 0; e < d; ++e) ws.reduced[e] += Z[static_cast<size_t>(p) * d + e] * y[p];
  cholesky_solve(d, ws.L, ws.reduced.data());
  cholesky_solve(d, H != nullptr ? ws.L_H : ws.L, ws.reduced.data());
  const double* out_factor = H != nullptr ? H : Z;
  for (int p = 0; p < m; ++p) y[p] = dot(out_factor + static_cast<size_t>(p) * d, ws.reduced.data(), d);
  return true;
}

// solve_on_sets (least-squares-minimal, no anchor) for A = Z Zᵀ given by Z (n × d row-major, the rows'
// whitened impulse responses), without forming A: with the bounded entries written f_B = E f_C + c, K =
// A_CC + A_CB E = Z_C Hᵀ with H = Z_C + Eᵀ Z_B (|C| × d each), so the cost is |C| d² instead of
// |C|³ where contacts outnumber the dofs that move them (a box resting on four corners, a pile).
// Where Z_C and H have full column rank (every dof held by the clamping rows), by solve_full_rank_product;
// otherwise:
//   * E = 0 (every clamping contact sticking): K = Z_C Z_Cᵀ and K⁺ = (Z_C⁺)ᵀ Z_C⁺, one orthogonal
//     decomposition of Z_C.
//   * E ≠ 0 (sliding friction follows a clamping normal): Z_C = Q [S; 0] by QR, so K = Q [G; 0] with
//     G = S Hᵀ (at most d × |C|) and K⁺ = [G⁺ 0] Qᵀ, G's singular values being K's.
inline void solve_on_gram_sets(int n, int d, const double* Z, const double* b, const LcpBounds& bounds,
                               const EntrySet* sets, double* f, double* w, ActiveSetWorkspace& ws) {
  split_sets(n, bounds, sets, ws);
  const int nc = static_cast<int>(ws.C.size()), nb = static_cast<int>(ws.B.size());
  auto row = [&](int i) { return Z + static_cast<size_t>(i) * d; };
  ws.response.assign(d, 0.0);  // Zᵀ c: the bounds' impulses, whitened
  for (int r = 0; r < nb; ++r)
    if (ws.c[r] != 0.0)
      for (int e = 0; e < d; ++e) ws.response[e] += ws.c[r] * row(ws.B[r])[e];
  ws.y.resize(nc);
  ws.K.resize(static_cast<size_t>(nc) * d);  // Z_C
  for (int p = 0; p < nc; ++p) {
    std::copy_n(row(ws.C[p]), d, ws.K.data() + static_cast<size_t>(p) * d);
    ws.y[p] = -(b[ws.C[p]] + dot(row(ws.C[p]), ws.response.data(), d));
  }
  const bool coupled = std::any_of(ws.E_column.begin(), ws.E_column.end(), [](int column) { return column >= 0; });
  if (coupled) {
    ws.H.assign(ws.K.begin(), ws.K.end());  // H = Z_C + Eᵀ Z_B
    for (int r = 0; r < nb; ++r)
      if (ws.E_column[r] >= 0)
        for (int e = 0; e < d; ++e)
          ws.H[static_cast<size_t>(ws.E_column[r]) * d + e] += ws.E_value[r] * row(ws.B[r])[e];
  }
  const bool solved =
      nc == 0 || solve_full_rank_product(nc, d, ws.K.data(), coupled ? ws.H.data() : nullptr, ws.y.data(), ws);
  if (!solved && !coupled) {
    ws.decomposition.factor(nc, d, ws.K.data(), kGramRankCutoff);
    ws.reduced.resize(d);
    ws.decomposition.solve(ws.y.data(), ws.reduced.data());             // Z_C⁺ y
    ws.decomposition.solve_transposed(ws.reduced.data(), ws.y.data());  // (Z_C⁺)ᵀ Z_C⁺ y
  } else if (!solved) {
    ws.decomposition.factor(nc, d, ws.K.data(), 0.0);
    const int rank = ws.decomposition.rank();
    ws.reduced.resize(static_cast<size_t>(rank) * d);  // S
    ws.decomposition.leading_rows(ws.reduced.data());
    ws.G.resize(static_cast<size_t>(rank) * nc);
    for (int k = 0; k < rank; ++k)
      for (int p = 0; p < nc; ++p)
        ws.G[static_cast<size_t>(k) * nc + p] =
            dot(ws.reduced.data() + static_cast<size_t>(k) * d, ws.H.data() + static_cast<size_t>(p) * d, d);
    ws.decomposition.apply_qt(ws.y.data());
    ws.product_decomposition.factor(rank, nc, ws.G.data());
    ws.product_decomposition.solve(ws.y.data(), ws.y.data());  // G⁺ (Qᵀ y)[0:rank]
  }
  std::fill(f, f + n, 0.0);
  for (int p = 0; p < nc; ++p) f[ws.C[p]] = ws.y[p];
  for (int r = 0; r < nb; ++r)
    f[ws.B[r]] = (ws.E_column[r] >= 0 ? ws.E_value[r] * ws.y[ws.E_column[r]] : 0.0) + ws.c[r];
  gram_velocities(n, d, Z, b, n, nullptr, f, w, ws.response);
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

// What polish found: no solution on any sets it tried, one that verifies on its sets but whose natural
// residual is above tol, or one within tol.
enum class Polished { none, above_tolerance, within_tolerance };

// Solves exactly on the sets of an approximate solution (f, w) and keeps the result when it verifies:
// first with the tied entries (at a bound with w = 0) moved to the clamping set, which spreads an
// impulse evenly over identical contacts, then with the sets as found (least-norm, then nearest to
// f), then with the entries near a bound (√tol, relative) at it, and last by up to `pivots` block
// principal pivots from the sets as found. The sets' tolerances measure w against |A|∞, the natural
// residual each w_i against A_ii (or, with a floor, as it is), and a solver's status is that residual's:
// the first solve that verifies with its residual within tol replaces f, w and sets (sets
// reclassified) and within_tolerance is returned. Otherwise f, w and sets are left as they were; when a
// solve verified with a residual above tol (the least-squares solution on sets whose equations
// disagree beyond round-off, coplanar contacts), the first such is left in ws.f_verified,
// ws.w_verified and ws.verified_residual and above_tolerance is returned.
inline Polished polish(int n, const double* A, const MatrixScale& scale, const double* b, const LcpBounds& bounds,
                       double* f, double* w, EntrySet* sets, Tolerance tol, ActiveSetWorkspace& ws, int pivots = 8) {
  std::vector<double>&f_new = ws.f_trial, &w_new = ws.w_trial;
  std::vector<EntrySet>& trial = ws.sets_trial;
  f_new.resize(n);
  w_new.resize(n);
  bool verified_above = false;
  auto solves = [&](const double* anchor) {
    solve_on_sets(n, A, b, bounds, trial.data(), f_new.data(), w_new.data(), ws, anchor);
    if (!verified(n, scale, b, f_new.data(), w_new.data(), bounds, trial.data(), tol)) return false;
    const double residual = natural_residual(n, A, b, f_new.data(), w_new.data(), bounds, tol.floor);
    if (!(residual <= tol.relative)) {
      if (!verified_above) {
        verified_above = true;
        ws.verified_residual = residual;
        ws.f_verified.assign(f_new.begin(), f_new.end());
        ws.w_verified.assign(w_new.begin(), w_new.end());
      }
      return false;
    }
    std::copy(f_new.begin(), f_new.end(), f);
    std::copy(w_new.begin(), w_new.end(), w);
    classify(n, scale, b, f, w, bounds, tol, sets);
    return true;
  };
  auto failed = [&] { return verified_above ? Polished::above_tolerance : Polished::none; };
  const Tolerances t = tolerances(n, scale, b, f, tol);
  trial.assign(sets, sets + n);
  bool tied = false;
  for (int i = 0; i < n; ++i)
    if (sets[i] != EntrySet::clamping && std::abs(w[i]) <= t.w) trial[i] = EntrySet::clamping, tied = true;
  if (tied && solves(nullptr)) return Polished::within_tolerance;
  trial.assign(sets, sets + n);
  if (solves(nullptr)) return Polished::within_tolerance;
  ws.f_found.assign(f_new.begin(), f_new.end());  // the pivots start from this solve
  ws.w_found.assign(w_new.begin(), w_new.end());
  if (solves(f)) return Polished::within_tolerance;
  if (settle_near_bounds(n, f, w, bounds, sets, std::sqrt(tol.relative) * t.f / tol.relative, trial) && solves(nullptr))
    return Polished::within_tolerance;
  trial.assign(sets, sets + n);
  const double *f_pivot = ws.f_found.data(), *w_pivot = ws.w_found.data();
  for (int round = 0; round < pivots; ++round) {
    if (!pivot(n, f_pivot, w_pivot, bounds, tolerances(n, scale, b, f_pivot, tol), trial)) return failed();
    if (solves(nullptr)) return Polished::within_tolerance;
    f_pivot = f_new.data(), w_pivot = w_new.data();
  }
  return failed();
}

}  // namespace dcol::lcp

namespace dcol::lcp {

// Lemke's solution of the boxed LCP (boxed_lemke.hpp) in place of (f, w, sets) when it solves the
// problem: the first proximal round's f that polish makes exact on its sets (the least-squares split
// that Gauss–Seidel's iterate would have had), or that verifies on its own sets with a natural residual
// within tol. Both test f against tolerances whose impulse scale is capped (impulse_cap): a residual
// small only relative to a run-off f is not taken. Returns whether it replaced them; report's status
// and residual then say so. Problems of more than kLemkeMaxEntries entries are left as they are.
inline bool replace_by_pivoting(int n, const double* A, const MatrixScale& scale, const double* b,
                                const LcpBounds& bounds, double* f, double* w, EntrySet* sets, Tolerance tol,
                                ActiveSetWorkspace& ws, LcpReport& report) {
  if (n > kLemkeMaxEntries) return false;
  ws.f_pivoted.resize(n);
  ws.w_pivoted.resize(n);
  ws.sets_pivoted.resize(n);
  double* w_new = ws.w_pivoted.data();
  EntrySet* sets_new = ws.sets_pivoted.data();
  bool solves = false;
  auto finish = [&](double* f_round) {  // polish leaves f_round, w_new and sets_new as they were on failure
    lcp_velocity(n, A, b, f_round, w_new);
    classify(n, scale, b, f_round, w_new, bounds, tol, sets_new);
    solves = polish(n, A, scale, b, bounds, f_round, w_new, sets_new, tol, ws) == Polished::within_tolerance ||
             (verified(n, scale, b, f_round, w_new, bounds, sets_new, tol) &&
              natural_residual(n, A, b, f_round, w_new, bounds, tol.floor) <= tol.relative);
    return solves;
  };
  const LcpReport pivoting = solve_boxed_lemke(n, A, b, bounds, ws.f_pivoted.data(), ws.lemke, tol, finish);
  if (!solves) return false;
  std::copy_n(ws.f_pivoted.data(), n, f);
  std::copy_n(w_new, n, w);
  std::copy_n(sets_new, n, sets);
  report.status = LcpStatus::solved;
  report.residual = pivoting.residual;
  return true;
}

// Lemke's method on a boxed LCP of n entries pivots a dense tableau some n times, which costs about as
// much as kPivotingSweepsPerEntry · n of Gauss–Seidel's sweeps (n² each): past that many sweeps without
// a solution, solve_pgs_polished tries it.
constexpr int kPivotingSweepsPerEntry = 16;

// Projected Gauss–Seidel whose iterate's sets are solved on exactly (polish) after 16, 32, 64, …
// sweeps, stopping at the first within tol: on the rank-deficient problems of many contacts the
// sets settle in a few sweeps while the iterate creeps along the null space for thousands. A polish
// that verifies only above tol, nearer a solution than the iterate (the least-squares solution on
// sets whose equations disagree), is kept as the best so far, and Lemke's method is tried once then,
// or once the sweeps have cost as much as it would (kPivotingSweepsPerEntry): sets that keep changing
// on a degenerate problem can take tens of thousands of sweeps to settle. Failing that, the sweeps go
// on, since later sets can agree. When the sweeps run out, Lemke's method (if not tried yet), else the
// best verified solution, else the iterate, with the status iteration_limit; ends as solve_pgs
// otherwise (and polishes a converged iterate once more). w receives A f + b, sets the sets.
inline LcpReport solve_pgs_polished(int n, const double* A, const double* b, const LcpBounds& bounds, double* f,
                                    double* w, EntrySet* sets, LcpWorkspace& work, ActiveSetWorkspace& active,
                                    int max_iterations, Tolerance tol) {
  LcpReport report;
  const MatrixScale scale = matrix_scale(n, A);
  int sweeps = 0;
  bool pivoted = false;
  double best_residual = std::numeric_limits<double>::infinity();  // of active.f_best
  for (int chunk = 16;; chunk *= 2) {
    const int budget = std::min(chunk, max_iterations - sweeps);
    const LcpReport part = solve_pgs(n, A, b, bounds, f, work, budget, tol);
    sweeps += part.iterations;
    report = part;
    report.iterations = sweeps;
    if (part.status == LcpStatus::invalid_problem) return report;
    lcp_velocity(n, A, b, f, w);
    classify(n, scale, b, f, w, bounds, tol, sets);
    const Polished polished = polish(n, A, scale, b, bounds, f, w, sets, tol, active);
    if (polished == Polished::within_tolerance) {
      report.status = LcpStatus::solved;
      report.residual = natural_residual(n, A, b, f, w, bounds, tol.floor);
      return report;
    }
    if (part.status == LcpStatus::solved) return report;
    const bool nearer =
        polished == Polished::above_tolerance && active.verified_residual < std::min(part.residual, best_residual);
    if (nearer) {
      best_residual = active.verified_residual;
      active.f_best.assign(active.f_verified.begin(), active.f_verified.end());
    }
    // Sets whose equations disagree are Gauss–Seidel's; Lemke's path may end on others that agree.
    if (!pivoted && (nearer || sweeps >= kPivotingSweepsPerEntry * n)) {
      pivoted = true;
      if (replace_by_pivoting(n, A, scale, b, bounds, f, w, sets, tol, active, report)) return report;
    }
    if (sweeps >= max_iterations) {
      if (!pivoted && replace_by_pivoting(n, A, scale, b, bounds, f, w, sets, tol, active, report)) return report;
      if (best_residual < report.residual) {
        std::copy(active.f_best.begin(), active.f_best.end(), f);
        lcp_velocity(n, A, b, f, w);
        classify(n, scale, b, f, w, bounds, tol, sets);
        report.residual = best_residual;
      }
      return report;
    }
  }
}

}  // namespace dcol::lcp
