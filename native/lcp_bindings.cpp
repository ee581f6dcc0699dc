// Python bindings of the LCP solvers (dcol._native.lcp). The Python layer (dcol.solvers.lcp)
// validates values; the checks here guard memory only.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "lcp/lcp.hpp"

namespace py = pybind11;
using namespace dcol::lcp;

namespace {

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;
using IndexArray = py::array_t<int, py::array::c_style | py::array::forcecast>;

int square_size(const Array& A, const Array& b) {
  if (A.ndim() != 2 || A.shape(0) != A.shape(1) || b.ndim() != 1 || b.shape(0) != A.shape(0))
    throw py::value_error("A must be (n, n) and b (n,)");
  return static_cast<int>(A.shape(0));
}

void check_length(const py::array& x, int n, const char* name) {
  if (x.ndim() != 1 || x.shape(0) != n) throw py::value_error(std::string(name) + " must have shape (n,)");
}

py::tuple report_tuple(Array f, const LcpReport& report) {
  return py::make_tuple(f, static_cast<int>(report.status), report.iterations, report.residual);
}

}  // namespace

void bind_lcp(py::module_& root) {
  py::module_ m = root.def_submodule("lcp", "Native LCP solvers: Lemke pivoting and projected Gauss–Seidel.");
  m.def(
      "lemke",
      [](const Array& A, const Array& b, int max_pivots) {
        const int n = square_size(A, b);
        Array f(n);
        LcpReport report;
        {
          py::gil_scoped_release release;
          LcpWorkspace work;
          work.reserve(n);
          report = solve_lemke(n, A.data(), b.data(), f.mutable_data(), work, max_pivots);
        }
        return report_tuple(f, report);
      },
      py::arg("A"), py::arg("b"), py::arg("max_pivots"),
      "(f, status code, pivots, residual) of the LCP w = A f + b by Lemke's method.");
  m.def(
      "pgs",
      [](const Array& A, const Array& b, py::object lo_in, py::object hi_in, py::object friction_in,
         py::object mu_in, const Array& f0, int max_iterations, double tol) {
        const int n = square_size(A, b);
        check_length(f0, n, "f0");
        Array lo, hi, mu;
        IndexArray friction;
        LcpBounds bounds;
        if (!lo_in.is_none()) {
          lo = Array::ensure(lo_in), hi = Array::ensure(hi_in);
          check_length(lo, n, "lo");
          check_length(hi, n, "hi");
          bounds.lo = lo.data(), bounds.hi = hi.data();
          if (!friction_in.is_none()) {
            friction = IndexArray::ensure(friction_in), mu = Array::ensure(mu_in);
            check_length(friction, n, "friction_index");
            check_length(mu, n, "mu");
            for (int i = 0; i < n; ++i)
              if (friction.data()[i] >= n) throw py::value_error("friction_index out of range");
            bounds.friction_index = friction.data(), bounds.mu = mu.data();
          }
        }
        Array f(n);
        std::copy(f0.data(), f0.data() + n, f.mutable_data());
        LcpReport report;
        {
          py::gil_scoped_release release;
          LcpWorkspace work;
          work.reserve(n);
          report = solve_pgs(n, A.data(), b.data(), bounds, f.mutable_data(), work, max_iterations, tol);
        }
        return report_tuple(f, report);
      },
      py::arg("A"), py::arg("b"), py::arg("lo"), py::arg("hi"), py::arg("friction_index"), py::arg("mu"),
      py::arg("f0"), py::arg("max_iterations"), py::arg("tol"),
      "(f, status code, sweeps, residual) of the (boxed) LCP by projected Gauss–Seidel from f0.");
}
