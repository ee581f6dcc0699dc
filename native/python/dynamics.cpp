// Python bindings of the rigid-body algorithms (dcol._native.dynamics). Every function takes one
// state — q (nq,), v (nv,), … — or a batch with a leading axis — q (N, nq), v (N, nv), … — validates
// it (shapes, finite values, nonzero floating-base quaternions) with errors naming the argument, and
// returns arrays with the same leading axis. A batch runs with the GIL released on up to `threads`
// threads, each with its own Data; one state runs under the GIL on the model's cached Data, so a
// single call costs little more than the algorithm.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/parallel.hpp"
#include "dynamics/aba_derivatives.hpp"
#include "dynamics/integrate.hpp"
#include "dynamics/kinematics.hpp"
#include "python/bindings.hpp"
#include "python/dynamics_arguments.hpp"

namespace py = pybind11;
using namespace dcol;
using namespace dcol::dyn;
using namespace dcol::python;

namespace {

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

// Runs body(data, n) for every state n of q's batch.
template <class Body>
void for_each_state(BoundModel& bound, const Rows& q, int threads, const Body& body) {
  if (threads < 1) throw py::value_error("threads must be at least 1");
  if (!q.batched) {
    body(*bound.data, 0);
    return;
  }
  py::gil_scoped_release release;
  parallel_chunks(q.count, threads, 1, [&](std::ptrdiff_t begin, std::ptrdiff_t end) {
    Data data(bound.model);
    for (std::ptrdiff_t n = begin; n < end; ++n) body(data, n);
  });
}

void check_frame(const Model& model, int frame) {
  if (frame < 0 || frame >= static_cast<int>(model.frame_body.size())) throw py::value_error("frame out of range");
}

}  // namespace

