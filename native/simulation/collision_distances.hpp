// Distances of a model's collision shapes to each other and to static obstacles as functions of q
// (dcol.dynamics.CollisionModel): the bodies' poses and Jacobians from the simulation's kinematics
// (detail::body_kinematics), the candidate pairs from its broadphase, per pair the signed distance
// and DCOL's α, or α alone, with their derivatives along the two bodies' rigid motions, chained with
// the bodies' Jacobians into derivatives with respect to q's tangent space (over the dofs that move the
// two bodies: PairRows). Pairs of polytopes, spheres, capsules, padded polygons and cylinders go to GJK/EPA
// and α's ray cast, two polytopes' α to portal refinement first (geometry/gjk.hpp; meshes' support points
// by hill climbing on their vertex adjacency); cones, ellipsoids and overlapping flat cores to the cone
// programs (geometry/distance.hpp, DCOL's proximity kernels).
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "contact/broadphase.hpp"
#include "geometry/distance.hpp"
#include "geometry/gjk.hpp"
#include "geometry/proximity_kernels.hpp"
#include "simulation/simulation.hpp"

namespace dcol::sim {

using geometry::DistanceJacobian;
using geometry::DistanceResult;

// A model's collision shapes and the obstacles as scene bodies of a WorldSpec (only its model, shapes,
// shape_body and body_frame are used), the pairs to check, and the broadphase margin.
struct CollisionModelSpec {
  WorldSpec world;
  std::vector<Pose> static_pose;           // scene body → its pose if static (body_frame −1)
  std::vector<std::pair<int, int>> pairs;  // candidate pairs of shapes (a < b)
  std::vector<int> pair_of;                // S × S: a candidate pair's index at [a S + b], a < b; −1 elsewhere
  double margin = 0.0;                     // every pair within this distance is checked
  // Pairs of shapes with point-set cores by GJK/EPA and gjk_scaling (exact derivatives, of whichever witness
  // features GJK ends on where they are not unique); false: every pair by the cone programs, whose
  // derivatives are the barrier-smoothed problems' (an average over non-unique witnesses).
  bool by_gjk = true;
  // Per shape, a mesh's vertex adjacency (geometry/vertex_adjacency.hpp): its support points by hill climbing.
  std::vector<geometry::VertexAdjacency> adjacency;

