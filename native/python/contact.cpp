// Python bindings of contact geometry: signed distances and their derivatives.
#include <pybind11/native_enum.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <string>
#include <vector>

#include "contact/broadphase.hpp"
#include "contact/contacts.hpp"
#include "core/parallel.hpp"
#include "geometry/distance.hpp"
#include "geometry/gjk.hpp"
#include "python/bindings.hpp"
#include "python/geometry_arguments.hpp"

namespace py = pybind11;
using namespace dcol;
using namespace dcol::conic;
using namespace dcol::geometry;
using namespace dcol::contact;
using namespace dcol::python;

namespace {

// Signed distances of N pose pairs (one shape pair or N of them), with derivatives when asked.
py::dict distance_batch(py::handle a, py::handle r_a, py::handle q_a, py::handle b, py::handle r_b, py::handle q_b,
                        const SolverSettings& settings, int threads, bool with_jacobian,
                        const std::string& parameterization_name) {
  PairBatch batch(a, r_a, q_a, b, r_b, q_b, threads, parameterization_name, with_jacobian);
  const py::ssize_t n = batch.n, cols = batch.columns;
  const py::ssize_t jac_rows = with_jacobian ? n : 0;

  py::array_t<double> distance(n), alpha(n);
  py::array_t<double> p_a({n, py::ssize_t(3)}), p_b({n, py::ssize_t(3)}), normal({n, py::ssize_t(3)});
  py::array_t<int8_t> status(n);
  py::array_t<int32_t> iterations(n);
  py::array_t<double> d_distance({jac_rows, cols});
  py::array_t<double> d_p_a({jac_rows, py::ssize_t(3), cols}), d_p_b({jac_rows, py::ssize_t(3), cols}),
      d_normal({jac_rows, py::ssize_t(3), cols});
  double *distance_d = distance.mutable_data(), *alpha_d = alpha.mutable_data(), *pa_d = p_a.mutable_data(),
         *pb_d = p_b.mutable_data(), *normal_d = normal.mutable_data(), *d_distance_d = d_distance.mutable_data(),
         *d_pa_d = d_p_a.mutable_data(), *d_pb_d = d_p_b.mutable_data(), *d_normal_d = d_normal.mutable_data();
  int8_t* status_d = status.mutable_data();
  int32_t* iterations_d = iterations.mutable_data();

  auto work = [&](py::ssize_t begin, py::ssize_t end) {
    for (py::ssize_t i = begin; i < end; ++i) {
      Pose pose_a, pose_b;
      if (!batch.load(i, pose_a, pose_b)) continue;
      DistanceResult res;
      DistanceJacobian jac;
      signed_distance(batch.a(i), pose_a, batch.b(i), pose_b, settings, res, with_jacobian ? &jac : nullptr);
      distance_d[i] = res.distance;
      alpha_d[i] = res.alpha;
      std::copy(res.p_a, res.p_a + 3, pa_d + 3 * i);
      std::copy(res.p_b, res.p_b + 3, pb_d + 3 * i);
      std::copy(res.normal, res.normal + 3, normal_d + 3 * i);
      status_d[i] = static_cast<int8_t>(res.status);
      iterations_d[i] = res.iterations;
      if (!with_jacobian) continue;
      double Omega[2][3][4];
      if (!batch.orientation_maps(i, Omega)) status_d[i] = static_cast<int8_t>(SolveStatus::numerical_error);
      const Parameterization param = batch.param;
      convert_row(jac.distance, param, Omega, d_distance_d + cols * i);
      for (int r = 0; r < 3; ++r) {
        const py::ssize_t offset = cols * (3 * i + r);
        convert_row(jac.p_a[r], param, Omega, d_pa_d + offset);
        convert_row(jac.p_b[r], param, Omega, d_pb_d + offset);
        convert_row(jac.normal[r], param, Omega, d_normal_d + offset);
      }
    }
  };
  {
    py::gil_scoped_release release;
    parallel_chunks(n, threads, 1, work);
  }
  batch.raise_if_invalid();
  py::dict out;
  out["distance"] = distance;
  out["p_a"] = p_a;
  out["p_b"] = p_b;
  out["normal"] = normal;
  out["alpha"] = alpha;
  out["status"] = status;
  out["iterations"] = iterations;
  if (with_jacobian) {
    out["d_distance"] = d_distance;
    out["d_p_a"] = d_p_a;
    out["d_p_b"] = d_p_b;
    out["d_normal"] = d_normal;
  }
  return out;
}

// World support point of a shape at a body pose along direction u.
py::array_t<double> support(py::handle shape, py::handle r, py::handle q, py::handle u) {
  const Shape& sh = as_shape(shape, "shape");
  const Pose pose = as_pose(r, q, "r", "q");
  const Array direction = as_vector3(u, "direction");
  const double* d = direction.data();
  if (d[0] == 0.0 && d[1] == 0.0 && d[2] == 0.0) throw py::value_error("direction must be nonzero");
  double out[3];
  support_point(sh, shape_frame(sh, pose), d, out);
  return copy3(out);
}

double checked_margin(double margin) {
  if (!(margin >= 0.0 && std::isfinite(margin)))
    throw py::value_error("margin must be finite and >= 0, got " + std::to_string(margin));
  return margin;
}

ContactSettings checked_contact_settings(double margin, double feature_tolerance) {
  checked_margin(margin);
  if (!(feature_tolerance > 0.0 && feature_tolerance <= 0.1))
    throw py::value_error("feature_tolerance must be in (0, 0.1], got " + std::to_string(feature_tolerance));
  return {margin, feature_tolerance};
}

// Contacts between shapes a and b at one pose pair: arrays of K contacts (and their derivatives).
py::dict pair_contacts_py(py::handle a, py::handle r_a, py::handle q_a, py::handle b, py::handle r_b, py::handle q_b,
                          double margin, double feature_tolerance, bool derivatives, const SolverSettings& settings) {
  const Shape& sa = as_shape(a, "a");
  const Shape& sb = as_shape(b, "b");
  const Pose pa = as_pose(r_a, q_a, "r_a", "q_a"), pb = as_pose(r_b, q_b, "r_b", "q_b");
  const ContactSettings cs = checked_contact_settings(margin, feature_tolerance);
  Contact contacts[kMaxPairContacts];
  std::vector<ContactDerivatives> deriv(derivatives ? kMaxPairContacts : 0);
  int count;
  SolveStatus status;
  {
    py::gil_scoped_release release;
    count = pair_contacts(sa, pa, sb, pb, cs, settings, contacts, derivatives ? deriv.data() : nullptr, &status);
  }
  py::dict out = contact_arrays(contacts, derivatives ? deriv.data() : nullptr, count);
  out["status"] = status;
  return out;
}

// Signed distance of two shapes by GJK/EPA on their cores (geometry/gjk.hpp), without the cone program.
py::dict gjk_distance_py(py::handle a, py::handle r_a, py::handle q_a, py::handle b, py::handle r_b, py::handle q_b) {
  const Pose pa = as_pose(r_a, q_a, "r_a", "q_a"), pb = as_pose(r_b, q_b, "r_b", "q_b");
  Core core_a, core_b;
  if (!shape_core(as_shape(a, "a"), pa, core_a))
    throw py::value_error("a has no GJK core (a point set inflated by a radius, or a support function)");
  if (!shape_core(as_shape(b, "b"), pb, core_b))
    throw py::value_error("b has no GJK core (a point set inflated by a radius, or a support function)");
  GjkDistance result;
  gjk_distance(core_a, core_b, result);
  py::dict out;
  out["distance"] = result.distance;
  out["p_a"] = copy3(result.p_a);
  out["p_b"] = copy3(result.p_b);
  out["normal"] = copy3(result.normal);
  out["converged"] = result.converged;
  return out;
}

// The signed distance and DCOL's α of two shapes with cores by GJK/EPA and the GJK ray cast
// (gjk_signed_distance), with their derivatives along the bodies' rigid motions; None where
// they cannot answer.
py::object gjk_distance_jacobian_py(py::handle a, py::handle r_a, py::handle q_a, py::handle b, py::handle r_b,
                                    py::handle q_b) {
  const Pose pa = as_pose(r_a, q_a, "r_a", "q_a"), pb = as_pose(r_b, q_b, "r_b", "q_b");
  DistanceResult result;
  DistanceJacobian jac;
  if (!gjk_signed_distance(as_shape(a, "a"), pa, as_shape(b, "b"), pb, result, &jac)) return py::none();
  auto row = [](const double* values) {
    py::array_t<double> out(12);
    std::copy_n(values, 12, out.mutable_data());
    return out;
  };
  auto rows = [](const double (*values)[12]) {
    py::array_t<double> out({py::ssize_t(3), py::ssize_t(12)});
    for (int i = 0; i < 3; ++i) std::copy_n(values[i], 12, out.mutable_data() + 12 * i);
    return out;
  };
  py::dict out;
  out["alpha"] = result.alpha;
  out["distance"] = result.distance;
  out["p_a"] = copy3(result.p_a);
  out["p_b"] = copy3(result.p_b);
  out["normal"] = copy3(result.normal);
  out["d_alpha"] = row(jac.alpha);
  out["d_distance"] = row(jac.distance);
  out["d_p_a"] = rows(jac.p_a);
  out["d_p_b"] = rows(jac.p_b);
  out["d_normal"] = rows(jac.normal);
  return out;
}

// DCOL's α of two shapes with point-set cores by the GJK ray cast (gjk_alpha), with its gradient along
// the bodies' rigid motions; None where it cannot answer.
py::object gjk_alpha_py(py::handle a, py::handle r_a, py::handle q_a, py::handle b, py::handle r_b, py::handle q_b) {
  const Pose pa = as_pose(r_a, q_a, "r_a", "q_a"), pb = as_pose(r_b, q_b, "r_b", "q_b");
  DistanceResult result;
  py::array_t<double> gradient(12);
  if (!gjk_alpha(as_shape(a, "a"), pa, as_shape(b, "b"), pb, result, gradient.mutable_data())) return py::none();
  py::dict out;
  out["alpha"] = result.alpha;
  out["d_alpha"] = gradient;
  out["iterations"] = result.iterations;
  return out;
}

// Body poses of a scene, checked: (B, 3) positions and (B, 4) quaternions or (B, 3, 3) matrices.
std::vector<Pose> scene_poses(py::handle r, py::handle q) {
  const PoseArrays arrays = as_pose_arrays(r, q, "r", "q");
  std::vector<Pose> poses(arrays.r.shape(0));
  for (size_t i = 0; i < poses.size(); ++i)
    if (!arrays.get(static_cast<py::ssize_t>(i), poses[i]))
      throw py::value_error("pose " + std::to_string(i) + ": r must be finite and q" + kOrientationRule);
  return poses;
}

// The shapes of a scene and the body of each (indices into the poses).
struct SceneShapes {
  std::vector<const Shape*> shapes;
  std::vector<int> body;
};

SceneShapes scene_shapes(py::handle shapes, const py::array_t<int64_t, py::array::c_style | py::array::forcecast>& body,
                         size_t num_bodies) {
  SceneShapes out;
  out.shapes = as_shape_list(shapes, "shapes", body.size());
  if (body.ndim() != 1) throw py::value_error("body must be a 1-D integer array");
  for (py::ssize_t i = 0; i < body.size(); ++i) {
    const int64_t b = body.data()[i];
    if (b < 0 || static_cast<size_t>(b) >= num_bodies)
      throw py::value_error("body[" + std::to_string(i) + "] = " + std::to_string(b) + " is not a body index");
    out.body.push_back(static_cast<int>(b));
  }
  return out;
}

// Candidate shape pairs (K, 2) whose bounding boxes, grown by margin, overlap; with the boxes.
py::tuple broadphase(py::handle shapes, const py::array_t<int64_t, py::array::c_style | py::array::forcecast>& body,
                     py::handle r, py::handle q, double margin) {
  checked_margin(margin);
  const std::vector<Pose> poses = scene_poses(r, q);
  const SceneShapes scene = scene_shapes(shapes, body, poses.size());
  std::vector<Box3> boxes(scene.shapes.size());
  std::vector<std::pair<int, int>> pairs;
  {
    py::gil_scoped_release release;
    for (size_t i = 0; i < boxes.size(); ++i)
      boxes[i] = bounding_box(*scene.shapes[i], poses[scene.body[i]], 0.5 * margin);
    pairs = sweep_and_prune(boxes);
  }
  py::array_t<int64_t> out({py::ssize_t(pairs.size()), py::ssize_t(2)});
  for (size_t k = 0; k < pairs.size(); ++k) {
    out.mutable_at(k, 0) = pairs[k].first;
    out.mutable_at(k, 1) = pairs[k].second;
  }
  py::array_t<double> lower({py::ssize_t(boxes.size()), py::ssize_t(3)}),
      upper({py::ssize_t(boxes.size()), py::ssize_t(3)});
  for (size_t i = 0; i < boxes.size(); ++i)
    for (int k = 0; k < 3; ++k) {
      lower.mutable_at(i, k) = boxes[i].lower[k];
      upper.mutable_at(i, k) = boxes[i].upper[k];
    }
  return py::make_tuple(out, lower, upper);
}

// Contacts of the given shape pairs (K, 2) of a scene, concatenated, with the pair of each contact.
py::dict scene_contacts(py::handle shapes, const py::array_t<int64_t, py::array::c_style | py::array::forcecast>& body,
                        py::handle r, py::handle q,
                        const py::array_t<int64_t, py::array::c_style | py::array::forcecast>& pairs, double margin,
                        double feature_tolerance, bool derivatives, const SolverSettings& settings, int threads) {
  const std::vector<Pose> poses = scene_poses(r, q);
  const SceneShapes scene = scene_shapes(shapes, body, poses.size());
  if (pairs.ndim() != 2 || pairs.shape(1) != 2) throw py::value_error("pairs must have shape (K, 2)");
  const py::ssize_t k = pairs.shape(0);
  for (py::ssize_t i = 0; i < 2 * k; ++i)
    if (pairs.data()[i] < 0 || static_cast<size_t>(pairs.data()[i]) >= scene.shapes.size())
      throw py::value_error("pairs must hold shape indices");
  if (threads < 1) throw py::value_error("threads must be at least 1");
  const ContactSettings cs = checked_contact_settings(margin, feature_tolerance);
  // Each pair's contacts in its own list (most pairs have none or a few); gathered after the join.
  std::vector<std::vector<Contact>> found(k);
  std::vector<std::vector<ContactDerivatives>> found_derivatives(derivatives ? k : 0);
  std::vector<SolveStatus> statuses(k, SolveStatus::solved);
  auto work = [&](py::ssize_t begin, py::ssize_t end) {
    std::vector<Contact> scratch(kMaxPairContacts);
    std::vector<ContactDerivatives> scratch_derivatives(derivatives ? kMaxPairContacts : 0);
    for (py::ssize_t i = begin; i < end; ++i) {
      const int sa = static_cast<int>(pairs.data()[2 * i]), sb = static_cast<int>(pairs.data()[2 * i + 1]);
      const int count =
          pair_contacts(*scene.shapes[sa], poses[scene.body[sa]], *scene.shapes[sb], poses[scene.body[sb]], cs,
                        settings, scratch.data(), derivatives ? scratch_derivatives.data() : nullptr, &statuses[i]);
      found[i].assign(scratch.begin(), scratch.begin() + count);
      if (derivatives) found_derivatives[i].assign(scratch_derivatives.begin(), scratch_derivatives.begin() + count);
    }
  };
  {
    py::gil_scoped_release release;
    parallel_chunks(k, threads, 1, work);
  }
  std::vector<Contact> all;
  std::vector<ContactDerivatives> all_derivatives;
  std::vector<int64_t> pair_index;
  for (py::ssize_t i = 0; i < k; ++i) {
    all.insert(all.end(), found[i].begin(), found[i].end());
    pair_index.insert(pair_index.end(), found[i].size(), i);
    if (derivatives)
      all_derivatives.insert(all_derivatives.end(), found_derivatives[i].begin(), found_derivatives[i].end());
  }
  py::array_t<int64_t> pair_of(pair_index.size());
  std::copy(pair_index.begin(), pair_index.end(), pair_of.mutable_data());
  py::dict out = contact_arrays(all.data(), derivatives ? all_derivatives.data() : nullptr, all.size());
  out["pair"] = pair_of;
  SolveStatus status = SolveStatus::solved;
  for (const SolveStatus pair_status : statuses) status = worse(status, pair_status);
  out["status"] = status;
  return out;
}

}  // namespace

