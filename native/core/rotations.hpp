// Orientation inputs: a quaternion [w, x, y, z] of any nonzero norm, or a 3×3 rotation matrix.
#pragma once

#include <algorithm>
#include <cmath>

#include "core/small_matrix.hpp"

namespace dcol {

// Squared norms between these are computed without under- or overflow, and with full precision.
constexpr double kSafeNorm2Min = 1e-290, kSafeNorm2Max = 1e290;

// ‖q‖ of a quaternion, also where ‖q‖² under- or overflows (any nonzero finite q is a valid
// orientation); 0 for q = 0, not finite when an entry is not.
inline double quaternion_norm(const double* q) {
  const double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
  if (n2 > kSafeNorm2Min && n2 < kSafeNorm2Max) return std::sqrt(n2);
  const double largest = std::max({std::abs(q[0]), std::abs(q[1]), std::abs(q[2]), std::abs(q[3])});
  if (!(largest > 0.0) || !std::isfinite(largest)) return largest;
  double scaled2 = 0.0;
  for (int i = 0; i < 4; ++i) scaled2 += (q[i] / largest) * (q[i] / largest);
  return largest * std::sqrt(scaled2);
}

// Rotation matrix of q / ‖q‖. False when q is not finite or is zero.
inline bool quaternion_to_matrix(const double* q, Mat3& Q) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  double n2 = w * w + x * x + y * y + z * z;
  if (!(n2 > kSafeNorm2Min && n2 < kSafeNorm2Max)) {  // rescaled first, where ‖q‖² would lose q
    const double norm = quaternion_norm(q);
    if (!(norm > 0.0) || !std::isfinite(norm)) return false;
    w /= norm, x /= norm, y /= norm, z /= norm;
    n2 = w * w + x * x + y * y + z * z;
  }
  const double s = 2.0 / n2;
  Q.m[0][0] = 1.0 - s * (y * y + z * z);
  Q.m[0][1] = s * (x * y - w * z);
  Q.m[0][2] = s * (x * z + w * y);
  Q.m[1][0] = s * (x * y + w * z);
  Q.m[1][1] = 1.0 - s * (x * x + z * z);
  Q.m[1][2] = s * (y * z - w * x);
  Q.m[2][0] = s * (x * z - w * y);
  Q.m[2][1] = s * (y * z + w * x);
  Q.m[2][2] = 1.0 - s * (x * x + y * y);
  return true;
}

// Accepts M (row-major 3×3) when MᵀM = I and det M = +1 within tol.
inline bool rotation_matrix(const double* M, Mat3& Q, double tol = 1e-6) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      Q.m[i][j] = M[3 * i + j];
      if (!std::isfinite(Q.m[i][j])) return false;
    }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const double d = Q.m[0][i] * Q.m[0][j] + Q.m[1][i] * Q.m[1][j] + Q.m[2][i] * Q.m[2][j];
      if (std::abs(d - (i == j ? 1.0 : 0.0)) > tol) return false;
    }
  const double det = Q.m[0][0] * (Q.m[1][1] * Q.m[2][2] - Q.m[1][2] * Q.m[2][1]) -
                     Q.m[0][1] * (Q.m[1][0] * Q.m[2][2] - Q.m[1][2] * Q.m[2][0]) +
                     Q.m[0][2] * (Q.m[1][0] * Q.m[2][1] - Q.m[1][1] * Q.m[2][0]);
  return det > 0.0;
}

inline Mat3 multiply(const Mat3& A, const Mat3& B) {
  Mat3 C;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) C.m[i][j] = A.m[i][0] * B.m[0][j] + A.m[i][1] * B.m[1][j] + A.m[i][2] * B.m[2][j];
  return C;
}

}  // namespace dcol
