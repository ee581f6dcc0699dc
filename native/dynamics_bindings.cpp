// Python bindings of the rigid-body algorithms (dcol._native.dynamics). Every function takes a batch
// of states as (N, nq) / (N, nv) arrays, runs the native loop with the GIL released on up to
// `threads` threads, each with its own Data, and returns arrays with a leading N axis. The Python
// layer (dcol.dynamics) validates values; the checks here guard memory only.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "dynamics/aba_derivatives.hpp"
#include "dynamics/kinematics.hpp"
#include "parallel.hpp"

namespace py = pybind11;
using namespace dcol;
using namespace dcol::dyn;

namespace {

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;
using IndexArray = py::array_t<int, py::array::c_style | py::array::forcecast>;

// A C-contiguous (N, width) array; N must equal `count` unless count < 0.
Array batch_rows(py::handle obj, py::ssize_t width, py::ssize_t count, const char* name) {
  Array a = Array::ensure(obj);
  if (!a || a.ndim() != 2 || a.shape(1) != width || (count >= 0 && a.shape(0) != count))
    throw py::value_error(std::string(name) + " must have shape (N, " + std::to_string(width) + ")" +
                          (count >= 0 ? " with N = " + std::to_string(count) : std::string()));
  return a;
}

Array output(std::vector<py::ssize_t> shape) { return Array(shape); }

Transform transform_at(const Array& R, const Array& p, py::ssize_t i) {
  Transform X;
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) X.R.m[r][c] = R.at(i, r, c);
  }
  X.p = {p.at(i, 0), p.at(i, 1), p.at(i, 2)};
  return X;
}

Model build_model(const IndexArray& parent, const IndexArray& kind, const Array& placement_R, const Array& placement_p,
                  const Array& axis, const Array& mass, const Array& com, const Array& rot_inertia,
                  const IndexArray& frame_body, const Array& frame_R, const Array& frame_p, const Array& gravity) {
  const py::ssize_t nb = parent.size(), nf = frame_body.size();
  auto expect = [](const py::array& a, std::vector<py::ssize_t> shape, const char* name) {
    bool ok = a.ndim() == static_cast<py::ssize_t>(shape.size());
    for (size_t d = 0; ok && d < shape.size(); ++d) ok = a.shape(d) == shape[d];
    if (!ok) throw py::value_error(std::string(name) + " has the wrong shape");
  };
  expect(kind, {nb}, "kind");
  expect(placement_R, {nb, 3, 3}, "placement_R");
  expect(placement_p, {nb, 3}, "placement_p");
  expect(axis, {nb, 3}, "axis");
  expect(mass, {nb}, "mass");
  expect(com, {nb, 3}, "com");
  expect(rot_inertia, {nb, 3, 3}, "rot_inertia");
  expect(frame_R, {nf, 3, 3}, "frame_R");
  expect(frame_p, {nf, 3}, "frame_p");
  expect(gravity, {3}, "gravity");
  Model model;
  model.gravity = {gravity.at(0), gravity.at(1), gravity.at(2)};
  for (py::ssize_t i = 0; i < nb; ++i) {
    if (parent.at(i) >= i || parent.at(i) < -1) throw py::value_error("parent must precede each body");
    if (kind.at(i) < 0 || kind.at(i) > 2) throw py::value_error("unknown joint kind code");
    Inertia inertia{mass.at(i), {com.at(i, 0), com.at(i, 1), com.at(i, 2)}, {}};
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) inertia.rot.m[r][c] = rot_inertia.at(i, r, c);
    model.add_body(parent.at(i), static_cast<JointKind>(kind.at(i)), transform_at(placement_R, placement_p, i),
                   {axis.at(i, 0), axis.at(i, 1), axis.at(i, 2)}, inertia);
  }
  for (py::ssize_t f = 0; f < nf; ++f) {
    if (frame_body.at(f) < -1 || frame_body.at(f) >= nb) throw py::value_error("frame_body out of range");
    model.frame_body.push_back(frame_body.at(f));
    model.frame_placement.push_back(transform_at(frame_R, frame_p, f));
  }
  return model;
}

