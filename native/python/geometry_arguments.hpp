// Argument conversion shared by the geometry bindings (python/module.cpp, python/contact.cpp): arrays,
// poses, shapes, and the parameterizations of pose derivatives.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <atomic>
#include <cmath>
#include <string>
#include <vector>

#include "core/rotations.hpp"
#include "geometry/primitives.hpp"
#include "geometry/proximity_types.hpp"

namespace dcol::python {

using geometry::Pose;
using geometry::Shape;

namespace py = pybind11;

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

// numpy's spelling of an array shape: (3,) or (2, 3).
inline std::string shape_string(const Array& a) {
  std::string s = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s += (i > 0 ? ", " : "") + std::to_string(a.shape(i));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

inline Array as_array(py::handle obj, const char* name) {
  // A C-contiguous float64 array is used as is; numpy's general conversion costs about as much as a
  // small solve.
  if (Array::check_(obj)) return py::reinterpret_borrow<Array>(obj);
  // In its own dtype first: numpy's cast to float64 would drop imaginary parts with a warning at most.
  const py::array as_given = py::array::ensure(obj);
  if (as_given && as_given.dtype().kind() == 'c')
    throw py::type_error(std::string(name) + " must be an array of real numbers, got complex ones");
  Array arr = Array::ensure(as_given ? py::handle(as_given) : obj);
  if (!arr)
    throw py::type_error(std::string(name) + " must be an array of real numbers, got " +
                         std::string(py::str(py::type::of(obj))));
  return arr;
}

inline Array as_vector3(py::handle obj, const char* name) {
  Array a = as_array(obj, name);
  if (a.ndim() != 1 || a.shape(0) != 3)
    throw py::value_error(std::string(name) + " must have shape (3,), got " + shape_string(a));
  for (int i = 0; i < 3; ++i)
    if (!std::isfinite(a.data()[i])) throw py::value_error(std::string(name) + " must be finite (no NaN or inf)");
  return a;
}

inline const char* const kOrientationRule =
    " must be a quaternion [w, x, y, z] (finite, nonzero), a 3x3 rotation matrix (orthonormal, det +1) or a scipy "
    "Rotation";

// Whether obj is a scipy.spatial.transform.Rotation. Its class is looked up once that module is loaded:
// before, no object can be one, and importing it here would only slow the calls that pass numbers.
inline bool is_scipy_rotation(py::handle obj) {
  static PyObject* rotation_class = nullptr;  // kept for the process, as the module keeps it
  if (!rotation_class) {
    const py::object module =
        py::reinterpret_steal<py::object>(PyImport_GetModule(py::str("scipy.spatial.transform").ptr()));
    if (!module) {
      if (PyErr_Occurred()) throw py::error_already_set();
      return false;
    }
    rotation_class = py::object(module.attr("Rotation")).release().ptr();
  }
  const int found = PyObject_IsInstance(obj.ptr(), rotation_class);
  if (found < 0) throw py::error_already_set();
  return found == 1;
}

// An orientation argument as an array: a scipy Rotation (one or N) becomes its quaternions, reordered
// from scipy's [x, y, z, w] to dcol's [w, x, y, z], so that the quaternion parameterizations of the
// derivatives apply to it as to any quaternion; anything else is taken as numbers.
inline Array as_orientation_array(py::handle obj, const char* name) {
  if (Array::check_(obj) || !is_scipy_rotation(obj)) return as_array(obj, name);
  const Array xyzw = as_array(obj.attr("as_quat")(), name);
  Array wxyz(std::vector<py::ssize_t>(xyzw.shape(), xyzw.shape() + xyzw.ndim()));
  const double* from = xyzw.data();
  double* to = wxyz.mutable_data();
  for (py::ssize_t i = 0; i < xyzw.size() / 4; ++i, from += 4, to += 4) {
    to[0] = from[3];
    std::copy(from, from + 3, to + 1);
  }
  return wxyz;
}

inline Mat3 as_orientation(py::handle obj, const char* name) {
  Array a = as_orientation_array(obj, name);
  Mat3 Q;
  const bool ok = (a.ndim() == 1 && a.shape(0) == 4)                      ? quaternion_to_matrix(a.data(), Q)
                  : (a.ndim() == 2 && a.shape(0) == 3 && a.shape(1) == 3) ? rotation_matrix(a.data(), Q)
                                                                          : false;
  if (ok) return Q;
  // A quaternion or matrix of the right shape failed on its values: show them, not the shape.
  const bool right_shape = (a.ndim() == 1 && a.shape(0) == 4) || (a.ndim() == 2 && a.shape(0) == 3 && a.shape(1) == 3);
  const std::string got = right_shape ? std::string(py::repr(obj)) : "shape " + shape_string(a);
  throw py::value_error(std::string(name) + kOrientationRule + ", got " + got);
}

// The T that obj holds if it is a pybind11-bound T, else nullptr. T's type record is found once:
// py::isinstance and cast would look it up in a hash table on every call.
template <class T>
const T* bound_object(py::handle obj) {
  static const py::detail::type_info* const type = py::detail::get_type_info(typeid(T));
  py::detail::type_caster_generic caster(type);
  return caster.load(obj, false) ? static_cast<const T*>(caster.value) : nullptr;
}

inline const Shape& as_shape(py::handle obj, const char* name) {
  // The name is made once (and kept for the process: no destructor after the interpreter is gone); a
  // name built per call costs a string and a lookup.
  static const py::handle native_attribute = py::str("_native").release();
  const Shape* shape = bound_object<Shape>(py::getattr(obj, native_attribute, py::none()));
  if (!shape)
    throw py::type_error(std::string(name) + " must be a dcol.geom shape, got " +
                         std::string(py::str(py::type::of(obj))));
  return *shape;
}

// One shape for all N pairs, or a sequence of N shapes.
inline std::vector<const Shape*> as_shape_list(py::handle obj, const char* name, py::ssize_t n) {
  if (py::hasattr(obj, "_native")) return {&as_shape(obj, name)};
  if (!py::isinstance<py::sequence>(obj) || py::isinstance<py::str>(obj))
    throw py::type_error(std::string(name) + " must be a dcol.geom shape or a sequence of them");
  py::sequence seq = obj.cast<py::sequence>();
  if (static_cast<py::ssize_t>(seq.size()) != n)
    throw py::value_error(std::string(name) + " has " + std::to_string(seq.size()) + " shapes but there are " +
                          std::to_string(n) + " poses");
  std::vector<const Shape*> out;
  out.reserve(n);
  for (py::handle item : seq) out.push_back(&as_shape(item, name));
  return out;
}

// Poses as (N, 3) positions and (N, 4) quaternions or (N, 3, 3) rotation matrices.
struct PoseArrays {
  Array r, q;
  bool quaternion;
  bool get(py::ssize_t i, Pose& pose) const {
    const double* ri = r.data() + 3 * i;
    for (int k = 0; k < 3; ++k) {
      if (!std::isfinite(ri[k])) return false;
      pose.r[k] = ri[k];
    }
    return quaternion ? quaternion_to_matrix(q.data() + 4 * i, pose.Q) : rotation_matrix(q.data() + 9 * i, pose.Q);
  }
};

// n: the number of poses, or −1 to take it from r.
inline PoseArrays as_pose_arrays(py::handle r_obj, py::handle q_obj, const char* r_name, const char* q_name,
                                 py::ssize_t n = -1) {
  PoseArrays p{as_array(r_obj, r_name), as_orientation_array(q_obj, q_name), true};
  if (p.r.ndim() != 2 || p.r.shape(1) != 3)
    throw py::value_error(std::string(r_name) + " must have shape (N, 3), got " + shape_string(p.r));
  if (n < 0) n = p.r.shape(0);
  if (p.r.shape(0) != n)
    throw py::value_error(std::string(r_name) + " has " + std::to_string(p.r.shape(0)) + " rows but r_a has " +
                          std::to_string(n));
  if (p.q.ndim() == 2 && p.q.shape(0) == n && p.q.shape(1) == 4)
    p.quaternion = true;
  else if (p.q.ndim() == 3 && p.q.shape(0) == n && p.q.shape(1) == 3 && p.q.shape(2) == 3)
    p.quaternion = false;
  else
    throw py::value_error(std::string(q_name) + " must have shape (N, 4) or (N, 3, 3) with N = " + std::to_string(n) +
                          ", got " + shape_string(p.q));
  return p;
}

// One pose: r (3,) and a quaternion or rotation matrix.
inline Pose as_pose(py::handle r, py::handle q, const char* r_name, const char* q_name) {
  Pose pose;
  const Array position = as_vector3(r, r_name);
  std::copy(position.data(), position.data() + 3, pose.r);
  pose.Q = as_orientation(q, q_name);
  return pose;
}

// Orientation coordinates of the derivatives (docs/conventions.md): rigid δθ (3), raw quaternion components
// (4, through the normalization) or modified Rodrigues parameters (3).
enum class Parameterization { rigid, quaternion, mrp };

inline Parameterization as_parameterization(const std::string& name) {
  if (name == "rigid") return Parameterization::rigid;
  if (name == "quaternion") return Parameterization::quaternion;
  if (name == "mrp") return Parameterization::mrp;
  throw py::value_error("parameterization must be 'quaternion', 'mrp' or 'rigid', got '" + name + "'");
}

inline int orientation_columns(Parameterization p) { return p == Parameterization::quaternion ? 4 : 3; }

// "quaternion" and "mrp" columns are derivatives along the given quaternions' coordinates.
inline void check_orientations_for(Parameterization p, const std::string& name, bool quaternion_a, bool quaternion_b,
                                   const char* quaternion_shape) {
  if (p != Parameterization::rigid && !(quaternion_a && quaternion_b))
    throw py::value_error("parameterization '" + name + "' needs q_a and q_b as quaternions " + quaternion_shape +
                          "; use 'rigid' with rotation matrices");
}

// Omega of orientation_map below.
inline void orientation_map_values(Parameterization p, const double* q, double Omega[3][4]) {
  const double norm = quaternion_norm(q);
  double u[4];
  for (int i = 0; i < 4; ++i) u[i] = q[i] / norm;
  auto quaternion_rate = [](const double* unit, double scale, double E[3][4]) {
    const double w = unit[0], x = unit[1], y = unit[2], z = unit[3];
    const double rows[3][4] = {{-x, w, -z, y}, {-y, z, w, -x}, {-z, -y, x, w}};
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) E[i][j] = scale * rows[i][j];
  };
  if (p == Parameterization::quaternion) {
    // E(q̂) q̂ = 0, so the normalization's projection drops out: ω = (2/‖q‖) E(q̂) dq.
    quaternion_rate(u, 2.0 / norm, Omega);
    return;
  }
  // MRP p = v/(1 + w) with w ≥ 0; q(p) = [1 − pᵀp, 2p]/(1 + pᵀp).
  if (u[0] < 0.0)
    for (double& c : u) c = -c;
  const double mrp[3] = {u[1] / (1.0 + u[0]), u[2] / (1.0 + u[0]), u[3] / (1.0 + u[0])};
  const double s = mrp[0] * mrp[0] + mrp[1] * mrp[1] + mrp[2] * mrp[2];
  double dq[4][3];  // ∂q/∂p
  for (int j = 0; j < 3; ++j) {
    dq[0][j] = -4.0 * mrp[j] / ((1.0 + s) * (1.0 + s));
    for (int i = 0; i < 3; ++i)
      dq[1 + i][j] = (i == j ? 2.0 / (1.0 + s) : 0.0) - 4.0 * mrp[i] * mrp[j] / ((1.0 + s) * (1.0 + s));
  }
  double E[3][4];
  quaternion_rate(u, 2.0, E);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      Omega[i][j] = 0.0;
      for (int k = 0; k < 4; ++k) Omega[i][j] += E[i][k] * dq[k][j];
    }
}

