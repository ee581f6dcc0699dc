// Whether an array of numbers is finite, its size, and powers of two to scale one by: dividing by a power of two is
// exact, so data of ordinary size give bit for bit the results they would give unscaled.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace dcol {

// Whether every one of count entries is finite (no NaN, no infinity).
inline bool all_finite(std::size_t count, const double* values) {
  return std::all_of(values, values + count, [](double x) { return std::isfinite(x); });
}

// max_i |values_i| over count entries, 0 for none.
inline double largest_magnitude(std::size_t count, const double* values) {
  double largest = 0.0;
  for (std::size_t i = 0; i < count; ++i) largest = std::max(largest, std::abs(values[i]));
  return largest;
}

// The power of two just above a positive finite x (x / it lies in [1/2, 1)); 1 for anything else.
inline double power_of_two_above(double x) {
  if (!(x > 0.0 && std::isfinite(x))) return 1.0;
  int exponent = 0;
  std::frexp(x, &exponent);
  return std::ldexp(1.0, exponent);
}

}  // namespace dcol
