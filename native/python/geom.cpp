// Python bindings of DCOL proximity (dcol._native, re-exported by dcol.geom): shapes, proximity of
// one pair and of batches, its derivatives. Argument checks that are cheap and concern memory safety
// live here; the Python layer validates shapes' geometry.
#include <pybind11/native_enum.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/parallel.hpp"
#include "geometry/proximity.hpp"
#include "geometry/proximity_kernels.hpp"
#include "python/bindings.hpp"
#include "python/geometry_arguments.hpp"

namespace py = pybind11;
using namespace dcol;
using namespace dcol::conic;
using namespace dcol::geometry;
using namespace dcol::python;

namespace {

ProximityResult proximity_single(py::handle a, py::handle r_a, py::handle q_a, py::handle b, py::handle r_b,
                                 py::handle q_b, const SolverSettings& settings) {
  const Shape& sa = as_shape(a, "a");
  const Shape& sb = as_shape(b, "b");
  const Pose pa = as_pose(r_a, q_a, "r_a", "q_a"), pb = as_pose(r_b, q_b, "r_b", "q_b");
  ProximityResult out;
  proximity_kernels().run_one(sa, &pa, sb, &pb, settings, &out, DerivativeOutput{});
  return out;
}

// Sets the Python error of the exception being handled, for the functions Python calls directly.
void set_python_error() {
  try {
    throw;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
  }
}

// dcol.geom.ProximityResult: a plain CPython type holding the struct. A pybind11 class would add its
// own allocation and an entry in pybind11's registry of instances, made and removed, to every call,
// a noticeable share of one. Its arrays are made when read.
struct ResultObject {
  PyObject_HEAD
  ProximityResult value;
};
static_assert(std::is_trivially_destructible_v<ProximityResult>, "freed without its destructor");

PyTypeObject* result_type = nullptr;  // made when the module loads (bind_result_type)

PyObject* new_result(const ProximityResult& value) {
  ResultObject* object = PyObject_New(ResultObject, result_type);
  if (object) new (&object->value) ProximityResult(value);
  return reinterpret_cast<PyObject*>(object);
}

const ProximityResult& result_of(PyObject* self) { return reinterpret_cast<ResultObject*>(self)->value; }

template <double (ProximityResult::*vector)[3]>
PyObject* result_vector(PyObject* self, void*) {
  try {
    return copy3(result_of(self).*vector).release().ptr();
  } catch (...) {
    set_python_error();
    return nullptr;
  }
}

PyObject* result_status(PyObject* self, void*) {
  try {
    return py::cast(result_of(self).status).release().ptr();
  } catch (...) {
    set_python_error();
    return nullptr;
  }
}

PyObject* result_repr(PyObject* self) {
  try {
    const ProximityResult& r = result_of(self);
    // Six significant digits as dcol.printing's reprs (std::to_string would print a small distance as
    // 0.000000), and the status by name.
    auto number = [](double v) { return std::string(py::str("{:.6g}").format(v)); };
    const std::string status = py::str(py::cast(r.status).attr("name"));
    const std::string text = "ProximityResult(alpha=" + number(r.alpha) + ", distance=" + number(r.distance) +
                             ", status=Status." + status + ", iterations=" + std::to_string(r.iterations) + ")";
    return PyUnicode_FromString(text.c_str());
  } catch (...) {
    set_python_error();
    return nullptr;
  }
}

// Each field's doc starts with its type, "type: description", which the stub of the module reads.
PyGetSetDef result_fields[] = {
    {"alpha", [](PyObject* self, void*) { return PyFloat_FromDouble(result_of(self).alpha); }, nullptr,
     "float: minimum uniform scaling α", nullptr},
    {"x", result_vector<&ProximityResult::x>, nullptr,
     "ndarray: (3,) intersection point of the scaled shapes, world frame", nullptr},
    {"p_a", result_vector<&ProximityResult::p_a>, nullptr, "ndarray: (3,) contact point on shape a, DCOL eq. 29",
     nullptr},
    {"p_b", result_vector<&ProximityResult::p_b>, nullptr, "ndarray: (3,) contact point on shape b, DCOL eq. 29",
     nullptr},
    {"distance", [](PyObject* self, void*) { return PyFloat_FromDouble(result_of(self).distance); }, nullptr,
     "float: ‖p_a − p_b‖, DCOL eq. 30", nullptr},
    {"normal", result_vector<&ProximityResult::normal>, nullptr,
     "ndarray: (3,) unit normal of the separating plane at x, from a to b (zero when α = 0)", nullptr},
    {"status", result_status, nullptr, "Status: the outcome of the solve", nullptr},
    {"iterations", [](PyObject* self, void*) { return PyLong_FromLong(result_of(self).iterations); }, nullptr,
     "int: interior-point iterations", nullptr},
    {"converged", [](PyObject* self, void*) { return PyBool_FromLong(result_of(self).status == SolveStatus::solved); },
     nullptr, "bool: status is SOLVED", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

// A result's fields in a flat tuple, the state pickle keeps: α, x, p_a, p_b, distance, normal, status,
// iterations.
py::tuple result_state(const ProximityResult& r) {
  py::tuple state(16);
  int k = 0;
  state[k++] = r.alpha;
  for (const double* vector : {r.x, r.p_a, r.p_b})
    for (int i = 0; i < 3; ++i) state[k++] = vector[i];
  state[k++] = r.distance;
  for (int i = 0; i < 3; ++i) state[k++] = r.normal[i];
  state[k++] = static_cast<int>(r.status);
  state[k++] = r.iterations;
  return state;
}

ProximityResult result_from_state(const py::tuple& state) {
  if (state.size() != 16) throw py::value_error("a ProximityResult's state must hold 16 values");
  ProximityResult r;
  int k = 0;
  r.alpha = state[k++].cast<double>();
  for (double* vector : {r.x, r.p_a, r.p_b})
    for (int i = 0; i < 3; ++i) vector[i] = state[k++].cast<double>();
  r.distance = state[k++].cast<double>();
  for (int i = 0; i < 3; ++i) r.normal[i] = state[k++].cast<double>();
  const int status = state[k++].cast<int>();
  if (status < 0 || status > static_cast<int>(SolveStatus::smoothed))
    throw py::value_error("a ProximityResult's state holds an unknown status");
  r.status = static_cast<SolveStatus>(status);
  r.iterations = state[k++].cast<int>();
  return r;
}

// dcol._native.proximity_result_from_state, which __reduce__ names; held for the process, as the type is.
PyObject* result_rebuild = nullptr;

PyObject* result_reduce(PyObject* self, PyObject*) {
  try {
    return py::make_tuple(py::handle(result_rebuild), py::make_tuple(result_state(result_of(self)))).release().ptr();
  } catch (...) {
    set_python_error();
    return nullptr;
  }
}

PyMethodDef result_methods[] = {{"__reduce__", result_reduce, METH_NOARGS, "Pickles the result as its fields."},
                                {nullptr, nullptr, 0, nullptr}};

void bind_result_type(py::module_& m) {
  static PyType_Slot slots[] = {{Py_tp_doc, const_cast<char*>("Result of dcol.geom.proximity (DCOL §III).")},
                                {Py_tp_getset, result_fields},
                                {Py_tp_methods, result_methods},
                                {Py_tp_repr, reinterpret_cast<void*>(result_repr)},
                                {0, nullptr}};
  static PyType_Spec spec{"dcol.geom.ProximityResult", sizeof(ResultObject), 0,
                          Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, slots};
  result_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&spec));
  if (!result_type) throw py::error_already_set();
  m.add_object("ProximityResult", py::handle(reinterpret_cast<PyObject*>(result_type)));
  m.def(
      "proximity_result_from_state",
      [](const py::tuple& state) { return py::reinterpret_steal<py::object>(new_result(result_from_state(state))); },
      py::arg("state"), "The ProximityResult of a pickled state (ProximityResult.__reduce__).");
  result_rebuild = py::object(m.attr("proximity_result_from_state")).release().ptr();
}

// dcol.geom.proximity itself (geom/proximity.py re-exports it): called through CPython's vectorcall
// protocol rather than pybind11's dispatcher, whose argument matching is a measurable part of a call
// this short, and more so with settings as a keyword. This is the function Python code calls once per
// pair.
PyObject* proximity_vectorcall(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  try {
    constexpr int kPositional = 6;  // then settings, keyword only
    static constexpr const char* names[] = {"a", "r_a", "q_a", "b", "r_b", "q_b", "settings"};
    if (nargs > kPositional)
      throw py::type_error("proximity() takes 6 positional arguments but " + std::to_string(nargs) + " were given");
    py::handle values[kPositional + 1];
    std::copy(args, args + nargs, values);
    const Py_ssize_t keywords = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    // The names as interned strings: Python interns the keyword names in its code, so a keyword is
    // usually one of these very objects, and comparing pointers is cheaper than comparing the text.
    static const std::array<PyObject*, kPositional + 1> interned = [] {
      std::array<PyObject*, kPositional + 1> strings;
      for (int i = 0; i <= kPositional; ++i) strings[i] = PyUnicode_InternFromString(names[i]);
      return strings;
    }();
    for (Py_ssize_t k = 0; k < keywords; ++k) {
      const py::handle name = PyTuple_GET_ITEM(kwnames, k);
      auto index = std::find(interned.begin(), interned.end(), name.ptr()) - interned.begin();
      if (index > kPositional)
        index = std::find_if(std::begin(names), std::end(names),
                             [&](const char* candidate) {
                               return PyUnicode_CompareWithASCIIString(name.ptr(), candidate) == 0;
                             }) -
                std::begin(names);
      if (index > kPositional)
        throw py::type_error("proximity() got an unexpected keyword argument " + std::string(py::repr(name)));
      py::handle& value = values[index];
      if (value) throw py::type_error("proximity() got multiple values for argument " + std::string(py::repr(name)));
      value = args[nargs + k];
    }
    for (int i = 0; i < kPositional; ++i)
      if (!values[i]) throw py::type_error(std::string("proximity() missing required argument '") + names[i] + "'");
    static const SolverSettings defaults;
    const py::handle settings = values[kPositional];
    const SolverSettings* chosen = !settings || settings.is_none() ? &defaults : bound_object<SolverSettings>(settings);
    if (!chosen)
      throw py::type_error("settings must be a dcol.solvers.SolverSettings or None, got " +
                           std::string(py::str(py::type::of(settings))));
    return new_result(proximity_single(values[0], values[1], values[2], values[3], values[4], values[5], *chosen));
  } catch (...) {
    set_python_error();
    return nullptr;
  }
}

// The first line is the signature Python's inspect reads (__text_signature__).
constexpr const char* kProximityDoc = R"(proximity(a, r_a, q_a, b, r_b, q_b, *, settings=None)
--

Minimum scaling α of shapes a and b at their body poses, with contact information.

Parameters
----------
a, b : dcol.geom shapes.
r_a, r_b : (3,) body positions.
q_a, q_b : (4,) quaternions ``[w, x, y, z]`` (any nonzero norm) or (3, 3) rotation matrices.
settings : dcol.solvers.SolverSettings, optional tolerances and iteration limit.

Returns
-------
ProximityResult with ``alpha`` (float), ``x`` (3,), ``p_a`` (3,), ``p_b`` (3,),
``distance`` (float, DCOL eq. 30: ‖p_a − p_b‖, measured along the line of the origins and positive
under penetration too, so not a signed distance: use α to tell penetration),
``normal`` (3,) unit vector from a to b (zero when α = 0),
``status`` (dcol.solvers.Status), ``iterations`` (int), ``converged`` (bool).
Outputs are always finite; a solve that did not converge says so in ``status``.)";

