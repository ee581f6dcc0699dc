// Python binding of the native simulation (dcol._native.dynamics.World): a world built once from a
// dcol.dynamics.World (dynamics/simulation.py checks the user's arguments; this checks the indices it
// is given), and batched steps (with their Jacobians if asked) and rollouts with the GIL released, one
// StepWorkspace per thread.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/parallel.hpp"
#include "python/bindings.hpp"
#include "python/dynamics_arguments.hpp"
#include "python/geometry_arguments.hpp"
#include "simulation/simulation.hpp"
#include "simulation/step_jacobians.hpp"

namespace py = pybind11;
using namespace dcol;
using namespace dcol::conic;
using namespace dcol::geometry;
using namespace dcol::contact;
using dcol::python::Array;
using dcol::python::BoundModel;
using dcol::python::IndexArray;
using dcol::python::Rows;

namespace {

// A step's workspaces, kept between calls.
struct Workspaces {
  sim::StepWorkspace step;
  sim::LinearizationWorkspace linearization;
  std::vector<double> jacobian;  // one step's (2 nv × columns)
  explicit Workspaces(const sim::WorldSpec& spec) : step(spec) {}
};

// Workspaces of earlier calls, one per worker that used them, so that a call on one state allocates
// nothing once its buffers have grown (they are taken and returned under a lock: calls may overlap).
class WorkspacePool {
 public:
  std::unique_ptr<Workspaces> take(const sim::WorldSpec& spec) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        std::unique_ptr<Workspaces> workspaces = std::move(free_.back());
        free_.pop_back();
        return workspaces;
      }
    }
    return std::make_unique<Workspaces>(spec);
  }
  void give(std::unique_ptr<Workspaces> workspaces) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(workspaces));
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<Workspaces>> free_;
};

// The world's specification and the Python objects it points into, kept alive with it.
struct BoundWorld {
  py::object model, shapes;
  sim::WorldSpec spec;
  std::shared_ptr<WorkspacePool> workspaces = std::make_shared<WorkspacePool>();
};

void require(bool condition, const std::string& message) {
  if (!condition) throw py::value_error(message);
}

// The state arguments of a step: q, v and tau, checked against the model, one state (batched false:
// (nq,), (nv,)) or a batch ((N, nq), (N, nv)).
struct StateArguments {
  Rows q, v, tau;
};

StateArguments state_arguments(const dyn::Model& model, py::handle q_in, py::handle v_in, py::handle tau_in,
                               bool batched) {
  StateArguments state;
  state.q = python::configuration(model, q_in);
  state.v = python::tangent(model, state.q, v_in, "v");
  state.tau = python::tangent(model, state.q, tau_in, "tau");
  require(state.q.batched == batched, batched ? "q must be (N, nq)" : "q must be (nq,)");
  return state;
}

BoundWorld make_world(py::object model_obj, py::object shapes, const IndexArray& shape_body,
                      const IndexArray& body_frame, const py::array_t<uint8_t, py::array::c_style>& collides,
                      const Array& damping, const IndexArray& limit_body, const Array& limit_lower,
                      const Array& limit_upper, double dt, double friction, double restitution, double baumgarte,
                      double contact_margin, double restitution_threshold, double limit_margin,
                      double feature_tolerance, const SolverSettings& settings, int max_sweeps, double tolerance,
                      bool ncp, int ncp_iterations, double ncp_tolerance) {
  BoundWorld world{model_obj, shapes, {}, std::make_shared<WorkspacePool>()};
  sim::WorldSpec& spec = world.spec;
  const dyn::Model& model = model_obj.cast<BoundModel&>().model;
  spec.model = &model;
  const py::ssize_t S = shape_body.size(), B = body_frame.size();
  spec.shapes = python::as_shape_list(shapes, "shapes", S);
  for (py::ssize_t s = 0; s < S; ++s) {
    require(shape_body.at(s) >= 0 && shape_body.at(s) < B, "shape_body must hold scene body indices");
    spec.shape_body.push_back(shape_body.at(s));
  }
  const int frames = static_cast<int>(model.frame_body.size());
  for (py::ssize_t b = 0; b < B; ++b) {
    require(body_frame.at(b) >= -1 && body_frame.at(b) < frames, "body_frame must hold frame indices or -1");
    spec.body_frame.push_back(body_frame.at(b));
  }
  require(collides.ndim() == 2 && collides.shape(0) == B && collides.shape(1) == B, "collides must be (B, B)");
  spec.collides.assign(collides.data(), collides.data() + B * B);
  require(damping.ndim() == 1 && damping.shape(0) == model.nv, "damping must have shape (nv,)");
  spec.damping.assign(damping.data(), damping.data() + model.nv);
  require(limit_lower.size() == limit_body.size() && limit_upper.size() == limit_body.size(),
          "limit_lower and limit_upper must match limit_body");
  for (py::ssize_t l = 0; l < limit_body.size(); ++l) {
    const int body = limit_body.at(l);
    require(body >= 0 && body < model.nbodies() && model.kind[body] != dyn::JointKind::floating,
            "limit_body must hold bodies of 1-dof joints");
    spec.limits.push_back({model.q_index[body], model.v_index[body], limit_lower.at(l), limit_upper.at(l)});
  }
  spec.dt = dt, spec.friction = friction, spec.restitution = restitution, spec.baumgarte = baumgarte;
  spec.restitution_threshold = restitution_threshold, spec.limit_margin = limit_margin;
  spec.contact = {contact_margin, feature_tolerance};
  spec.solver = settings;
  spec.max_sweeps = max_sweeps, spec.lcp_tolerance = tolerance;
  spec.ncp = ncp, spec.ncp_iterations = ncp_iterations, spec.ncp_tolerance = ncp_tolerance;
  return world;
}