// ω = Omega dθ: the world angular velocity of a change dθ of the orientation coordinates at q (raw
// quaternion [w, x, y, z]). For a unit quaternion, ω = 2 [−v, w I + [v]×] dq. False when Omega is not
// finite: the raw components' map scales as 1/‖q‖, which no double holds for ‖q‖ near 1e-308.
inline bool orientation_map(Parameterization p, const double* q, double Omega[3][4]) {
  orientation_map_values(p, q, Omega);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < orientation_columns(p); ++j)
      if (!std::isfinite(Omega[i][j])) return false;
  return true;
}

// Writes one Jacobian row given for rigid motions (12 columns) in the parameterization's columns:
// [position (3), orientation (3 or 4)] per body.
inline void convert_row(const double* rigid, Parameterization p, const double (*Omega)[3][4], double* out) {
  const int k = orientation_columns(p);
  for (int s = 0; s < 2; ++s) {
    double* block = out + s * (3 + k);
    for (int i = 0; i < 3; ++i) block[i] = rigid[6 * s + i];
    for (int j = 0; j < k; ++j) {
      double v = 0.0;
      for (int i = 0; i < 3; ++i)
        v += rigid[6 * s + 3 + i] * (p == Parameterization::rigid ? (i == j) : Omega[s][i][j]);
      block[3 + j] = v;
    }
  }
}

