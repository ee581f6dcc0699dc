// Argument conversion shared by the bindings of the rigid-body algorithms (python/dynamics.cpp)
// and of the simulation (python/simulation.cpp): the model a Python Model holds, and states.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/rotations.hpp"
#include "dynamics/model.hpp"

namespace dcol::python {

using dyn::Data;
using dyn::JointKind;
using dyn::Model;

namespace py = pybind11;

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;
using IndexArray = py::array_t<int, py::array::c_style | py::array::forcecast>;

// A model with the Data that one-state calls use under the GIL.
struct BoundModel {
  Model model;
  std::unique_ptr<Data> data;
  explicit BoundModel(Model m) : model(std::move(m)), data(std::make_unique<Data>(model)) {}
};

// One state (ndim 1) or a batch (ndim 2) of `width` finite numbers per row.
struct Rows {
  Array array;
  py::ssize_t count = 1;
  bool batched = false;
  const double* row(py::ssize_t n) const { return array.data() + n * array.shape(array.ndim() - 1); }
};

inline std::string width_rule(const char* name, py::ssize_t width, const char* symbol) {
  return std::string(name) + " must have shape (" + symbol + ",) or (N, " + symbol + ") with " + symbol + " = " +
         std::to_string(width);
}

inline Rows rows(py::handle obj, py::ssize_t width, const char* name, const char* symbol) {
  Rows r;
  r.array = Array::ensure(obj);
  if (!r.array) throw py::type_error(std::string(name) + " must be an array of real numbers");
  const py::ssize_t ndim = r.array.ndim();
  if ((ndim != 1 && ndim != 2) || r.array.shape(ndim - 1) != width) {
    std::string got = "(";
    for (py::ssize_t d = 0; d < ndim; ++d) got += (d ? ", " : "") + std::to_string(r.array.shape(d));
    throw py::value_error(width_rule(name, width, symbol) + ", got " + got + (ndim == 1 ? ",)" : ")"));
  }
  r.batched = ndim == 2;
  r.count = r.batched ? r.array.shape(0) : 1;
  const double* x = r.array.data();
  for (py::ssize_t i = 0; i < r.array.size(); ++i)
    if (!std::isfinite(x[i])) throw py::value_error(std::string(name) + " must be finite (no NaN or inf)");
  return r;
}

inline Rows configuration(const Model& model, py::handle obj) {
  Rows q = rows(obj, model.nq, "q", "nq");
  for (py::ssize_t n = 0; n < q.count; ++n)
    for (int i = 0; i < model.nbodies(); ++i)
      if (model.kind[i] == JointKind::floating) {
        const double* quaternion = q.row(n) + model.q_index[i] + 3;
        if (!(quaternion_norm(quaternion) > 0.0))
          throw py::value_error("q: the floating joint's quaternion must be nonzero");
      }
  return q;
}

// A joint-space vector matching q's batch.
inline Rows tangent(const Model& model, const Rows& q, py::handle obj, const char* name) {
  Rows x = rows(obj, model.nv, name, "nv");
  if (x.batched != q.batched || x.count != q.count)
    throw py::value_error(std::string(name) + " must have shape (nv,) with q (nq,), or (N, nv) with q (N, nq)");
  return x;
}

// An output array with q's batch axis (none for one state) followed by `shape`.
inline Array output(const Rows& q, std::vector<py::ssize_t> shape) {
  if (q.batched) shape.insert(shape.begin(), q.count);
  return Array(shape);
}

}  // namespace dcol::python
