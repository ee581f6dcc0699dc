// The time step of a simulation world (the module docstring of dynamics/simulation.py has the
// equations), the one World.step, rollout, step_batch and rollout_batch all run: contact rows,
// joint-limit rows, stabilization, restitution, and the boxed LCP solved island by island (the previous
// step's sets first on an island whose rows all match the previous step's, else projected Gauss–Seidel
// with exact solves on the sets it finds, on the contacts that push) or the contact NCP.
// Every buffer lives in a StepWorkspace that grows to the largest contact count once and is reused.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "contact/broadphase.hpp"
#include "contact/contacts.hpp"
#include "core/dense_lu.hpp"
#include "core/dot.hpp"
#include "core/magnitudes.hpp"
#include "dynamics/crba.hpp"
#include "dynamics/integrate.hpp"
#include "dynamics/rnea.hpp"
#include "dynamics/rnea_derivatives.hpp"
#include "lcp/active_set.hpp"
#include "lcp/lcp.hpp"
#include "lcp/ncp.hpp"
#include "lcp/screening.hpp"

namespace dcol::sim {

// The free motion's implicit midpoint equation (detail::free_motion) is solved to a velocity change of
// kMidpointTolerance relative to each dof's own velocity: well below what a kinetic energy kept over 10⁴
// steps to 1e-6 needs, and as well for a slow motion beside a fast one (a translation beside a spin)
// as alone. A dof slower than kMidpointSlowDof of the fastest is held to that fraction of the fastest's
// scale, the rounding of the terms it shares with it. The fixed-point iteration hands over to Newton's
// method after kMidpointFixedPointIterations or as soon as an iteration shrinks the change by less
// than kMidpointSlowContraction.
constexpr double kMidpointTolerance = 1e-12, kMidpointSlowDof = 1e-4, kMidpointSlowContraction = 0.1;
constexpr int kMidpointFixedPointIterations = 6, kMidpointNewtonIterations = 30, kMidpointLineSearchHalvings = 30;

// The position correction (detail::position_correction) leaves penetrations within
// kAllowedPenetration of the contact margin alone: resting contacts sit that little inside each other
// without a solve every step. Its Delassus matrix's diagonal is scaled by 1 + kCorrectionRegularization,
// which makes the correction unique and bounds it where penetrations ask one body for opposite moves
// (a link pushed out through both faces of a slab).
constexpr double kAllowedPenetration = 1e-2, kCorrectionRegularization = 1e-3;

// A step's linearized contacts miss what a turn does to the second order: a face turned by θ about a
// centre at reach r lowers what rests on it by up to r θ²/2, whichever way it turns. They also miss, to
// the first order, the features that take over from the contact's within the step: a box tumbling over
// a corner brings the next corner down by up to its span times θ, and a capsule rocking on its end hands
// the contact to the other end. Where these bounds could leave a contact deeper than its pair's
// predicted depth by more than kMispredictionTolerance of the contact margin, the contacts are found
// again at the step's end pose and, where they did miss by that much, the excess is projected out
// (detail::project_mispredicted_contacts), at most kProjectionIterations times (Gauss–Newton on the
// re-evaluated contacts: a push on one end of a light body turns it onto its other end, which the next
// iteration finds). The tolerance lets the rolling and tumbling of ordinary piles, whose misses are far
// smaller, pass without a second look.
constexpr double kMispredictionTolerance = 0.1;
constexpr int kProjectionIterations = 20;

// Two bodies' patches from several pairs of their shapes are one patch (merge_body_patch) when their
// normals agree this well: they push along one direction, and what holds the bodies apart is then the
// support polygon of all their points, which the reduced patch's corners span.
constexpr double kSharedNormalCosine = 0.999;

// The simulation's contact solves take their tolerances in SI units below these scales (lcp::Tolerance):
// impulses under 1 N s and velocities under 1 m/s are compared with the tolerance as they are.
constexpr double kLcpScaleFloor = 1.0;

// A contact solve's tolerance of relative size `tolerance` in the simulation's units.
inline lcp::Tolerance si_tolerance(double tolerance) { return {tolerance, kLcpScaleFloor}; }

// What a step takes from the layers below: shapes and their poses, contacts between them.
using contact::Box3;
using contact::Contact;
using contact::ContactDerivatives;
using contact::ContactSettings;
using geometry::Pose;
using geometry::Shape;
using geometry::ShapeKind;
using geometry::SolverSettings;

// A joint with a finite bound: its coordinate and velocity index, and its bounds (±inf if none).
struct JointLimit {
  int q_index, v_index;
  double lower, upper;
};

struct WorldSpec {
  const dyn::Model* model = nullptr;
  std::vector<const Shape*> shapes;  // the scene's shapes
  std::vector<int> shape_body;       // shape → scene body
  std::vector<int> body_frame;       // scene body → model frame, −1 for a static body (identity pose)
  std::vector<uint8_t> collides;     // scene body pairs (B × B) whose shapes are tested
  std::vector<double> damping;       // nv, implicit joint damping
  std::vector<JointLimit> limits;
  double dt = 1e-3, friction = 0.5, restitution = 0.0, baumgarte = 0.2, restitution_threshold = 0.2,
         limit_margin = 0.05;
  ContactSettings contact;  // the contact margin and feature tolerance
  SolverSettings solver;    // of the narrow phase
  int max_sweeps = 200000;
  double lcp_tolerance = 1e-7;
  // The contact NCP on Coulomb's cones instead of the boxed LCP (solve_contact_ncp below).
  bool ncp = false;
  int ncp_iterations = 5000;
  double ncp_tolerance = 1e-10;

  int num_bodies() const { return static_cast<int>(body_frame.size()); }
};

// What identifies a contact across steps: its shape pair and its place among the pair's contacts, or a
// joint limit's velocity index and side (shape_a = −1).
struct RowKey {
  int shape_a, shape_b, kind;
  bool operator==(const RowKey& o) const { return shape_a == o.shape_a && shape_b == o.shape_b && kind == o.kind; }
};

// What identifies an LCP row across steps (the warm start's match): its contact's or limit's key and
// the row within the contact (0 normal, 1 and 2 tangents; 0 for a limit). A reduced patch may trade a
// corner for its neighbour under the same key: the solve on the previous sets checks every match.
struct RowId {
  int shape_a, shape_b, kind, row;
  auto tie() const { return std::tie(shape_a, shape_b, kind, row); }
  bool operator<(const RowId& o) const { return tie() < o.tie(); }
  bool operator==(const RowId& o) const { return tie() == o.tie(); }
};

// An LU factorization of an nv × nv matrix that couples no two kinematic trees (M, ∂c/∂v and their
// sums do not), by its diagonal blocks, one per tree: block t (n_t × n_t, row-major) at start[t], its
// pivots at the tree's first dof's place in pivot.
struct TreeBlockLU {
  std::vector<double> blocks;
  std::vector<size_t> start;
  std::vector<int> pivot;
};

struct StepWorkspace {
  dyn::Data data;
  std::vector<Pose> poses;  // scene body → world pose
  // Scene body b → the dofs that move it (its frame's ancestors', ascending) at body_dofs[body_dof_start[b]
  // ...body_dof_start[b + 1]) and its Jacobian over them, 6 × count at body_columns[6 body_dof_start[b]]
  // ([velocity of its origin; angular velocity]); with derivatives also the dense form, 6 × nv per body.
  std::vector<int> body_dof_start, body_dofs;
  std::vector<double> body_columns, body_jacobian;
  std::vector<Box3> boxes;
  std::vector<double> sweeps;  // per shape: how far its points can move in the step (find_contacts)
  std::vector<int> order, open;
  std::vector<std::pair<int, int>> pairs;
  std::vector<Contact> contacts, pair_scratch;
  std::vector<ContactDerivatives> contact_derivatives, pair_derivatives;  // with derivatives only
  std::vector<RowKey> keys;
  geometry::SolveStatus contact_status = geometry::SolveStatus::solved;  // the narrow phase's worst solve
  // Joint limits passed: the coordinate (q and v index) and the move of q back towards the bound that
  // the step adds after integrating (β times the violation).
  struct LimitCorrection {
    int q_index, v_index;
    double delta;
  };
  std::vector<LimitCorrection> limit_corrections;
  // The kept rows' identities, and the previous step's (sorted, with each one's impulse and set) for
  // the warm start; each row's match among them (−1: none).
  std::vector<RowId> row_ids;
  std::vector<std::pair<RowId, int>> previous_rows;
  std::vector<double> previous_f;
  std::vector<lcp::EntrySet> sets, previous_sets;
  std::vector<int> previous_match;
  bool has_previous = false;
  // All rows (3 per contact, then limits), sparse: row i's dofs at row_dofs[row_start[i]...row_start[i + 1])
  // and its entries likewise in row_values; gap_rate = ∂b_extra/∂gap and restitution_velocity =
  // ∂b_extra/∂e of each row (for the step's derivatives). A contact's dofs (ascending) and each dof's
  // place among them (dof_local, −1 elsewhere; also an island's, in island_matrices).
  std::vector<int> row_start, row_dofs, contact_dofs, dof_local;
  std::vector<double> row_values, all_extra, all_gap_rate, all_restitution_velocity, gaps, relative, row_norms;
  std::vector<int> all_friction, kept, new_index;
  std::vector<double> extra, gap_rate, restitution_velocity, mu, lo, hi, A, b, f, w;
  std::vector<int> friction_index;
  // The kept rows dense, J (n × nv) and M̃⁻¹Jᵀ (nv × n), with derivatives only (dense_rows).
  std::vector<double> J, minv_JT;
  // The free motion (free_motion): a_free, v_free = v + Δt a_free (in the body frames at q:
  // dyn::step_velocity_at_start), the midpoint velocity v_mid at which the velocity-product terms are
  // taken, and for Newton's method on the midpoint equation its matrix, M and the unused ∂τ/∂q (nv × nv
  // each), and the matrix's LU by trees.
  std::vector<double> zero, bias, rhs, a_free, v_free, v_mid, midpoint_K, midpoint_mass, midpoint_unused;
  std::vector<double> midpoint_step;  // an iteration's change (Newton's direction) and trial point (2 nv)
  TreeBlockLU midpoint_lu;
  bool free_motion_converged = true;  // the midpoint equation solved to kMidpointTolerance
  // The step's v⁺ in the body frames at q, before step() re-expresses it at q⁺ (dyn::step_velocity_at_end):
  // the velocity step_jacobians differentiates.
  std::vector<double> step_velocity;
  lcp::ActiveSetWorkspace active_set;
  // The position correction (detail::position_correction): per kept row its impulse (zero but on
  // penetrating normals), the configuration change δq = M̃⁻¹ Jᵀ f_c (nv), and one island's problem
  // while solving.
  std::vector<double> correction_f, correction_dq;
  std::vector<int> correction_rows;
  std::vector<double> correction_A, correction_b, correction_x, correction_w;
  std::vector<lcp::EntrySet> correction_sets;
  // The misprediction projection (detail::project_mispredicted_contacts): each shape pair's predicted
  // depth at the step's end (sorted), the pose being projected, and the workspace of the contacts
  // found there (made on the first step that needs it).
  std::vector<std::pair<std::pair<int, int>, double>> predicted_depths;
  std::vector<double> projected_q;
  std::unique_ptr<StepWorkspace> projection;
  // The poses the projection corrected, nq each in order (empty: it did not act), for the Jacobians.
  std::vector<double> projection_poses;
  // The NCP (world.ncp): per NCP entry its row (−1: a joint limit's tangent), G and g (one island's
  // while solving, the whole NCP's for the derivatives), μ, λ, v = G λ + g and each NCP contact's mode.
  std::vector<int> ncp_row;
  std::vector<double> ncp_G, ncp_g, ncp_mu, ncp_lambda, ncp_v;
  // The NCP's contacts grouped by island (solve_contact_ncp), island k's from ncp_contact_start[k], and
  // each island's next free slot while grouping.
  std::vector<int> ncp_contact_start, ncp_contacts, ncp_next_slot;
  std::vector<int8_t> modes;
  lcp::NcpWorkspace ncp;
  // Whether the step's impulses are the NCP's: world.ncp and its solve reached its tolerance. False for the
  // boxed LCP's, also where an NCP world's step fell back to it (step()); the step's derivatives follow it.
  bool by_ncp = false;
  // The dofs of each kinematic tree (ascending), tree t's at [tree_dof_start[t], tree_dof_start[t + 1]).
  std::vector<int> tree_dof_start, tree_dofs;
  // Contact islands (find_islands): dof → its tree (root body); a union–find over rows and trees, the
  // label of each root and the island of each row and tree; the rows and the dofs of island k at
  // [island_row_start[k], island_row_start[k + 1]) of island_rows and likewise in island_dofs; each
  // row's place in its island.
  std::vector<int> dof_tree, island_link, island_label, island_of, island_row_start, island_rows, island_dof_start,
      island_dofs, island_position;
  // Island k's rows of J and of (M̃⁻¹Jᵀ)ᵀ over its dofs (m_k × d_k each, at island_matrix_start[k]),
  // and its block of the Delassus matrix A = J M̃⁻¹ Jᵀ (m_k × m_k, rows in island order, at
  // delassus_start[k]); the dense n × n A (zero between islands) only for the derivatives
  // (dense_delassus).
  // Z_k = D^{-1/2} L⁻ᵀ J_kᵀ by rows (m_k × d_k, as J_k), A_k = Z_k Z_kᵀ made only for the NCP and the
  // derivatives (delassus_block; delassus_ready per island): the boxed LCP's solves take Z_k, and form
  // only the entries of the rows in touch (lcp::GramMatrix).
  std::vector<double> island_J, island_W, island_Z, delassus, island_scratch;
  std::vector<size_t> island_matrix_start, delassus_start;
  std::vector<uint8_t> delassus_ready;
  // One island's LCP, gathered.
  std::vector<double> island_b, island_lo, island_hi, island_mu, island_f, island_w;
  std::vector<int> island_friction;
  std::vector<lcp::EntrySet> island_sets, island_previous_sets;
  lcp::ScreeningWorkspace screening;