inline py::array_t<double> copy3(const double* v) {
  py::array_t<double> a(3);
  std::copy(v, v + 3, a.mutable_data());
  return a;
}

// The arguments of a batch over N pose pairs, checked: poses, shapes (one pair, or N of each), the
// parameterization of derivative columns; and the first invalid pose met by the worker threads.
struct PairBatch {
  PoseArrays pa;
  py::ssize_t n;
  PoseArrays pb;
  std::vector<const Shape*> shapes_a, shapes_b;
  Parameterization param;
  py::ssize_t columns;                 // of a derivative row: [position, orientation] of a, then of b
  std::atomic<py::ssize_t> first_bad;  // n while every pose loaded is valid

  PairBatch(py::handle a, py::handle r_a, py::handle q_a, py::handle b, py::handle r_b, py::handle q_b, int threads,
            const std::string& parameterization_name, bool with_derivatives)
      : pa(as_pose_arrays(r_a, q_a, "r_a", "q_a")),
        n(pa.r.shape(0)),
        pb(as_pose_arrays(r_b, q_b, "r_b", "q_b", n)),
        shapes_a(as_shape_list(a, "a", n)),
        shapes_b(as_shape_list(b, "b", n)),
        param(as_parameterization(parameterization_name)),
        columns(2 * (3 + orientation_columns(param))),
        first_bad(n) {
    if (threads < 1) throw py::value_error("threads must be at least 1");
    if (with_derivatives) check_orientations_for(param, parameterization_name, pa.quaternion, pb.quaternion, "(N, 4)");
  }

