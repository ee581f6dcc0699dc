// Python binding of a model's collision distances (dcol._native.dynamics.CollisionModel): built once
// from a dcol.dynamics.CollisionModel (dynamics/collision_model.py checks the user's arguments; this
// checks the indices it is given), and the distances at one configuration or a batch with the GIL
// released, one StepWorkspace per thread.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/parallel.hpp"
#include "python/bindings.hpp"
#include "python/dynamics_arguments.hpp"
#include "python/geometry_arguments.hpp"
#include "simulation/collision_distances.hpp"

namespace py = pybind11;
using namespace dcol;
using dcol::python::Array;
using dcol::python::BoundModel;
using dcol::python::IndexArray;
using dcol::python::Rows;

namespace {

void require(bool condition, const std::string& message) {
  if (!condition) throw py::value_error(message);
}

// The specification and the Python objects it points into, kept alive with it; the workspaces of the
// last call, one per thread, reused by the next (calls take turns on them).
struct BoundCollisionModel {
  py::object model, shapes;
  sim::CollisionModelSpec spec;
  std::mutex mutex;
  std::vector<std::unique_ptr<sim::StepWorkspace>> workspaces;
};

std::unique_ptr<BoundCollisionModel> make_collision_model(py::object model_obj, py::object shapes,
                                                          const IndexArray& shape_body, const IndexArray& body_frame,
                                                          const Array& static_r, const Array& static_R,
                                                          const IndexArray& pairs, double margin,
                                                          const conic::SolverSettings& settings, bool by_gjk) {
  auto bound = std::make_unique<BoundCollisionModel>();
  bound->model = model_obj, bound->shapes = shapes;
  sim::CollisionModelSpec& spec = bound->spec;
  sim::WorldSpec& world = spec.world;
  const dyn::Model& model = model_obj.cast<BoundModel&>().model;
  world.model = &model;
  world.solver = settings;
  const py::ssize_t S = shape_body.size(), B = body_frame.size();
  world.shapes = python::as_shape_list(shapes, "shapes", S);
  for (const geometry::Shape* shape : world.shapes) spec.adjacency.push_back(geometry::vertex_adjacency(*shape));
  for (py::ssize_t s = 0; s < S; ++s) {
    require(shape_body.at(s) >= 0 && shape_body.at(s) < B, "shape_body must hold scene body indices");
    world.shape_body.push_back(shape_body.at(s));
  }
  const int frames = static_cast<int>(model.frame_body.size());
  require(static_r.ndim() == 2 && static_r.shape(0) == B && static_r.shape(1) == 3, "static_r must be (B, 3)");
  require(static_R.ndim() == 3 && static_R.shape(0) == B && static_R.shape(1) == 3 && static_R.shape(2) == 3,
          "static_R must be (B, 3, 3)");
  for (py::ssize_t b = 0; b < B; ++b) {
    require(body_frame.at(b) >= -1 && body_frame.at(b) < frames, "body_frame must hold frame indices or -1");
    world.body_frame.push_back(body_frame.at(b));
    geometry::Pose pose;
    for (int i = 0; i < 3; ++i) {
      pose.r[i] = static_r.at(b, i);
      for (int j = 0; j < 3; ++j) pose.Q.m[i][j] = static_R.at(b, i, j);
    }
    spec.static_pose.push_back(pose);
  }
  require(pairs.ndim() == 2 && pairs.shape(1) == 2, "pairs must be (P, 2)");
  spec.pair_of.assign(S * S, -1);
  for (py::ssize_t p = 0; p < pairs.shape(0); ++p) {
    const int a = pairs.at(p, 0), b = pairs.at(p, 1);
    require(0 <= a && a < b && b < S, "pairs must hold shape indices a < b");
    require(spec.pair_of[a * S + b] < 0, "pairs must not repeat a pair");
    spec.pair_of[a * S + b] = static_cast<int>(p);
    spec.pairs.emplace_back(a, b);
  }
  require(margin >= 0.0, "margin must be >= 0");
  spec.margin = margin;
  spec.by_gjk = by_gjk;
  return bound;
}

// The distances at q (nq,) or (N, nq): "start" (N + 1,) (configuration n's pairs are rows start[n] to
// start[n + 1]; N = 1 for one configuration), "pair" (K,) indices into the pairs, "alpha", "distance" (K,),
// "witness_a", "witness_b", "normal" (K, 3), "status" (K,) int8, and with jacobians the rows of
// sim::chain_pair_rows sparse by pair: "jacobian_start" (K + 1,) (pair k's dofs are entries jacobian_start[k] to
// jacobian_start[k + 1]), "jacobian_dofs" (E,) int32 and "jacobian" (E, 11), a dof's derivatives of the pair's
// rows. Without signed_distances, α alone: "alpha", "status" and "jacobian" (E, 1).
py::dict distances(BoundCollisionModel& bound, py::handle q_in, bool jacobians, bool signed_distances, int threads) {
  const sim::CollisionModelSpec& spec = bound.spec;
  const dyn::Model& model = *spec.world.model;
  require(threads >= 1, "threads must be at least 1");
  const Rows q = python::configuration(model, q_in);
  const py::ssize_t N = q.count;
  // Each configuration's results apart (a worker takes a contiguous run of them), joined below.
  std::vector<std::vector<sim::PairDistance>> results(N);
  std::vector<sim::PairRows> rows(N);
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(bound.mutex);
    const py::ssize_t workers = std::max<py::ssize_t>(1, std::min<py::ssize_t>(threads, N));
    while (static_cast<py::ssize_t>(bound.workspaces.size()) < workers)
      bound.workspaces.push_back(std::make_unique<sim::StepWorkspace>(spec.world));
    const py::ssize_t chunk = (N + workers - 1) / workers;
    parallel_chunks(N, workers, chunk, [&](std::ptrdiff_t begin, std::ptrdiff_t end) {
      sim::StepWorkspace& ws = *bound.workspaces[begin / chunk];
      sim::CollisionScratch scratch;
      for (std::ptrdiff_t n = begin; n < end; ++n)
        sim::collision_distances(spec, ws, q.row(n), jacobians, signed_distances, scratch, results[n], rows[n]);
    });
  }
  py::ssize_t K = 0;
  for (const auto& r : results) K += static_cast<py::ssize_t>(r.size());
  py::array_t<int64_t> start(N + 1);
  py::array_t<int32_t> pair(K);
  py::array_t<int8_t> status(K);
  const py::ssize_t D = signed_distances ? K : 0;  // rows of the signed distances' arrays
  Array alpha(K), distance(D), witness_a({D, py::ssize_t(3)}), witness_b({D, py::ssize_t(3)}),
      normal({D, py::ssize_t(3)});
  const py::ssize_t count = sim::derivative_rows(signed_distances);
  py::ssize_t E = 0;  // the pairs' dofs
  for (const sim::PairRows& r : rows) E += static_cast<py::ssize_t>(r.dofs.size());
  // One configuration's rows become the array's memory; a batch's are joined.
  const bool own_rows = jacobians && N == 1 && E > 0;
  Array jacobian;
  if (own_rows) {
    auto* block = new std::vector<double>(std::move(rows[0].values));
    const py::capsule owner(block, [](void* data) { delete static_cast<std::vector<double>*>(data); });
    jacobian = Array({E, count}, block->data(), owner);
  } else {
    jacobian = Array(std::vector<py::ssize_t>{jacobians ? E : 0, count});
  }
  py::array_t<int64_t> jacobian_start(jacobians ? K + 1 : 0);
  py::array_t<int32_t> jacobian_dofs(E);
  py::ssize_t k = 0, e = 0;
  for (py::ssize_t n = 0; n < N; ++n) {
    start.mutable_at(n) = k;
    if (jacobians) {
      std::copy(rows[n].dofs.begin(), rows[n].dofs.end(), jacobian_dofs.mutable_data() + e);
      if (!own_rows) std::copy(rows[n].values.begin(), rows[n].values.end(), jacobian.mutable_data() + e * count);
    }
    for (const sim::PairDistance& entry : results[n]) {
      if (jacobians) jacobian_start.mutable_at(k) = e, e += entry.dof_count;
      const geometry::DistanceResult& r = entry.result;
      pair.mutable_at(k) = entry.pair;
      status.mutable_at(k) = static_cast<int8_t>(r.status);
      alpha.mutable_at(k) = r.alpha;
      if (signed_distances) {
        distance.mutable_at(k) = r.distance;
        for (int i = 0; i < 3; ++i) {
          witness_a.mutable_at(k, i) = r.p_a[i];
          witness_b.mutable_at(k, i) = r.p_b[i];
          normal.mutable_at(k, i) = r.normal[i];
        }
      }
      ++k;
    }
  }
  start.mutable_at(N) = k;
  if (jacobians) jacobian_start.mutable_at(K) = e;
  py::dict out;
  out["start"] = start;
  out["pair"] = pair;
  out["alpha"] = alpha;
  if (signed_distances) {
    out["distance"] = distance;
    out["witness_a"] = witness_a;
    out["witness_b"] = witness_b;
    out["normal"] = normal;
  }
  out["status"] = status;
  if (jacobians) {
    out["jacobian_start"] = jacobian_start;
    out["jacobian_dofs"] = jacobian_dofs;
    out["jacobian"] = jacobian;
  }
  return out;
}

}  // namespace

void dcol::python::bind_collision_model(py::module_& root) {
  py::module_ m = root.attr("dynamics").cast<py::module_>();
  py::class_<BoundCollisionModel>(m, "CollisionModel")
      .def(py::init(&make_collision_model), py::arg("model"), py::arg("shapes"), py::arg("shape_body"),
           py::arg("body_frame"), py::arg("static_r"), py::arg("static_R"), py::arg("pairs"), py::arg("margin"),
           py::arg("settings"), py::arg("by_gjk"))
      .def("distances", &distances, py::arg("q"), py::arg("jacobians") = true, py::arg("signed_distances") = true,
           py::arg("threads") = 1);
}
