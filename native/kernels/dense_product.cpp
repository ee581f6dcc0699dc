// dense_product (core/dense_product.hpp) in a baseline and an AVX2+FMA build, chosen once per process
// from the processor's instruction sets. Its inner loop (a row of B scaled into a row of C) vectorizes
// to the target's width; the two builds differ in rounding only where FMA fuses a multiply-add.
#include "core/dense_product.hpp"

#include <algorithm>
#include <cstddef>

namespace dcol {
namespace {

// The product's loops, inlined into each target's build below (a function of the baseline target may
// be inlined into one of a wider target, which then compiles it for its own vectors). A row of C takes
// four of A's nonzero entries per pass over its columns: one load and store of C for four
// multiply-adds, where a pass per entry would load and store it four times.
__attribute__((always_inline)) inline void product_loops(int r, int k, int c, double alpha, const double* A, int lda,
                                                         const double* B, int ldb, double* C, int ldc,
                                                         bool accumulate) {
  constexpr int kPass = 4;
  for (int i = 0; i < r; ++i) {
    double* __restrict Ci = C + static_cast<std::size_t>(i) * ldc;
    if (!accumulate) std::fill(Ci, Ci + c, 0.0);
    const double* Ai = A + static_cast<std::size_t>(i) * lda;
    for (int p = 0; p < k;) {
      double a[kPass];
      const double* rows[kPass];
      int found = 0;
      for (; p < k && found < kPass; ++p) {
        const double entry = alpha * Ai[p];
        if (entry == 0.0) continue;
        a[found] = entry;
        rows[found++] = B + static_cast<std::size_t>(p) * ldb;
      }
      if (found == kPass) {
        const double* __restrict B0 = rows[0];
        const double* __restrict B1 = rows[1];
        const double* __restrict B2 = rows[2];
        const double* __restrict B3 = rows[3];
        for (int j = 0; j < c; ++j) Ci[j] += a[0] * B0[j] + a[1] * B1[j] + a[2] * B2[j] + a[3] * B3[j];
      } else {
        for (int t = 0; t < found; ++t) {
          const double* __restrict Bt = rows[t];
          for (int j = 0; j < c; ++j) Ci[j] += a[t] * Bt[j];
        }
      }
    }
  }
}

void dense_product_baseline(int r, int k, int c, double alpha, const double* A, int lda, const double* B, int ldb,
                            double* C, int ldc, bool accumulate) {
  product_loops(r, k, c, alpha, A, lda, B, ldb, C, ldc, accumulate);
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2,fma"))) void dense_product_avx2(int r, int k, int c, double alpha, const double* A, int lda,
                                                            const double* B, int ldb, double* C, int ldc,
                                                            bool accumulate) {
  product_loops(r, k, c, alpha, A, lda, B, ldb, C, ldc, accumulate);
}
#endif

using DenseProduct = void (*)(int, int, int, double, const double*, int, const double*, int, double*, int, bool);

DenseProduct best_dense_product() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return dense_product_avx2;
#endif
  return dense_product_baseline;
}

}  // namespace

void dense_product(int r, int k, int c, double alpha, const double* A, int lda, const double* B, int ldb, double* C,
                   int ldc, bool accumulate) {
  static const DenseProduct chosen = best_dense_product();
  chosen(r, k, c, alpha, A, lda, B, ldb, C, ldc, accumulate);
}

}  // namespace dcol