// One step's Jacobian (2 nv × (3 nv + P), row-major) into block outputs at position `at` of `count`:
// state (6, count, nv, nv) in the order q_q, q_v, q_tau, v_q, v_v, v_tau, and parameters (2, count,
// nv, P).
void scatter_jacobian(const double* jac, py::ssize_t nv, py::ssize_t P, py::ssize_t count, py::ssize_t at,
                      double* state, double* params) {
  const py::ssize_t D = 3 * nv + P;
  for (py::ssize_t side = 0; side < 2; ++side)  // the q⁺ rows, then the v⁺ rows
    for (py::ssize_t i = 0; i < nv; ++i) {
      const double* row = jac + (side * nv + i) * D;
      for (py::ssize_t k = 0; k < 3; ++k)
        std::copy_n(row + k * nv, nv, state + (((3 * side + k) * count + at) * nv + i) * nv);
      std::copy_n(row + 3 * nv, P, params + ((side * count + at) * nv + i) * P);
    }
}

// Block outputs of `count` step Jacobians, NaN until written: "state_jacobian" (6, count…, nv, nv) and
// with parameters (P > 0) "params_jacobian" (2, count…, nv, P), `count` given by its shape. Each array
// is made once (no default-constructed placeholder): a call on one state makes few enough arrays that
// each one shows.
struct JacobianBlocks {
  Array state;
  std::optional<Array> params;
  JacobianBlocks(const std::vector<py::ssize_t>& count, py::ssize_t nv, py::ssize_t P, bool derivatives)
      : state(block_shape(derivatives ? 6 : 0, count, nv, nv)), nv_(nv), P_(P) {
    for (py::ssize_t c : count) total_ *= c;
    state_data_ = filled_with_nan(state);
    if (P == 0) return;
    params.emplace(block_shape(derivatives ? 2 : 0, count, nv, P));
    params_data_ = filled_with_nan(*params);
  }
  // The Jacobian of the step just taken from (q, v) in workspaces.step (step_jacobians.hpp) into entry
  // `at` of the flattened count axes. Needs no GIL.
  void linearize(const sim::WorldSpec& spec, Workspaces& workspaces, const double* q, const double* v, bool parameters,
                 bool bounce, py::ssize_t at) {
    std::vector<double>& jac = workspaces.jacobian;
    jac.resize(2 * nv_ * (3 * nv_ + P_));
    sim::step_jacobians(spec, workspaces.step, workspaces.linearization, q, v, workspaces.step.step_velocity.data(),
                        parameters, bounce, jac.data());
    scatter(jac.data(), at);
  }
  // One step's Jacobian (2 nv × (3 nv + P), row-major) into entry `at`. Needs no GIL.
  void scatter(const double* jac, py::ssize_t at) {
    scatter_jacobian(jac, nv_, P_, total_, at, state_data_, params_data_);
  }
  void put(py::dict& out, bool parameters) const {
    out["state_jacobian"] = state;
    if (parameters) out["params_jacobian"] = *params;
  }