// Runs body(data, n) for every state n of the batch.
template <class Body>
void for_each_state(const Model& model, py::ssize_t count, int threads, const Body& body) {
  if (threads < 1) throw py::value_error("threads must be at least 1");
  py::gil_scoped_release release;
  parallel_chunks(count, threads, 1, [&](std::ptrdiff_t begin, std::ptrdiff_t end) {
    Data data(model);
    for (std::ptrdiff_t n = begin; n < end; ++n) body(data, n);
  });
}

int checked_frame(const Model& model, int frame) {
  if (frame < 0 || frame >= static_cast<int>(model.frame_body.size())) throw py::value_error("frame out of range");
  return frame;
}

}  // namespace

void bind_dynamics(py::module_& root) {
  py::module_ m = root.def_submodule("dynamics", "Native rigid-body algorithms (world-axes recursions).");
  py::class_<Model>(m, "Model")
      .def(py::init(&build_model), py::arg("parent"), py::arg("kind"), py::arg("placement_R"), py::arg("placement_p"),
           py::arg("axis"), py::arg("mass"), py::arg("com"), py::arg("rot_inertia"), py::arg("frame_body"),
           py::arg("frame_R"), py::arg("frame_p"), py::arg("gravity"))
      .def_readonly("nq", &Model::nq)
      .def_readonly("nv", &Model::nv)
      .def_property_readonly("nbodies", &Model::nbodies);

  m.def(
      "frame_poses",
      [](const Model& model, py::handle q_in, const std::vector<int>& frames, int threads) {
        const Array q = batch_rows(q_in, model.nq, -1, "q");
        const py::ssize_t N = q.shape(0), F = static_cast<py::ssize_t>(frames.size());
        for (int f : frames) checked_frame(model, f);
        Array position = output({N, F, 3}), quaternion = output({N, F, 4});
        double* pos = position.mutable_data();
        double* quat = quaternion.mutable_data();
        for_each_state(model, N, threads, [&](Data& data, py::ssize_t n) {
          forward_kinematics(model, data, q.data(n));
          for (py::ssize_t f = 0; f < F; ++f) {
            const Transform X = frame_pose(model, data, frames[f]);
            const Vec3 world = X.p + data.origin;
            double* p = pos + (n * F + f) * 3;
            p[0] = world.x, p[1] = world.y, p[2] = world.z;
            matrix_quaternion(X.R, quat + (n * F + f) * 4);
          }
        });
        return py::make_tuple(position, quaternion);
      },
      py::arg("model"), py::arg("q"), py::arg("frames"), py::arg("threads") = 1);

  m.def(
      "frame_jacobian",
      [](const Model& model, py::handle q_in, int frame, int threads) {
        const Array q = batch_rows(q_in, model.nq, -1, "q");
        checked_frame(model, frame);
        const py::ssize_t N = q.shape(0), nv = model.nv;
        Array J = output({N, 6, nv});
        double* out = J.mutable_data();
        for_each_state(model, N, threads, [&](Data& data, py::ssize_t n) {
          forward_kinematics(model, data, q.data(n));
          frame_jacobian(model, data, frame, out + n * 6 * nv);
        });
        return J;
      },
      py::arg("model"), py::arg("q"), py::arg("frame"), py::arg("threads") = 1);

  m.def(
      "frame_jacobian_derivative",
      [](const Model& model, py::handle q_in, int frame, int threads) {
        const Array q = batch_rows(q_in, model.nq, -1, "q");
        checked_frame(model, frame);
        const py::ssize_t N = q.shape(0), nv = model.nv;
        Array dJ = output({N, 6, nv, nv});
        double* out = dJ.mutable_data();
        for_each_state(model, N, threads, [&](Data& data, py::ssize_t n) {
          forward_kinematics(model, data, q.data(n));
          frame_jacobian_derivative(model, data, frame, out + n * 6 * nv * nv);
        });
        return dJ;
      },
      py::arg("model"), py::arg("q"), py::arg("frame"), py::arg("threads") = 1);

  m.def(
      "rnea",
      [](const Model& model, py::handle q_in, py::handle v_in, py::handle a_in, bool gravity, int threads) {
        const Array q = batch_rows(q_in, model.nq, -1, "q");
        const py::ssize_t N = q.shape(0), nv = model.nv;
        const Array v = batch_rows(v_in, nv, N, "v"), a = batch_rows(a_in, nv, N, "a");
        Array tau = output({N, nv});
        double* out = tau.mutable_data();
        for_each_state(model, N, threads, [&](Data& data, py::ssize_t n) {
          forward_kinematics(model, data, q.data(n));
          rnea_forward_pass(model, data, v.data(n), a.data(n), gravity);
          rnea_backward_pass(model, data, out + n * nv);
        });
        return tau;
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("a"), py::arg("gravity") = true, py::arg("threads") = 1);

  m.def(
      "crba",
      [](const Model& model, py::handle q_in, int threads) {
        const Array q = batch_rows(q_in, model.nq, -1, "q");
        const py::ssize_t N = q.shape(0), nv = model.nv;
        Array M = output({N, nv, nv});
        double* out = M.mutable_data();
        for_each_state(model, N, threads, [&](Data& data, py::ssize_t n) {
          crba(model, data, q.data(n));
          std::copy(data.mass_matrix.begin(), data.mass_matrix.end(), out + n * nv * nv);
        });
        return M;
      },
      py::arg("model"), py::arg("q"), py::arg("threads") = 1);

  m.def(
      "aba",
      [](const Model& model, py::handle q_in, py::handle v_in, py::handle tau_in, int threads) {
        const Array q = batch_rows(q_in, model.nq, -1, "q");
        const py::ssize_t N = q.shape(0), nv = model.nv;
        const Array v = batch_rows(v_in, nv, N, "v"), tau = batch_rows(tau_in, nv, N, "tau");
        Array qdd = output({N, nv});
        double* out = qdd.mutable_data();
        for_each_state(model, N, threads, [&](Data& data, py::ssize_t n) {
          aba(model, data, q.data(n), v.data(n), tau.data(n), out + n * nv);
        });
        return qdd;
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tau"), py::arg("threads") = 1);

  m.def(
      "minverse",
      [](const Model& model, py::handle q_in, int threads) {
        const Array q = batch_rows(q_in, model.nq, -1, "q");
        const py::ssize_t N = q.shape(0), nv = model.nv;
        Array Minv = output({N, nv, nv});
        double* out = Minv.mutable_data();
        for_each_state(model, N, threads,
                       [&](Data& data, py::ssize_t n) { minverse(model, data, q.data(n), out + n * nv * nv); });
        return Minv;
      },
      py::arg("model"), py::arg("q"), py::arg("threads") = 1);

  m.def(
      "rnea_derivatives",
      [](const Model& model, py::handle q_in, py::handle v_in, py::handle a_in, int threads) {
        const Array q = batch_rows(q_in, model.nq, -1, "q");
        const py::ssize_t N = q.shape(0), nv = model.nv;
        const Array v = batch_rows(v_in, nv, N, "v"), a = batch_rows(a_in, nv, N, "a");
        Array dq = output({N, nv, nv}), dv = output({N, nv, nv}), M = output({N, nv, nv});
        double *out_q = dq.mutable_data(), *out_v = dv.mutable_data(), *out_M = M.mutable_data();
        for_each_state(model, N, threads, [&](Data& data, py::ssize_t n) {
          const py::ssize_t o = n * nv * nv;
          rnea_derivatives(model, data, q.data(n), v.data(n), a.data(n), out_q + o, out_v + o, out_M + o);
        });
        return py::make_tuple(dq, dv, M);
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("a"), py::arg("threads") = 1);

  m.def(
      "aba_derivatives",
      [](const Model& model, py::handle q_in, py::handle v_in, py::handle tau_in, int threads) {
        const Array q = batch_rows(q_in, model.nq, -1, "q");
        const py::ssize_t N = q.shape(0), nv = model.nv;
        const Array v = batch_rows(v_in, nv, N, "v"), tau = batch_rows(tau_in, nv, N, "tau");
        Array qdd = output({N, nv}), dq = output({N, nv, nv}), dv = output({N, nv, nv}), dtau = output({N, nv, nv});
        double *out_a = qdd.mutable_data(), *out_q = dq.mutable_data(), *out_v = dv.mutable_data(),
               *out_tau = dtau.mutable_data();
        for_each_state(model, N, threads, [&](Data& data, py::ssize_t n) {
          const py::ssize_t o = n * nv * nv;
          aba_derivatives(model, data, q.data(n), v.data(n), tau.data(n), out_a + n * nv, out_q + o, out_v + o,
                          out_tau + o);
        });
        return py::make_tuple(qdd, dq, dv, dtau);
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tau"), py::arg("threads") = 1);

  m.def(
      "minverse_derivative",
      [](const Model& model, py::handle q_in, py::handle z_in, int threads) {
        const Array q = batch_rows(q_in, model.nq, -1, "q");
        const py::ssize_t N = q.shape(0), nv = model.nv;
        const Array z = batch_rows(z_in, nv, N, "z");
        Array y = output({N, nv}), d = output({N, nv, nv});
        double *out_y = y.mutable_data(), *out_d = d.mutable_data();
        for_each_state(model, N, threads, [&](Data& data, py::ssize_t n) {
          minverse_derivative(model, data, q.data(n), z.data(n), out_y + n * nv, out_d + n * nv * nv);
        });
        return py::make_tuple(y, d);
      },
      py::arg("model"), py::arg("q"), py::arg("z"), py::arg("threads") = 1);

  m.def(
      "joint_torque_regressor",
      [](const Model& model, py::handle q_in, py::handle v_in, py::handle a_in, int threads) {
        const Array q = batch_rows(q_in, model.nq, -1, "q");
        const py::ssize_t N = q.shape(0), nv = model.nv, cols = 10 * model.nbodies();
        const Array v = batch_rows(v_in, nv, N, "v"), a = batch_rows(a_in, nv, N, "a");
        Array Y = output({N, nv, cols});
        double* out = Y.mutable_data();
        for_each_state(model, N, threads, [&](Data& data, py::ssize_t n) {
          joint_torque_regressor(model, data, q.data(n), v.data(n), a.data(n), out + n * nv * cols);
        });
        return Y;
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("a"), py::arg("threads") = 1);

  m.def(
      "aba_parameter_derivatives",
      [](const Model& model, py::handle q_in, py::handle v_in, py::handle tau_in, int threads) {
        const Array q = batch_rows(q_in, model.nq, -1, "q");
        const py::ssize_t N = q.shape(0), nv = model.nv, cols = 10 * model.nbodies();
        const Array v = batch_rows(v_in, nv, N, "v"), tau = batch_rows(tau_in, nv, N, "tau");
        Array qdd = output({N, nv}), d = output({N, nv, cols});
        double *out_a = qdd.mutable_data(), *out_d = d.mutable_data();
        for_each_state(model, N, threads, [&](Data& data, py::ssize_t n) {
          aba_parameter_derivatives(model, data, q.data(n), v.data(n), tau.data(n), out_a + n * nv,
                                    out_d + n * nv * cols);
        });
        return py::make_tuple(qdd, d);
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tau"), py::arg("threads") = 1);
}
