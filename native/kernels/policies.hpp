// How the proximity kernels compile the solver: a policy per kernel, whose run<…> solves one size
// class of DCOL's problem (geometry::proximity_rows_class calls it), and the size classes themselves,
// each compiled in a translation unit of its own (kernels/row_class.cpp, one object per class listed
// in native/CMakeLists.txt) so that the build compiles them in parallel. Every other translation unit
// sees them as explicit instantiation declarations and compiles none of them.
#pragma once

#include "geometry/proximity.hpp"

namespace dcol::kernels {

using geometry::DerivativeOutput;
using geometry::PlainSized;
using geometry::Pose;
using geometry::ProximityResult;
using geometry::Shape;
using geometry::SolverSettings;

#if defined(__x86_64__) || defined(__i386__)
// For processors with AVX2 and FMA, several pose pairs to a 256-bit vector. Each size class is
// flattened on its own, so that the whole solver is compiled for this target; any out-of-line copy
// the compiler keeps is baseline code, safe on every processor.
struct Avx2Sized {
  template <int N, int NA, int NTail, int MMax, int W>
  __attribute__((target("avx2,fma"), flatten)) static void run(const Shape& a, const Pose* fa, const Shape& b,
                                                               const Pose* fb, const SolverSettings& settings,
                                                               ProximityResult* out, const DerivativeOutput& deriv) {
    geometry::proximity_sized<N, NA, NTail, MMax, W>(a, fa, b, fb, settings, out, deriv);
  }
};

// One pose pair on an AVX2 processor: its solves run on plain doubles, as the auto-vectorizer,
// packing the short loops over a row's few columns into vectors, makes them slower (the value solves
// vectorize by hand, conic/row_packet_solver.hpp).
struct Avx2OneSized {
  template <int N, int NA, int NTail, int MMax, int W>
  __attribute__((target("avx2,fma"), optimize("no-tree-vectorize", "unroll-loops"), flatten)) static void run(
      const Shape& a, const Pose* fa, const Shape& b, const Pose* fb, const SolverSettings& settings,
      ProximityResult* out, const DerivativeOutput& deriv) {
    geometry::proximity_sized<N, NA, NTail, MMax, W>(a, fa, b, fb, settings, out, deriv);
  }
};
#endif

}  // namespace dcol::kernels

// The instantiation of one size class of a kernel: its policy (above), rows at most (a constant of
// geometry/proximity_types.hpp) and pose pairs at once. Instantiations belong to a namespace that
// encloses the template's.
#define DCOL_ROW_CLASS(Policy, Rows, Lanes)                                                                 \
  template void dcol::geometry::proximity_rows_class<dcol::kernels::Policy, dcol::geometry::Rows, Lanes>(   \
      const dcol::geometry::Shape&, const dcol::geometry::Pose*, const dcol::geometry::Shape&,              \
      const dcol::geometry::Pose*, const dcol::geometry::SolverSettings&, dcol::geometry::ProximityResult*, \
      const dcol::geometry::DerivativeOutput&)

// Baseline kernels: two lanes fill the 128-bit vectors every x86-64 (SSE2) and ARM64 (NEON)
// processor has; one pair in every size class.
extern DCOL_ROW_CLASS(PlainSized, kSmallRows, 2);
extern DCOL_ROW_CLASS(PlainSized, kMaxLaneRows, 2);
extern DCOL_ROW_CLASS(PlainSized, kSmallRows, 1);
extern DCOL_ROW_CLASS(PlainSized, kMaxLaneRows, 1);
extern DCOL_ROW_CLASS(PlainSized, kMaxRows, 1);
#if defined(__x86_64__) || defined(__i386__)
extern DCOL_ROW_CLASS(Avx2Sized, kSmallRows, 4);
extern DCOL_ROW_CLASS(Avx2Sized, kMaxLaneRows, 4);
extern DCOL_ROW_CLASS(Avx2OneSized, kSmallRows, 1);
extern DCOL_ROW_CLASS(Avx2OneSized, kMaxLaneRows, 1);
extern DCOL_ROW_CLASS(Avx2OneSized, kMaxRows, 1);
#endif