void dcol::python::bind_dynamics(py::module_& root) {
  py::module_ m = root.def_submodule("dynamics", "Native rigid-body algorithms (world-axes recursions).");
  py::class_<BoundModel>(m, "Model")
      .def(py::init([](const IndexArray& parent, const IndexArray& kind, const Array& placement_R,
                       const Array& placement_p, const Array& axis, const Array& mass, const Array& com,
                       const Array& rot_inertia, const IndexArray& frame_body, const Array& frame_R,
                       const Array& frame_p, const Array& gravity) {
             return BoundModel(build_model(parent, kind, placement_R, placement_p, axis, mass, com, rot_inertia,
                                           frame_body, frame_R, frame_p, gravity));
           }),
           py::arg("parent"), py::arg("kind"), py::arg("placement_R"), py::arg("placement_p"), py::arg("axis"),
           py::arg("mass"), py::arg("com"), py::arg("rot_inertia"), py::arg("frame_body"), py::arg("frame_R"),
           py::arg("frame_p"), py::arg("gravity"))
      .def_property_readonly("nq", [](const BoundModel& b) { return b.model.nq; })
      .def_property_readonly("nv", [](const BoundModel& b) { return b.model.nv; })
      .def_property_readonly("nbodies", [](const BoundModel& b) { return b.model.nbodies(); });

  m.def(
      "frame_poses",
      [](BoundModel& bound, py::handle q_in, const std::vector<int>& frames, int threads, bool matrices) {
        const Model& model = bound.model;
        const Rows q = configuration(model, q_in);
        for (int f : frames) check_frame(model, f);
        const py::ssize_t F = static_cast<py::ssize_t>(frames.size());
        Array position = output(q, {F, 3});
        Array rotation = matrices ? output(q, {F, 3, 3}) : output(q, {F, 4});
        double* pos = position.mutable_data();
        double* rot = rotation.mutable_data();
        for_each_state(bound, q, threads, [&](Data& data, py::ssize_t n) {
          forward_kinematics(model, data, q.row(n));
          for (py::ssize_t f = 0; f < F; ++f) {
            const Transform X = frame_pose(model, data, frames[f]);
            const Vec3 world = X.p + frame_origin(model, data, frames[f]);
            double* p = pos + (n * F + f) * 3;
            p[0] = world.x, p[1] = world.y, p[2] = world.z;
            if (!matrices) {
              matrix_quaternion(X.R, rot + (n * F + f) * 4);
              continue;
            }
            for (int r = 0; r < 3; ++r)
              for (int c = 0; c < 3; ++c) rot[(n * F + f) * 9 + 3 * r + c] = X.R.m[r][c];
          }
        });
        return py::make_tuple(position, rotation);
      },
      py::arg("model"), py::arg("q"), py::arg("frames"), py::arg("threads") = 1, py::arg("matrices") = false);

  // integrate (the tangent space's q ⊕ v) and the simulation step's own update step_integrate (q ⊞ u),
  // with their Jacobians: the same arguments and checks.
  using Update = void (*)(const Model&, const double*, const double*, double*);
  using UpdateJacobians = void (*)(const Model&, const double*, double*, double*);
  const auto bind_update = [&m](const char* name, Update update, const char* jacobians_name, UpdateJacobians jacobians,
                                const char* tangent_name) {
    m.def(
        name,
        [update, tangent_name](BoundModel& bound, py::handle q_in, py::handle v_in, int threads) {
          const Model& model = bound.model;
          const Rows q = configuration(model, q_in), v = tangent(model, q, v_in, tangent_name);
          Array q_next = output(q, {model.nq});
          double* out = q_next.mutable_data();
          for_each_state(bound, q, threads,
                         [&](Data&, py::ssize_t n) { update(model, q.row(n), v.row(n), out + n * model.nq); });
          return q_next;
        },
        py::arg("model"), py::arg("q"), py::arg(tangent_name), py::arg("threads") = 1);
    m.def(
        jacobians_name,
        [jacobians, tangent_name](BoundModel& bound, py::handle q_in, py::handle v_in, int threads) {
          const Model& model = bound.model;
          const Rows q = configuration(model, q_in), v = tangent(model, q, v_in, tangent_name);
          const py::ssize_t nv = model.nv;
          Array d_q = output(q, {nv, nv}), d_v = output(q, {nv, nv});
          double *dq = d_q.mutable_data(), *dv = d_v.mutable_data();
          for_each_state(bound, q, threads,
                         [&](Data&, py::ssize_t n) { jacobians(model, v.row(n), dq + n * nv * nv, dv + n * nv * nv); });
          return py::make_tuple(d_q, d_v);
        },
        py::arg("model"), py::arg("q"), py::arg(tangent_name), py::arg("threads") = 1);
  };
  bind_update("integrate", integrate, "integrate_jacobians", integrate_jacobians, "v");
  bind_update("step_integrate", step_integrate, "step_integrate_jacobians", step_integrate_jacobians, "u");

  m.def(
      "frame_jacobian",
      [](BoundModel& bound, py::handle q_in, int frame, int threads) {
        const Model& model = bound.model;
        const Rows q = configuration(model, q_in);
        check_frame(model, frame);
        const py::ssize_t nv = model.nv;
        Array J = output(q, {6, nv});
        double* out = J.mutable_data();
        for_each_state(bound, q, threads, [&](Data& data, py::ssize_t n) {
          forward_kinematics(model, data, q.row(n));
          frame_jacobian(model, data, frame, out + n * 6 * nv);
        });
        return J;
      },
      py::arg("model"), py::arg("q"), py::arg("frame"), py::arg("threads") = 1);

  m.def(
      "frame_jacobian_derivative",
      [](BoundModel& bound, py::handle q_in, int frame, int threads) {
        const Model& model = bound.model;
        const Rows q = configuration(model, q_in);
        check_frame(model, frame);
        const py::ssize_t nv = model.nv;
        Array dJ = output(q, {6, nv, nv});
        double* out = dJ.mutable_data();
        for_each_state(bound, q, threads, [&](Data& data, py::ssize_t n) {
          forward_kinematics(model, data, q.row(n));
          frame_jacobian_derivative(model, data, frame, out + n * 6 * nv * nv);
        });
        return dJ;
      },
      py::arg("model"), py::arg("q"), py::arg("frame"), py::arg("threads") = 1);

  m.def(
      "rnea",
      [](BoundModel& bound, py::handle q_in, py::handle v_in, py::handle a_in, bool gravity, int threads) {
        const Model& model = bound.model;
        const Rows q = configuration(model, q_in), v = tangent(model, q, v_in, "v"), a = tangent(model, q, a_in, "a");
        Array tau = output(q, {model.nv});
        double* out = tau.mutable_data();
        for_each_state(bound, q, threads, [&](Data& data, py::ssize_t n) {
          forward_kinematics(model, data, q.row(n));
          rnea_forward_pass(model, data, v.row(n), a.row(n), gravity);
          rnea_backward_pass(model, data, out + n * model.nv);
        });
        return tau;
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("a"), py::arg("gravity") = true, py::arg("threads") = 1);

  m.def(
      "crba",
      [](BoundModel& bound, py::handle q_in, int threads) {
        const Model& model = bound.model;
        const Rows q = configuration(model, q_in);
        const py::ssize_t nv = model.nv;
        Array M = output(q, {nv, nv});
        double* out = M.mutable_data();
        for_each_state(bound, q, threads, [&](Data& data, py::ssize_t n) {
          crba(model, data, q.row(n));
          std::copy(data.mass_matrix.begin(), data.mass_matrix.end(), out + n * nv * nv);
        });
        return M;
      },
      py::arg("model"), py::arg("q"), py::arg("threads") = 1);

  m.def(
      "aba",
      [](BoundModel& bound, py::handle q_in, py::handle v_in, py::handle tau_in, int threads) {
        const Model& model = bound.model;
        const Rows q = configuration(model, q_in), v = tangent(model, q, v_in, "v"),
                   tau = tangent(model, q, tau_in, "tau");
        Array qdd = output(q, {model.nv});
        double* out = qdd.mutable_data();
        for_each_state(bound, q, threads, [&](Data& data, py::ssize_t n) {
          aba(model, data, q.row(n), v.row(n), tau.row(n), out + n * model.nv);
        });
        return qdd;
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tau"), py::arg("threads") = 1);

  m.def(
      "minverse",
      [](BoundModel& bound, py::handle q_in, int threads) {
        const Model& model = bound.model;
        const Rows q = configuration(model, q_in);
        const py::ssize_t nv = model.nv;
        Array Minv = output(q, {nv, nv});
        double* out = Minv.mutable_data();
        for_each_state(bound, q, threads,
                       [&](Data& data, py::ssize_t n) { minverse(model, data, q.row(n), out + n * nv * nv); });
        return Minv;
      },
      py::arg("model"), py::arg("q"), py::arg("threads") = 1);

  m.def(
      "rnea_derivatives",
      [](BoundModel& bound, py::handle q_in, py::handle v_in, py::handle a_in, int threads) {
        const Model& model = bound.model;
        const Rows q = configuration(model, q_in), v = tangent(model, q, v_in, "v"), a = tangent(model, q, a_in, "a");
        const py::ssize_t nv = model.nv;
        Array dq = output(q, {nv, nv}), dv = output(q, {nv, nv}), M = output(q, {nv, nv});
        double *out_q = dq.mutable_data(), *out_v = dv.mutable_data(), *out_M = M.mutable_data();
        for_each_state(bound, q, threads, [&](Data& data, py::ssize_t n) {
          const py::ssize_t o = n * nv * nv;
          rnea_derivatives(model, data, q.row(n), v.row(n), a.row(n), out_q + o, out_v + o, out_M + o);
        });
        return py::make_tuple(dq, dv, M);
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("a"), py::arg("threads") = 1);

  m.def(
      "aba_derivatives",
      [](BoundModel& bound, py::handle q_in, py::handle v_in, py::handle tau_in, int threads) {
        const Model& model = bound.model;
        const Rows q = configuration(model, q_in), v = tangent(model, q, v_in, "v"),
                   tau = tangent(model, q, tau_in, "tau");
        const py::ssize_t nv = model.nv;
        Array qdd = output(q, {nv}), dq = output(q, {nv, nv}), dv = output(q, {nv, nv}), dtau = output(q, {nv, nv});
        double *out_a = qdd.mutable_data(), *out_q = dq.mutable_data(), *out_v = dv.mutable_data(),
               *out_tau = dtau.mutable_data();
        for_each_state(bound, q, threads, [&](Data& data, py::ssize_t n) {
          const py::ssize_t o = n * nv * nv;
          aba_derivatives(model, data, q.row(n), v.row(n), tau.row(n), out_a + n * nv, out_q + o, out_v + o,
                          out_tau + o);
        });
        return py::make_tuple(qdd, dq, dv, dtau);
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tau"), py::arg("threads") = 1);

  m.def(
      "minverse_derivative",
      [](BoundModel& bound, py::handle q_in, py::handle z_in, int threads) {
        const Model& model = bound.model;
        const Rows q = configuration(model, q_in), z = tangent(model, q, z_in, "z");
        const py::ssize_t nv = model.nv;
        Array y = output(q, {nv}), d = output(q, {nv, nv});
        double *out_y = y.mutable_data(), *out_d = d.mutable_data();
        for_each_state(bound, q, threads, [&](Data& data, py::ssize_t n) {
          minverse_derivative(model, data, q.row(n), z.row(n), out_y + n * nv, out_d + n * nv * nv);
        });
        return py::make_tuple(y, d);
      },
      py::arg("model"), py::arg("q"), py::arg("z"), py::arg("threads") = 1);

  m.def(
      "joint_torque_regressor",
      [](BoundModel& bound, py::handle q_in, py::handle v_in, py::handle a_in, int threads) {
        const Model& model = bound.model;
        const Rows q = configuration(model, q_in), v = tangent(model, q, v_in, "v"), a = tangent(model, q, a_in, "a");
        const py::ssize_t nv = model.nv, cols = 10 * model.nbodies();
        Array Y = output(q, {nv, cols});
        double* out = Y.mutable_data();
        for_each_state(bound, q, threads, [&](Data& data, py::ssize_t n) {
          joint_torque_regressor(model, data, q.row(n), v.row(n), a.row(n), out + n * nv * cols);
        });
        return Y;
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("a"), py::arg("threads") = 1);

  m.def(
      "aba_parameter_derivatives",
      [](BoundModel& bound, py::handle q_in, py::handle v_in, py::handle tau_in, int threads) {
        const Model& model = bound.model;
        const Rows q = configuration(model, q_in), v = tangent(model, q, v_in, "v"),
                   tau = tangent(model, q, tau_in, "tau");
        const py::ssize_t nv = model.nv, cols = 10 * model.nbodies();
        Array qdd = output(q, {nv}), d = output(q, {nv, cols});
        double *out_a = qdd.mutable_data(), *out_d = d.mutable_data();
        for_each_state(bound, q, threads, [&](Data& data, py::ssize_t n) {
          aba_parameter_derivatives(model, data, q.row(n), v.row(n), tau.row(n), out_a + n * nv, out_d + n * nv * cols);
        });
        return py::make_tuple(qdd, d);
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tau"), py::arg("threads") = 1);
}