DerivativeRequest as_request(int code) {
  if (code < 0 || code > static_cast<int>(DerivativeRequest::contact))
    throw py::value_error(
        "request must be 0 (values), 1 (gradient of α), 2 (Jacobian of x and α) or 3 (also the contact points, "
        "distance and normal)");
  return static_cast<DerivativeRequest>(code);
}

// Derivatives with barrier = 0 are the exact problem's (exact_kkt.hpp).
bool exact_derivatives(DerivativeRequest request, const SolverSettings& settings) {
  return request != DerivativeRequest::none && settings.barrier == 0.0;
}

// Proximity of N pose pairs, with derivatives when asked (request: DerivativeRequest).
py::dict proximity_batch(py::handle a, py::handle r_a, py::handle q_a, py::handle b, py::handle r_b, py::handle q_b,
                         const SolverSettings& settings, int threads, int request_code,
                         const std::string& parameterization_name) {
  const DerivativeRequest request = as_request(request_code);
  PairBatch batch(a, r_a, q_a, b, r_b, q_b, threads, parameterization_name, request != DerivativeRequest::none);
  const py::ssize_t n = batch.n, cols = batch.columns;

  py::array_t<double> alpha(n), distance(n);
  py::array_t<double> x({n, py::ssize_t(3)}), p_a({n, py::ssize_t(3)}), p_b({n, py::ssize_t(3)}),
      normal({n, py::ssize_t(3)});
  py::array_t<int8_t> status(n);
  py::array_t<int32_t> iterations(n);
  double *alpha_d = alpha.mutable_data(), *distance_d = distance.mutable_data(), *x_d = x.mutable_data(),
         *pa_d = p_a.mutable_data(), *pb_d = p_b.mutable_data(), *normal_d = normal.mutable_data();
  int8_t* status_d = status.mutable_data();
  int32_t* iterations_d = iterations.mutable_data();
  // Jacobians: d_alpha (N, P) with any request; with jacobian and contact also d_x (N, 3, P); with
  // contact also d_p_a, d_p_b, d_normal (N, 3, P) and d_distance (N, P).
  const bool with_x = request == DerivativeRequest::jacobian || request == DerivativeRequest::contact;
  const bool contact = request == DerivativeRequest::contact;
  auto rows = [&](bool wanted) { return wanted ? n : py::ssize_t(0); };
  py::array_t<double> d_alpha({rows(request != DerivativeRequest::none), cols}), d_distance({rows(contact), cols});
  py::array_t<double> d_x({rows(with_x), py::ssize_t(3), cols}), d_p_a({rows(contact), py::ssize_t(3), cols}),
      d_p_b({rows(contact), py::ssize_t(3), cols}), d_normal({rows(contact), py::ssize_t(3), cols});
  double *d_alpha_d = d_alpha.mutable_data(), *d_distance_d = d_distance.mutable_data(), *d_x_d = d_x.mutable_data(),
         *d_pa_d = d_p_a.mutable_data(), *d_pb_d = d_p_b.mutable_data(), *d_normal_d = d_normal.mutable_data();

  auto store = [&](py::ssize_t i, const ProximityResult& res, const ProximityJacobian& jac) {
    alpha_d[i] = res.alpha;
    distance_d[i] = res.distance;
    std::copy(res.x, res.x + 3, x_d + 3 * i);
    std::copy(res.p_a, res.p_a + 3, pa_d + 3 * i);
    std::copy(res.p_b, res.p_b + 3, pb_d + 3 * i);
    std::copy(res.normal, res.normal + 3, normal_d + 3 * i);
    status_d[i] = static_cast<int8_t>(res.status);
    iterations_d[i] = res.iterations;
    if (request == DerivativeRequest::none) return;
    double Omega[2][3][4];
    if (!batch.orientation_maps(i, Omega)) status_d[i] = static_cast<int8_t>(SolveStatus::numerical_error);
    const Parameterization param = batch.param;
    convert_row(jac.alpha, param, Omega, d_alpha_d + cols * i);
    if (!with_x) return;
    for (int r = 0; r < 3; ++r) convert_row(jac.x[r], param, Omega, d_x_d + cols * (3 * i + r));
    if (!contact) return;
    convert_row(jac.distance, param, Omega, d_distance_d + cols * i);
    for (int r = 0; r < 3; ++r) {
      const py::ssize_t offset = cols * (3 * i + r);
      convert_row(jac.p_a[r], param, Omega, d_pa_d + offset);
      convert_row(jac.p_b[r], param, Omega, d_pb_d + offset);
      convert_row(jac.normal[r], param, Omega, d_normal_d + offset);
    }
  };
  // Exact derivatives go one pose pair at a time.
  const bool exact = exact_derivatives(request, settings);
  const bool lanes =
      batch.shapes_a.size() == 1 && batch.shapes_b.size() == 1 && !exact && fits_lanes(batch.a(0), batch.b(0));
  const ProximityKernels& kernel = proximity_kernels();
  auto work = [&](py::ssize_t begin, py::ssize_t end) {
    Pose posea[kMaxKernelLanes], poseb[kMaxKernelLanes];
    ProximityResult res[kMaxKernelLanes];
    ProximityJacobian jac[kMaxKernelLanes];
    const DerivativeOutput deriv{request, jac, {nullptr, nullptr}, exact};
    py::ssize_t i = begin;
    if (lanes) {  // whole groups of lanes, then the rest one by one
      for (; i + kernel.lanes <= end; i += kernel.lanes) {
        for (int k = 0; k < kernel.lanes; ++k) batch.load(i + k, posea[k], poseb[k]);
        kernel.run_lanes(batch.a(0), posea, batch.b(0), poseb, settings, res, deriv);
        for (int k = 0; k < kernel.lanes; ++k) store(i + k, res[k], jac[k]);
      }
    }
    for (; i < end; ++i) {
      batch.load(i, posea[0], poseb[0]);
      kernel.run_one(batch.a(i), posea, batch.b(i), poseb, settings, res, deriv);
      store(i, res[0], jac[0]);
    }
  };
  {
    py::gil_scoped_release release;
    parallel_chunks(n, threads, kMaxKernelLanes, work);  // whole lane groups per chunk
  }
  batch.raise_if_invalid();

  py::dict out;
  out["alpha"] = alpha;
  out["x"] = x;
  out["p_a"] = p_a;
  out["p_b"] = p_b;
  out["distance"] = distance;
  out["normal"] = normal;
  out["status"] = status;
  out["iterations"] = iterations;
  if (request != DerivativeRequest::none) out["d_alpha"] = d_alpha;
  if (with_x) out["d_x"] = d_x;
  if (contact) {
    out["d_p_a"] = d_p_a;
    out["d_p_b"] = d_p_b;
    out["d_distance"] = d_distance;
    out["d_normal"] = d_normal;
  }
  return out;
}

