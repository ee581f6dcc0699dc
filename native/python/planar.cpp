// The planar engine's native parts (dcol.dynamics.planar): GJK in the plane, contact detection, the
// contact geometry of features, and the step (one scene, or a batch of scenes on threads).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/parallel.hpp"
#include "planar/contact_geometry.hpp"
#include "planar/contacts.hpp"
#include "planar/gjk.hpp"
#include "planar/step.hpp"
#include "planar/step_vjp.hpp"
#include "python/bindings.hpp"

namespace py = pybind11;
using namespace dcol::planar;

namespace {

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;
using IntArray = py::array_t<int, py::array::c_style | py::array::forcecast>;

// The record a feature is passed in: its kind, whether b is the reference, and 12 numbers (see
// dcol.dynamics.planar.contacts.feature_record).
PlanarFeature unpacked_feature(int kind, int reference_is_b, const double* data) {
  PlanarFeature feature;
  if (kind < 0 || kind > 2) throw py::value_error("feature kind must be 0 (points), 1 (face) or 2 (clipped face)");
  feature.kind = static_cast<PlanarFeatureKind>(kind);
  feature.reference_is_b = reference_is_b != 0;
  if (feature.kind == PlanarFeatureKind::points) {
    feature.point_a[0] = data[0], feature.point_a[1] = data[1], feature.radius_a = data[2];
    feature.point_b[0] = data[3], feature.point_b[1] = data[4], feature.radius_b = data[5];
    return feature;
  }
  feature.normal[0] = data[0], feature.normal[1] = data[1];
  feature.face_point[0] = data[2], feature.face_point[1] = data[3];
  feature.incident_point[0] = data[4], feature.incident_point[1] = data[5];
  feature.radius = data[6];
  feature.edge_end[0] = data[7], feature.edge_end[1] = data[8];
  feature.side_point[0] = data[9], feature.side_point[1] = data[10];
  return feature;
}

// The record of a feature: the inverse of unpacked_feature.
void packed_feature(const PlanarFeature& feature, int& kind, int& reference_is_b, double* data) {
  kind = static_cast<int>(feature.kind);
  reference_is_b = feature.reference_is_b ? 1 : 0;
  std::fill(data, data + 12, 0.0);
  if (feature.kind == PlanarFeatureKind::points) {
    const double values[6] = {feature.point_a[0], feature.point_a[1], feature.radius_a,
                              feature.point_b[0], feature.point_b[1], feature.radius_b};
    std::copy(values, values + 6, data);
    return;
  }
  const double values[11] = {feature.normal[0],     feature.normal[1],         feature.face_point[0],
                             feature.face_point[1], feature.incident_point[0], feature.incident_point[1],
                             feature.radius,        feature.edge_end[0],       feature.edge_end[1],
                             feature.side_point[0], feature.side_point[1]};
  std::copy(values, values + 11, data);
}

void check_rows(const py::array& array, py::ssize_t rows, py::ssize_t columns, const char* name) {
  if (array.ndim() != 2 || array.shape(0) != rows || array.shape(1) != columns)
    throw py::value_error(std::string(name) + " must have shape (K, " + std::to_string(columns) + ")");
}

py::tuple feature_geometry(const IntArray& kinds, const IntArray& reference_is_b, const Array& data,
                           const Array& poses_a, const Array& poses_b, bool with_jacobians) {
  if (kinds.ndim() != 1) throw py::value_error("kinds must have shape (K,)");
  const py::ssize_t count = kinds.shape(0);
  if (reference_is_b.ndim() != 1 || reference_is_b.shape(0) != count)
    throw py::value_error("reference_is_b must have shape (K,)");
  check_rows(data, count, 12, "data");
  check_rows(poses_a, count, 3, "poses_a");
  check_rows(poses_b, count, 3, "poses_b");
  Array geometry({count, py::ssize_t(7)});
  std::optional<Array> jacobians;
  if (with_jacobians) jacobians.emplace(std::vector<py::ssize_t>{count, 6, 6});
  const int* kind = kinds.data();
  const int* b_is_reference = reference_is_b.data();
  const double *records = data.data(), *a = poses_a.data(), *b = poses_b.data();
  double* out = geometry.mutable_data();
  double* jacobian = with_jacobians ? jacobians->mutable_data() : nullptr;
  std::vector<PlanarFeature> features(count);
  for (py::ssize_t k = 0; k < count; ++k) features[k] = unpacked_feature(kind[k], b_is_reference[k], records + 12 * k);
  {
    py::gil_scoped_release release;
    for (py::ssize_t k = 0; k < count; ++k) {
      const PlanarContactGeometry<double> g =
          planar_feature_geometry(features[k], a + 3 * k, b + 3 * k, jacobian ? jacobian + 36 * k : nullptr);
      double* row = out + 7 * k;
      row[0] = g.normal[0], row[1] = g.normal[1], row[2] = g.arm_a[0], row[3] = g.arm_a[1];
      row[4] = g.arm_b[0], row[5] = g.arm_b[1], row[6] = g.gap;
    }
  }
  if (jacobians) return py::make_tuple(geometry, *jacobians);
  return py::make_tuple(geometry, py::none());
}

PlanarShapes make_shapes(const Array& radius, const IntArray& corner_count, const Array& corners,
                         const Array& edge_normals) {
  if (radius.ndim() != 1) throw py::value_error("radius must have shape (bodies,)");
  const py::ssize_t bodies = radius.shape(0);
  if (corner_count.ndim() != 1 || corner_count.shape(0) != bodies)
    throw py::value_error("corner_count must have shape (bodies,)");
  PlanarShapes shapes;
  shapes.radius.assign(radius.data(), radius.data() + bodies);
  shapes.corner_count.assign(corner_count.data(), corner_count.data() + bodies);
  int total = 0;
  for (int count : shapes.corner_count) {
    if (count != 0 && count < 3) throw py::value_error("corner_count must be 0 (a circle) or at least 3");
    shapes.first_corner.push_back(total);
    total += count;
  }
  check_rows(corners, total, 2, "corners");
  check_rows(edge_normals, total, 2, "edge_normals");
  shapes.corners.assign(corners.data(), corners.data() + 2 * total);
  shapes.edge_normals.assign(edge_normals.data(), edge_normals.data() + 2 * total);
  for (py::ssize_t i = 0; i < bodies; ++i) {
    double reach = shapes.radius[i];
    if (shapes.corner_count[i] > 0) {
      reach = 0.0;
      for (int k = 0; k < shapes.corner_count[i]; ++k) {
        const double* v = shapes.corners.data() + 2 * (shapes.first_corner[i] + k);
        reach = std::max(reach, v[0] * v[0] + v[1] * v[1]);
      }
      reach = std::sqrt(reach);
    }
    shapes.bounding_radius.push_back(reach);
  }
  return shapes;
}

py::tuple closest_points(const Array& points_a, const Array& points_b) {
  if (points_a.ndim() != 2 || points_a.shape(1) != 2 || points_a.shape(0) < 1)
    throw py::value_error("points_a must have shape (k, 2), k ≥ 1");
  if (points_b.ndim() != 2 || points_b.shape(1) != 2 || points_b.shape(0) < 1)
    throw py::value_error("points_b must have shape (l, 2), l ≥ 1");
  const PlanarProximity p = planar_closest_points(points_a.data(), static_cast<int>(points_a.shape(0)), points_b.data(),
                                                  static_cast<int>(points_b.shape(0)));
  Array point_a(2), point_b(2);
  std::copy(p.point_a, p.point_a + 2, point_a.mutable_data());
  std::copy(p.point_b, p.point_b + 2, point_b.mutable_data());
  return py::make_tuple(p.distance, point_a, point_b, std::vector<int>(p.corners_a, p.corners_a + p.count_a),
                        std::vector<int>(p.corners_b, p.corners_b + p.count_b), p.overlapping);
}

PlanarModel make_model(const PlanarShapes& shapes, const Array& mass, const Array& inertia,
                       const Array& inertia_per_mass, const Array& restitution, const Array& friction,
                       const IntArray& joint_kind, const IntArray& joint_bodies, const Array& joint_anchors,
                       const Array& joint_angle, const IntArray& joint_axis, const Array& joint_value,
                       const IntArray& skipped, const Array& gravity, double dt, double margin, double tol,
                       double penetration_tolerance, bool post_stabilization, int max_halvings) {
  PlanarModel model;
  model.shapes = shapes;
  const int n = shapes.bodies();
  for (auto [array, name] :
       {std::pair{&mass, "mass"}, std::pair{&inertia, "inertia"}, std::pair{&inertia_per_mass, "inertia_per_mass"},
        std::pair{&restitution, "restitution"}, std::pair{&friction, "friction"}})
    if (array->ndim() != 1 || array->shape(0) != n)
      throw py::value_error(std::string(name) + " must have shape (bodies,)");
  model.mass.assign(mass.data(), mass.data() + n);
  model.inertia.assign(inertia.data(), inertia.data() + n);
  model.inertia_per_mass.assign(inertia_per_mass.data(), inertia_per_mass.data() + n);
  model.restitution.assign(restitution.data(), restitution.data() + n);
  model.friction.assign(friction.data(), friction.data() + n);
  if (joint_kind.ndim() != 1) throw py::value_error("joint_kind must have shape (joints,)");
  const py::ssize_t joints = joint_kind.shape(0);
  check_rows(joint_bodies, joints, 2, "joint_bodies");
  check_rows(joint_anchors, joints, 4, "joint_anchors");
  for (auto [array, name] : {std::pair<const py::array*, const char*>{&joint_angle, "joint_angle"},
                             {&joint_axis, "joint_axis"},
                             {&joint_value, "joint_value"}})
    if (array->ndim() != 1 || array->shape(0) != joints)
      throw py::value_error(std::string(name) + " must have shape (joints,)");
  for (py::ssize_t j = 0; j < joints; ++j) {
    PlanarJoint joint;
    const int kind = joint_kind.data()[j];
    if (kind < 0 || kind > 2) throw py::value_error("joint_kind must be 0 (hinge), 1 (fixed) or 2 (axis)");
    joint.kind = static_cast<PlanarJoint::Kind>(kind);
    joint.body_a = joint_bodies.data()[2 * j], joint.body_b = joint_bodies.data()[2 * j + 1];
    if (joint.body_a < 0 || joint.body_a >= n || joint.body_b < -1 || joint.body_b >= n || joint.body_a == joint.body_b)
      throw py::value_error("joint_bodies must name distinct bodies (−1: the world for body_b)");
    const double* anchors = joint_anchors.data() + 4 * j;
    joint.anchor_a[0] = anchors[0], joint.anchor_a[1] = anchors[1];
    joint.anchor_b[0] = anchors[2], joint.anchor_b[1] = anchors[3];
    joint.angle = joint_angle.data()[j];
    joint.axis = joint_axis.data()[j];
    if (joint.axis < 0 || joint.axis > 2) throw py::value_error("joint_axis must be 0 (angle), 1 (x) or 2 (y)");
    joint.value = joint_value.data()[j];
    model.joints.push_back(joint);
  }
  check_rows(skipped, n, n, "skipped");
  model.skipped.assign(skipped.data(), skipped.data() + static_cast<size_t>(n) * n);
  if (gravity.ndim() != 1 || gravity.shape(0) != 2) throw py::value_error("gravity must have shape (2,)");
  model.gravity[0] = gravity.data()[0], model.gravity[1] = gravity.data()[1];
  model.dt = dt, model.margin = margin, model.tol = tol, model.penetration_tolerance = penetration_tolerance;
  model.post_stabilization = post_stabilization, model.max_halvings = max_halvings;
  return model;
}

const double* state_rows(const PlanarModel& model, const Array& array, const char* name) {
  check_rows(array, model.bodies(), 3, name);
  return array.data();
}

const double* state(const PlanarModel& model, const std::optional<Array>& array, const char* name) {
  return array ? state_rows(model, *array, name) : nullptr;
}

Array matrix(const std::vector<double>& values, py::ssize_t rows, py::ssize_t columns) {
  Array out({rows, columns});
  std::copy_n(values.data(), rows * columns, out.mutable_data());
  return out;
}

Array vector(const std::vector<double>& values, py::ssize_t size) {
  Array out(size);
  std::copy_n(values.data(), size, out.mutable_data());
  return out;
}

py::tuple contact_records(const std::vector<PlanarContact>& contacts) {
  const py::ssize_t count = static_cast<py::ssize_t>(contacts.size());
  IntArray pairs({count, py::ssize_t(2)}), kinds(count), reference_is_b(count);
  Array data({count, py::ssize_t(12)}), geometry({count, py::ssize_t(7)});
  for (py::ssize_t k = 0; k < count; ++k) {
    const PlanarContact& c = contacts[k];
    pairs.mutable_data()[2 * k] = c.body_a, pairs.mutable_data()[2 * k + 1] = c.body_b;
    packed_feature(c.feature, kinds.mutable_data()[k], reference_is_b.mutable_data()[k], data.mutable_data() + 12 * k);
    const PlanarContactGeometry<double>& g = c.geometry;
    const double row[7] = {g.normal[0], g.normal[1], g.arm_a[0], g.arm_a[1], g.arm_b[0], g.arm_b[1], g.gap};
    std::copy(row, row + 7, geometry.mutable_data() + 7 * k);
  }
  return py::make_tuple(pairs, kinds, reference_is_b, data, geometry);
}

py::tuple detect_contacts(const PlanarShapes& shapes, const Array& positions, double margin, const IntArray& skipped) {
  const int n = shapes.bodies();
  check_rows(positions, n, 3, "positions");
  check_rows(skipped, n, n, "skipped");
  std::vector<PlanarContact> contacts;
  {
    py::gil_scoped_release release;
    PlanarContactWorkspace work;
    const int* skip = skipped.data();
    planar_detect_contacts(
        shapes, positions.data(), margin, [&](int i, int j) { return skip[i * n + j] != 0; }, work, contacts);
  }
  return contact_records(contacts);
}

py::tuple model_contacts(const PlanarModel& model, const Array& positions) {
  const double* p = state_rows(model, positions, "positions");
  std::vector<PlanarContact> contacts;
  {
    py::gil_scoped_release release;
    PlanarStepData data;
    planar_contacts(model, p, data, contacts);
  }
  return contact_records(contacts);
}

py::tuple solution(const PlanarMlcp& lcp) {
  return py::make_tuple(vector(lcp.x, lcp.n), vector(lcp.y, lcp.p), vector(lcp.z, lcp.m), vector(lcp.s, lcp.m),
                        static_cast<int>(lcp.report.status), lcp.report.iterations, lcp.report.residual);
}

// The dynamics LCP and the Jacobians it is built from, as dcol.dynamics.planar.engine reads them.
py::dict problem(const PlanarModel& model, const PlanarStepData& data) {
  const PlanarMlcp& lcp = data.dynamics;
  const py::ssize_t columns = 3 * model.bodies(), m = static_cast<py::ssize_t>(data.contacts.size());
  const py::ssize_t r = static_cast<py::ssize_t>(data.rubbing.size());
  py::dict out;
  out["contacts"] = contact_records(data.contacts);
  out["M"] = matrix(lcp.M, lcp.n, lcp.n), out["q"] = vector(lcp.q, lcp.n), out["A"] = matrix(lcp.A, lcp.p, lcp.n);
  out["G"] = matrix(lcp.G, lcp.m, lcp.n), out["F"] = matrix(lcp.F, lcp.m, lcp.m), out["h"] = vector(lcp.h, lcp.m);
  out["J_e"] = matrix(data.J_e, lcp.p, columns), out["J_c"] = matrix(data.J_c, m, columns);
  out["J_f"] = matrix(data.J_f, 2 * r, columns), out["mu"] = vector(data.mu, m), out["k"] = vector(data.k, m);
  IntArray rubbing(r);
  std::copy(data.rubbing.begin(), data.rubbing.end(), rubbing.mutable_data());
  out["rubbing"] = rubbing;
  // E's column j has ones at rows 2j, 2j + 1 (LCP-physics §A.4.3).
  Array E({2 * r, r});
  std::fill_n(E.mutable_data(), 2 * r * r, 0.0);
  for (py::ssize_t j = 0; j < r; ++j) E.mutable_data()[2 * j * r + j] = E.mutable_data()[(2 * j + 1) * r + j] = 1.0;
  out["E"] = E;
  return out;
}

// A step's native data, kept for its backward pass (planar_step_vjp reuses the dynamics LCP's
// prepared Newton system in it), with the model the step was taken in.
struct PlanarStepRecord {
  std::shared_ptr<const PlanarModel> model;
  PlanarStepData data;
  std::mutex backward;  // planar_step_vjp refactorizes in data: one backward pass at a time
};
using StepRecord = std::shared_ptr<PlanarStepRecord>;

StepRecord new_record(const std::shared_ptr<const PlanarModel>& model) {
  auto record = std::make_shared<PlanarStepRecord>();
  record->model = model;
  return record;
}

py::dict step_result(const StepRecord& record) {
  const PlanarModel& model = *record->model;
  const PlanarStepData& data = record->data;
  const py::ssize_t n = model.bodies();
  py::dict out = problem(model, data);
  out["positions"] = matrix(data.next_positions, n, 3);
  out["velocities"] = matrix(data.next_velocities, n, 3);
  out["dt"] = data.dt;
  out["solution"] = solution(data.dynamics);
  out["stabilization"] = data.stabilized ? py::object(solution(data.stabilization)) : py::none();
  out["native"] = record;
  return out;
}

// work(model, positions, velocities, forces, data) without the GIL at a validated state.
void at_state(const PlanarModel& model, const Array& positions, const Array& velocities,
              const std::optional<Array>& forces,
              void (*work)(const PlanarModel&, const double*, const double*, const double*, PlanarStepData&),
              PlanarStepData& data) {
  const double *p = state_rows(model, positions, "positions"), *v = state_rows(model, velocities, "velocities");
  const double* f = state(model, forces, "forces");
  py::gil_scoped_release release;
  work(model, p, v, f, data);
}

py::dict step(const std::shared_ptr<PlanarModel>& model, const Array& positions, const Array& velocities,
              const std::optional<Array>& forces) {
  const StepRecord record = new_record(model);
  at_state(*model, positions, velocities, forces, planar_step, record->data);
  py::dict out = step_result(record);
  planar_release_all_but_backward(record->data);
  return out;
}

py::dict dynamics_lcp(const PlanarModel& model, const Array& positions, const Array& velocities,
                      const std::optional<Array>& forces) {
  PlanarStepData data;
  at_state(model, positions, velocities, forces, planar_dynamics_lcp, data);
  return problem(model, data);
}

// (B, bodies, 3) arrays: the first's B, after checking the shapes of all (those present).
py::ssize_t batch_scenes(py::ssize_t bodies, const Array& positions,
                         std::initializer_list<std::pair<const std::optional<Array>*, const char*>> others) {
  if (positions.ndim() != 3 || positions.shape(1) != bodies || positions.shape(2) != 3)
    throw py::value_error("positions must have shape (B, bodies, 3)");
  for (auto [array, name] : others)
    if (*array && ((*array)->ndim() != 3 || (*array)->shape(0) != positions.shape(0) || (*array)->shape(1) != bodies ||
                   (*array)->shape(2) != 3))
      throw py::value_error(std::string(name) + " must have the shape of positions");
  return positions.shape(0);
}

const double* scene_rows(const std::optional<Array>& array, py::ssize_t bodies, py::ssize_t scene) {
  return array ? array->data() + 3 * bodies * scene : nullptr;
}

py::list step_batch(const std::shared_ptr<PlanarModel>& model, const Array& positions, const Array& velocities,
                    const std::optional<Array>& forces, int threads) {
  const py::ssize_t n = model->bodies();
  const std::optional<Array> given_velocities = velocities;
  const py::ssize_t scenes = batch_scenes(n, positions, {{&given_velocities, "velocities"}, {&forces, "forces"}});
  std::vector<StepRecord> records(scenes);
  for (StepRecord& record : records) record = new_record(model);
  const double *p = positions.data(), *v = velocities.data();
  {
    py::gil_scoped_release release;
    dcol::parallel_chunks(scenes, threads, 1, [&](std::ptrdiff_t begin, std::ptrdiff_t end) {
      for (std::ptrdiff_t b = begin; b < end; ++b)
        planar_step(*model, p + 3 * n * b, v + 3 * n * b, scene_rows(forces, n, b), records[b]->data);
    });
  }
  py::list out;
  for (const StepRecord& record : records) {
    out.append(step_result(record));
    planar_release_all_but_backward(record->data);
  }
  return out;
}

// The arrays of a step's cotangents, in the order of PlanarStepCotangents' fields as
// dcol.dynamics.planar.PlanarStepCotangents has them, each with a leading axis B for a batch.
class CotangentArrays {
 public:
  CotangentArrays(std::optional<py::ssize_t> batch, py::ssize_t bodies, py::ssize_t joints)
      : scenes_(batch.value_or(1)) {
    auto shaped = [&batch](std::vector<py::ssize_t> shape) {
      if (batch) shape.insert(shape.begin(), *batch);
      return Array(shape);
    };
    velocities_ = shaped({bodies, 3}), forces_ = shaped({bodies, 3}), positions_ = shaped({bodies, 3});
    mass_ = shaped({bodies}), inertia_ = shaped({bodies}), restitution_ = shaped({bodies}),
    friction_ = shaped({bodies});
    anchors_ = shaped({joints, 2, 2});
  }
  // Where scene `scene` (0 without a batch) is written.
  PlanarStepCotangents scene(py::ssize_t scene) {
    auto at = [this, scene](Array& array) { return array.mutable_data() + array.size() / scenes_ * scene; };
    return {at(velocities_),  at(forces_),   at(mass_),    at(inertia_),
            at(restitution_), at(friction_), at(anchors_), at(positions_)};
  }
  py::tuple result() const {
    return py::make_tuple(velocities_, forces_, mass_, inertia_, restitution_, friction_, anchors_, positions_);
  }