 private:
  static std::vector<py::ssize_t> block_shape(py::ssize_t blocks, const std::vector<py::ssize_t>& count,
                                              py::ssize_t rows, py::ssize_t columns) {
    std::vector<py::ssize_t> shape{blocks};
    shape.insert(shape.end(), count.begin(), count.end());
    shape.insert(shape.end(), {rows, columns});
    return shape;
  }
  static double* filled_with_nan(Array& array) {
    std::fill(array.mutable_data(), array.mutable_data() + array.size(), std::numeric_limits<double>::quiet_NaN());
    return array.mutable_data();
  }
  py::ssize_t nv_, P_, total_ = 1;
  double *state_data_, *params_data_ = nullptr;
};

// N rollouts of T steps: q0 (N, nq), v0 (N, nv), taus (N, T, nv); with derivatives each step's
// Jacobian at the step taken (warm start included) by blocks, as step_batch's with a T axis.
py::dict rollout(BoundWorld& world, py::handle q0_in, py::handle v0_in, py::handle taus_in, bool derivatives,
                 bool parameters, bool bounce, int threads) {
  const sim::WorldSpec& spec = world.spec;
  const dyn::Model& model = *spec.model;
  require(threads >= 1, "threads must be at least 1");
  const Rows q0 = python::configuration(model, q0_in);
  const Rows v0 = python::tangent(model, q0, v0_in, "v0");
  const Array taus = Array::ensure(taus_in);
  if (!taus) throw py::type_error("taus must be an array of real numbers");
  const py::ssize_t N = q0.count, nq = model.nq, nv = model.nv;
  require(q0.batched && taus.ndim() == 3 && taus.shape(0) == N && taus.shape(2) == nv,
          "q0 must be (N, nq), v0 (N, nv) and taus (N, T, nv)");
  const py::ssize_t T = taus.shape(1);

  Array qs({N, T + 1, nq}), vs({N, T + 1, nv});
  JacobianBlocks blocks({N, T}, nv, parameters ? 10 * model.nbodies() + 2 : 0, derivatives);
  py::array_t<int32_t> contacts({N, T}), failed_step(N);
  py::array_t<int8_t> status(N);
  double *qs_d = qs.mutable_data(), *vs_d = vs.mutable_data();
  int32_t *contacts_d = contacts.mutable_data(), *failed_d = failed_step.mutable_data();
  int8_t* status_d = status.mutable_data();
  {
    py::gil_scoped_release release;
    parallel_chunks(N, threads, 1, [&](std::ptrdiff_t begin, std::ptrdiff_t end) {
      std::unique_ptr<Workspaces> workspaces = world.workspaces->take(spec);
      for (std::ptrdiff_t n = begin; n < end; ++n) {
        double *q_n = qs_d + n * (T + 1) * nq, *v_n = vs_d + n * (T + 1) * nv;
        const double* tau_n = taus.data() + n * T * nv;
        const auto linearize = [&](int t) {
          if (derivatives)
            blocks.linearize(spec, *workspaces, q_n + t * nq, v_n + t * nv, parameters, bounce, n * T + t);
        };
        status_d[n] =
            static_cast<int8_t>(sim::rollout(spec, workspaces->step, static_cast<int>(T), q0.row(n), v0.row(n), tau_n,
                                             q_n, v_n, contacts_d + n * T, failed_d + n, derivatives, linearize));
      }
      world.workspaces->give(std::move(workspaces));
    });
  }
  py::dict out;
  out["q"] = qs;
  out["v"] = vs;
  out["contacts"] = contacts;
  out["status"] = status;
  out["failed_step"] = failed_step;
  if (derivatives) blocks.put(out, parameters);
  return out;
}