py::dict dcol::python::contact_arrays(const Contact* contacts, const ContactDerivatives* deriv, py::ssize_t count) {
  auto vectors = [&](auto member) {
    py::array_t<double> out({count, py::ssize_t(3)});
    for (py::ssize_t k = 0; k < count; ++k)
      std::copy(contacts[k].*member, (contacts[k].*member) + 3, out.mutable_data(k, 0));
    return out;
  };
  py::array_t<double> separation(count);
  py::array_t<int8_t> rule(count);
  for (py::ssize_t k = 0; k < count; ++k) {
    separation.mutable_data()[k] = contacts[k].separation;
    rule.mutable_data()[k] = static_cast<int8_t>(contacts[k].rule);
  }
  py::dict out;
  out["point"] = vectors(&Contact::point);
  out["normal"] = vectors(&Contact::normal);
  out["tangent1"] = vectors(&Contact::tangent1);
  out["tangent2"] = vectors(&Contact::tangent2);
  out["separation"] = separation;
  out["rule"] = rule;
  if (!deriv) return out;
  auto jacobians = [&](auto member) {
    py::array_t<double> out_d({count, py::ssize_t(3), py::ssize_t(12)});
    for (py::ssize_t k = 0; k < count; ++k)
      for (int i = 0; i < 3; ++i)
        std::copy((deriv[k].*member)[i], (deriv[k].*member)[i] + 12, out_d.mutable_data(k, i, 0));
    return out_d;
  };
  py::array_t<double> d_separation({count, py::ssize_t(12)});
  for (py::ssize_t k = 0; k < count; ++k)
    std::copy(deriv[k].separation, deriv[k].separation + 12, d_separation.mutable_data(k, 0));
  out["d_point"] = jacobians(&ContactDerivatives::point);
  out["d_normal"] = jacobians(&ContactDerivatives::normal);
  out["d_tangent1"] = jacobians(&ContactDerivatives::tangent1);
  out["d_tangent2"] = jacobians(&ContactDerivatives::tangent2);
  out["d_separation"] = d_separation;
  return out;
}

