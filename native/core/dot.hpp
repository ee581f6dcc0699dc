// Dot products of contiguous arrays, the inner loop of the dense factorizations and products.
#pragma once

namespace dcol {

// Σ a_i b_i over n contiguous entries, in four interleaved partial sums: independent chains that the
// processor overlaps and the compiler vectorizes, where a strict left-to-right sum is one long chain
// of dependent additions.
inline double dot(const double* a, const double* b, int n) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < n; ++i) s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

}  // namespace dcol
