// Fixed-size matrices shared by the layers: a 3×3 matrix whose entries are doubles or SIMD lanes.
#pragma once

namespace dcol {

template <class V>
struct Mat3T {
  V m[3][3];  // column j is the body axis j in the world
};
using Mat3 = Mat3T<double>;

}  // namespace dcol