void dcol::python::bind_contact(py::module_& m) {
  py::native_enum<ContactRule>(m, "ContactRule", "enum.IntEnum", "How a contact's point and normal are defined.")
      .value("POINT_POINT", ContactRule::point_point)
      .value("POINT_EDGE", ContactRule::point_edge)
      .value("EDGE_POINT", ContactRule::edge_point)
      .value("EDGE_EDGE", ContactRule::edge_edge)
      .value("POINT_FACE", ContactRule::point_face)
      .value("FACE_POINT", ContactRule::face_point)
      .value("DISTANCE", ContactRule::distance)
      .finalize();
  m.def("contacts", &pair_contacts_py, py::arg("a"), py::arg("r_a"), py::arg("q_a"), py::arg("b"), py::arg("r_b"),
        py::arg("q_b"), py::arg("margin"), py::arg("feature_tolerance"), py::arg("derivatives"), py::arg("settings"));
  m.def("distance_batch", &distance_batch, py::arg("a"), py::arg("r_a"), py::arg("q_a"), py::arg("b"), py::arg("r_b"),
        py::arg("q_b"), py::arg("settings"), py::arg("threads"), py::arg("jacobian"), py::arg("parameterization"));
  m.def("gjk_distance", &gjk_distance_py, py::arg("a"), py::arg("r_a"), py::arg("q_a"), py::arg("b"), py::arg("r_b"),
        py::arg("q_b"),
        "Signed distance, witness points and normal (from a to b) of two shapes by GJK (apart) and EPA\n"
        "(overlapping: the minimum translation distance), cylinders, cones and ellipsoids by their support\n"
        "functions to a tolerance, and whether it converged (not for overlapping flat cores, such as two\n"
        "capsules).");
  m.def("gjk_distance_jacobian", &gjk_distance_jacobian_py, py::arg("a"), py::arg("r_a"), py::arg("q_a"), py::arg("b"),
        py::arg("r_b"), py::arg("q_b"),
        "Signed distance (GJK/EPA) and DCOL's alpha (by a GJK ray cast) of two polytopes, spheres,\n"
        "capsules or polygons, with their derivatives along rigid motions [dp_a, dtheta_a, dp_b, dtheta_b]\n"
        "(d_alpha, d_distance (12,), d_p_a, d_p_b, d_normal (3, 12)); None where GJK/EPA cannot answer.");
  m.def("gjk_alpha", &gjk_alpha_py, py::arg("a"), py::arg("r_a"), py::arg("q_a"), py::arg("b"), py::arg("r_b"),
        py::arg("q_b"),
        "DCOL's alpha of two polytopes, spheres, capsules or polygons by a GJK ray cast, with its derivatives\n"
        "along rigid motions [dp_a, dtheta_a, dp_b, dtheta_b] (d_alpha (12,)) and the ray cast's iterations;\n"
        "None for other shapes or where it cannot answer.");
  m.def("broadphase", &broadphase, py::arg("shapes"), py::arg("body"), py::arg("r"), py::arg("q"), py::arg("margin"));
  m.def("scene_contacts", &scene_contacts, py::arg("shapes"), py::arg("body"), py::arg("r"), py::arg("q"),
        py::arg("pairs"), py::arg("margin"), py::arg("feature_tolerance"), py::arg("derivatives"), py::arg("settings"),
        py::arg("threads"));
  m.def("support", &support, py::arg("shape"), py::arg("r"), py::arg("q"), py::arg("direction"));
}