// The derivatives of one pose pair (request ≥ gradient) without the batch's (N, …) arrays and dict,
// whose allocations cost more than the solve: a tuple in the field order of dcol.geom.derivatives'
// ProximityGradient, ProximityJacobian or ContactJacobian.
py::tuple proximity_derivatives(py::handle a, py::handle r_a, py::handle q_a, py::handle b, py::handle r_b,
                                py::handle q_b, const SolverSettings& settings, int request_code,
                                const std::string& parameterization_name) {
  const DerivativeRequest request = as_request(request_code);
  if (request == DerivativeRequest::none) throw py::value_error("request must ask for derivatives (1, 2 or 3)");
  const Shape& sa = as_shape(a, "a");
  const Shape& sb = as_shape(b, "b");
  const Array qa = as_orientation_array(q_a, "q_a"), qb = as_orientation_array(q_b, "q_b");  // kept for Omega
  const Pose pa = as_pose(r_a, qa, "r_a", "q_a"), pb = as_pose(r_b, qb, "r_b", "q_b");
  const Parameterization param = as_parameterization(parameterization_name);
  check_orientations_for(param, parameterization_name, qa.ndim() == 1, qb.ndim() == 1, "(4,)");
  ProximityResult res;
  ProximityJacobian jac;
  const DerivativeOutput deriv{request, &jac, {nullptr, nullptr}, exact_derivatives(request, settings)};
  proximity_kernels().run_one(sa, &pa, sb, &pb, settings, &res, deriv);

  double Omega[2][3][4];
  if (param != Parameterization::rigid) {
    const bool finite_a = orientation_map(param, qa.data(), Omega[0]);
    if (!(orientation_map(param, qb.data(), Omega[1]) && finite_a)) res.status = SolveStatus::numerical_error;
  }
  const py::ssize_t cols = 2 * (3 + orientation_columns(param));
  // rows[0 … count) in the parameterization's columns, as a (count, cols) array, or (cols,) for one
  auto converted = [&](std::initializer_list<const double*> rows) {
    py::array_t<double> out =
        rows.size() == 1 ? py::array_t<double>(cols) : py::array_t<double>({py::ssize_t(rows.size()), cols});
    double* to = out.mutable_data();
    for (const double* row : rows) {
      convert_row(row, param, Omega, to);
      to += cols;
    }
    return out;
  };
  const py::object status = py::cast(res.status);
  if (request == DerivativeRequest::gradient)
    return py::make_tuple(res.alpha, converted({jac.alpha}), status, res.iterations);
  if (request == DerivativeRequest::jacobian)
    return py::make_tuple(res.alpha, copy3(res.x), converted({jac.x[0], jac.x[1], jac.x[2], jac.alpha}), status,
                          res.iterations);
  auto three = [&](const double (*rows)[12]) { return converted({rows[0], rows[1], rows[2]}); };
  return py::make_tuple(res.alpha, copy3(res.x), copy3(res.p_a), copy3(res.p_b), res.distance, copy3(res.normal),
                        converted({jac.alpha}), three(jac.x), three(jac.p_a), three(jac.p_b), converted({jac.distance}),
                        three(jac.normal), status, res.iterations);
}