  // Island k's rows (m of them, in island order) and dofs (d, ascending).
  struct Island {
    const int* rows;
    const int* dofs;
    int m, d;
  };
  int num_islands() const { return static_cast<int>(island_row_start.size()) - 1; }
  Island island(int k) const {
    return {island_rows.data() + island_row_start[k], island_dofs.data() + island_dof_start[k],
            island_row_start[k + 1] - island_row_start[k], island_dof_start[k + 1] - island_dof_start[k]};
  }

  explicit StepWorkspace(const WorldSpec& world)
      : data(*world.model),
        poses(world.num_bodies()),
        boxes(world.shapes.size()),
        pair_scratch(contact::kMaxPairContacts),
        dof_local(world.model->nv, -1),
        zero(world.model->nv, 0.0),
        bias(world.model->nv),
        rhs(world.model->nv),
        a_free(world.model->nv),
        v_free(world.model->nv),
        v_mid(world.model->nv),
        midpoint_K(static_cast<size_t>(world.model->nv) * world.model->nv),
        midpoint_mass(static_cast<size_t>(world.model->nv) * world.model->nv),
        midpoint_unused(static_cast<size_t>(world.model->nv) * world.model->nv),
        midpoint_step(2 * static_cast<size_t>(world.model->nv)) {
    const dyn::Model& model = *world.model;
    dof_tree.resize(model.nv);
    for (int j = 0; j < model.nv; ++j) {
      int body = model.dof_body[j];
      while (model.parent[body] >= 0) body = model.parent[body];
      dof_tree[j] = body;
    }
    tree_dof_start.assign(1, 0);
    for (int root = 0; root < model.nbodies(); ++root) {
      if (model.parent[root] >= 0) continue;
      for (int j = 0; j < model.nv; ++j)
        if (dof_tree[j] == root) tree_dofs.push_back(j);
      if (static_cast<int>(tree_dofs.size()) > tree_dof_start.back())
        tree_dof_start.push_back(static_cast<int>(tree_dofs.size()));
    }
    body_dof_start.assign(1, 0);
    for (int body = 0; body < world.num_bodies(); ++body) {
      const size_t first = body_dofs.size();
      const int frame = world.body_frame[body];
      for (int b = frame < 0 ? -1 : model.frame_body[frame]; b >= 0; b = model.parent[b])
        for (int k = model.v_index[b]; k < model.v_index[b] + model.nv_of(b); ++k) body_dofs.push_back(k);
      std::sort(body_dofs.begin() + first, body_dofs.end());
      body_dof_start.push_back(static_cast<int>(body_dofs.size()));
    }
    body_columns.resize(6 * body_dofs.size());
  }
};

// The worse of two outcomes: a failure over an iteration limit over a solution.
inline lcp::LcpStatus worse(lcp::LcpStatus a, lcp::LcpStatus b) {
  auto rank = [](lcp::LcpStatus s) {
    return s == lcp::LcpStatus::solved ? 0 : s == lcp::LcpStatus::iteration_limit ? 1 : 2;
  };
  return rank(b) > rank(a) ? b : a;
}

struct StepReport {
  int contacts = 0;
  lcp::LcpStatus status = lcp::LcpStatus::solved;
  int iterations = 0;           // the solver's: Gauss–Seidel sweeps over the islands, or ADMM iterations
  double residual = 0.0;        // the largest of its solves' (lcp::LcpReport's): contact impulses, position correction
  bool warm_start_hit = false;  // the previous step's sets solved every island
  bool free_motion_converged = true;  // detail::free_motion solved its midpoint equation

  // One of the step's solves: its status and residual count in the step's (the worse, the largest).
  void add_solve(const lcp::LcpReport& solve) {
    status = worse(status, solve.status);
    residual = std::max(residual, solve.residual);
  }
};

namespace detail {

// Body poses and Jacobians (over their dofs; with dense, also 6 × nv) of every scene body at q.
inline void body_kinematics(const WorldSpec& world, StepWorkspace& ws, const double* q, bool dense) {
  const dyn::Model& model = *world.model;
  const int nv = model.nv;
  dyn::forward_kinematics(model, ws.data, q);
  if (dense) ws.body_jacobian.assign(6 * static_cast<size_t>(nv) * world.num_bodies(), 0.0);
  for (int body = 0; body < world.num_bodies(); ++body) {
    Pose& pose = ws.poses[body];
    const int frame = world.body_frame[body];
    if (frame < 0) {
      pose = Pose{{0.0, 0.0, 0.0}, {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}}};
      continue;
    }
    const dyn::Transform X = dyn::frame_pose(model, ws.data, frame);
    const dyn::Vec3 position = X.p + dyn::frame_origin(model, ws.data, frame);
    pose.r[0] = position.x, pose.r[1] = position.y, pose.r[2] = position.z;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) pose.Q.m[r][c] = X.R.m[r][c];
    const int first = ws.body_dof_start[body], count = ws.body_dof_start[body + 1] - first;
    double* columns = ws.body_columns.data() + 6 * static_cast<size_t>(first);
    dyn::frame_jacobian_columns(model, ws.data, frame, ws.body_dofs.data() + first, count, columns);
    if (!dense) continue;
    double* J = ws.body_jacobian.data() + 6 * static_cast<size_t>(nv) * body;  // zero but for these columns
    for (int r = 0; r < 6; ++r)
      for (int t = 0; t < count; ++t) J[r * nv + ws.body_dofs[first + t]] = columns[r * count + t];
  }
}

// The contacts of one pair of bodies from ws.contacts[start] on, one patch per pair of their shapes
// that touch: where every normal agrees to within kSharedNormalCosine (a foot mesh and the leg mesh
// that holds it, both on the ground), one patch of the two bodies, reduced to the points that span
// it as one pair's patch is (contact::reduce_patch); their keys and derivatives follow.
inline void merge_body_patch(const WorldSpec& world, StepWorkspace& ws, size_t start, bool derivatives) {
  const int count = static_cast<int>(ws.contacts.size() - start);
  if (count <= contact::kPatchPoints) return;
  const Contact& first = ws.contacts[start];
  const int first_body = world.shape_body[ws.keys[start].shape_a];
  for (size_t k = start + 1; k < ws.contacts.size(); ++k) {
    // A pair of shapes listed the other way round has its normal from the other body.
    const double sign = world.shape_body[ws.keys[k].shape_a] == first_body ? 1.0 : -1.0;
    if (sign * dot(ws.contacts[k].normal, first.normal, 3) < kSharedNormalCosine) return;
  }
  int kept[contact::kPatchPoints];
  const int kept_count = contact::reduce_patch(
      ws.contacts.data() + start, derivatives ? ws.contact_derivatives.data() + start : nullptr, count, kept);
  for (int i = 0; i < kept_count; ++i) ws.keys[start + i] = ws.keys[start + kept[i]];  // kept[i] ≥ i
  ws.contacts.resize(start + kept_count);
  ws.keys.resize(start + kept_count);
  if (derivatives) ws.contact_derivatives.resize(start + kept_count);
}

