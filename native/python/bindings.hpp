// The functions that bind each part of the native core into the module (python/module.cpp).
#pragma once

#include <pybind11/pybind11.h>

namespace dcol::contact {
struct Contact;
struct ContactDerivatives;
}  // namespace dcol::contact

namespace dcol::python {

// python/solvers.cpp: solver settings and statuses, the cone program, and the LCP submodule.
void bind_solvers(pybind11::module_& m);
// python/geom.cpp: shapes and DCOL proximity.
void bind_geom(pybind11::module_& m);
// python/contact.cpp: signed distances, contacts and scenes.
void bind_contact(pybind11::module_& m);
// python/contact.cpp: K contacts as a dict of arrays (point, normal, tangent1, tangent2 (K, 3), separation
// (K,), rule (K,) int8; with derivatives their d_* (K, 3, 12) and d_separation (K, 12)).
pybind11::dict contact_arrays(const contact::Contact* contacts, const contact::ContactDerivatives* derivatives,
                              pybind11::ssize_t count);
// python/dynamics.cpp: rigid-body algorithms.
void bind_dynamics(pybind11::module_& m);
// python/simulation.cpp: the world's step and rollouts.
void bind_simulation(pybind11::module_& m);
// python/collision_model.cpp: a model's collision distances as functions of q.
void bind_collision_model(pybind11::module_& m);
// python/planar.cpp: the planar engine's native parts (the submodule planar).
void bind_planar(pybind11::module_& m);

}  // namespace dcol::python
