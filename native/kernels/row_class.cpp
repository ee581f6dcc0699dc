// One size class of one proximity kernel (kernels/policies.hpp), chosen by the definitions CMake
// compiles this file with: DCOL_POLICY, DCOL_ROWS and DCOL_LANES.
#include "kernels/policies.hpp"

DCOL_ROW_CLASS(DCOL_POLICY, DCOL_ROWS, DCOL_LANES);