// Broad and narrow phase: ws.contacts and one key per contact in ws.keys, pair by pair of bodies,
// each pair's patch reduced to the points that span it (contact::reduce_patch), and the patches of two
// bodies that touch through several pairs of shapes along one normal reduced together
// (merge_body_patch); with derivatives also ws.contact_derivatives.
inline void find_contacts(const WorldSpec& world, StepWorkspace& ws, const double* v, bool derivatives) {
  const int B = world.num_bodies();
  // Speculative contacts: each shape's box grown by how far its points can move in the step (its
  // body's origin speed, and its spin times the box's reach from the origin), each pair's margin by
  // both growths, so that a fall faster than margin / dt meets its contact before passing through it.
  ws.sweeps.resize(world.shapes.size());
  for (size_t s = 0; s < world.shapes.size(); ++s) {
    const int body = world.shape_body[s], first = ws.body_dof_start[body], n = ws.body_dof_start[body + 1] - first;
    Box3& box = ws.boxes[s];
    box = contact::bounding_box(*world.shapes[s], ws.poses[body], 0.5 * world.contact.margin);
    double twist[6] = {0, 0, 0, 0, 0, 0}, reach = 0.0;
    for (int r = 0; r < 6; ++r)
      for (int t = 0; t < n; ++t) twist[r] += ws.body_columns[6 * first + r * n + t] * v[ws.body_dofs[first + t]];
    for (int i = 0; i < 3; ++i)
      reach += std::pow(std::max(box.upper[i] - ws.poses[body].r[i], ws.poses[body].r[i] - box.lower[i]), 2);
    ws.sweeps[s] = world.dt * (std::hypot(twist[0], twist[1], twist[2]) +
                               std::hypot(twist[3], twist[4], twist[5]) * std::sqrt(reach));
    for (int i = 0; i < 3; ++i) box.lower[i] -= ws.sweeps[s], box.upper[i] += ws.sweeps[s];
  }
  contact::sweep_and_prune(ws.boxes, ws.order, ws.open, ws.pairs);
  // By body pair, so that the patches of two bodies that touch through several of their shapes follow
  // each other (merge_body_patch).
  auto bodies = [&](const std::pair<int, int>& pair) {
    const int body_a = world.shape_body[pair.first], body_b = world.shape_body[pair.second];
    return std::pair(std::min(body_a, body_b), std::max(body_a, body_b));
  };
  std::sort(ws.pairs.begin(), ws.pairs.end(),
            [&](const auto& x, const auto& y) { return std::pair(bodies(x), x) < std::pair(bodies(y), y); });
  ws.contacts.clear();
  ws.keys.clear();
  ws.contact_derivatives.clear();
  ws.contact_status = geometry::SolveStatus::solved;
  if (derivatives) ws.pair_derivatives.resize(contact::kMaxPairContacts);
  size_t group_start = 0;  // the first contact of the current body pair
  for (size_t p = 0; p < ws.pairs.size(); ++p) {
    const auto [a, b] = ws.pairs[p];
    const int body_a = world.shape_body[a], body_b = world.shape_body[b];
    if (p > 0 && bodies(ws.pairs[p]) != bodies(ws.pairs[p - 1])) {
      merge_body_patch(world, ws, group_start, derivatives);
      group_start = ws.contacts.size();
    }
    if (body_a == body_b || !world.collides[body_a * B + body_b]) continue;
    ContactDerivatives* pair_derivatives = derivatives ? ws.pair_derivatives.data() : nullptr;
    geometry::SolveStatus pair_status;
    ContactSettings pair_settings = world.contact;
    pair_settings.margin += ws.sweeps[a] + ws.sweeps[b];
    const int count =
        contact::reduce_patch(ws.pair_scratch.data(), pair_derivatives,
                              contact::overlapping_pair_contacts(
                                  *world.shapes[a], ws.poses[body_a], *world.shapes[b], ws.poses[body_b], pair_settings,
                                  world.solver, ws.pair_scratch.data(), pair_derivatives, &pair_status));
    ws.contact_status = conic::worse(ws.contact_status, pair_status);
    for (int k = 0; k < count; ++k) {
      ws.contacts.push_back(ws.pair_scratch[k]);
      if (derivatives) ws.contact_derivatives.push_back(ws.pair_derivatives[k]);
      ws.keys.push_back({a, b, k});
    }
  }
  merge_body_patch(world, ws, group_start, derivatives);
}

// Relative velocity of body b's material point at contact k minus body a's, per unit velocity of the
// dofs that move the two bodies: those dofs (ascending) in ws.contact_dofs and the Jacobian (3 × their
// count) in ws.relative, from the bodies' Jacobian columns.
inline void contact_relative_jacobian(const WorldSpec& world, StepWorkspace& ws, int k) {
  const Contact& c = ws.contacts[k];
  const RowKey& key = ws.keys[k];
  const int bodies[2] = {world.shape_body[key.shape_a], world.shape_body[key.shape_b]};
  std::vector<int>& dofs = ws.contact_dofs;
  dofs.clear();
  for (const int body : bodies)
    dofs.insert(dofs.end(), ws.body_dofs.begin() + ws.body_dof_start[body],
                ws.body_dofs.begin() + ws.body_dof_start[body + 1]);
  std::sort(dofs.begin(), dofs.end());
  dofs.erase(std::unique(dofs.begin(), dofs.end()), dofs.end());
  const int a = static_cast<int>(dofs.size());
  for (int e = 0; e < a; ++e) ws.dof_local[dofs[e]] = e;
  ws.relative.assign(3 * static_cast<size_t>(a), 0.0);
  for (int side = 0; side < 2; ++side) {
    const int body = bodies[side], first = ws.body_dof_start[body], count = ws.body_dof_start[body + 1] - first;
    const double sign = side == 0 ? -1.0 : 1.0;
    const double* Jb = ws.body_columns.data() + 6 * static_cast<size_t>(first);
    const double lever[3] = {c.point[0] - ws.poses[body].r[0], c.point[1] - ws.poses[body].r[1],
                             c.point[2] - ws.poses[body].r[2]};
    for (int t = 0; t < count; ++t) {
      const int e = ws.dof_local[ws.body_dofs[first + t]];
      const double w[3] = {Jb[3 * count + t], Jb[4 * count + t], Jb[5 * count + t]};
      const double lever_cross_w[3] = {lever[1] * w[2] - lever[2] * w[1], lever[2] * w[0] - lever[0] * w[2],
                                       lever[0] * w[1] - lever[1] * w[0]};
      for (int i = 0; i < 3; ++i) ws.relative[i * a + e] += sign * (Jb[i * count + t] - lever_cross_w[i]);
    }
  }
  for (int e = 0; e < a; ++e) ws.dof_local[dofs[e]] = -1;
}

// contact_relative_jacobian over all dofs: out (3 × nv).
inline void relative_jacobian(const WorldSpec& world, StepWorkspace& ws, int k, double* out) {
  const int nv = world.model->nv;
  contact_relative_jacobian(world, ws, k);
  const int a = static_cast<int>(ws.contact_dofs.size());
  std::fill(out, out + 3 * nv, 0.0);
  for (int i = 0; i < 3; ++i)
    for (int e = 0; e < a; ++e) out[i * nv + ws.contact_dofs[e]] = ws.relative[i * a + e];
}

// The step's LCP rows: 3 per contact (normal, tangent1, tangent2), then the joint limits within
// limit_margin of a bound, less the rows no joint moves (a planar model's out-of-plane friction; a
// contact's tangents go with its normal) unless the contact model is the NCP. All rows sparse
// (ws.row_start, row_dofs, row_values), and the kept ones' extra, friction_index, mu, bounds and
// identities; returns n.
inline int build_rows(const WorldSpec& world, StepWorkspace& ws, const double* q, const double* v) {
  const int K = static_cast<int>(ws.contacts.size());
  const double dt = world.dt;
  // Limit rows: one per bound within limit_margin now or after the free motion (so that no step,
  // however fast or long, passes through a bound), with its gap. A bound already passed is not pushed
  // back by velocity (which would throw the joint off it with energy it never had) but by moving q
  // (ws.limit_corrections, applied in step()).
  ws.gaps.assign(K, 0.0);
  for (int k = 0; k < K; ++k) ws.gaps[k] = ws.contacts[k].separation;
  ws.limit_corrections.clear();
  int limit_rows = 0;
  for (const JointLimit& limit : world.limits)
    for (const double sign : {1.0, -1.0}) {
      const double gap = sign * (q[limit.q_index] - (sign > 0 ? limit.lower : limit.upper));
      const double free_gap = gap + dt * sign * ws.v_free[limit.v_index];
      if (std::min(gap, free_gap) <= world.limit_margin) {
        ws.gaps.push_back(gap);
        ws.keys.push_back({-1, limit.v_index, sign > 0 ? 1 : -1});
        ++limit_rows;
      }
      if (gap < 0.0) ws.limit_corrections.push_back({limit.q_index, limit.v_index, -world.baumgarte * gap * sign});
    }
  const int total = 3 * K + limit_rows;
  ws.all_extra.assign(total, 0.0);
  ws.all_gap_rate.assign(total, 0.0);
  ws.all_restitution_velocity.assign(total, 0.0);
  ws.all_friction.assign(total, -1);
  ws.row_start.assign(1, 0);
  ws.row_dofs.clear();
  ws.row_values.clear();

  // A contact's rows over the dofs that move its two bodies: [normal; tangent1; tangent2] · the
  // relative velocity Jacobian.
  for (int k = 0; k < K; ++k) {
    const Contact& c = ws.contacts[k];
    contact_relative_jacobian(world, ws, k);
    const std::vector<int>& dofs = ws.contact_dofs;
    const int a = static_cast<int>(dofs.size());
    const double* directions[3] = {c.normal, c.tangent1, c.tangent2};
    for (int r = 0; r < 3; ++r) {
      ws.row_dofs.insert(ws.row_dofs.end(), dofs.begin(), dofs.end());
      for (int e = 0; e < a; ++e)
        ws.row_values.push_back(directions[r][0] * ws.relative[e] + directions[r][1] * ws.relative[a + e] +
                                directions[r][2] * ws.relative[2 * a + e]);
      ws.row_start.push_back(static_cast<int>(ws.row_dofs.size()));
    }
    ws.all_friction[3 * k + 1] = ws.all_friction[3 * k + 2] = 3 * k;
  }
  for (int l = 0; l < limit_rows; ++l) {
    const RowKey& key = ws.keys[K + l];
    ws.row_dofs.push_back(key.shape_b);
    ws.row_values.push_back(key.kind);
    ws.row_start.push_back(static_cast<int>(ws.row_dofs.size()));
  }
  auto row_dot = [&](int i, const double* x) {
    double s = 0.0;
    for (int e = ws.row_start[i]; e < ws.row_start[i + 1]; ++e) s += ws.row_values[e] * x[ws.row_dofs[e]];
    return s;
  };

  // Stabilization and restitution: b_extra of the gap rows.
  for (int g = 0; g < K + limit_rows; ++g) {
    const int row = g < K ? 3 * g : 3 * K + (g - K);
    const double gap = ws.gaps[g];
    double rate = gap > 0.0 ? 1.0 / dt : 0.0;  // penetrations: detail::position_correction
    if (g < K) {
      const double normal_velocity = row_dot(row, v);
      const bool bouncing = world.restitution > 0.0 && normal_velocity < -world.restitution_threshold &&
                            gap + dt * normal_velocity <= 0.0;
      if (bouncing) {
        rate = 0.0;
        ws.all_restitution_velocity[row] = normal_velocity;
        ws.all_extra[row] = world.restitution * normal_velocity;
      }
    }
    ws.all_gap_rate[row] = rate;
    ws.all_extra[row] += rate * gap;
  }

  // Rows no joint moves are dropped (a contact's tangents go with its normal), but for the NCP.
  double largest = 0.0;
  std::vector<double>& norms = ws.row_norms;
  norms.resize(total);
  for (int i = 0; i < total; ++i) {
    double s = 0.0;
    for (int e = ws.row_start[i]; e < ws.row_start[i + 1]; ++e) s += ws.row_values[e] * ws.row_values[e];
    norms[i] = std::sqrt(s);
    largest = std::max(largest, norms[i]);
  }
  const double threshold = 1e-9 * std::max(largest, 1e-300);
  ws.kept.clear();
  ws.new_index.assign(total, -1);
  for (int i = 0; i < total; ++i) {
    const int normal = ws.all_friction[i] >= 0 ? ws.all_friction[i] : i;
    if (world.ncp || (norms[i] > threshold && norms[normal] > threshold)) {  // the NCP's cones keep all
      ws.new_index[i] = static_cast<int>(ws.kept.size());
      ws.kept.push_back(i);
    }
  }
  const int n = static_cast<int>(ws.kept.size());
  ws.extra.resize(n);
  ws.gap_rate.resize(n);
  ws.restitution_velocity.resize(n);
  ws.friction_index.resize(n);
  ws.mu.assign(n, world.friction);
  ws.lo.assign(n, 0.0);
  ws.hi.assign(n, std::numeric_limits<double>::infinity());
  for (int r = 0; r < n; ++r) {
    const int i = ws.kept[r];
    ws.extra[r] = ws.all_extra[i];
    ws.gap_rate[r] = ws.all_gap_rate[i];
    ws.restitution_velocity[r] = ws.all_restitution_velocity[i];
    ws.friction_index[r] = ws.all_friction[i] >= 0 ? ws.new_index[ws.all_friction[i]] : -1;
  }
  ws.row_ids.resize(n);
  for (int r = 0; r < n; ++r) {
    const int i = ws.kept[r];
    const RowKey& key = i < 3 * K ? ws.keys[i / 3] : ws.keys[K + (i - 3 * K)];
    ws.row_ids[r] = {key.shape_a, key.shape_b, key.kind, i < 3 * K ? i % 3 : 0};
  }
  return n;
}