  const Shape& a(py::ssize_t i) const { return *shapes_a[shapes_a.size() == 1 ? 0 : i]; }
  const Shape& b(py::ssize_t i) const { return *shapes_b[shapes_b.size() == 1 ? 0 : i]; }

  // Pose pair i; if it is invalid, records it and gives identity poses (a solvable stand-in).
  bool load(py::ssize_t i, Pose& pose_a, Pose& pose_b) {
    if (pa.get(i, pose_a) && pb.get(i, pose_b)) return true;
    py::ssize_t current = first_bad.load();
    while (i < current && !first_bad.compare_exchange_weak(current, i)) {
    }
    pose_a = pose_b = Pose{{0.0, 0.0, 0.0}, {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}}};
    return false;
  }

  // Pair i's maps from world angular velocity to its orientation coordinates (for convert_row).
  // Both poses' maps (orientation_map); false when one is not finite.
  bool orientation_maps(py::ssize_t i, double Omega[2][3][4]) const {
    if (param == Parameterization::rigid) return true;
    const bool finite_a = orientation_map(param, pa.q.data() + 4 * i, Omega[0]);
    return orientation_map(param, pb.q.data() + 4 * i, Omega[1]) && finite_a;
  }

  // After the workers join: the first invalid pose as an error.
  void raise_if_invalid() const {
    if (first_bad.load() < n)
      throw py::value_error("pose " + std::to_string(first_bad.load()) + ": r_a, r_b must be finite and q_a, q_b" +
                            kOrientationRule);
  }
};

}  // namespace dcol::python