// N independent steps (no warm start): q (N, nq), v (N, nv), tau (N, nv); status (N,) and its largest
// value "worst"; with derivatives also each step's Jacobian (step_jacobians.hpp) by blocks:
// "state_jacobian" (6, N, nv, nv) ∂(q⁺, v⁺)/∂(q, v, τ) in the order q_q, q_v, q_tau, v_q, v_v, v_tau
// and with parameters "params_jacobian" (2, N, nv, 10 nbodies + 2), ∂q⁺/∂θ and ∂v⁺/∂θ.
py::dict step_batch(BoundWorld& world, py::handle q_in, py::handle v_in, py::handle tau_in, bool derivatives,
                    bool parameters, bool bounce, int threads) {
  const sim::WorldSpec& spec = world.spec;
  const dyn::Model& model = *spec.model;
  require(threads >= 1, "threads must be at least 1");
  const StateArguments state = state_arguments(model, q_in, v_in, tau_in, true);
  const Rows &q = state.q, &v = state.v, &tau = state.tau;
  const py::ssize_t N = q.count, nq = model.nq, nv = model.nv;
  Array q_next({N, nq}), v_next({N, nv});
  JacobianBlocks blocks({N}, nv, parameters ? 10 * model.nbodies() + 2 : 0, derivatives);
  py::array_t<int32_t> contacts(N);
  py::array_t<int8_t> status(N);
  double *q_d = q_next.mutable_data(), *v_d = v_next.mutable_data();
  int32_t* contacts_d = contacts.mutable_data();
  int8_t* status_d = status.mutable_data();
  {
    py::gil_scoped_release release;
    parallel_chunks(N, threads, 1, [&](std::ptrdiff_t begin, std::ptrdiff_t end) {
      std::unique_ptr<Workspaces> workspaces = world.workspaces->take(spec);
      sim::StepWorkspace& workspace = workspaces->step;
      for (std::ptrdiff_t n = begin; n < end; ++n) {
        workspace.has_previous = false;
        const sim::StepReport report =
            sim::step(spec, workspace, q.row(n), v.row(n), tau.row(n), q_d + n * nq, v_d + n * nv, derivatives);
        contacts_d[n] = report.contacts;
        const sim::RolloutStatus outcome = sim::step_status(spec, report, q_d + n * nq, v_d + n * nv);
        if (outcome != sim::RolloutStatus::failed && derivatives)
          blocks.linearize(spec, *workspaces, q.row(n), v.row(n), parameters, bounce, n);
        status_d[n] = static_cast<int8_t>(outcome);
      }
      world.workspaces->give(std::move(workspaces));
    });
  }
  py::dict out;
  out["q"] = q_next;
  out["v"] = v_next;
  out["contacts"] = contacts;
  out["status"] = status;
  out["worst"] = N > 0 ? *std::max_element(status_d, status_d + N) : 0;
  if (derivatives) blocks.put(out, parameters);
  return out;
}

// Copies of a workspace vector as a new array.
template <class T>
py::array_t<T> array_of(const std::vector<T>& values) {
  py::array_t<T> out(static_cast<py::ssize_t>(values.size()));
  std::copy(values.begin(), values.end(), out.mutable_data());
  return out;
}