inline int island_root(std::vector<int>& link, int x) {
  while (link[x] != x) x = link[x] = link[link[x]];
  return x;
}

// Contact islands: the rows split into groups that share no tree of the model. M is block-diagonal
// over trees, so A = J M⁻¹ Jᵀ is block-diagonal over the islands and the LCP splits into one problem
// per island (a pile's separate columns, two robots apart), which costs the sum of the islands' sizes
// squared or cubed instead of their total's. A contact's friction rows join its normal's island.
inline void find_islands(const WorldSpec& world, StepWorkspace& ws, int n) {
  const int nv = world.model->nv, trees = world.model->nbodies();
  std::vector<int>& link = ws.island_link;
  link.resize(n + trees);  // rows, then trees (by root body)
  for (int x = 0; x < n + trees; ++x) link[x] = x;
  auto join = [&](int x, int y) { link[island_root(link, x)] = island_root(link, y); };
  for (int r = 0; r < n; ++r) {
    const int i = ws.kept[r];
    for (int e = ws.row_start[i]; e < ws.row_start[i + 1]; ++e) join(r, n + ws.dof_tree[ws.row_dofs[e]]);
    if (ws.friction_index[r] >= 0) join(r, ws.friction_index[r]);
  }
  // Each row's and each dof's island (−1: a tree no row touches), numbered in row order.
  std::vector<int>& label = ws.island_label;
  label.assign(n + trees, -1);
  int islands = 0;
  for (int r = 0; r < n; ++r) {
    const int root = island_root(link, r);
    if (label[root] < 0) label[root] = islands++;
  }
  std::vector<int>& island = ws.island_of;
  island.resize(n + trees);
  for (int x = 0; x < n + trees; ++x) island[x] = label[island_root(link, x)];
  // Rows and dofs grouped by island (counting sort, keeping their order).
  ws.island_row_start.assign(islands + 1, 0);
  ws.island_dof_start.assign(islands + 1, 0);
  for (int r = 0; r < n; ++r) ++ws.island_row_start[island[r] + 1];
  for (int j = 0; j < nv; ++j)
    if (island[n + ws.dof_tree[j]] >= 0) ++ws.island_dof_start[island[n + ws.dof_tree[j]] + 1];
  for (int k = 0; k < islands; ++k) {
    ws.island_row_start[k + 1] += ws.island_row_start[k];
    ws.island_dof_start[k + 1] += ws.island_dof_start[k];
  }
  ws.island_rows.resize(n);
  ws.island_position.resize(n);
  ws.island_dofs.resize(ws.island_dof_start[islands]);
  label.assign(ws.island_row_start.begin(), ws.island_row_start.end() - 1);  // next free slot per island
  for (int r = 0; r < n; ++r) {
    const int slot = label[island[r]]++;
    ws.island_rows[slot] = r;
    ws.island_position[r] = slot - ws.island_row_start[island[r]];
  }
  label.assign(ws.island_dof_start.begin(), ws.island_dof_start.end() - 1);
  for (int j = 0; j < nv; ++j)
    if (island[n + ws.dof_tree[j]] >= 0) ws.island_dofs[label[island[n + ws.dof_tree[j]]]++] = j;
}

// Each island's rows of J over its dofs (contiguous rows), Z = D^{-1/2} L⁻ᵀ J_kᵀ (M̃⁻¹ by the
// tree-sparse factor restricted to the island's dofs), whose rows give its Delassus block A_k = Zᵀ Z
// (symmetric by construction), and b = J v_free + b_extra; with derivatives also W = (M̃⁻¹Jᵀ)ᵀ, which
// the forward step never needs (add_impulse_response unwhitens Zᵀ f once): each costs the island's size,
// not the world's.
inline void island_matrices(const WorldSpec& world, StepWorkspace& ws, int n, bool derivatives) {
  const dyn::Model& model = *world.model;
  const int islands = ws.num_islands();
  ws.island_matrix_start.resize(islands + 1);
  ws.delassus_start.resize(islands + 1);
  ws.island_matrix_start[0] = ws.delassus_start[0] = 0;
  for (int k = 0; k < islands; ++k) {
    const size_t m = ws.island(k).m, d = ws.island(k).d;
    ws.island_matrix_start[k + 1] = ws.island_matrix_start[k] + m * d;
    ws.delassus_start[k + 1] = ws.delassus_start[k] + m * m;
  }
  ws.island_J.assign(ws.island_matrix_start[islands], 0.0);
  if (derivatives) ws.island_W.resize(ws.island_matrix_start[islands]);
  ws.island_Z.resize(ws.island_matrix_start[islands]);
  ws.delassus.resize(ws.delassus_start[islands]);
  ws.delassus_ready.assign(islands, 0);
  ws.b.resize(n);
  for (int k = 0; k < islands; ++k) {
    const auto [rows, dofs, m, d] = ws.island(k);
    for (int e = 0; e < d; ++e) ws.dof_local[dofs[e]] = e;
    double* Jk = ws.island_J.data() + ws.island_matrix_start[k];
    for (int p = 0; p < m; ++p) {
      const int i = ws.kept[rows[p]];
      for (int e = ws.row_start[i]; e < ws.row_start[i + 1]; ++e)
        Jk[static_cast<size_t>(p) * d + ws.dof_local[ws.row_dofs[e]]] = ws.row_values[e];
    }
    // Z = D^{-1/2} L⁻ᵀ J_kᵀ (d × m), kept by rows for A_k = Zᵀ Z, then W_kᵀ = M̃⁻¹ J_kᵀ = L⁻¹ D^{-1/2} Z.
    ws.island_scratch.resize(static_cast<size_t>(m) * d);
    double* X = ws.island_scratch.data();
    for (int e = 0; e < d; ++e)
      for (int p = 0; p < m; ++p) X[static_cast<size_t>(e) * m + p] = Jk[static_cast<size_t>(p) * d + e];
    dyn::whiten_on(model, ws.data, dofs, d, ws.dof_local.data(), X, m);
    double* Zk = ws.island_Z.data() + ws.island_matrix_start[k];
    for (int p = 0; p < m; ++p)
      for (int e = 0; e < d; ++e) Zk[static_cast<size_t>(p) * d + e] = X[static_cast<size_t>(e) * m + p];
    if (derivatives) {
      dyn::unwhiten_on(model, ws.data, dofs, d, ws.dof_local.data(), X, m);
      double* Wk = ws.island_W.data() + ws.island_matrix_start[k];
      for (int p = 0; p < m; ++p)
        for (int e = 0; e < d; ++e) Wk[static_cast<size_t>(p) * d + e] = X[static_cast<size_t>(e) * m + p];
    }
    for (int e = 0; e < d; ++e) ws.dof_local[dofs[e]] = -1;
    for (int p = 0; p < m; ++p) {
      const double* Jp = Jk + static_cast<size_t>(p) * d;
      double sum = ws.extra[rows[p]];
      for (int e = 0; e < d; ++e) sum += Jp[e] * ws.v_free[dofs[e]];
      ws.b[rows[p]] = sum;
    }
  }
}

}  // namespace detail

// Island k's Delassus block A_k = Z_k Z_kᵀ (m_k × m_k), made on first use.
inline const double* delassus_block(StepWorkspace& ws, int k) {
  double* block = ws.delassus.data() + ws.delassus_start[k];
  if (ws.delassus_ready[k]) return block;
  const auto [rows, dofs, m, d] = ws.island(k);
  const double* Zk = ws.island_Z.data() + ws.island_matrix_start[k];
  for (int p = 0; p < m; ++p)
    for (int q = p; q < m; ++q)
      block[static_cast<size_t>(p) * m + q] = block[static_cast<size_t>(q) * m + p] =
          dot(Zk + static_cast<size_t>(p) * d, Zk + static_cast<size_t>(q) * d, d);
  ws.delassus_ready[k] = 1;
  return block;
}

// The dense Delassus matrix ws.A (n × n) from the islands' blocks, zero between islands.
inline void dense_delassus(StepWorkspace& ws) {
  const int n = static_cast<int>(ws.island_rows.size());
  ws.A.assign(static_cast<size_t>(n) * n, 0.0);
  for (int k = 0; k < ws.num_islands(); ++k) {
    const auto [rows, dofs, m, d] = ws.island(k);
    const double* block = delassus_block(ws, k);
    for (int p = 0; p < m; ++p)
      for (int q = 0; q < m; ++q)
        ws.A[static_cast<size_t>(rows[p]) * n + rows[q]] = block[static_cast<size_t>(p) * m + q];
  }
}

// The Delassus matrix ws.A over the rows `rows` (m × m, in their order, zero between islands): the
// entries of dense_delassus's A at those rows, from the islands' Z, without forming the others.
inline void delassus_rows(StepWorkspace& ws, const std::vector<int>& rows) {
  const int m = static_cast<int>(rows.size());
  ws.A.assign(static_cast<size_t>(m) * m, 0.0);
  auto z_row = [&](int r) {
    const int k = ws.island_of[r];
    return ws.island_Z.data() + ws.island_matrix_start[k] + static_cast<size_t>(ws.island_position[r]) * ws.island(k).d;
  };
  for (int p = 0; p < m; ++p) {
    const int k = ws.island_of[rows[p]], d = ws.island(k).d;
    const double* Zp = z_row(rows[p]);
    for (int q = p; q < m; ++q)
      if (ws.island_of[rows[q]] == k)
        ws.A[static_cast<size_t>(p) * m + q] = ws.A[static_cast<size_t>(q) * m + p] = dot(Zp, z_row(rows[q]), d);
  }
}

