// One DCOL proximity problem solved with its rows four to a SIMD vector.
//
// ConeSolver vectorizes across problems: W problems of one structure in lock-step, one per lane,
// which is what a batch needs. A single problem left it scalar, and there the work is a few short
// loops over tiny cones whose loads, stores and loop control outnumbered the arithmetic. Here the
// lanes run over a problem's rows instead: the orthant rows go four to a packet, and each
// second-order cone, of 3 or 4 rows in every proximity problem, fills one packet (a 3-row cone gets a
// zero row, which the cone's algebra keeps at zero, so the cone is exactly the 3-row one). The
// method is ConeSolver's, step for step: the same ray start, Nesterov–Todd scaling, Mehrotra
// predictor–corrector, step rule, stopping tests and closed forms of a cone's scaling and λ
// (detail::soc_scaling). The sums over rows stay in packets until the end of a pass, so the iterates
// agree with ConeSolver's up to rounding.
//
// Orthant packets are padded with rows 0ᵀx ≤ 1; they stay at s = 1, z = μ₀ and are masked out of
// the gap, the objective and the search directions.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "conic/cone_solver.hpp"

namespace dcol::conic {

namespace packet {

using Packet = Lanes<4>;

inline double hsum(Packet v) {
  const Lanes<2> halves = __builtin_shufflevector(v, v, 0, 1) + __builtin_shufflevector(v, v, 2, 3);
  return halves[0] + halves[1];
}

// The sums of Count packets' lanes, four at a time: (Σa, Σb, Σc, Σd) costs six vector operations.
template <int Count>
inline void hsums(const Packet* v, double* out) {
  for (int i = 0; i < Count; i += 4) {
    auto at = [&](int k) { return i + k < Count ? v[i + k] : Packet{}; };
    const Packet ab =
        __builtin_shufflevector(at(0), at(1), 0, 4, 2, 6) + __builtin_shufflevector(at(0), at(1), 1, 5, 3, 7);
    const Packet cd =
        __builtin_shufflevector(at(2), at(3), 0, 4, 2, 6) + __builtin_shufflevector(at(2), at(3), 1, 5, 3, 7);
    const Packet sums = __builtin_shufflevector(ab, cd, 0, 1, 4, 5) + __builtin_shufflevector(ab, cd, 2, 3, 6, 7);
    for (int k = 0; k < 4 && i + k < Count; ++k) out[i + k] = sums[k];
  }
}

// Square roots lane by lane in two 128-bit halves where the processor has SSE2 (every x86-64):
// the one-pair kernels are compiled without the auto-vectorizer (kernels/), which left
// lane_sqrt's loop as four scalar roots.
inline Packet sqrt(Packet v) {
#if defined(__SSE2__)
  const Lanes<2> lo = __builtin_ia32_sqrtpd(__builtin_shufflevector(v, v, 0, 1));
  const Lanes<2> hi = __builtin_ia32_sqrtpd(__builtin_shufflevector(v, v, 2, 3));
  return __builtin_shufflevector(lo, hi, 0, 1, 2, 3);
#else
  return lane_sqrt(v);
#endif
}

inline double hmax(Packet v) {
  const Lanes<2> lo = __builtin_shufflevector(v, v, 0, 1), hi = __builtin_shufflevector(v, v, 2, 3);
  const Lanes<2> m = lane_max(lo, hi);
  return std::max(m[0], m[1]);
}

inline Packet with_head(Packet v, double head) {
  v[0] = head;
  return v;
}

constexpr Packet kJ = {1.0, -1.0, -1.0, -1.0};  // the cone's J = diag(1, −1, −1, −1)
constexpr Packet kTail = {0.0, 1.0, 1.0, 1.0};  // u1, the part of u = (u0, u1) after the head

// The cone algebra of cone_solver.hpp's detail helpers, on a cone held in one packet.
inline double soc_residual(Packet u) {
  const double tail = std::sqrt(hsum(u * u * kTail));
  return (u[0] - tail) * (u[0] + tail);
}

inline double soc_inverse_step(Packet u, const detail::SocPoint<double>& pt, Packet du) {
  const double rho0_delta = pt.u0_bar * du[0] - pt.inv_delta * hsum(u * du * kTail);
  const double coef = (rho0_delta + du[0]) * pt.inv_one_plus_u0_bar * pt.inv_delta;
  const Packet rho_delta = (du - coef * u) * kTail;
  return pt.inv_delta * (std::sqrt(hsum(rho_delta * rho_delta)) - rho0_delta);
}

// W x and W⁻¹ x of a cone's scaling (detail::SocScaling) with its vector c in a packet.
inline Packet soc_apply_W(Packet c, const detail::SocScaling<double>& w, Packet x) {
  return w.eta * ((w.k * hsum(c * x)) * c - kJ * x);
}

inline Packet soc_apply_Winv(Packet c, const detail::SocScaling<double>& w, Packet x) {
  return w.inv_eta * kJ * ((w.k * hsum(kJ * c * x)) * c - x);
}

inline Packet soc_product(Packet u, Packet v) { return with_head(u[0] * v + v[0] * u, hsum(u * v)); }

inline Packet soc_divide(Packet u, const detail::SocPoint<double>& pt, Packet v) {
  const double o0 = hsum(kJ * u * v) * pt.inv_det;
  return with_head((v - o0 * u) * pt.inv_u0, o0);
}

}  // namespace packet

// Program: a ConeProgram with one lane, laid out as proximity_sized builds it (the orthant rows before
// narrow_rows use columns [0, NNarrow), the others [NTail, N) with tail_orthant and [0, N) without;
// narrow cones [0, NNarrow)). N: the variables.
template <class Program, int N, int NNarrow, int NTail>
class RowPacketSolver {
  static_assert(Program::lanes == 1, "one problem at a time");
  static_assert(Program::n_max == N, "the variables are a compile-time constant");
  using Packet = packet::Packet;
  static constexpr int kMaxCones = Program::k_max;
  // The two groups of orthant rows may each end in a partly filled packet; a cone takes a packet.
  static constexpr int kMaxPackets = (Program::m_max + 3) / 4 + 2 + kMaxCones;