 private:
  py::ssize_t scenes_;
  Array velocities_, forces_, mass_, inertia_, restitution_, friction_, anchors_, positions_;
};

// planar_step_vjp of a step's record, under its lock; false where the KKT matrix is singular.
bool record_vjp(PlanarStepRecord& record, const double* positions, const double* velocities,
                const double* grad_velocities, const double* grad_positions, const PlanarStepCotangents& out) {
  const std::lock_guard<std::mutex> lock(record.backward);
  return planar_step_vjp(*record.model, record.data, positions, velocities, grad_velocities, grad_positions, out);
}

// numpy.linalg.LinAlgError, as numpy's solve raises it, for a KKT matrix that is singular.
[[noreturn]] void raise_singular_kkt(const std::string& where) {
  const py::object error = py::module_::import("numpy.linalg").attr("LinAlgError");
  PyErr_SetString(error.ptr(), ("the dynamics LCP's KKT matrix is singular at the step's solution" + where).c_str());
  throw py::error_already_set();
}

py::tuple step_vjp(const StepRecord& record, const Array& positions, const Array& velocities,
                   const std::optional<Array>& grad_velocities, const std::optional<Array>& grad_positions) {
  const PlanarModel& model = *record->model;
  const double *p = state_rows(model, positions, "positions"), *v = state_rows(model, velocities, "velocities");
  const double* grad_v = state(model, grad_velocities, "grad_velocities");
  const double* grad_p = state(model, grad_positions, "grad_positions");
  CotangentArrays out(std::nullopt, model.bodies(), static_cast<py::ssize_t>(model.joints.size()));
  const PlanarStepCotangents where = out.scene(0);
  bool solved;
  {
    py::gil_scoped_release release;
    solved = record_vjp(*record, p, v, grad_v, grad_p, where);
  }
  if (!solved) raise_singular_kkt("");
  return out.result();
}

py::tuple step_batch_vjp(const std::vector<StepRecord>& records, const Array& positions, const Array& velocities,
                         const std::optional<Array>& grad_velocities, const std::optional<Array>& grad_positions,
                         int threads) {
  if (records.empty()) throw py::value_error("steps must hold at least one step");
  const PlanarModel& model = *records.front()->model;
  for (const StepRecord& record : records)
    if (record->model->bodies() != model.bodies() || record->model->joints.size() != model.joints.size())
      throw py::value_error("steps must be steps of worlds with the same bodies and joints");
  const py::ssize_t n = model.bodies();
  const std::optional<Array> given_velocities = velocities;
  const py::ssize_t scenes = batch_scenes(
      n, positions,
      {{&given_velocities, "velocities"}, {&grad_velocities, "grad_velocities"}, {&grad_positions, "grad_positions"}});
  if (scenes != static_cast<py::ssize_t>(records.size()))
    throw py::value_error("positions must hold one scene per step, " + std::to_string(records.size()));
  CotangentArrays out({scenes}, n, static_cast<py::ssize_t>(model.joints.size()));
  std::vector<PlanarStepCotangents> where(scenes);
  for (py::ssize_t b = 0; b < scenes; ++b) where[b] = out.scene(b);
  std::vector<char> solved(scenes, 0);
  const double *p = positions.data(), *v = velocities.data();
  {
    py::gil_scoped_release release;
    dcol::parallel_chunks(scenes, threads, 1, [&](std::ptrdiff_t begin, std::ptrdiff_t end) {
      for (std::ptrdiff_t b = begin; b < end; ++b)
        solved[b] = record_vjp(*records[b], p + 3 * n * b, v + 3 * n * b, scene_rows(grad_velocities, n, b),
                               scene_rows(grad_positions, n, b), where[b]);
    });
  }
  for (py::ssize_t b = 0; b < scenes; ++b)
    if (!solved[b]) raise_singular_kkt(" (scene " + std::to_string(b) + ")");
  return out.result();
}

py::tuple equality_rows(const PlanarModel& model, const Array& positions) {
  const double* p = state_rows(model, positions, "positions");
  const py::ssize_t rows = model.equality_rows(), columns = 3 * model.bodies();
  Array jacobian({rows, columns}), error(rows);
  planar_equality_rows(model, p, jacobian.mutable_data(), error.mutable_data());
  return py::make_tuple(jacobian, error);
}

}  // namespace