// The kept rows dense, ws.J (n × nv), and with impulse_response (which needs the W_k of a step prepared
// with derivatives) ws.minv_JT (nv × n), from the islands' J_k and W_k.
inline void dense_rows(const WorldSpec& world, StepWorkspace& ws, bool impulse_response) {
  const int n = static_cast<int>(ws.island_rows.size()), nv = world.model->nv;
  ws.J.assign(static_cast<size_t>(n) * nv, 0.0);
  if (impulse_response) ws.minv_JT.assign(static_cast<size_t>(nv) * n, 0.0);
  for (int k = 0; k < ws.num_islands(); ++k) {
    const auto [rows, dofs, m, d] = ws.island(k);
    const double* Jk = ws.island_J.data() + ws.island_matrix_start[k];
    for (int p = 0; p < m; ++p)
      for (int e = 0; e < d; ++e)
        ws.J[static_cast<size_t>(rows[p]) * nv + dofs[e]] = Jk[static_cast<size_t>(p) * d + e];
    if (!impulse_response) continue;
    const double* Wk = ws.island_W.data() + ws.island_matrix_start[k];
    for (int p = 0; p < m; ++p)
      for (int e = 0; e < d; ++e)
        ws.minv_JT[static_cast<size_t>(dofs[e]) * n + rows[p]] = Wk[static_cast<size_t>(p) * d + e];
  }
}

// Island k's Delassus scale (lcp::gram_scale of its Z), without its block.
inline lcp::MatrixScale island_scale(const StepWorkspace& ws, int k) {
  const auto [rows, dofs, m, d] = ws.island(k);
  return lcp::gram_scale(m, d, ws.island_Z.data() + ws.island_matrix_start[k]);
}

// The tolerances of lcp/active_set.hpp for the step's whole LCP (ws.b, ws.f), from the islands' scales.
inline lcp::Tolerances lcp_tolerances(const WorldSpec& world, const StepWorkspace& ws) {
  lcp::MatrixScale whole{0.0, std::numeric_limits<double>::infinity()};
  for (int k = 0; k < ws.num_islands(); ++k) {
    const lcp::MatrixScale scale = island_scale(ws, k);
    whole.largest = std::max(whole.largest, scale.largest);
    if (scale.smallest_positive_diagonal > 0.0)
      whole.smallest_positive_diagonal = std::min(whole.smallest_positive_diagonal, scale.smallest_positive_diagonal);
  }
  if (!std::isfinite(whole.smallest_positive_diagonal)) whole.smallest_positive_diagonal = 0.0;
  return lcp::scaled_tolerances(largest_magnitude(ws.f.size(), ws.f.data()),
                                largest_magnitude(ws.b.size(), ws.b.data()), whole, si_tolerance(world.lcp_tolerance));
}

// Factorizes the tree blocks of K (nv × nv, row-major); false when one is singular.
inline bool factor_by_trees(const StepWorkspace& ws, int nv, const double* K, TreeBlockLU& lu) {
  const int trees = static_cast<int>(ws.tree_dof_start.size()) - 1;
  lu.start.assign(1, 0);
  for (int t = 0; t < trees; ++t) {
    const size_t n = ws.tree_dof_start[t + 1] - ws.tree_dof_start[t];
    lu.start.push_back(lu.start.back() + n * n);
  }
  lu.blocks.resize(lu.start.back());
  lu.pivot.resize(nv);
  for (int t = 0; t < trees; ++t) {
    const int* dofs = ws.tree_dofs.data() + ws.tree_dof_start[t];
    const int n = ws.tree_dof_start[t + 1] - ws.tree_dof_start[t];
    double* block = lu.blocks.data() + lu.start[t];
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) block[a * n + b] = K[static_cast<size_t>(dofs[a]) * nv + dofs[b]];
    if (!lu_factor(n, block, n, lu.pivot.data() + ws.tree_dof_start[t])) return false;
  }
  return true;
}

// x ← K⁻¹ x (x: nv) with the factorization of factor_by_trees; scratch: nv.
inline void solve_by_trees(const StepWorkspace& ws, const TreeBlockLU& lu, double* x, double* scratch) {
  for (size_t t = 0; t + 1 < ws.tree_dof_start.size(); ++t) {
    const int* dofs = ws.tree_dofs.data() + ws.tree_dof_start[t];
    const int n = ws.tree_dof_start[t + 1] - ws.tree_dof_start[t];
    for (int a = 0; a < n; ++a) scratch[a] = x[dofs[a]];
    lu_solve(n, lu.blocks.data() + lu.start[t], n, lu.pivot.data() + ws.tree_dof_start[t], scratch);
    for (int a = 0; a < n; ++a) x[dofs[a]] = scratch[a];
  }
}

// K⁻¹ (nv × nv row-major, zero between trees) into inverse with the factorization of factor_by_trees;
// scratch: the largest tree's size squared.
inline void inverse_by_trees(const StepWorkspace& ws, const TreeBlockLU& lu, int nv, double* inverse,
                             std::vector<double>& scratch) {
  std::fill(inverse, inverse + static_cast<size_t>(nv) * nv, 0.0);
  for (size_t t = 0; t + 1 < ws.tree_dof_start.size(); ++t) {
    const int* dofs = ws.tree_dofs.data() + ws.tree_dof_start[t];
    const int n = ws.tree_dof_start[t + 1] - ws.tree_dof_start[t];
    scratch.assign(static_cast<size_t>(n) * n, 0.0);
    for (int a = 0; a < n; ++a) scratch[static_cast<size_t>(a) * n + a] = 1.0;
    lu_solve_many(n, lu.blocks.data() + lu.start[t], n, lu.pivot.data() + ws.tree_dof_start[t], scratch.data(), n, n);
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b)
        inverse[static_cast<size_t>(dofs[a]) * nv + dofs[b]] = scratch[static_cast<size_t>(a) * n + b];
  }
}

namespace detail {

// c(q, v_mid) − τ + D v into ws.rhs for v_mid = v + Δt a / 2 (forward kinematics done): the free
// motion's residual less M̃ a.
inline void midpoint_bias(const WorldSpec& world, StepWorkspace& ws, const double* v, const double* tau,
                          const double* a) {
  const dyn::Model& model = *world.model;
  for (int i = 0; i < model.nv; ++i) ws.v_mid[i] = v[i] + 0.5 * world.dt * a[i];
  dyn::rnea_forward_pass(model, ws.data, ws.v_mid.data(), ws.zero.data());
  dyn::rnea_backward_pass(model, ws.data, ws.bias.data());
  for (int i = 0; i < model.nv; ++i) ws.rhs[i] = ws.bias[i] - tau[i] + world.damping[i] * v[i];
}

// The free motion a_free (and v_free = v + Δt a_free) by the implicit midpoint rule in the velocity
// terms: M̃ a + c(q, v_mid) + D v = τ, v_mid = v + Δt a / 2, M̃ = M + Δt D (damping implicit). The
// velocity terms are quadratic in v with v · c(q, v) = 0 for a free body (c = Sᵀ(ν ×* I ν)), so at
// the midpoint velocity they do no work: a torque-free body keeps its kinetic energy (and, M being
// constant in its own frame, its angular momentum) at any spin rate, where the explicit c(q, v) turns
// the body-frame ω × v coupling into a growth of (1 + (ω Δt)²)^½ per step. Solved from the explicit
// a by fixed-point iteration (contracting by about |ω| Δt / 2), and by Newton's method on the
// equation when that contracts too slowly (fast spins, large steps). Leaves the factorized M̃ in
// ws.data and v_mid at the solution; v_free in the body frames at q (dyn::step_velocity_at_start).
inline void free_motion(const WorldSpec& world, StepWorkspace& ws, const double* q, const double* v,
                        const double* tau) {
  const dyn::Model& model = *world.model;
  const int nv = model.nv;
  const double dt = world.dt;
  dyn::crba(model, ws.data, q);
  for (int i = 0; i < nv; ++i) ws.data.mass_matrix[i * nv + i] += dt * world.damping[i];
  dyn::factorize_mass_matrix(model, ws.data);
  // The largest change dt |Δa_i| of an iteration relative to its dof's velocity scale (file comment).
  auto relative_change = [&](const double* delta) {
    double fastest = 0.0;
    for (int i = 0; i < nv; ++i) fastest = std::max({fastest, std::abs(v[i]), std::abs(dt * ws.a_free[i])});
    const double floor = kMidpointSlowDof * fastest;
    double change = 0.0;
    for (int i = 0; i < nv; ++i) {
      const double scale = std::max({std::abs(v[i]), std::abs(dt * ws.a_free[i]), floor});
      if (dt * std::abs(delta[i]) > change * scale) change = dt * std::abs(delta[i]) / scale;
    }
    return change;
  };
  // Fixed point a ← M̃⁻¹(τ − c(q, v + Δt a / 2) − D v) from a = 0, i.e. from the explicit step.
  std::fill(ws.a_free.begin(), ws.a_free.end(), 0.0);
  double change = 0.0, previous_change = 0.0;
  bool converged = false;
  for (int iteration = 0; iteration < kMidpointFixedPointIterations; ++iteration) {
    midpoint_bias(world, ws, v, tau, ws.a_free.data());
    for (int i = 0; i < nv; ++i) ws.rhs[i] = -ws.rhs[i];
    dyn::solve_mass_matrix(model, ws.data, ws.rhs.data());
    for (int i = 0; i < nv; ++i) ws.midpoint_step[i] = ws.rhs[i] - ws.a_free[i];
    std::copy(ws.rhs.begin(), ws.rhs.end(), ws.a_free.begin());
    change = relative_change(ws.midpoint_step.data());
    if (iteration > 0) {
      // The iterate's error is about change · ρ / (1 − ρ) for the contraction ρ the last two changes show.
      const double contraction = change / previous_change;
      converged =
          change == 0.0 || (contraction < 1.0 && change * contraction / (1.0 - contraction) <= kMidpointTolerance);
      if (converged || (iteration > 1 && contraction > kMidpointSlowContraction)) break;
    }
    previous_change = change;
  }
  // Newton on F(a) = M̃ a + c(q, v_mid) + D v − τ, F' = M̃ + Δt/2 ∂c/∂v(v_mid), its steps shortened
  // until ‖F‖² decreases (Armijo): on fast spins of very unequal principal moments the full step can
  // overshoot to where the iteration no longer converges.
  double* step = ws.midpoint_step.data();  // Newton's direction, then (from nv on) the trial a
  double* trial = step + nv;
  // F(a)_i, after midpoint_bias at a, with M from the last rnea_derivatives.
  auto residual_entry = [&](int i, const double* a) {
    const double* M = ws.midpoint_mass.data() + static_cast<size_t>(i) * nv;
    double residual = ws.rhs[i] + dt * world.damping[i] * a[i];
    for (int j = 0; j < nv; ++j) residual += M[j] * a[j];
    return residual;
  };
  auto squared_residual = [&](const double* a) {  // ‖F(a)‖²
    midpoint_bias(world, ws, v, tau, a);
    double sum = 0.0;
    for (int i = 0; i < nv; ++i) {
      const double residual = residual_entry(i, a);
      sum += residual * residual;
    }
    return sum;
  };
  for (int iteration = 0; !converged && iteration < kMidpointNewtonIterations; ++iteration) {
    midpoint_bias(world, ws, v, tau, ws.a_free.data());
    dyn::rnea_derivatives(model, ws.data, q, ws.v_mid.data(), ws.a_free.data(), ws.midpoint_unused.data(),
                          ws.midpoint_K.data(), ws.midpoint_mass.data());
    double initial = 0.0;  // ‖F(a)‖²
    for (int i = 0; i < nv; ++i) {
      double* K = ws.midpoint_K.data() + static_cast<size_t>(i) * nv;
      const double* M = ws.midpoint_mass.data() + static_cast<size_t>(i) * nv;
      for (int j = 0; j < nv; ++j) K[j] = 0.5 * dt * K[j] + M[j];
      K[i] += dt * world.damping[i];
      const double residual = residual_entry(i, ws.a_free.data());
      ws.rhs[i] = -residual;
      initial += residual * residual;
    }
    if (!factor_by_trees(ws, nv, ws.midpoint_K.data(), ws.midpoint_lu)) break;
    solve_by_trees(ws, ws.midpoint_lu, ws.rhs.data(), ws.midpoint_unused.data());
    std::copy(ws.rhs.begin(), ws.rhs.end(), step);
    double length = 1.0;
    change = relative_change(step);
    if (change > kMidpointTolerance) {  // a step this small is taken whole: ‖F‖² is rounding there
      for (int halving = 0; halving < kMidpointLineSearchHalvings; ++halving, length *= 0.5) {
        for (int i = 0; i < nv; ++i) trial[i] = ws.a_free[i] + length * step[i];
        if (squared_residual(trial) <= (1.0 - 2e-4 * length) * initial) break;
      }
    }
    for (int i = 0; i < nv; ++i) ws.a_free[i] += length * step[i];
    converged = length * change <= kMidpointTolerance;
  }
  ws.free_motion_converged = converged;
  for (int i = 0; i < nv; ++i) ws.v_free[i] = v[i] + dt * ws.a_free[i];
  for (int i = 0; i < nv; ++i) ws.v_mid[i] = v[i] + 0.5 * dt * ws.a_free[i];
  dyn::step_velocity_at_start(model, dt, ws.v_mid.data(), ws.v_free.data());
}

}  // namespace detail

