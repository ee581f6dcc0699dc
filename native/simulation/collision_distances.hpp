// Distances of a model's collision shapes to each other and to static obstacles as functions of q
// (dcol.dynamics.CollisionModel): the bodies' poses and Jacobians from the simulation's kinematics
// (detail::body_kinematics), the candidate pairs from its broadphase, per pair the signed distance
// and DCOL's α, or α alone, with their derivatives along the two bodies' rigid motions, chained with
// the bodies' Jacobians into derivatives with respect to q's tangent space (nv columns). Pairs of
// polytopes, spheres, capsules, padded polygons and cylinders go to GJK/EPA and α's ray cast
// (geometry/gjk.hpp; meshes' support points by hill climbing on their vertex adjacency); cones, ellipsoids
// and overlapping flat cores to the cone programs (geometry/distance.hpp, DCOL's proximity kernels).
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

// One checked pair at one configuration: its index into CollisionModelSpec::pairs and its result.
struct PairDistance {
  int pair;
  DistanceResult result;
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

// The first `row_count` rows (row_count × nv, row-major, zero on entry) of a pair's derivatives with
// respect to q's tangent: the derivatives along rigid motions [δp_a, δθ_a, δp_b, δθ_b] times the bodies'
// Jacobians, whose columns (over the dofs that move each body) are the rigid motion of the body's
// origin per dof.
inline void chain_pair_rows(const CollisionModelSpec& spec, const StepWorkspace& ws, int pair,
                            const DistanceJacobian& jac, int row_count, int nv, double* rows) {
  const double* rigid[kDistanceRows] = {jac.alpha,     jac.distance,  jac.p_a[0],   jac.p_a[1],
                                        jac.p_a[2],    jac.p_b[0],    jac.p_b[1],   jac.p_b[2],
                                        jac.normal[0], jac.normal[1], jac.normal[2]};
  const int shapes[2] = {spec.pairs[pair].first, spec.pairs[pair].second};
  for (int side = 0; side < 2; ++side) {
    const int body = spec.world.shape_body[shapes[side]];
    const int first = ws.body_dof_start[body], dofs = ws.body_dof_start[body + 1] - first;
    const double* columns = ws.body_columns.data() + 6 * static_cast<size_t>(first);
    for (int t = 0; t < dofs; ++t) {
      const int dof = ws.body_dofs[first + t];
      for (int r = 0; r < row_count; ++r) {
        double sum = 0.0;
        for (int c = 0; c < 6; ++c) sum += rigid[r][6 * side + c] * columns[c * dofs + t];
        rows[r * nv + dof] += sum;
      }
    }
  }
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
                                std::vector<double>& rows) {
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
  const size_t size = row_count * static_cast<size_t>(nv);
  // The rows of all kept pairs at once, zeroed once, in the space reserved for them.
  size_t row_start = rows.size();
  if (jacobians) rows.resize(row_start + checked.size() * size);
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
    chain_pair_rows(spec, ws, pair, jac, row_count, nv, rows.data() + row_start);
    row_start += size;
  }
}

}  // namespace dcol::sim