void dcol::python::bind_planar(py::module_& m) {
  py::module_ planar = m.def_submodule("planar", "Native parts of the planar engine (dcol.dynamics.planar).");
  planar.def("feature_geometry", &feature_geometry, py::arg("kinds"), py::arg("reference_is_b"), py::arg("data"),
             py::arg("poses_a"), py::arg("poses_b"), py::arg("with_jacobians"),
             "(geometry (K, 7): normal, arm_a, arm_b, gap; jacobians (K, 6, 6) of (normal, arm_a, arm_b) with "
             "respect to (pose_a, pose_b), or None) of K contact features at poses (K, 3) each.");
  py::class_<PlanarShapes>(planar, "Shapes", "The shapes of a planar scene's bodies, for detect_contacts.")
      .def(py::init(&make_shapes), py::arg("radius"), py::arg("corner_count"), py::arg("corners"),
           py::arg("edge_normals"),
           "Body i: a circle of radius[i] where corner_count[i] is 0, else the polygon of the next corner_count[i] "
           "rows of corners (V, 2) (counter-clockwise, centroid at the origin) and their edges' outward normals "
           "edge_normals (V, 2).");
  planar.def("detect_contacts", &detect_contacts, py::arg("shapes"), py::arg("positions"), py::arg("margin"),
             py::arg("skipped"),
             "(pairs (K, 2), kinds (K,), reference_is_b (K,), data (K, 12), geometry (K, 7)) of the contacts "
             "(gap < margin) at positions (bodies, 3), skipping the pairs (i, j), i < j, where skipped[i, j] "
             "(bodies, bodies) is nonzero.");
  planar.def("closest_points", &closest_points, py::arg("points_a"), py::arg("points_b"),
             "(distance, point_a, point_b, corners_a, corners_b, overlapping) of the convex hulls of points_a "
             "(k, 2) and points_b (l, 2), by GJK.");
  py::class_<PlanarModel, std::shared_ptr<PlanarModel>>(
      planar, "Model", "A planar scene: shapes, bodies, joints and the step's settings.")
      .def(
          py::init(&make_model), py::arg("shapes"), py::arg("mass"), py::arg("inertia"), py::arg("inertia_per_mass"),
          py::arg("restitution"), py::arg("friction"), py::arg("joint_kind"), py::arg("joint_bodies"),
          py::arg("joint_anchors"), py::arg("joint_angle"), py::arg("joint_axis"), py::arg("joint_value"),
          py::arg("skipped"), py::arg("gravity"), py::arg("dt"), py::arg("margin"), py::arg("tol"),
          py::arg("penetration_tolerance"), py::arg("post_stabilization"), py::arg("max_halvings"),
          "inertia_per_mass (bodies,): ∂inertia/∂mass (the shape's inertia per unit mass, 0 where the inertia is "
          "given). Joints: kind (J,) 0 hinge, 1 fixed, 2 axis; bodies (J, 2) (−1: the world); anchors (J, 4) anchor_a, "
          "anchor_b; angle, axis (0 angle, 1 x, 2 y), value (J,) each. skipped (bodies, bodies): pairs (i, j), "
          "i < j, not tested for contact.");
  planar.def("contacts", &model_contacts, py::arg("model"), py::arg("positions"),
             "The contacts at positions (bodies, 3) as detect_contacts returns them.");
  planar.def("equality_rows", &equality_rows, py::arg("model"), py::arg("positions"),
             "(J_e (rows, 3 bodies), the joints' position errors (rows,)) at positions (bodies, 3).");
  planar.def("dynamics_lcp", &dynamics_lcp, py::arg("model"), py::arg("positions"), py::arg("velocities"),
             py::arg("forces"),
             "The dynamics LCP (M, q, A, G, F, h), its Jacobians (J_e, J_c, J_f), mu, k, rubbing and its contacts, "
             "as a dict.");
  planar.def("step", &step, py::arg("model"), py::arg("positions"), py::arg("velocities"), py::arg("forces"),
             "One step from positions, velocities, forces (bodies, 3) (forces None: none): dynamics_lcp's dict "
             "with positions, velocities, dt, solution, stabilization (None where none was solved) and native (the "
             "StepData step_vjp takes).");
  planar.def("step_batch", &step_batch, py::arg("model"), py::arg("positions"), py::arg("velocities"),
             py::arg("forces"), py::arg("threads"),
             "step of B scenes (B, bodies, 3) on up to `threads` threads without the GIL: a list of step's dicts.");
  py::class_<PlanarStepRecord, StepRecord>(
      planar, "StepData",
      "A step's native data, which its backward pass (step_vjp) reuses, and the model it was taken in.");
  planar.def("step_vjp", &step_vjp, py::arg("step"), py::arg("positions"), py::arg("velocities"),
             py::arg("grad_velocities"), py::arg("grad_positions"),
             "Cotangents (velocities, forces (bodies, 3), mass, inertia, restitution, friction (bodies,), anchors "
             "(joints, 2, 2), positions (bodies, 3)) of the step `step` (a StepData) from positions, velocities "
             "(bodies, 3), its inputs, and grad_velocities, grad_positions (bodies, 3) of its results (None: zero), "
             "without the GIL. numpy.linalg.LinAlgError where the KKT matrix is singular.");
  planar.def("step_batch_vjp", &step_batch_vjp, py::arg("steps"), py::arg("positions"), py::arg("velocities"),
             py::arg("grad_velocities"), py::arg("grad_positions"), py::arg("threads"),
             "step_vjp of B steps (B, bodies, 3 arrays) on up to `threads` threads without the GIL: its tuple with a "
             "leading axis B on each array.");
}