// A step's problem from (q, v) under joint forces tau: the contacts (and with derivatives their
// derivatives, for step_jacobians.hpp), the rows, v_free, the islands, the LCP's A (by island; dense too
// with derivatives or the NCP) and b. Returns the row count.
inline int prepare_step(const WorldSpec& world, StepWorkspace& ws, const double* q, const double* v, const double* tau,
                        bool derivatives) {
  detail::body_kinematics(world, ws, q, derivatives);
  detail::find_contacts(world, ws, v, derivatives);
  detail::free_motion(world, ws, q, v, tau);
  const int n = detail::build_rows(world, ws, q, v);

  // A = J M̃⁻¹ Jᵀ and b = J v_free + b_extra island by island; with derivatives J and M̃⁻¹ Jᵀ dense (the
  // derivatives form A over the rows they keep, delassus_rows, or whole, dense_delassus).
  detail::find_islands(world, ws, n);
  detail::island_matrices(world, ws, n, derivatives);
  if (derivatives) dense_rows(world, ws, true);
  return n;
}

// The NCP's layout (world.ncp, all rows kept): per contact its rows [t1, t2, n], per joint limit a
// frictionless contact [−, −, limit row] (ws.ncp_row, −1 where none), and the friction coefficients.
inline void ncp_layout(const WorldSpec& world, StepWorkspace& ws) {
  const int n = static_cast<int>(ws.kept.size()), K = static_cast<int>(ws.contacts.size());
  const int nc = K + (n - 3 * K), m = 3 * nc;
  ws.ncp_row.assign(m, -1);
  ws.ncp_mu.assign(nc, 0.0);
  for (int k = 0; k < K; ++k) {
    ws.ncp_row[3 * k] = 3 * k + 1, ws.ncp_row[3 * k + 1] = 3 * k + 2, ws.ncp_row[3 * k + 2] = 3 * k;
    ws.ncp_mu[k] = world.friction;
  }
  for (int l = K; l < nc; ++l) ws.ncp_row[3 * l + 2] = 3 * K + (l - K);
}

// The whole NCP of a prepared step from its dense A (for the derivatives): the layout, G and g.
inline void build_ncp(const WorldSpec& world, StepWorkspace& ws) {
  ncp_layout(world, ws);
  const int n = static_cast<int>(ws.kept.size()), m = static_cast<int>(ws.ncp_row.size());
  ws.ncp_G.assign(static_cast<size_t>(m) * m, 0.0);
  ws.ncp_g.assign(m, 0.0);
  for (int a = 0; a < m; ++a) {
    const int r = ws.ncp_row[a];
    if (r < 0) continue;
    ws.ncp_g[a] = ws.b[r];
    const double* A_row = ws.A.data() + static_cast<size_t>(r) * n;
    for (int c = 0; c < m; ++c)
      if (ws.ncp_row[c] >= 0) ws.ncp_G[static_cast<size_t>(a) * m + c] = A_row[ws.ncp_row[c]];
  }
}

// The impulses of a prepared step by the contact NCP (solvers/ncp.py's ADMM), island by island: each
// island's contacts and limits in ncp_layout's order, G from its Delassus block, the penalty from that
// G's spectrum (lcp::ncp_penalty). ws.f in row order, ws.ncp_lambda and ws.ncp_v in the layout, and the
// modes; the report's status is the worst island's, its iterations their sum, its residual the largest.
inline StepReport solve_contact_ncp(const WorldSpec& world, StepWorkspace& ws) {
  ncp_layout(world, ws);
  const int nc = static_cast<int>(ws.ncp_mu.size()), m = 3 * nc;
  const int islands = ws.num_islands();
  ws.ncp_lambda.assign(m, 0.0);
  ws.ncp_v.assign(m, 0.0);
  // The NCP contacts of each island (a contact's island is its normal row's).
  ws.ncp_contact_start.assign(islands + 1, 0);
  for (int c = 0; c < nc; ++c) ++ws.ncp_contact_start[ws.island_of[ws.ncp_row[3 * c + 2]] + 1];
  for (int k = 0; k < islands; ++k) ws.ncp_contact_start[k + 1] += ws.ncp_contact_start[k];
  ws.ncp_contacts.resize(nc);
  ws.ncp_next_slot.assign(ws.ncp_contact_start.begin(), ws.ncp_contact_start.end() - 1);
  for (int c = 0; c < nc; ++c) ws.ncp_contacts[ws.ncp_next_slot[ws.island_of[ws.ncp_row[3 * c + 2]]]++] = c;
  StepReport out;
  for (int k = 0; k < islands; ++k) {
    const int* contacts = ws.ncp_contacts.data() + ws.ncp_contact_start[k];
    const int count = ws.ncp_contact_start[k + 1] - ws.ncp_contact_start[k], size = 3 * count;
    const int rows = ws.island(k).m;
    const double* block = delassus_block(ws, k);
    auto row_of = [&](int a) { return ws.ncp_row[3 * contacts[a / 3] + a % 3]; };
    ws.ncp_G.assign(static_cast<size_t>(size) * size, 0.0);
    ws.ncp_g.assign(size, 0.0);
    for (int a = 0; a < size; ++a) {
      const int r = row_of(a);
      if (r < 0) continue;
      ws.ncp_g[a] = ws.b[r];
      for (int c = 0; c < size; ++c)
        if (row_of(c) >= 0)
          ws.ncp_G[static_cast<size_t>(a) * size + c] =
              block[static_cast<size_t>(ws.island_position[r]) * rows + ws.island_position[row_of(c)]];
    }
    ws.island_mu.resize(count);
    for (int i = 0; i < count; ++i) ws.island_mu[i] = ws.ncp_mu[contacts[i]];
    ws.island_f.resize(size);
    ws.island_w.resize(size);
    const lcp::LcpReport report = lcp::solve_ncp_admm(
        count, ws.ncp_G.data(), ws.ncp_g.data(), ws.island_mu.data(), lcp::ncp_penalty(size, ws.ncp_G.data(), ws.ncp),
        world.ncp_tolerance, world.ncp_iterations, ws.island_f.data(), ws.island_w.data(), ws.ncp);
    for (int a = 0; a < size; ++a) {
      ws.ncp_lambda[3 * contacts[a / 3] + a % 3] = ws.island_f[a];
      ws.ncp_v[3 * contacts[a / 3] + a % 3] = ws.island_w[a];
    }
    out.add_solve(report);
    out.iterations += report.iterations;
  }
  ws.f.assign(ws.kept.size(), 0.0);
  for (int a = 0; a < m; ++a)
    if (ws.ncp_row[a] >= 0) ws.f[ws.ncp_row[a]] = ws.ncp_lambda[a];
  double free_speed = 0.0;
  for (int a = 0; a < m; ++a)
    if (ws.ncp_row[a] >= 0) free_speed = std::max(free_speed, std::abs(ws.b[ws.ncp_row[a]]));
  ws.modes.resize(nc);
  lcp::contact_modes(nc, ws.ncp_lambda.data(), ws.ncp_v.data(), free_speed, lcp::mode_tolerance(world.ncp_tolerance),
                     ws.modes.data());
  return out;
}

// Whether f = 0 solves an island's boxed LCP without its matrix: no impulse to start from, every
// row a normal or limit with lower bound 0 (or a friction row, whose bounds are then ±μ·0) and no
// normal's free motion closing its gap (b ≥ 0): then w = b satisfies every row.
inline bool apart(int m, const double* b, const lcp::LcpBounds& bounds, const double* f) {
  for (int p = 0; p < m; ++p) {
    if (f[p] != 0.0) return false;
    if (bounds.friction_index[p] >= 0) continue;
    if (bounds.lo[p] != 0.0 || b[p] < 0.0) return false;
  }
  return true;
}