 public:
  double x[N];
  SolveInfo<1> info;

  // True when this solver takes the problem: cones of at most four rows, barrier = 0 and a ray start
  // (ConeSolver::ray_start) on ray_column from ray_base (nullptr: 0). The solution is then in x, z
  // (the program's row order; the results need no s) and info.
  bool solve(const Program& prob, const SolverSettings& settings, int ray_column, const double* ray_base, double* z);

 private:
  struct Group {
    int first, end;  // packets
  };

  Group groups_[3];  // narrow orthant rows, the other orthant rows, the cones
  int num_cones_ = 0;
  int cone_first_row_[kMaxCones];
  bool cone_narrow_[kMaxCones];
  bool tail_orthant_ = false;
  double h_scale_ = 1.0, c_scale_ = 1.0;
  double c_[N];

  Packet G_[kMaxPackets][N], h_[kMaxPackets];
  Packet row_mask_[kMaxPackets];  // 1 on a real orthant row, 0 on padding
  Packet s_[kMaxPackets], z_[kMaxPackets];
  Packet w_[kMaxPackets], w_inv_[kMaxPackets];  // orthant: W = diag(w)
  Packet cone_c_[kMaxCones];
  detail::SocScaling<double> cone_w_[kMaxCones];
  Packet lambda_[kMaxPackets], lambda_inv_[kMaxPackets];
  Packet u_[kMaxPackets], Gs_[kMaxPackets][N];
  detail::SocPoint<double> lambda_soc_[kMaxCones];
  double cone_s_residual_[kMaxCones], cone_z_residual_[kMaxCones];  // s0² − ‖s1‖², z0² − ‖z1‖² (measure)
  double rx_[N], L_[N][N], D_inv_[N];