// The native side trusts the Python shapes' geometry checks but not array sizes.
void check_faces(const Array& normals, const Array& offsets, int dim) {
  const py::ssize_t m = offsets.size();
  if (offsets.ndim() != 1 || normals.ndim() != 2 || normals.shape(0) != m || normals.shape(1) != dim || m < 1 ||
      m > kMaxFaces)
    throw py::value_error("face arrays of the wrong shape or more than " + std::to_string(kMaxFaces) + " faces");
}

// A polytope's vertices or a polygon's corners: (k, dim), k ≥ dim + 1.
void set_vertices(Shape& s, const Array& vertices, int dim) {
  if (vertices.ndim() != 2 || vertices.shape(1) != dim || vertices.shape(0) < dim + 1)
    throw py::value_error("vertices must have shape (k, " + std::to_string(dim) + ") with k > " + std::to_string(dim));
  s.num_vertices = static_cast<int>(vertices.shape(0));
  s.vertices.assign(vertices.data(), vertices.data() + vertices.size());
}

void check_matrix3(const Array& M) {
  if (M.ndim() != 2 || M.shape(0) != 3 || M.shape(1) != 3) throw py::value_error("expected a 3x3 matrix");
}

Shape round_shape(ShapeKind kind, double R, double L) {
  Shape s;
  s.kind = kind;
  s.R = R;
  s.L = L;
  return s;
}