// The boxed LCP of a prepared step, island by island (find_islands): the previous step's sets first
// when warm (Nimble App. B), failing that Gauss–Seidel with exact solves on the sets it finds, on the
// contacts that push (lcp/screening.hpp), from the previous impulses when warm. ws.f, ws.w, ws.sets;
// the report's status is the worst island's, its iterations their sum, its residual their largest.
inline StepReport solve_contact_lcp(const WorldSpec& world, StepWorkspace& ws) {
  const lcp::Tolerance tol = si_tolerance(world.lcp_tolerance);
  StepReport report;
  report.warm_start_hit = ws.has_previous;
  for (int k = 0; k < ws.num_islands(); ++k) {
    const auto [rows, dofs, m, d] = ws.island(k);
    const bool warm = std::all_of(rows, rows + m, [&](int r) { return ws.previous_match[r] >= 0; });
    for (auto* v : {&ws.island_b, &ws.island_lo, &ws.island_hi, &ws.island_mu, &ws.island_f, &ws.island_w})
      v->resize(m);
    ws.island_friction.resize(m);
    ws.island_sets.resize(m);
    ws.island_previous_sets.resize(m);
    for (int p = 0; p < m; ++p) {
      const int r = rows[p];
      ws.island_b[p] = ws.b[r];
      ws.island_lo[p] = ws.lo[r], ws.island_hi[p] = ws.hi[r], ws.island_mu[p] = ws.mu[r];
      ws.island_friction[p] = ws.friction_index[r] >= 0 ? ws.island_position[ws.friction_index[r]] : -1;
      const int previous = ws.previous_match[r];
      ws.island_f[p] = previous >= 0 ? ws.previous_f[previous] : 0.0;
      if (warm) ws.island_previous_sets[p] = ws.previous_sets[previous];
    }
    const lcp::LcpBounds bounds{ws.island_lo.data(), ws.island_hi.data(), ws.island_friction.data(),
                                ws.island_mu.data()};
    const double* b = ws.island_b.data();
    if (apart(m, b, bounds, ws.island_f.data())) {
      // Nothing pushes: f = 0, every normal and limit at its lower bound, each friction row at the
      // bound its w leans on (both are 0). No Delassus block is needed.
      for (int p = 0; p < m; ++p) {
        ws.f[rows[p]] = 0.0;
        ws.w[rows[p]] = b[p];
        ws.sets[rows[p]] = b[p] >= 0.0 ? lcp::EntrySet::lower : lcp::EntrySet::upper;
      }
      continue;
    }
    const lcp::MatrixScale scale = island_scale(ws, k);
    bool solved = false;
    if (warm) {
      // On the previous sets without the island's Delassus block, which only Gauss–Seidel below needs.
      const lcp::EntrySet* sets = ws.island_previous_sets.data();
      lcp::solve_on_gram_sets(m, d, ws.island_Z.data() + ws.island_matrix_start[k], b, bounds, sets, ws.island_f.data(),
                              ws.island_w.data(), ws.active_set);
      // Solved when the solution verifies on the sets and its natural residual is within the tolerance too.
      const lcp::GramMatrix Z{m, d, ws.island_Z.data() + ws.island_matrix_start[k]};
      solved = lcp::verified(m, scale, b, ws.island_f.data(), ws.island_w.data(), bounds, sets, tol) &&
               Z.residual(b, ws.island_f.data(), ws.island_w.data(), bounds, tol.floor) <= tol.relative;
      if (solved) {
        lcp::classify(m, scale, b, ws.island_f.data(), ws.island_w.data(), bounds, tol, ws.island_sets.data());
      } else {
        for (int p = 0; p < m; ++p) ws.island_f[p] = ws.previous_f[ws.previous_match[rows[p]]];
      }
    }
    if (!solved) {
      const lcp::LcpReport island = lcp::solve_screened(
          lcp::GramMatrix{m, d, ws.island_Z.data() + ws.island_matrix_start[k]}, b, bounds, ws.island_f.data(),
          ws.island_w.data(), ws.island_sets.data(), ws.screening, world.max_sweeps, tol);
      report.add_solve(island);
      report.iterations += island.iterations;
      report.warm_start_hit = false;
    }
    for (int p = 0; p < m; ++p) {
      ws.f[rows[p]] = ws.island_f[p];
      ws.w[rows[p]] = ws.island_w[p];
      ws.sets[rows[p]] = ws.island_sets[p];
    }
  }
  return report;
}

namespace detail {

// out += M̃⁻¹ Jᵀ f for impulses f on the kept rows, island by island over each island's own dofs:
// L⁻¹ D^{-1/2} (Zᵀ f), one unwhitening per island that any impulse reaches.
inline void add_impulse_response(const WorldSpec& world, StepWorkspace& ws, const double* f, double* out) {
  for (int k = 0; k < ws.num_islands(); ++k) {
    const auto [rows, dofs, m, d] = ws.island(k);
    const double* Zk = ws.island_Z.data() + ws.island_matrix_start[k];
    std::vector<double>& response = ws.island_scratch;
    response.assign(d, 0.0);
    bool pushed = false;
    for (int p = 0; p < m; ++p) {
      const double impulse = f[rows[p]];
      if (impulse == 0.0) continue;
      pushed = true;
      for (int e = 0; e < d; ++e) response[e] += Zk[static_cast<size_t>(p) * d + e] * impulse;
    }
    if (!pushed) continue;
    for (int e = 0; e < d; ++e) ws.dof_local[dofs[e]] = e;
    dyn::unwhiten_on(*world.model, ws.data, dofs, d, ws.dof_local.data(), response.data(), 1);
    for (int e = 0; e < d; ++e) {
      ws.dof_local[dofs[e]] = -1;
      out[dofs[e]] += response[e];
    }
  }
}

// The gap of kept row r if it is a contact's normal row, +∞ otherwise.
inline double normal_row_gap(const StepWorkspace& ws, int r) {
  const int i = ws.kept[r];
  return i < 3 * static_cast<int>(ws.contacts.size()) && i % 3 == 0 ? ws.gaps[i / 3]
                                                                    : std::numeric_limits<double>::infinity();
}

// Penetrations are removed by moving q, not through the velocity: a Baumgarte term β φ / Δt in the
// velocity LCP throws bodies apart with energy they never had (its speed grows as the step shrinks)
// and, where penetrations ask one body for opposite moves, poses an LCP that takes the solver's whole
// iteration limit. Island by island, the contacts' normal rows with φ < 0 pose
// the frictionless LCP  w = (A_P + κ diag A_P) f_c + β (φ + s) ≥ 0, f_c ≥ 0, w ⊥ f_c
// (A_P = J_P M̃⁻¹ J_Pᵀ, s the allowed penetration, κ kCorrectionRegularization) whose δq = M̃⁻¹ J_Pᵀ f_c
// moves each penetration a fraction β of the way out, to first order, and the step moves to
// q ⊞ (Δt v⁺ + δq), its one position update (dyn::step_integrate): v⁺ is left as the velocity LCP
// made it. Only islands with a penetration deeper than s are solved. Post-stabilization in the sense
// of Cline & Pai (2003); the planar engine's appendix (§A.7) does the same after its step.
template <class AllowedDepth>
inline void correct_positions(const WorldSpec& world, StepWorkspace& ws, StepReport& report, double beta,
                              const AllowedDepth& allowed_depth) {
  const int n = static_cast<int>(ws.kept.size()), islands = ws.num_islands();
  ws.correction_f.assign(n, 0.0);
  ws.correction_dq.assign(world.model->nv, 0.0);
  for (int k = 0; k < islands; ++k) {
    const auto [rows, dofs, m, d] = ws.island(k);
    ws.correction_rows.clear();  // island positions of the penetrating normals
    bool deep = false;
    for (int p = 0; p < m; ++p) {
      const double gap = normal_row_gap(ws, rows[p]);
      if (gap < 0.0) ws.correction_rows.push_back(p), deep = deep || gap < -allowed_depth(rows[p]);
    }
    if (!deep) continue;
    // A_P from the penetrating rows of Z, not the island's whole Delassus block.
    const double* Zk = ws.island_Z.data() + ws.island_matrix_start[k];
    const int P = static_cast<int>(ws.correction_rows.size());
    ws.correction_A.resize(static_cast<size_t>(P) * P);
    for (auto* values : {&ws.correction_b, &ws.correction_x, &ws.correction_w}) values->assign(P, 0.0);
    ws.correction_sets.resize(P);
    for (int a = 0; a < P; ++a) {
      const int pa = ws.correction_rows[a];
      for (int b = 0; b < P; ++b)
        ws.correction_A[static_cast<size_t>(a) * P + b] =
            dot(Zk + static_cast<size_t>(pa) * d, Zk + static_cast<size_t>(ws.correction_rows[b]) * d, d);
      ws.correction_A[static_cast<size_t>(a) * P + a] *= 1.0 + kCorrectionRegularization;
      ws.correction_b[a] = beta * (normal_row_gap(ws, rows[pa]) + allowed_depth(rows[pa]));
    }
    const lcp::LcpReport solve =
        lcp::solve_screened(lcp::DenseMatrix{P, ws.correction_A.data()}, ws.correction_b.data(), lcp::LcpBounds{},
                            ws.correction_x.data(), ws.correction_w.data(), ws.correction_sets.data(), ws.screening,
                            world.max_sweeps, si_tolerance(world.lcp_tolerance));
    // The step's status and residual cover this solve as they do the contact solve's.
    report.add_solve(solve);
    for (int a = 0; a < P; ++a) ws.correction_f[rows[ws.correction_rows[a]]] = ws.correction_x[a];
  }
  add_impulse_response(world, ws, ws.correction_f.data(), ws.correction_dq.data());
}

inline void position_correction(const WorldSpec& world, StepWorkspace& ws, StepReport& report) {
  const double allowed = kAllowedPenetration * world.contact.margin;
  correct_positions(world, ws, report, world.baumgarte, [allowed](int) { return allowed; });
}

// The shape pair of contact k, in ascending order.
inline std::pair<int, int> contact_pair(const StepWorkspace& ws, int k) {
  return std::minmax(ws.keys[k].shape_a, ws.keys[k].shape_b);
}

// The allowed depth of row `row` of the projection's workspace `at` (detail::project_mispredicted_contacts):
// the deepest its pair's predicted contacts reach in the step of `ws` (a new pair's, the allowed
// penetration).
inline double projection_allowed_depth(const WorldSpec& world, const StepWorkspace& ws, const StepWorkspace& at,
                                       int row) {
  const double allowed = kAllowedPenetration * world.contact.margin;
  const int i = at.kept[row];
  if (i >= 3 * static_cast<int>(at.contacts.size())) return allowed;
  const auto pair = contact_pair(at, i / 3);
  double depth = allowed;
  for (auto it = std::lower_bound(ws.predicted_depths.begin(), ws.predicted_depths.end(), std::pair{pair, -1.0});
       it != ws.predicted_depths.end() && it->first == pair; ++it)
    depth = std::max(depth, it->second);
  return depth;
}

// The farthest apart two of a shape's features lie, between which its contact can jump as it turns: none
// on a sphere's or an ellipsoid's smooth surface; a capsule's segment ends; a cylinder's or a cone's
// rims; a polytope's or a polygon's corners (bounded by twice the farthest from its frame's origin).
inline double feature_span(const Shape& sh) {
  switch (sh.kind) {
    case ShapeKind::sphere:
    case ShapeKind::ellipsoid:
      return 0.0;
    case ShapeKind::capsule:
      return sh.L;
    case ShapeKind::cylinder:
      return std::hypot(2.0 * sh.R, sh.L);
    case ShapeKind::cone:
      return std::max(2.0 * sh.R, std::hypot(sh.R, sh.H));
    case ShapeKind::polytope:
      return 2.0 * sh.vertex_radius;
    case ShapeKind::polygon: {
      double farthest = 0.0;
      for (int i = 0; i < sh.num_vertices; ++i)
        farthest = std::max(farthest, std::hypot(sh.vertices[2 * i], sh.vertices[2 * i + 1]));
      return 2.0 * farthest;
    }
  }
  return 0.0;
}

// After a step from q that moved by dq = Δt v⁺ + δq into q_next: where what the linearization misses
// of a turn (kMispredictionTolerance's note) could leave a contact deeper than predicted by more than
// the tolerance, the contacts found again at q_next, and if one of them did miss by that much, each
// pair's contacts deeper than the deepest of its predicted ones (and than the allowed penetration)
// moved out to that depth by the position correction's LCP with β = 1 at that pose, q_next ⊞ δq_c,
// until none misses or kProjectionIterations times. Only q moves: the velocity keeps what the step made it.
inline void project_mispredicted_contacts(const WorldSpec& world, StepWorkspace& ws, const double* dq, double* q_next,
                                          StepReport& report) {
  const int K = static_cast<int>(ws.contacts.size()), nq = world.model->nq;
  ws.projection_poses.clear();
  const double allowed = kAllowedPenetration * world.contact.margin;
  const double tolerance = kMispredictionTolerance * world.contact.margin;
  // The bound of contact k's misprediction: each body's turn θ over its reach r to the contact point,
  // r θ² (twice the point's r θ²/2, for the normal's turn too), and over its shape's feature span s,
  // s |θ⊥| (another feature taking over; a turn about the normal θ∥ lowers none to the first order).
  auto misprediction_bound = [&](int k) {
    const Contact& c = ws.contacts[k];
    double bound = 0.0;
    for (const int shape : {ws.keys[k].shape_a, ws.keys[k].shape_b}) {
      const int body = world.shape_body[shape], first = ws.body_dof_start[body];
      const int count = ws.body_dof_start[body + 1] - first;
      double turn[3] = {0.0, 0.0, 0.0};
      for (int r = 0; r < 3; ++r)
        for (int t = 0; t < count; ++t)
          turn[r] += ws.body_columns[6 * first + (3 + r) * count + t] * dq[ws.body_dofs[first + t]];
      const double reach = std::hypot(c.point[0] - ws.poses[body].r[0], c.point[1] - ws.poses[body].r[1],
                                      c.point[2] - ws.poses[body].r[2]);
      const double turn2 = turn[0] * turn[0] + turn[1] * turn[1] + turn[2] * turn[2];
      const double about_normal = turn[0] * c.normal[0] + turn[1] * c.normal[1] + turn[2] * c.normal[2];
      const double tilt = std::sqrt(std::max(0.0, turn2 - about_normal * about_normal));
      bound += reach * turn2 + feature_span(*world.shapes[shape]) * tilt;
    }
    return bound;
  };
  // Ordinary steps stop here: no contact's bodies turn enough to miss by the tolerance.
  int k = 0;
  while (k < K && misprediction_bound(k) <= tolerance) ++k;
  if (k == K) return;
  ws.predicted_depths.clear();
  bool suspect = false;
  for (k = 0; k < K; ++k) {
    contact_relative_jacobian(world, ws, k);
    const Contact& c = ws.contacts[k];
    const int a = static_cast<int>(ws.contact_dofs.size());
    double predicted = c.separation;
    for (int e = 0; e < a; ++e)
      for (int i = 0; i < 3; ++i) predicted += c.normal[i] * ws.relative[i * a + e] * dq[ws.contact_dofs[e]];
    const double depth = std::max(allowed, -predicted);
    suspect = suspect || predicted - misprediction_bound(k) < -depth - tolerance;
    ws.predicted_depths.push_back({contact_pair(ws, k), depth});
  }
  if (!suspect) return;
  std::sort(ws.predicted_depths.begin(), ws.predicted_depths.end());
  if (!ws.projection) ws.projection = std::make_unique<StepWorkspace>(world);
  StepWorkspace& at = *ws.projection;
  auto allowed_depth = [&](int row) { return projection_allowed_depth(world, ws, at, row); };
  for (int iteration = 0; iteration < kProjectionIterations; ++iteration) {
    prepare_step(world, at, q_next, at.zero.data(), at.zero.data(), false);
    const int n = static_cast<int>(at.kept.size());
    bool missed = false;
    for (int r = 0; r < n && !missed; ++r) missed = normal_row_gap(at, r) < -allowed_depth(r) - tolerance;
    if (!missed) return;
    ws.projection_poses.insert(ws.projection_poses.end(), q_next, q_next + nq);
    correct_positions(world, at, report, 1.0, allowed_depth);
    ws.projected_q.assign(q_next, q_next + nq);
    dyn::step_integrate(*world.model, ws.projected_q.data(), at.correction_dq.data(), q_next);
  }
}

}  // namespace detail