  // Calls f(p, cols) for every orthant packet, then g(p, k, cols) for every cone packet (k: its cone).
  template <class F, class G>
  void for_each_packet(F&& f, G&& g) const {
    for (int p = groups_[0].first; p < groups_[0].end; ++p) f(p, FixedColumns<0, NNarrow>{});
    for (int p = groups_[1].first; p < groups_[1].end; ++p) {
      if (tail_orthant_)
        f(p, FixedColumns<NTail, N>{});
      else
        f(p, FixedColumns<0, N>{});
    }
    for (int k = 0; k < num_cones_; ++k) {
      const int p = groups_[2].first + k;
      if (cone_narrow_[k])
        g(p, k, FixedColumns<0, NNarrow>{});
      else
        g(p, k, FixedColumns<0, N>{});
    }
  }

  bool pack(const Program& prob);
  bool ray_start(int column, const double* base);
  bool measure();
  bool scale_and_factor();
  detail::StepBounds<double> newton_direction(const Packet* t1, double* dx, Packet* ds_scaled, Packet* dz_scaled,
                                              detail::DirectionProducts<double>* products = nullptr);
};

// ---------------------------------------------------------------------------------------------

template <class Program, int N, int NNarrow, int NTail>
bool RowPacketSolver<Program, N, NNarrow, NTail>::pack(const Program& prob) {
  if (prob.n != N) return false;
  int packets = 0;
  auto pack_orthant = [&](int begin, int end) -> Group {
    const Group group{packets, packets + (end - begin + 3) / 4};
    for (int p = group.first; p < group.end; ++p) {
      for (int j = 0; j < N; ++j) G_[p][j] = Packet{};
      h_[p] = splat<Packet>(1.0);
      row_mask_[p] = Packet{};
      for (int lane_index = 0; lane_index < 4; ++lane_index) {
        const int row = begin + 4 * (p - group.first) + lane_index;
        if (row >= end) break;
        for (int j = 0; j < N; ++j) G_[p][j][lane_index] = prob.G[row][j];
        h_[p][lane_index] = prob.h[row];
        row_mask_[p][lane_index] = 1.0;
      }
    }
    packets = group.end;
    return group;
  };
  groups_[0] = pack_orthant(0, prob.narrow_rows);
  groups_[1] = pack_orthant(prob.narrow_rows, prob.l);
  tail_orthant_ = prob.tail_orthant;
  groups_[2] = {packets, packets + prob.num_soc};
  num_cones_ = prob.num_soc;
  for (int k = 0, row = prob.l; k < prob.num_soc; row += prob.soc_dim[k], ++k) {
    if (prob.soc_dim[k] < 1 || prob.soc_dim[k] > 4) return false;
    const int p = packets + k;
    cone_first_row_[k] = row;
    cone_narrow_[k] = prob.narrow_cone[k];
    for (int j = 0; j < N; ++j) G_[p][j] = Packet{};
    h_[p] = Packet{};
    row_mask_[p] = Packet{};
    for (int i = 0; i < prob.soc_dim[k]; ++i) {
      for (int j = 0; j < N; ++j) G_[p][j][i] = prob.G[row + i][j];
      h_[p][i] = prob.h[row + i];
    }
  }
  for (int j = 0; j < N; ++j) c_[j] = prob.c[j];
  h_scale_ = std::max(1.0, std::sqrt(detail::dot(prob.h, prob.h, prob.m)));
  c_scale_ = std::max(1.0, std::sqrt(detail::dot(prob.c, prob.c, N)));
  return true;
}

// ConeSolver::ray_start, packet by packet.
template <class Program, int N, int NNarrow, int NTail>
bool RowPacketSolver<Program, N, NNarrow, NTail>::ray_start(int column, const double* base) {
  // s = h − G base at x_k = 0, kept in s_ until s_ is set
  for (int p = groups_[0].first; p < groups_[2].end; ++p) {
    s_[p] = h_[p];
    for (int j = 0; base && j < N; ++j) s_[p] -= G_[p][j] * base[j];
  }
  bool valid = c_[column] > 0.0;
  Packet least_orthant{};
  for (int p = groups_[0].first; p < groups_[1].end; ++p) {
    const Packet rise = -G_[p][column];
    const auto real = row_mask_[p] > 0.0;
    valid = valid && all_lanes((rise > 0.0) | lane_not(real));
    least_orthant = lane_max(least_orthant, select(real, detail::orthant_ray_bound(s_[p], rise), Packet{}));
  }
  double least = packet::hmax(least_orthant);
  for (int p = groups_[2].first; p < groups_[2].end; ++p) {
    const double rise = -G_[p][column][0];
    valid = valid && rise > 0.0 && G_[p][column][1] == 0.0 && G_[p][column][2] == 0.0 && G_[p][column][3] == 0.0;
    least = std::max(least, (std::sqrt(packet::hsum(s_[p] * s_[p] * packet::kTail)) - s_[p][0]) / rise);
  }
  const double start = detail::ray_start_value(least);
  double dual_k = 0.0;
  for (int p = groups_[0].first; p < groups_[1].end; ++p) {
    s_[p] -= G_[p][column] * start;
    z_[p] = 1.0 / s_[p];
    dual_k -= packet::hsum(G_[p][column] * z_[p] * row_mask_[p]);
  }
  for (int p = groups_[2].first; p < groups_[2].end; ++p) {
    s_[p] -= G_[p][column] * start;
    z_[p] = packet::kJ * s_[p] * (1.0 / packet::soc_residual(s_[p]));
    dual_k -= packet::hsum(G_[p][column] * z_[p]);
  }
  const double mu = c_[column] / dual_k;
  if (!(valid && mu > 0.0 && std::isfinite(mu))) return false;
  for (int j = 0; j < N; ++j) x[j] = base ? base[j] : 0.0;
  x[column] += start;
  for (int p = groups_[0].first; p < groups_[2].end; ++p) z_[p] *= mu;
  return true;
}

// The residuals, gap and objectives of the iterate (ConeSolver::scale_and_assemble's), with no
// scaling: the last pass of a solve needs these only, and a scaling and factorization there would
// be wasted. The primal residuals G x + s − h go to u_.
// False when s or z has left the interior of its cone.
template <class Program, int N, int NNarrow, int NTail>
bool RowPacketSolver<Program, N, NNarrow, NTail>::measure() {
  Packet rx_acc[N];
  for (int a = 0; a < N; ++a) rx_acc[a] = Packet{};
  Packet rz2{}, gap{}, hz{};
  LaneMask<4> orthant_interior = Packet{} == 0.0;  // all true; tested once, after the loop
  bool interior = true;
  auto accumulate = [&](int p, Packet mask, auto cols) {
    const Packet z = z_[p];
    Packet rz = s_[p] - h_[p];
    for (int j = cols.lo; j < cols.hi; ++j) {
      rz += G_[p][j] * x[j];
      rx_acc[j] += G_[p][j] * z;
    }
    u_[p] = rz;
    rz2 += rz * rz;
    gap += s_[p] * z * mask;
    hz += h_[p] * z * mask;
  };
  for_each_packet(
      [&](int p, auto cols) {
        orthant_interior &= (s_[p] > 0.0) & (z_[p] > 0.0);
        accumulate(p, row_mask_[p], cols);
      },
      [&](int p, int k, auto cols) {
        const Packet s = s_[p], z = z_[p];
        const double s_res = cone_s_residual_[k] = packet::soc_residual(s);
        const double z_res = cone_z_residual_[k] = packet::soc_residual(z);
        interior = interior && s_res > 0.0 && z_res > 0.0 && s[0] > 0.0 && z[0] > 0.0;
        accumulate(p, splat<Packet>(1.0), cols);
      });
  packet::hsums<N>(rx_acc, rx_);
  for (int a = 0; a < N; ++a) rx_[a] += c_[a];
  interior = interior && all_lanes(orthant_interior);
  info.gap = packet::hsum(gap);
  info.primal_objective = detail::dot(c_, x, N);
  info.dual_objective = -packet::hsum(hz);
  info.primal_residual = std::sqrt(packet::hsum(rz2)) / h_scale_;
  info.dual_residual = std::sqrt(detail::dot(rx_, rx_, N)) / c_scale_;
  return interior;
}

// The rest of ConeSolver::scale_and_assemble, after measure(): the scaling, W⁻¹ times the primal
// residuals, W⁻¹G and the factor of its normal matrix, with the sums over rows kept in packets until
// the end.
template <class Program, int N, int NNarrow, int NTail>
bool RowPacketSolver<Program, N, NNarrow, NTail>::scale_and_factor() {
  // The lower triangle of the normal matrix row by row, entry (a, b) at a(a + 1)/2 + b.
  constexpr int kTriangle = N * (N + 1) / 2;
  Packet H_acc[kTriangle];
  for (int e = 0; e < kTriangle; ++e) H_acc[e] = Packet{};
  auto accumulate_rows = [&](int p, const Packet* gs, auto cols) {
    for (int a = cols.lo; a < cols.hi; ++a) {
      Gs_[p][a] = gs[a];
      for (int b = cols.lo; b <= a; ++b) H_acc[a * (a + 1) / 2 + b] += gs[a] * gs[b];
    }
  };
  for_each_packet(
      [&](int p, auto cols) {
        const Packet s = s_[p], z = z_[p];
        const Packet rsqrt_sz = 1.0 / packet::sqrt(s * z);
        const Packet wi_inv = z * rsqrt_sz;
        w_[p] = s * rsqrt_sz;
        w_inv_[p] = wi_inv;
        lambda_[p] = s * z * rsqrt_sz;
        lambda_inv_[p] = rsqrt_sz;
        Packet gs[N];
        for (int j = cols.lo; j < cols.hi; ++j) gs[j] = G_[p][j] * wi_inv;
        u_[p] *= wi_inv;
        accumulate_rows(p, gs, cols);
      },
      [&](int p, int k, auto cols) {
        const Packet s = s_[p], z = z_[p];
        const detail::SocScalingPoint<double> sc =
            detail::soc_scaling(cone_s_residual_[k], cone_z_residual_[k], packet::hsum(s * z), s[0], z[0]);
        const detail::SocScaling<double>& scaling = cone_w_[k] = sc.w;
        const Packet c = cone_c_[k] = packet::with_head(s * sc.s_inv - z * sc.z_inv, sc.c0);
        lambda_[p] = packet::with_head(sc.lambda_s * s + sc.lambda_z * z, sc.lambda0);
        lambda_soc_[k] = sc.lambda_point;
        u_[p] = packet::soc_apply_Winv(c, scaling, u_[p]);
        // Columns of W⁻¹G: W⁻¹ g = −J (g − k (cᵀJg) c)/η, packet::soc_apply_Winv with its column-
        // independent factors hoisted by hand, once per cone rather than once per column.
        const Packet minus_J_over_eta = packet::kJ * -scaling.inv_eta;
        const Packet Jc = packet::kJ * c;
        Packet gs[N];
        for (int j = cols.lo; j < cols.hi; ++j)
          gs[j] = minus_J_over_eta * (G_[p][j] - (scaling.k * packet::hsum(Jc * G_[p][j])) * c);
        accumulate_rows(p, gs, cols);
      });
  double H[N][N], triangle[kTriangle];
  packet::hsums<kTriangle>(H_acc, triangle);
  for (int a = 0; a < N; ++a)
    for (int b = 0; b <= a; ++b) H[a][b] = triangle[a * (a + 1) / 2 + b];
  double D[N];
  return detail::ldl_factor(H, N, L_, D, D_inv_);
}

// ConeSolver::newton_direction.
template <class Program, int N, int NNarrow, int NTail>
detail::StepBounds<double> RowPacketSolver<Program, N, NNarrow, NTail>::newton_direction(
    const Packet* t1, double* dx, Packet* ds_scaled, Packet* dz_scaled, detail::DirectionProducts<double>* products) {
  Packet v[kMaxPackets], step_acc[N];
  for (int j = 0; j < N; ++j) step_acc[j] = Packet{};
  auto gather = [&](int p, auto cols) {
    v[p] = u_[p] + t1[p];
    for (int j = cols.lo; j < cols.hi; ++j) step_acc[j] += Gs_[p][j] * v[p];
  };
  for_each_packet(gather, [&](int p, int, auto cols) { gather(p, cols); });
  double step[N];
  packet::hsums<N>(step_acc, step);
  for (int j = 0; j < N; ++j) step[j] = -rx_[j] - step[j];
  detail::ldl_solve(L_, D_inv_, N, step);
  auto scatter = [&](int p, auto cols) {
    // Two chains of multiply-adds: these sums are on the iteration's critical path.
    Packet even = v[p], odd{};
    for (int j = cols.lo; j < cols.hi; j += 2) {
      even += Gs_[p][j] * step[j];
      if (j + 1 < cols.hi) odd += Gs_[p][j + 1] * step[j + 1];
    }
    const Packet wdz = even + odd;
    dz_scaled[p] = wdz;
    ds_scaled[p] = t1[p] - wdz;
  };
  for_each_packet(scatter, [&](int p, int, auto cols) { scatter(p, cols); });
  Packet inv_t_primal{}, inv_t_dual{};
  for (int p = groups_[0].first; p < groups_[1].end; ++p) {
    inv_t_primal = lane_max(inv_t_primal, -ds_scaled[p] * lambda_inv_[p]);
    inv_t_dual = lane_max(inv_t_dual, -dz_scaled[p] * lambda_inv_[p]);
  }
  double inv_tp = packet::hmax(inv_t_primal), inv_td = packet::hmax(inv_t_dual);
  for (int k = 0; k < num_cones_; ++k) {
    const int p = groups_[2].first + k;
    inv_tp = std::max(inv_tp, packet::soc_inverse_step(lambda_[p], lambda_soc_[k], ds_scaled[p]));
    inv_td = std::max(inv_td, packet::soc_inverse_step(lambda_[p], lambda_soc_[k], dz_scaled[p]));
  }
  if (products) {  // padding rows have ds = dz = 0
    Packet lambda_ds{}, lambda_dz{}, ds_dz{};
    for (int p = groups_[0].first; p < groups_[2].end; ++p) {
      lambda_ds += lambda_[p] * ds_scaled[p];
      lambda_dz += lambda_[p] * dz_scaled[p];
      ds_dz += ds_scaled[p] * dz_scaled[p];
    }
    *products = {packet::hsum(lambda_ds), packet::hsum(lambda_dz), packet::hsum(ds_dz)};
  }
  std::copy(step, step + N, dx);
  return detail::StepBounds<double>::from_inverse(inv_tp, inv_td);
}

template <class Program, int N, int NNarrow, int NTail>
bool RowPacketSolver<Program, N, NNarrow, NTail>::solve(const Program& prob, const SolverSettings& settings,
                                                        int ray_column, const double* ray_base, double* z) {
  if (settings.barrier > 0.0 || ray_column < 0 || !pack(prob) || !ray_start(ray_column, ray_base)) return false;
  info = SolveInfo<1>{};
  const int degree = prob.l + prob.num_soc;
  const int packets = groups_[2].end;
  auto finish = [&](SolveStatus status, int iter) {
    info.status[0] = status;
    info.iterations[0] = iter;
    for (int p = groups_[0].first; p < groups_[1].end; ++p) {
      const int begin = p < groups_[1].first ? 4 * p : prob.narrow_rows + 4 * (p - groups_[1].first);
      const int end = p < groups_[1].first ? prob.narrow_rows : prob.l;
      for (int i = 0; i < 4 && begin + i < end; ++i) z[begin + i] = z_[p][i];
    }
    for (int k = 0; k < num_cones_; ++k)
      for (int i = 0; i < prob.soc_dim[k]; ++i) z[cone_first_row_[k] + i] = z_[groups_[2].first + k][i];
    return true;
  };
  auto stopped = [&](SolveStatus status) {
    return detail::within_tolerances(info, settings, settings.inaccurate_factor) ? SolveStatus::solved_inaccurate
                                                                                 : status;
  };

  Packet t1[kMaxPackets], ds_aff[kMaxPackets], dz_aff[kMaxPackets], ds_scaled[kMaxPackets], dz_scaled[kMaxPackets];
  double dx[N];
  for (int iter = 0;; ++iter) {
    const bool interior = measure();
    if (interior && detail::within_tolerances(info, settings, 1.0)) return finish(SolveStatus::solved, iter);
    if (!interior) return finish(stopped(SolveStatus::numerical_error), iter);
    if (iter == settings.max_iter) return finish(stopped(SolveStatus::max_iterations), iter);
    if (!scale_and_factor()) return finish(stopped(SolveStatus::numerical_error), iter);

    // Predictor, then Mehrotra's corrector (ConeSolver::solve).
    for (int p = groups_[0].first; p < groups_[1].end; ++p) t1[p] = -lambda_[p] * row_mask_[p];
    for (int p = groups_[2].first; p < packets; ++p) t1[p] = -lambda_[p];
    const double mean_gap = info.gap / degree, inv_gap = 1.0 / info.gap;  // divided while the predictor runs
    detail::DirectionProducts<double> products;
    const detail::StepBounds<double> affine = newton_direction(t1, dx, ds_aff, dz_aff, &products);
    const double fraction = detail::step_fraction(std::min(1.0, affine.both()));
    const double sigma_mu = detail::centering_parameter(inv_gap, affine, products) * mean_gap;
    for (int p = groups_[0].first; p < groups_[1].end; ++p)
      t1[p] = (-lambda_[p] + (sigma_mu - ds_aff[p] * dz_aff[p]) * lambda_inv_[p]) * row_mask_[p];
    for (int k = 0; k < num_cones_; ++k) {
      const int p = groups_[2].first + k;
      Packet rhs = -packet::soc_product(ds_aff[p], dz_aff[p]);
      rhs[0] += sigma_mu;
      t1[p] = packet::soc_divide(lambda_[p], lambda_soc_[k], rhs) - lambda_[p];
    }
    const double t = std::min(1.0, fraction * newton_direction(t1, dx, ds_scaled, dz_scaled).both());
    if (!(t > 1e-12 && std::isfinite(detail::dot(dx, dx, N))))
      return finish(stopped(SolveStatus::numerical_error), iter);

    for (int j = 0; j < N; ++j) x[j] += t * dx[j];
    for (int p = groups_[0].first; p < groups_[1].end; ++p) {
      s_[p] += t * w_[p] * ds_scaled[p];
      z_[p] += t * w_inv_[p] * dz_scaled[p];
    }
    for (int k = 0; k < num_cones_; ++k) {
      const int p = groups_[2].first + k;
      s_[p] += t * packet::soc_apply_W(cone_c_[k], cone_w_[k], ds_scaled[p]);
      z_[p] += t * packet::soc_apply_Winv(cone_c_[k], cone_w_[k], dz_scaled[p]);
    }
  }
}

}  // namespace dcol::conic