void copy_matrix3(const Array& M, double (*out)[3]) {
  check_matrix3(M);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) out[i][j] = M.data()[3 * i + j];
}

// Derivatives of (x, α) with respect to both shapes' parameters at one pose pair (shape_parameter_row).
py::dict shape_parameter_jacobian(py::handle a, py::handle r_a, py::handle q_a, py::handle b, py::handle r_b,
                                  py::handle q_b, const SolverSettings& settings) {
  const Shape& sa = as_shape(a, "a");
  const Shape& sb = as_shape(b, "b");
  const Pose pa = as_pose(r_a, q_a, "r_a", "q_a"), pb = as_pose(r_b, q_b, "r_b", "q_b");
  py::array_t<double> jac_a({py::ssize_t(4), py::ssize_t(shape_parameter_count(sa))});
  py::array_t<double> jac_b({py::ssize_t(4), py::ssize_t(shape_parameter_count(sb))});
  ProximityResult res;
  ProximityJacobian pose_jacobian;
  const DerivativeRequest request = DerivativeRequest::jacobian;
  const DerivativeOutput deriv{
      request, &pose_jacobian, {jac_a.mutable_data(), jac_b.mutable_data()}, exact_derivatives(request, settings)};
  proximity_kernels().run_one(sa, &pa, sb, &pb, settings, &res, deriv);
  py::dict out;
  out["alpha"] = res.alpha;
  out["x"] = copy3(res.x);
  out["status"] = res.status;
  out["iterations"] = res.iterations;
  out["a"] = jac_a;
  out["b"] = jac_b;
  return out;
}

}  // namespace