// v⁺ = v_free + M̃⁻¹ Jᵀ f of a prepared step with its impulses in ws.f.
inline void next_velocity(const WorldSpec& world, StepWorkspace& ws, double* v_next) {
  std::copy_n(ws.v_free.data(), world.model->nv, v_next);
  detail::add_impulse_response(world, ws, ws.f.data(), v_next);
}

// Outcome of one world's rollout (or of one step of a batch).
enum class RolloutStatus : int8_t { ok = 0, failed = 1 };

// One step from (q, v) under joint forces tau into (q_next, v_next), which must not alias the inputs.
// derivatives: also the contacts' derivatives, for step_jacobians (step_jacobians.hpp).
inline StepReport step(const WorldSpec& world, StepWorkspace& ws, const double* q, const double* v, const double* tau,
                       double* q_next, double* v_next, bool derivatives = false) {
  const int nv = world.model->nv;
  const int n = prepare_step(world, ws, q, v, tau, derivatives);

  // Each row's match among the previous step's rows, for the warm start (solve_contact_lcp).
  ws.previous_match.assign(n, -1);
  if (ws.has_previous)
    for (int r = 0; r < n; ++r) {
      const auto found =
          std::lower_bound(ws.previous_rows.begin(), ws.previous_rows.end(), std::pair{ws.row_ids[r], -1});
      if (found != ws.previous_rows.end() && found->first == ws.row_ids[r]) ws.previous_match[r] = found->second;
    }
  ws.f.assign(n, 0.0);
  ws.w.resize(n);
  ws.sets.resize(n);
  ws.by_ncp = world.ncp;
  StepReport report = world.ncp ? solve_contact_ncp(world, ws) : solve_contact_lcp(world, ws);
  if (world.ncp && report.status != lcp::LcpStatus::solved) {
    // The fallback: ADMM and the fixed point can stall on redundant contacts (G rank-deficient, with b
    // outside its range where gaps are closed at Δt), where the NCP may have no solution at all. The boxed
    // LCP on the same rows (the friction pyramid), whose solver ends in Lemke's method, does not stall
    // there; step_status still fails the step if it is not solved either. Cold: the NCP's steps leave no
    // sets to start from.
    ws.previous_match.assign(n, -1);
    ws.by_ncp = false;
    const int ncp_iterations = report.iterations;
    report = solve_contact_lcp(world, ws);
    report.iterations += ncp_iterations;
  }
  // Impulses or contact velocities that overflowed are no solution, whatever the solve's iterations
  // reported (an ADMM residual of overflowed terms can read zero).
  const std::vector<double>& velocities = ws.by_ncp ? ws.ncp_v : ws.w;
  if (!all_finite(ws.f.size(), ws.f.data()) || !all_finite(velocities.size(), velocities.data())) {
    report.status = lcp::LcpStatus::numerical_error;
  }
  report.contacts = static_cast<int>(ws.contacts.size());
  // A free motion whose midpoint equation was not solved would not keep the energy it promises.
  report.free_motion_converged = ws.free_motion_converged;
  ws.previous_rows.resize(n);
  for (int r = 0; r < n; ++r) ws.previous_rows[r] = {ws.row_ids[r], r};
  std::sort(ws.previous_rows.begin(), ws.previous_rows.end());
  ws.previous_f = ws.f;
  ws.previous_sets = ws.sets;
  ws.has_previous = true;

  // q⁺ = q ⊞ (Δt v⁺ + δq).
  detail::position_correction(world, ws, report);
  next_velocity(world, ws, v_next);
  for (int i = 0; i < nv; ++i) ws.rhs[i] = world.dt * v_next[i] + ws.correction_dq[i];
  dyn::step_integrate(*world.model, q, ws.rhs.data(), q_next);
  ws.step_velocity.assign(v_next, v_next + nv);
  dyn::step_velocity_at_end(*world.model, ws.rhs.data(), v_next);
  for (const auto& correction : ws.limit_corrections) q_next[correction.q_index] += correction.delta;
  detail::project_mispredicted_contacts(world, ws, ws.rhs.data(), q_next, report);
  return report;
}

// Whether a step's outcome lets a rollout go on: every solve solved to its tolerance (the contact
// solve's fallbacks, Lemke's method and the NCP's fixed point, included; an iterate stopped at an
// iteration limit is no solution, however near), the free motion converged, and a finite next state.
inline RolloutStatus step_status(const WorldSpec& world, const StepReport& report, const double* q_next,
                                 const double* v_next) {
  if (report.status != lcp::LcpStatus::solved || !report.free_motion_converged) return RolloutStatus::failed;
  if (!all_finite(world.model->nq, q_next) || !all_finite(world.model->nv, v_next)) return RolloutStatus::failed;
  return RolloutStatus::ok;
}

// T steps from (q0, v0) under taus (T × nv) into qs ((T + 1) × nq) and vs ((T + 1) × nv), the contact
// count of each step into contacts (T). A step that fails (step_status) ends the rollout (failed, the
// rest of qs and vs NaN); *failed_step says which. With derivatives the steps keep their contacts'
// derivatives and after_step(t) runs after each successful step t (for step_jacobians on the workspace).
template <class AfterStep>
inline RolloutStatus rollout(const WorldSpec& world, StepWorkspace& ws, int T, const double* q0, const double* v0,
                             const double* taus, double* qs, double* vs, int32_t* contacts, int32_t* failed_step,
                             bool derivatives, const AfterStep& after_step) {
  const int nq = world.model->nq, nv = world.model->nv;
  std::copy_n(q0, nq, qs);
  std::copy_n(v0, nv, vs);
  ws.has_previous = false;
  *failed_step = -1;
  for (int t = 0; t < T; ++t) {
    double *q_next = qs + static_cast<size_t>(t + 1) * nq, *v_next = vs + static_cast<size_t>(t + 1) * nv;
    const StepReport report = step(world, ws, qs + static_cast<size_t>(t) * nq, vs + static_cast<size_t>(t) * nv,
                                   taus + static_cast<size_t>(t) * nv, q_next, v_next, derivatives);
    contacts[t] = report.contacts;
    const RolloutStatus outcome = step_status(world, report, q_next, v_next);
    if (outcome == RolloutStatus::failed) {
      const double nan = std::numeric_limits<double>::quiet_NaN();
      std::fill(q_next, qs + static_cast<size_t>(T + 1) * nq, nan);
      std::fill(v_next, vs + static_cast<size_t>(T + 1) * nv, nan);
      std::fill(contacts + t + 1, contacts + T, 0);
      *failed_step = t;
      return RolloutStatus::failed;
    }
    after_step(t);
  }
  return RolloutStatus::ok;
}

inline RolloutStatus rollout(const WorldSpec& world, StepWorkspace& ws, int T, const double* q0, const double* v0,
                             const double* taus, double* qs, double* vs, int32_t* contacts, int32_t* failed_step) {
  return rollout(world, ws, T, q0, v0, taus, qs, vs, contacts, failed_step, false, [](int) {});
}

}  // namespace dcol::sim