  int num_shapes() const { return static_cast<int>(world.shapes.size()); }
};

// Rows of a pair's derivatives: α, then with the signed distance the distance, the witness points of a
// and b, the normal.
constexpr int kDistanceRows = 11;
inline int derivative_rows(bool signed_distances) { return signed_distances ? kDistanceRows : 1; }

// One checked pair at one configuration: its index into CollisionModelSpec::pairs, its result, and with
// jacobians how many dofs its rows span (chain_pair_rows).
struct PairDistance {
  int pair;
  DistanceResult result;
  int dof_count = 0;
};

// The pairs' derivatives with respect to q's tangent, sparse by pair: each pair's rows are zero but on the dofs
// that move its two bodies (the union of their chains), so a pair keeps those dofs (ascending) and, per dof,
// its derivative_rows values; pairs one after another.
struct PairRows {
  std::vector<int> dofs;
  std::vector<double> values;  // dofs.size() × row count, a dof's rows contiguous
};

// The candidate pairs whose shapes' bounding boxes, each grown by margin/2, overlap at the poses in
// ws.poses (so every pair within the margin, and some farther): their indices into spec.pairs, in
// ascending order, into `checked`.
inline void broadphase_pairs(const CollisionModelSpec& spec, StepWorkspace& ws, std::vector<int>& checked) {
  const int S = spec.num_shapes();
  const WorldSpec& world = spec.world;
  for (int s = 0; s < S; ++s)
    ws.boxes[s] = contact::bounding_box(*world.shapes[s], ws.poses[world.shape_body[s]], 0.5 * spec.margin);
  contact::sweep_and_prune(ws.boxes, ws.order, ws.open, ws.pairs);
  checked.clear();
  for (const auto& [a, b] : ws.pairs) {
    const int pair = spec.pair_of[a * S + b];
    if (pair >= 0) checked.push_back(pair);
  }
  std::sort(checked.begin(), checked.end());
}

// A pair's derivatives (its first R rows) with respect to q's tangent, appended to `rows`: the derivatives along
// rigid motions [δp_a, δθ_a, δp_b, δθ_b] times the bodies' Jacobians, whose columns (over the dofs that move each
// body, ascending) are the rigid motion of the body's origin per dof; only the union of the two bodies' dofs, the
// other columns being zero. Returns how many dofs it appended.
template <int R>
int chain_pair_rows(const CollisionModelSpec& spec, const StepWorkspace& ws, int pair, const DistanceJacobian& jac,
                    PairRows& rows) {
  const double* rigid[kDistanceRows] = {jac.alpha,     jac.distance,  jac.p_a[0],   jac.p_a[1],
                                        jac.p_a[2],    jac.p_b[0],    jac.p_b[1],   jac.p_b[2],
                                        jac.normal[0], jac.normal[1], jac.normal[2]};
  // The rigid-motion derivatives transposed, [side][component][row]: a dof's rows in one pass over its column.
  double by_component[2][6][R];
  for (int side = 0; side < 2; ++side)
    for (int c = 0; c < 6; ++c)
      for (int r = 0; r < R; ++r) by_component[side][c][r] = rigid[r][6 * side + c];
  int first[2], count[2];
  const double* columns[2];
  for (int side = 0; side < 2; ++side) {
    const int shape = side == 0 ? spec.pairs[pair].first : spec.pairs[pair].second;
    const int body = spec.world.shape_body[shape];
    first[side] = ws.body_dof_start[body], count[side] = ws.body_dof_start[body + 1] - first[side];
    columns[side] = ws.body_columns.data() + 6 * static_cast<size_t>(first[side]);
  }
  // Adds side `side`'s part at its dof t to the rows.
  auto add_part = [&](int side, int t, double* value) {
    double sum[R] = {};
    for (int c = 0; c < 6; ++c) {
      const double column = columns[side][c * count[side] + t];
      for (int r = 0; r < R; ++r) sum[r] += by_component[side][c][r] * column;
    }
    for (int r = 0; r < R; ++r) value[r] += sum[r];
  };
  int appended = 0;
  // The two ascending dof lists merged; a dof moving both bodies (a common ancestor's) sums both sides' parts.
  for (int t_a = 0, t_b = 0; t_a < count[0] || t_b < count[1]; ++appended) {
    const int dof_a = t_a < count[0] ? ws.body_dofs[first[0] + t_a] : -1;
    const int dof_b = t_b < count[1] ? ws.body_dofs[first[1] + t_b] : -1;
    const bool on_a = dof_a >= 0 && (dof_b < 0 || dof_a <= dof_b), on_b = dof_b >= 0 && (dof_a < 0 || dof_b <= dof_a);
    rows.dofs.push_back(on_a ? dof_a : dof_b);
    double value[R] = {};
    if (on_a) add_part(0, t_a, value);
    if (on_b) add_part(1, t_b, value);
    rows.values.insert(rows.values.end(), value, value + R);
    t_a += on_a, t_b += on_b;
  }
  return appended;
}

// A worker's scratch for collision_distances, kept across its configurations.
struct CollisionScratch {
  std::vector<int> checked;  // the broadphase's pairs
  // Per shape, its core's widths along the world axes at the configuration (geometry::core_widths), 3 a shape,
  // computed once a shape's first pair needs them (computed[s]): GJK's rounding scale for all of its pairs.
  std::vector<double> widths;
  std::vector<char> computed;
};

// The rounding scale gjk_signed_distance takes for shapes a and b at the poses in ws (CollisionScratch::widths).
inline double pair_extent(const CollisionModelSpec& spec, const StepWorkspace& ws, CollisionScratch& scratch, int a,
                          int b) {
  double extent = 0.0;
  for (const int s : {a, b}) {
    if (scratch.computed[s]) continue;
    geometry::Core core;
    if (!geometry::shape_core(*spec.world.shapes[s], ws.poses[spec.world.shape_body[s]], core)) return 0.0;
    if (!spec.adjacency[s].empty()) core.adjacency = &spec.adjacency[s];
    geometry::core_widths(core, scratch.widths.data() + 3 * s);
    scratch.computed[s] = 1;
  }
  for (int k = 0; k < 3; ++k) extent = std::max(extent, scratch.widths[3 * a + k] + scratch.widths[3 * b + k]);
  return extent;
}

// The pairs the broadphase keeps at configuration q, appended to `out`, and with jacobians their rows
// (chain_pair_rows, derivative_rows of them) to `rows`. Without signed_distances only DCOL's α and its gradient: one
// solve of DCOL's program, no Euclidean one and no linear solve for the derivatives (the distance fields stay zero).
inline void collision_distances(const CollisionModelSpec& spec, StepWorkspace& ws, const double* q, bool jacobians,
                                bool signed_distances, CollisionScratch& scratch, std::vector<PairDistance>& out,
                                PairRows& rows) {
  const WorldSpec& world = spec.world;
  const int nv = world.model->nv, row_count = derivative_rows(signed_distances);
  detail::body_kinematics(world, ws, q, false);
  for (int body = 0; body < world.num_bodies(); ++body)
    if (world.body_frame[body] < 0) ws.poses[body] = spec.static_pose[body];
  const std::vector<int>& checked = scratch.checked;
  broadphase_pairs(spec, ws, scratch.checked);
  scratch.widths.resize(3 * static_cast<size_t>(spec.num_shapes()));
  scratch.computed.assign(spec.num_shapes(), 0);
  out.reserve(out.size() + checked.size());
  if (jacobians) {  // at most nv dofs a pair: no reallocation while they are appended
    rows.dofs.reserve(rows.dofs.size() + checked.size() * nv);
    rows.values.reserve(rows.values.size() + checked.size() * nv * static_cast<size_t>(row_count));
  }
  DistanceJacobian jac;
  geometry::ProximityJacobian alpha_jac;
  for (const int pair : checked) {
    const auto [a, b] = spec.pairs[pair];
    const Shape &shape_a = *world.shapes[a], &shape_b = *world.shapes[b];
    const Pose &pose_a = ws.poses[world.shape_body[a]], &pose_b = ws.poses[world.shape_body[b]];
    const geometry::VertexAdjacency* adjacency_a = spec.adjacency[a].empty() ? nullptr : &spec.adjacency[a];
    const geometry::VertexAdjacency* adjacency_b = spec.adjacency[b].empty() ? nullptr : &spec.adjacency[b];
    PairDistance& entry = out.emplace_back();
    entry.pair = pair;
    if (signed_distances) {
      if (!spec.by_gjk ||
          !geometry::gjk_signed_distance(shape_a, pose_a, shape_b, pose_b, entry.result, jacobians ? &jac : nullptr,
                                         adjacency_a, adjacency_b, pair_extent(spec, ws, scratch, a, b)))
        geometry::signed_distance(shape_a, pose_a, shape_b, pose_b, world.solver, entry.result,
                                  jacobians ? &jac : nullptr);
    } else if (!spec.by_gjk || !geometry::gjk_alpha(shape_a, pose_a, shape_b, pose_b, entry.result,
                                                    jacobians ? jac.alpha : nullptr, adjacency_a, adjacency_b)) {
      geometry::ProximityResult dcol;
      const geometry::DerivativeOutput gradient{geometry::DerivativeRequest::gradient, &alpha_jac};
      geometry::proximity_kernels().run_one(shape_a, &pose_a, shape_b, &pose_b, world.solver, &dcol,
                                            jacobians ? gradient : geometry::DerivativeOutput{});
      entry.result.alpha = dcol.alpha, entry.result.status = dcol.status, entry.result.iterations = dcol.iterations;
      if (jacobians) std::copy_n(alpha_jac.alpha, 12, jac.alpha);
    }
    if (!jacobians) continue;
    entry.dof_count = signed_distances ? chain_pair_rows<kDistanceRows>(spec, ws, pair, jac, rows)
                                       : chain_pair_rows<1>(spec, ws, pair, jac, rows);
  }
}

}  // namespace dcol::sim
