// Python bindings of the LCP solvers (dcol._native.lcp). The Python layer (dcol.solvers.lcp)
// validates values; the checks here guard memory only.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "lcp/lcp.hpp"
#include "lcp/mlcp_ipm.hpp"

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

void check_shape(const py::array& x, py::ssize_t rows, py::ssize_t cols, const char* name) {
  if (x.ndim() != 2 || x.shape(0) != rows || x.shape(1) != cols)
    throw py::value_error(std::string(name) + " has the wrong shape");
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
  m.def(
      "mlcp_ipm",
      [](const Array& M, const Array& q, const Array& A, const Array& G, const Array& F, const Array& h, double tol,
         int max_iterations) {
        const int n = static_cast<int>(q.shape(0)), p = static_cast<int>(A.shape(0)), k = static_cast<int>(h.shape(0));
        check_shape(M, n, n, "M");
        check_shape(A, p, n, "A");
        check_shape(G, k, n, "G");
        check_shape(F, k, k, "F");
        MlcpProblem problem{n, p, k, M.data(), q.data(), A.data(), G.data(), F.data(), h.data()};
        Array x(n), y(p), z(k), s(k);
        LcpReport report;
        {
          py::gil_scoped_release release;
          MlcpSolver solver;
          report = solver.solve(problem, MlcpSettings{tol, max_iterations}, x.mutable_data(), y.mutable_data(),
                                z.mutable_data(), s.mutable_data());
        }
        return py::make_tuple(x, y, z, s, static_cast<int>(report.status), report.iterations, report.residual);
      },
      py::arg("M"), py::arg("q"), py::arg("A"), py::arg("G"), py::arg("F"), py::arg("h"), py::arg("tol"),
      py::arg("max_iterations"),
      "(x, y, z, s, status code, iterations, residual) of the mixed LCP by the interior-point method.");
}