// One step from one state (q (nq,), v, tau (nv,)) with everything dynamics/simulation.py's Step holds:
// "q", "v"; "contacts" (contact_arrays, with derivatives theirs, and each contact's "shape_a", "shape_b",
// "body_a", "body_b"); "impulses" (K, 3), each contact's [normal, tangent1, tangent2]; "limit_joints",
// "limit_signs", "limit_impulses" (L,) of the joint-limit rows; "bouncing" (K,); "row_ids" (n, 4)
// int32, the LCP rows' identities (sim::RowId), which a later call takes back as warm_rows; the LCP's
// "f", "w", "sets", "tied" and its bounds "lo", "hi", "friction_index", "mu"; or where the NCP solved the step
// (an NCP world's step that fell back to the boxed LCP has the LCP's) "ncp_impulses", "ncp_velocities", "modes",
// "ncp_mu"; "by_ncp", which of the two; "status", "iterations", "residual",
// "warm_start_hit", "failed" (whether a rollout would stop here: sim::step_status); with derivatives
// "minv_JT" (nv, n). warm_rows, warm_f and warm_sets: the previous step's row_ids, impulses and sets,
// tried first on each island whose rows they all match (or None).
py::dict step_one(BoundWorld& world, py::handle q_in, py::handle v_in, py::handle tau_in, py::object warm_rows,
                  py::object warm_f, py::object warm_sets, bool derivatives) {
  const sim::WorldSpec& spec = world.spec;
  const dyn::Model& model = *spec.model;
  const StateArguments state = state_arguments(model, q_in, v_in, tau_in, false);
  const Rows &q = state.q, &v = state.v, &tau = state.tau;
  const py::ssize_t nq = model.nq, nv = model.nv;
  std::unique_ptr<Workspaces> workspaces = world.workspaces->take(spec);
  sim::StepWorkspace& ws = workspaces->step;
  ws.has_previous = !warm_rows.is_none();
  if (ws.has_previous) {
    const auto rows = warm_rows.cast<py::array_t<int32_t, py::array::c_style | py::array::forcecast>>();
    const auto f = warm_f.cast<Array>();
    const auto sets = warm_sets.cast<py::array_t<int8_t, py::array::c_style | py::array::forcecast>>();
    require(rows.ndim() == 2 && rows.shape(1) == 4 && f.ndim() == 1 && sets.ndim() == 1 && sets.size() == f.size() &&
                rows.shape(0) == f.size(),
            "warm_rows must be (n, 4), warm_f and warm_sets (n,)");
    ws.previous_rows.resize(rows.shape(0));
    for (py::ssize_t r = 0; r < rows.shape(0); ++r)
      ws.previous_rows[r] = {{rows.at(r, 0), rows.at(r, 1), rows.at(r, 2), rows.at(r, 3)}, static_cast<int>(r)};
    std::sort(ws.previous_rows.begin(), ws.previous_rows.end());
    ws.previous_f.assign(f.data(), f.data() + f.size());
    ws.previous_sets.resize(sets.size());
    for (py::ssize_t i = 0; i < sets.size(); ++i) {
      require(sets.data()[i] >= 0 && sets.data()[i] <= 2, "warm_sets must hold 0, 1 or 2");
      ws.previous_sets[i] = static_cast<lcp::EntrySet>(sets.data()[i]);
    }
  }
  Array q_next(nq), v_next(nv);
  sim::StepReport report;
  {
    py::gil_scoped_release release;
    report =
        sim::step(spec, ws, q.row(0), v.row(0), tau.row(0), q_next.mutable_data(), v_next.mutable_data(), derivatives);
  }
  const int K = report.contacts, n = static_cast<int>(ws.kept.size());
  py::dict out;
  out["q"] = q_next;
  out["v"] = v_next;
  // The contacts with their scene shapes and bodies; each contact's [normal, tangent1, tangent2]
  // impulse and each limit's (zero where a row was dropped), from the kept rows.
  py::dict contacts =
      python::contact_arrays(ws.contacts.data(), derivatives ? ws.contact_derivatives.data() : nullptr, K);
  py::array_t<int64_t> shape_a(K), shape_b(K), body_a(K), body_b(K);
  for (int k = 0; k < K; ++k) {
    shape_a.mutable_data()[k] = ws.keys[k].shape_a, shape_b.mutable_data()[k] = ws.keys[k].shape_b;
    body_a.mutable_data()[k] = spec.shape_body[ws.keys[k].shape_a];
    body_b.mutable_data()[k] = spec.shape_body[ws.keys[k].shape_b];
  }
  contacts["status"] = ws.contact_status;
  contacts["shape_a"] = shape_a, contacts["shape_b"] = shape_b, contacts["body_a"] = body_a,
  contacts["body_b"] = body_b;
  out["contacts"] = contacts;
  const py::ssize_t L = static_cast<py::ssize_t>(ws.keys.size()) - K;
  Array impulses({static_cast<py::ssize_t>(K), py::ssize_t(3)}), limit_impulses(L);
  py::array_t<int64_t> limit_joints(L);
  Array limit_signs(L);
  std::fill_n(impulses.mutable_data(), 3 * K, 0.0);
  std::fill_n(limit_impulses.mutable_data(), L, 0.0);
  for (py::ssize_t l = 0; l < L; ++l) {
    limit_joints.mutable_data()[l] = ws.keys[K + l].shape_b;
    limit_signs.mutable_data()[l] = ws.keys[K + l].kind;
  }
  for (int r = 0; r < n; ++r) {
    const int i = ws.kept[r];
    (i < 3 * K ? impulses.mutable_data()[i] : limit_impulses.mutable_data()[i - 3 * K]) = ws.f[r];
  }
  out["impulses"] = impulses;
  out["limit_joints"] = limit_joints;
  out["limit_signs"] = limit_signs;
  out["limit_impulses"] = limit_impulses;
  py::array_t<int32_t> row_ids({static_cast<py::ssize_t>(n), py::ssize_t(4)});
  for (int r = 0; r < n; ++r) {
    const sim::RowId& id = ws.row_ids[r];
    const int values[4] = {id.shape_a, id.shape_b, id.kind, id.row};
    for (int c = 0; c < 4; ++c) row_ids.mutable_at(r, c) = values[c];
  }
  out["row_ids"] = row_ids;
  py::array_t<bool> bouncing(K);
  for (int k = 0; k < K; ++k) bouncing.mutable_data()[k] = ws.all_restitution_velocity[3 * k] != 0.0;
  out["bouncing"] = bouncing;
  out["f"] = array_of(ws.f);
  out["by_ncp"] = ws.by_ncp;
  if (ws.by_ncp) {
    out["ncp_impulses"] = array_of(ws.ncp_lambda);
    out["ncp_velocities"] = array_of(ws.ncp_v);
    out["modes"] = array_of(ws.modes);
    out["ncp_mu"] = array_of(ws.ncp_mu);
  } else {
    out["w"] = array_of(ws.w);
    py::array_t<int8_t> sets(n);
    py::array_t<bool> tied(n);
    const double w_tolerance = sim::lcp_tolerances(spec, ws).w;
    for (int i = 0; i < n; ++i) {
      sets.mutable_data()[i] = static_cast<int8_t>(ws.sets[i]);
      tied.mutable_data()[i] = ws.sets[i] != lcp::EntrySet::clamping && std::abs(ws.w[i]) <= w_tolerance;
    }
    out["sets"] = sets;
    out["tied"] = tied;
    out["lo"] = array_of(ws.lo);
    out["hi"] = array_of(ws.hi);
    out["friction_index"] = array_of(ws.friction_index);
    out["mu"] = array_of(ws.mu);
  }
  out["status"] = static_cast<int>(report.status);
  out["failed"] = sim::step_status(spec, report, q_next.data(), v_next.data()) == sim::RolloutStatus::failed;
  out["free_motion_converged"] = report.free_motion_converged;
  out["iterations"] = report.iterations;
  out["residual"] = report.residual;
  out["warm_start_hit"] = report.warm_start_hit;
  if (derivatives) {
    Array minv_JT({nv, static_cast<py::ssize_t>(n)});
    std::copy(ws.minv_JT.begin(), ws.minv_JT.begin() + nv * n, minv_JT.mutable_data());
    out["minv_JT"] = minv_JT;
  }
  world.workspaces->give(std::move(workspaces));
  return out;
}