void dcol::python::bind_geom(py::module_& m) {
  m.attr("MAX_FACES") = kMaxFaces;

  // Shapes are made by the Python classes of dcol.geom, which validate the geometry first.
  py::class_<Shape>(m, "Shape")
      .def_static("polytope",
                  [](const Array& A, const Array& b, const Array& vertices) {
                    check_faces(A, b, 3);
                    Shape s;
                    s.kind = ShapeKind::polytope;
                    s.num_faces = static_cast<int>(b.shape(0));
                    s.normals.assign(A.data(), A.data() + A.size());
                    s.offsets.assign(b.data(), b.data() + b.size());
                    set_vertices(s, vertices, 3);
                    mark_box(s);
                    index_polytope(s);
                    return s;
                  })
      .def_static("capsule", [](double R, double L) { return round_shape(ShapeKind::capsule, R, L); })
      .def_static("cylinder", [](double R, double L) { return round_shape(ShapeKind::cylinder, R, L); })
      .def_static("cone",
                  [](double H, double tan_beta) {
                    Shape s;
                    s.kind = ShapeKind::cone;
                    s.H = H;
                    s.tan_beta = tan_beta;
                    return s;
                  })
      .def_static("sphere", [](double R) { return round_shape(ShapeKind::sphere, R, 0.0); })
      .def_static("ellipsoid",
                  [](const Array& U) {
                    Shape s;
                    s.kind = ShapeKind::ellipsoid;
                    copy_matrix3(U, s.U);
                    return s;
                  })
      .def_static("polygon",
                  [](const Array& C, const Array& d, double R, const Array& corners) {
                    check_faces(C, d, 2);
                    Shape s;
                    s.kind = ShapeKind::polygon;
                    s.R = R;
                    s.num_faces = static_cast<int>(d.shape(0));
                    s.normals.assign(C.data(), C.data() + C.size());
                    s.offsets.assign(d.data(), d.data() + d.size());
                    set_vertices(s, corners, 2);
                    return s;
                  })
      .def("set_frame", [](Shape& s, double length_scale, const Array& offset_r, const Array& offset_Q) {
        if (offset_r.size() != 3) throw py::value_error("offset_r must have 3 entries");
        s.length_scale = length_scale;
        std::copy(offset_r.data(), offset_r.data() + 3, s.offset_r);
        copy_matrix3(offset_Q, s.offset_Q.m);
        s.has_offset = false;
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j) s.has_offset |= s.offset_Q.m[i][j] != (i == j ? 1.0 : 0.0);
        for (int i = 0; i < 3; ++i) s.has_offset |= s.offset_r[i] != 0.0;
      });

  bind_result_type(m);
  m.def(
      "proximity_kernel_info",
      []() {
        const ProximityKernels& kernels = proximity_kernels();
        return py::make_tuple(kernels.name, kernels.lanes);
      },
      "(name, lanes) of the proximity kernels this processor runs: the instruction sets they are compiled for "
      "and how many pose pairs a batch solves at once.");

  m.def(
      "rotation_matrix",
      [](py::handle q, const std::string& name) {
        const Mat3 Q = as_orientation(q, name.c_str());
        py::array_t<double> out({py::ssize_t(3), py::ssize_t(3)});
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j) out.mutable_at(i, j) = Q.m[i][j];
        return out;
      },
      py::arg("q"), py::arg("name"));
  m.def(
      "orientation_array", [](py::handle q, const std::string& name) { return as_orientation_array(q, name.c_str()); },
      py::arg("q"), py::arg("name"),
      "q as a float64 array, a scipy Rotation as its quaternions [w, x, y, z]; shape and values unchecked.");
  // CPython calls a METH_FASTCALL | METH_KEYWORDS function with its own signature; void (*)() is
  // the cast GCC accepts between function pointer types.
  static PyMethodDef proximity_method{"proximity",
                                      reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(proximity_vectorcall)),
                                      METH_FASTCALL | METH_KEYWORDS, kProximityDoc};
  PyObject* proximity = PyCFunction_NewEx(&proximity_method, nullptr, py::str("dcol.geom").ptr());
  if (!proximity) throw py::error_already_set();
  m.add_object("proximity", py::reinterpret_steal<py::object>(proximity));
  m.def("proximity_batch", &proximity_batch, py::arg("a"), py::arg("r_a"), py::arg("q_a"), py::arg("b"), py::arg("r_b"),
        py::arg("q_b"), py::arg("settings"), py::arg("threads"), py::arg("request") = 0,
        py::arg("parameterization") = "rigid");
  m.def("proximity_derivatives", &proximity_derivatives, py::arg("a"), py::arg("r_a"), py::arg("q_a"), py::arg("b"),
        py::arg("r_b"), py::arg("q_b"), py::arg("settings"), py::arg("request"), py::arg("parameterization"));
  m.def("shape_parameter_jacobian", &shape_parameter_jacobian, py::arg("a"), py::arg("r_a"), py::arg("q_a"),
        py::arg("b"), py::arg("r_b"), py::arg("q_b"), py::arg("settings"));
}
