// DCOL proximity (DCOL §III): the minimum uniform scaling α at which two primitives intersect,
// DCOL eq. 9, with the contact points (DCOL eq. 29) and distance (DCOL eq. 30) derived from its
// solution.
#pragma once

#include <cmath>
#include <utility>

#include "conic/cone_solver.hpp"
#include "conic/row_packet_solver.hpp"
#include "core/rotations.hpp"
#include "geometry/primitives.hpp"
#include "geometry/proximity_derivatives.hpp"
#include "geometry/proximity_types.hpp"

namespace dcol::geometry {

// The results and exact derivatives of a solved problem (exact_kkt.hpp), or with status smoothed the
// smoothed ones where it has none; proximity_sized's steps come as callables. Kept out of the flattened
// kernels (kernels/): inlined there, this rarely used code would make the plain one-pair solve
// execute more instructions.
template <class Program, class Solver, class WriteResults, class Differentiate, class SmoothedKKT>
__attribute__((noinline)) void differentiate_exactly(Solver& solver, const Program& prob, ProximityResult& out,
                                                     WriteResults&& write_results, Differentiate&& differentiate,
                                                     SmoothedKKT&& smoothed_kkt) {
  const ExactKKT<Program> kkt(solver, prob);  // refines the solution in place: before the results
  write_results();
  if (kkt.valid()) return differentiate([&]() -> const ExactKKT<Program>& { return kkt; });
  out.status = SolveStatus::smoothed;
  differentiate(smoothed_kkt);
}

// The least α putting x = 0 (and the shape's slack variables at 0) in its rows of the program.
template <class Program>
typename Program::V least_alpha_at_origin(const Program& prob, const ShapeRows& rows) {
  using V = typename Program::V;
  V least{};
  for (int i = rows.lin_begin; i < rows.lin_end; ++i)
    least = lane_max(least, conic::detail::orthant_ray_bound(prob.h[i], -prob.G[i][kAlphaColumn]));
  if (rows.cone >= 0) {
    const V rise = -prob.G[rows.cone][kAlphaColumn];
    least = lane_max(least, conic::detail::cone_ray_bound(prob.h + rows.cone, rows.cone_dim, rise));
  }
  return least;
}

// Where the solvers' ray start (ConeSolver::ray_start) begins: the point of the segment between the
// shapes' origins r_a, r_b (normalized) at which their gauges are equal. A shape's gauge grows
// linearly along the segment from 0 at its own origin, and at the midpoint x = 0 it is its least α
// there, so that point is r_a + t (r_b − r_a) with t = least_b/(least_a + least_b). From it the ray
// start can begin nearer the solution (conic::detail::ray_start_value) than from the midpoint, and
// the solves take fewer iterations. Returns the gauges' common value there, 2 t least_a: an upper
// bound on α.
template <class Program>
typename Program::V balanced_ray_base(const Program& prob, const ShapeRows (&rows)[2], const typename Program::V* ra,
                                      const typename Program::V* rb, typename Program::V* base) {
  using V = typename Program::V;
  const V least_a = least_alpha_at_origin(prob, rows[0]), least_b = least_alpha_at_origin(prob, rows[1]);
  const V sum = least_a + least_b;
  const V t = select(sum > 0.0, least_b / sum, splat<V>(0.5));  // sum = 0: coincident origins
  std::fill(base, base + prob.n, V{});
  for (int i = 0; i < 3; ++i) base[i] = ra[i] + t * (rb[i] - ra[i]);
  return 2.0 * t * least_a;
}

// The least barrier μ per unit of α that the solve is given (resolvable_barrier).
inline constexpr double kLeastBarrierPerAlpha = 1e-11;

// The barrier of settings, raised in the lanes where α is so large that the central path at μ would
// lie nearer a second-order cone's boundary than doubles resolve well. A cone's s and z there are of
// the order of α and of 1, and s∘z = μe puts both a relative distance ~μ/α from the boundary; the
// derivatives divide by that distance (linearizing s∘z), whose rounding costs them digits in
// proportion to α/μ, until past α/μ ~ 1e15 the rows of x keep none. Holding μ/α at or above
// kLeastBarrierPerAlpha keeps them as accurate as at α = 100 under the default μ = 1e-9 (below which
// the barrier is left as it is), and smooths no more relative to α than that.
// alpha_bound: an upper bound on α (balanced_ray_base), per lane so that a pose pair's result does
// not depend on the others in its batch.
template <class V>
V resolvable_barrier(const SolverSettings& settings, V alpha_bound) {
  return lane_max(kLeastBarrierPerAlpha * alpha_bound, splat<V>(settings.barrier));  // NaN bound: unraised
}

// W pairs of the same two shapes at once, one per lane. fa, fb: the shapes' own frames (offsets
// applied). N: variables (x, α, then 0–2 slack variables of a, then b's); NA: the columns a's rows
// use (x, α and a's slack variables); NTail > 0: b's linear rows use the columns from NTail on
// (when they bound b's slack variables, DCOL eqs. 14 and 27, they involve α and those only);
// MMax: capacity in rows.
template <int N, int NA, int NTail, int MMax, int W>
void proximity_sized(const Shape& a, const Pose* fa, const Shape& b, const Pose* fb, const SolverSettings& settings,
                     ProximityResult* out, const DerivativeOutput& deriv) {
  using V = Lanes<W>;
  using Program = ConeProgram<N, MMax, 2, W>;
  Program prob;
  V center[3], ra[3], rb[3];
  Mat3T<V> Qa, Qb;
  const double len = 0.5 * (a.length_scale + b.length_scale);
  const double inv_len = 1.0 / len;
  for (int lane_index = 0; lane_index < W; ++lane_index)
    for (int i = 0; i < 3; ++i) {
      const double c = 0.5 * (fa[lane_index].r[i] + fb[lane_index].r[i]);
      set_lane(center[i], lane_index, c);
      set_lane(ra[i], lane_index, (fa[lane_index].r[i] - c) * inv_len);
      set_lane(rb[i], lane_index, (fb[lane_index].r[i] - c) * inv_len);
      for (int j = 0; j < 3; ++j) {
        set_lane(Qa.m[i][j], lane_index, fa[lane_index].Q.m[i][j]);
        set_lane(Qb.m[i][j], lane_index, fb[lane_index].Q.m[i][j]);
      }
    }
  const Columns ca{4}, cb{4 + a.num_slack()};
  prob.clear(4 + a.num_slack() + b.num_slack());
  prob.c[kAlphaColumn] = splat<V>(1.0);
  // No row α ≥ 0: every primitive's constraints imply it (a bounded set scaled by α < 0 is empty).
  const int lin_a = prob.m;
  add_linear_rows(prob, a, ra, Qa, inv_len, ca);
  const int lin_b = prob.m;
  add_linear_rows(prob, b, rb, Qb, inv_len, cb);
  const int lin_end = prob.m;
  const int cone_a = add_cone_rows(prob, a, ra, Qa, inv_len, ca);
  const int cone_b = add_cone_rows(prob, b, rb, Qb, inv_len, cb);
  prob.narrow_rows = lin_b;
  prob.tail_orthant = NTail > 0;
  if (cone_a >= 0) prob.narrow_cone[0] = true;
  const ShapeRows rows[2] = {{lin_a, lin_b, cone_a, a.cone_dim()}, {lin_b, lin_end, cone_b, b.cone_dim()}};
  V ray_base[N];
  const V alpha_bound = balanced_ray_base(prob, rows, ra, rb, ray_base);

  // The results from a solution (x, z) of the program.
  auto write_results_of = [&](const V* x, const V* z, const SolveInfo<W>& info) {
    // Stationarity gives G_aᵀ z_a = −G_bᵀ z_b on the x columns: the outward normal of scaled a at x.
    // Using both halves keeps the result exactly antisymmetric under swapping a and b.
    V n[3] = {};
    auto accumulate = [&](int begin, int end, double sign) {
      for (int r = begin; r < end; ++r)
        for (int i = 0; i < 3; ++i) n[i] += sign * prob.G[r][i] * z[r];
    };
    accumulate(lin_a, lin_b, 1.0);
    accumulate(lin_b, lin_end, -1.0);
    if (cone_a >= 0) accumulate(cone_a, cone_a + a.cone_dim(), 1.0);
    if (cone_b >= 0) accumulate(cone_b, cone_b + b.cone_dim(), -1.0);

    for (int k = 0; k < W; ++k) {
      ProximityResult& o = out[k];
      o.status = info.status[k];
      o.iterations = info.iterations[k];
      const double alpha = lane(x[kAlphaColumn], k);
      o.alpha = alpha;
      double normal[3], n_norm2 = 0.0, dist2 = 0.0;
      for (int i = 0; i < 3; ++i) {
        o.x[i] = lane(center[i], k) + len * lane(x[i], k);
        normal[i] = lane(n[i], k);
        n_norm2 += normal[i] * normal[i];
      }
      // With coincident origins (α = 0) the scaled shapes are points and no plane is defined: normal 0.
      const double n_norm = std::sqrt(n_norm2);
      for (int i = 0; i < 3; ++i) {
        o.normal[i] = n_norm > 0.0 ? normal[i] / n_norm : 0.0;
        o.p_a[i] = alpha > 0.0 ? fa[k].r[i] + (o.x[i] - fa[k].r[i]) / alpha : fa[k].r[i];
        o.p_b[i] = alpha > 0.0 ? fb[k].r[i] + (o.x[i] - fb[k].r[i]) / alpha : fb[k].r[i];
        dist2 += (o.p_a[i] - o.p_b[i]) * (o.p_a[i] - o.p_b[i]);
      }
      o.distance = std::sqrt(dist2);
    }
  };

  // One pose pair without derivatives: its rows four to a vector (row_packet_solver.hpp).
  if constexpr (W == 1) {
    if (deriv.request == DerivativeRequest::none) {
      RowPacketSolver<Program, N, NA, NTail> packed;
      V z[MMax];
      if (packed.solve(prob, settings, kAlphaColumn, ray_base, z)) return write_results_of(packed.x, z, packed.info);
    }
  }

  using Solver = ConeSolver<Program, N, NA, NTail>;
  Solver solver;
  // Exact derivatives start from the central point at a small μ (exact_kkt.hpp).
  const bool exact = W == 1 && deriv.exact && deriv.request != DerivativeRequest::none;
  const SolverSettings solve_settings = exact ? exact_start_settings(settings) : settings;
  const V barrier = resolvable_barrier(solve_settings, alpha_bound);
  const SolveInfo<W>& info = solver.solve(prob, solve_settings, kAlphaColumn, ray_base, &barrier);

  auto write_results = [&] { write_results_of(solver.x, solver.z, info); };

  const SolvedProximity<Program> sp{prob,     solver.x,   solver.z, {&a, &b},
                                    {ra, rb}, {&Qa, &Qb}, {ca, cb}, {rows[0], rows[1]}};
  // The derivatives from the adjoints of make_kkt(), or for the gradient from the Lagrangian alone.
  auto differentiate = [&](auto make_kkt) {
    NormalizedJacobian<V> nj;
    if (deriv.request == DerivativeRequest::gradient) {
      normalized_gradient(sp, nj.alpha);
    } else {
      V* parameters[2] = {nullptr, nullptr};  // shape parameters: for one pose pair only
      if constexpr (W == 1) {
        parameters[0] = deriv.shape_parameters[0];
        parameters[1] = deriv.shape_parameters[1];
      }
      normalized_jacobian(make_kkt(), sp, len, deriv.request == DerivativeRequest::contact, nj,
                          parameters[0] ? parameters : nullptr);
      for (int s = 0; parameters[0] && s < 2; ++s) {  // x = center + ℓ x': the x rows scale by ℓ
        const int count = shape_parameter_count(*sp.shape[s]);
        for (int i = 0; i < 3 * count; ++i) parameters[s][i] *= len;
      }
    }
    for (int k = 0; k < W; ++k) finish_jacobian(nj, k, len, deriv.request, out[k], fa[k], fb[k], deriv.jacobian[k]);
  };
  auto smoothed_kkt = [&] { return LinearizedKKT<Solver, Program>(solver, prob); };

  if constexpr (W == 1) {
    if (exact && info.status[0] == SolveStatus::solved)
      return differentiate_exactly(solver, prob, out[0], write_results, differentiate, smoothed_kkt);
  }
  write_results();
  if (deriv.request != DerivativeRequest::none) differentiate(smoothed_kkt);
}

// Calls proximity_sized; the kernels compiled for an instruction set pass their own (kernels/).
struct PlainSized {
  template <int N, int NA, int NTail, int MMax, int W>
  static void run(const Shape& a, const Pose* fa, const Shape& b, const Pose* fb, const SolverSettings& settings,
                  ProximityResult* out, const DerivativeOutput& deriv) {
    proximity_sized<N, NA, NTail, MMax, W>(a, fa, b, fb, settings, out, deriv);
  }
};

// a has at most as many slack variables as b (proximity_lanes).
template <class Sized, int MMax, int W>
void proximity_rows_class(const Shape& a, const Pose* fa, const Shape& b, const Pose* fb,
                          const SolverSettings& settings, ProximityResult* out, const DerivativeOutput& deriv) {
  switch (3 * a.num_slack() + b.num_slack()) {
    case 0:
      return Sized::template run<4, 4, 0, MMax, W>(a, fa, b, fb, settings, out, deriv);
    case 1:
      return Sized::template run<5, 4, kAlphaColumn, MMax, W>(a, fa, b, fb, settings, out, deriv);
    case 2:
      return Sized::template run<6, 4, kAlphaColumn, MMax, W>(a, fa, b, fb, settings, out, deriv);
    case 4:
      return Sized::template run<6, 5, kAlphaColumn, MMax, W>(a, fa, b, fb, settings, out, deriv);
    case 5:
      return Sized::template run<7, 5, kAlphaColumn, MMax, W>(a, fa, b, fb, settings, out, deriv);
    default:
      return Sized::template run<8, 6, kAlphaColumn, MMax, W>(a, fa, b, fb, settings, out, deriv);
  }
}

// proximity_lanes for a with at most as many slack variables as b.
template <class Sized, int W>
void proximity_lanes_ordered(const Shape& a, const Pose* pa, const Shape& b, const Pose* pb,
                             const SolverSettings& settings, ProximityResult* out, const DerivativeOutput& deriv) {
  Pose fa[W], fb[W];
  for (int k = 0; k < W; ++k) {
    fa[k] = shape_frame(a, pa[k]);
    fb[k] = shape_frame(b, pb[k]);
  }
  const int rows = proximity_rows(a, b);
  if (rows <= kSmallRows) {
    proximity_rows_class<Sized, kSmallRows, W>(a, fa, b, fb, settings, out, deriv);
  } else if (rows <= kMaxLaneRows) {
    proximity_rows_class<Sized, kMaxLaneRows, W>(a, fa, b, fb, settings, out, deriv);
  } else if constexpr (W == 1) {
    proximity_rows_class<Sized, kMaxRows, 1>(a, fa, b, fb, settings, out, deriv);
  } else {
    // The lane kernels are given only pairs that fit_lanes; a caller that breaks this gets the
    // numerical-error status of an empty result rather than a result.
    for (int k = 0; k < W; ++k) out[k] = ProximityResult{};
  }
}

// Shapes a and b at W pairs of body poses (their offsets are applied here), one result per pair.
template <int W, class Sized>
void proximity_lanes(const Shape& a, const Pose* pa, const Shape& b, const Pose* pb, const SolverSettings& settings,
                     ProximityResult* out, const DerivativeOutput& deriv) {
  // The shape with fewer slack variables goes first: the solver then skips the other's slack
  // columns in its rows. Swapping the shapes swaps the contact points and flips the normal.
  const bool swapped = a.num_slack() > b.num_slack();
  if (!swapped) {
    proximity_lanes_ordered<Sized, W>(a, pa, b, pb, settings, out, deriv);
  } else {
    DerivativeOutput swapped_deriv = deriv;
    std::swap(swapped_deriv.shape_parameters[0], swapped_deriv.shape_parameters[1]);
    proximity_lanes_ordered<Sized, W>(b, pb, a, pa, settings, out, swapped_deriv);
    for (int k = 0; k < W; ++k) {
      std::swap(out[k].p_a, out[k].p_b);
      for (double& n : out[k].normal) n = -n;
    }
  }
  if (deriv.request == DerivativeRequest::none) return;
  for (int k = 0; k < W; ++k) {
    if (swapped) swap_sides(deriv.request, deriv.jacobian[k]);
    double d_a[3], d_b[3];  // shape frame origin − body origin
    const Pose fa = shape_frame(a, pa[k]), fb = shape_frame(b, pb[k]);
    for (int i = 0; i < 3; ++i) {
      d_a[i] = fa.r[i] - pa[k].r[i];
      d_b[i] = fb.r[i] - pb[k].r[i];
    }
    apply_offsets(d_a, d_b, deriv.request, deriv.jacobian[k]);
    if (!finite_jacobian(deriv.request, deriv.jacobian[k])) out[k].status = SolveStatus::numerical_error;
  }
}

}  // namespace dcol::geometry