// The contact problem of the step from one state (q, v, tau): its rows "J" (n, nv), the boxed LCP's "A"
// (n, n) and "b" (n,) with its bounds "lo", "hi", "friction_index", "mu", and "kept" (n,), the rows
// among the 3 K + L of the contacts and limits.
py::dict contact_problem(BoundWorld& world, py::handle q_in, py::handle v_in, py::handle tau_in) {
  const sim::WorldSpec& spec = world.spec;
  const dyn::Model& model = *spec.model;
  const StateArguments state = state_arguments(model, q_in, v_in, tau_in, false);
  const Rows &q = state.q, &v = state.v, &tau = state.tau;
  std::unique_ptr<Workspaces> workspaces = world.workspaces->take(spec);
  sim::StepWorkspace& ws = workspaces->step;
  int n;
  {
    py::gil_scoped_release release;
    n = sim::prepare_step(spec, ws, q.row(0), v.row(0), tau.row(0), false);
    sim::dense_rows(spec, ws, false);
    sim::dense_delassus(ws);
  }
  const py::ssize_t rows = n, nv = model.nv;
  Array J({rows, nv}), A({rows, rows});
  std::copy_n(ws.J.data(), rows * nv, J.mutable_data());
  std::copy_n(ws.A.data(), rows * rows, A.mutable_data());
  py::dict out;
  out["J"] = J;
  out["A"] = A;
  out["b"] = array_of(ws.b);
  out["lo"] = array_of(ws.lo);
  out["hi"] = array_of(ws.hi);
  out["friction_index"] = array_of(ws.friction_index);
  out["mu"] = array_of(ws.mu);
  out["kept"] = array_of(ws.kept);
  world.workspaces->give(std::move(workspaces));
  return out;
}

