// The module dcol._native: one submodule or set of names per layer of the native core, each bound in
// its own file of python/.
#include <pybind11/pybind11.h>

#include "python/bindings.hpp"

PYBIND11_MODULE(_native, m) {
  using namespace dcol::python;
  m.doc() = "Native core of dcol: cone solver, DCOL proximity, rigid-body dynamics, LCP solvers.";
  bind_solvers(m);
  bind_geom(m);
  bind_contact(m);
  bind_dynamics(m);
  bind_simulation(m);
  bind_collision_model(m);
  bind_planar(m);
}
