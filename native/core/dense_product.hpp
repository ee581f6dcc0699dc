// The dense product C = α A B (+ C) of the step's Jacobians, compiled for the processor's widest
// vectors: the one kernel there (kernels/dense_product.cpp) is chosen once per process, as the
// proximity kernels are.
#pragma once

namespace dcol {

// C (r × c, leading dimension ldc) = alpha A (r × k, lda) B (k × c, ldb), added to C if accumulate;
// C overlaps neither A nor B.
// A's zero entries are skipped: the step's integration and contact Jacobians are mostly zeros, whose
// rows of B would cost a pass over c columns each.
void dense_product(int r, int k, int c, double alpha, const double* A, int lda, const double* B, int ldb, double* C,
                   int ldc, bool accumulate);

}  // namespace dcol