// The Jacobian of the step from one state (q, v, tau) at the solution f (n,) with sets: the LCP's
// (n,) lcp::EntrySet codes, or with by_ncp the NCP contacts' modes (lcp::ContactMode codes):
// dynamics/simulation.py's Step. By blocks as step_batch's without the N axis: "state_jacobian" (6, nv, nv)
// and with parameters "params_jacobian" (2, nv, 10 nbodies + 2).
py::dict linearize(BoundWorld& world, py::handle q_in, py::handle v_in, py::handle tau_in, const Array& f, bool by_ncp,
                   const py::array_t<int8_t, py::array::c_style | py::array::forcecast>& sets, bool parameters,
                   bool bounce) {
  const sim::WorldSpec& spec = world.spec;
  const dyn::Model& model = *spec.model;
  const StateArguments state = state_arguments(model, q_in, v_in, tau_in, false);
  const Rows &q = state.q, &v = state.v, &tau = state.tau;
  require(f.ndim() == 1 && sets.ndim() == 1, "f and sets must be 1-D");
  const int n = static_cast<int>(f.size()), num_sets = static_cast<int>(sets.size());
  for (int i = 0; i < num_sets; ++i) require(sets.data()[i] >= 0 && sets.data()[i] <= 2, "sets must hold 0, 1 or 2");
  const py::ssize_t nv = model.nv, P = parameters ? 10 * model.nbodies() + 2 : 0;
  JacobianBlocks blocks({}, nv, P, true);
  bool same_rows;
  {
    py::gil_scoped_release release;
    std::unique_ptr<Workspaces> workspaces = world.workspaces->take(spec);
    std::vector<double>& jac = workspaces->jacobian;
    jac.resize(2 * nv * (3 * nv + P));
    same_rows = sim::linearize_step(spec, workspaces->step, workspaces->linearization, q.row(0), v.row(0), tau.row(0),
                                    n, f.data(), by_ncp, num_sets, sets.data(), parameters, bounce, jac.data());
    if (same_rows) blocks.scatter(jac.data(), 0);
    world.workspaces->give(std::move(workspaces));
  }
  require(same_rows, "the step from this state has other LCP rows than f");
  py::dict out;
  blocks.put(out, parameters);
  return out;
}

}  // namespace

void dcol::python::bind_simulation(py::module_& root) {
  py::module_ m = root.attr("dynamics").cast<py::module_>();
  py::class_<BoundWorld>(m, "World")
      .def(py::init(&make_world), py::arg("model"), py::arg("shapes"), py::arg("shape_body"), py::arg("body_frame"),
           py::arg("collides"), py::arg("damping"), py::arg("limit_body"), py::arg("limit_lower"),
           py::arg("limit_upper"), py::arg("dt"), py::arg("friction"), py::arg("restitution"), py::arg("baumgarte"),
           py::arg("contact_margin"), py::arg("restitution_threshold"), py::arg("limit_margin"),
           py::arg("feature_tolerance"), py::arg("settings"), py::arg("max_sweeps"), py::arg("tolerance"),
           py::arg("ncp") = false, py::arg("ncp_iterations") = 5000, py::arg("ncp_tolerance") = 1e-10)
      .def("rollout", &rollout, py::arg("q0"), py::arg("v0"), py::arg("taus"), py::arg("derivatives") = false,
           py::arg("parameters") = true, py::arg("bounce") = true, py::arg("threads") = 1)
      .def("step", &step_batch, py::arg("q"), py::arg("v"), py::arg("tau"), py::arg("derivatives") = false,
           py::arg("parameters") = true, py::arg("bounce") = true, py::arg("threads") = 1)
      .def("step_one", &step_one, py::arg("q"), py::arg("v"), py::arg("tau"), py::arg("warm_rows") = py::none(),
           py::arg("warm_f") = py::none(), py::arg("warm_sets") = py::none(), py::arg("derivatives") = false)
      .def("contact_problem", &contact_problem, py::arg("q"), py::arg("v"), py::arg("tau"))
      .def("linearize", &linearize, py::arg("q"), py::arg("v"), py::arg("tau"), py::arg("f"), py::arg("by_ncp"),
           py::arg("sets"), py::arg("parameters") = true, py::arg("bounce") = true);
}
