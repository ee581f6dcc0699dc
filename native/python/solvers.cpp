// Python bindings of the solvers: the settings and statuses of the interior-point method, the cone
// program (dcol.solvers.cone), and the LCP solvers (dcol._native.lcp). The Python layer validates
// values; the checks here guard memory only.
#include <pybind11/native_enum.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "conic/cone_solver.hpp"
#include "lcp/active_set.hpp"
#include "lcp/boxed_lemke.hpp"
#include "lcp/lcp.hpp"
#include "lcp/mlcp_ipm.hpp"
#include "lcp/ncp.hpp"
#include "python/bindings.hpp"

namespace py = pybind11;
using namespace dcol;
using namespace dcol::conic;
using namespace dcol::lcp;

namespace {

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

// Limits of solve_cone_program's size class.
constexpr int kConeMaxVars = 32;
constexpr int kConeMaxRows = 256;
constexpr int kConeMaxCones = 64;
using GeneralProgram = ConeProgram<kConeMaxVars, kConeMaxRows, kConeMaxCones>;
using GeneralSolver = ConeSolver<GeneralProgram>;

py::tuple solve_cone_program(const Array& c, const Array& G, const Array& h, int l, const std::vector<int>& soc_dims,
                             const SolverSettings& settings) {
  const py::ssize_t n = c.shape(0), m = h.shape(0);
  long rows = l;
  for (int dim : soc_dims) rows += dim < 1 ? m + 1 : dim;
  if (n < 1 || n > kConeMaxVars || m < 1 || m > kConeMaxRows || l < 0 || rows != m ||
      static_cast<int>(soc_dims.size()) > kConeMaxCones || G.ndim() != 2 || G.shape(0) != m || G.shape(1) != n)
    throw py::value_error("cone program dimensions out of range");
  // The solver's gap and feasibility tolerances are absolute: an objective or constraints far below
  // one are solved as c / σ_c and (G, h) / σ_G, σ powers of two that bring them to order one, which
  // leaves x as it is, divides s by σ_G and multiplies z by σ_G / σ_c. Larger data keep their size.
  auto power_of_two_scale = [](double largest) { return largest < 1.0 ? power_of_two_above(largest) : 1.0; };
  const double sigma_c = power_of_two_scale(largest_magnitude(n, c.data()));
  const double sigma_G =
      power_of_two_scale(std::max(largest_magnitude(m * n, G.data()), largest_magnitude(m, h.data())));
  GeneralProgram prob;
  prob.clear(static_cast<int>(n));
  for (py::ssize_t j = 0; j < n; ++j) prob.c[j] = c.data()[j] / sigma_c;
  auto scaled_row = [&](py::ssize_t i, double* row) {
    for (py::ssize_t j = 0; j < n; ++j) row[j] = G.data()[i * n + j] / sigma_G;
  };
  for (int i = 0; i < l; ++i) scaled_row(i, prob.add_orthant_row(h.data()[i] / sigma_G));
  for (int dim : soc_dims) {
    const int first = prob.add_soc(dim);
    for (int i = first; i < first + dim; ++i) {
      scaled_row(i, prob.G[i]);
      prob.h[i] = h.data()[i] / sigma_G;
    }
  }
  auto solver = std::make_unique<GeneralSolver>();  // large for a Python thread's stack
  {
    py::gil_scoped_release release;
    solver->solve(prob, settings);
  }
  py::array_t<double> x(n), s(m), z(m);
  std::copy(solver->x, solver->x + n, x.mutable_data());
  for (py::ssize_t i = 0; i < m; ++i) {
    s.mutable_data()[i] = solver->s[i] * sigma_G;
    z.mutable_data()[i] = solver->z[i] * sigma_c / sigma_G;
  }
  const SolveInfo<1>& info = solver->info;
  return py::make_tuple(x, s, z, info.status[0], info.iterations[0], sigma_c * info.primal_objective,
                        sigma_c * info.dual_objective);
}

double checked_tolerance(double v, const char* name) {
  if (!(v > 0.0 && v < 1.0)) throw py::value_error(std::string(name) + " must be in (0, 1), got " + std::to_string(v));
  return v;
}

double checked_barrier(double v) {
  if (!(v >= 0.0 && v < 1e-2)) throw py::value_error("barrier must be in [0, 0.01), got " + std::to_string(v));
  return v;
}

// A Python int of any size: one beyond C's int gets this message, not pybind11's signatures.
int checked_max_iter(const py::int_& v) {
  if (v < py::int_(0) || v > py::int_(10000))
    throw py::value_error("max_iter must be in [0, 10000], got " + std::string(py::str(v)));
  return v.cast<int>();
}

SolverSettings checked_settings(double feastol, double abstol, double reltol, const py::int_& max_iter, double barrier,
                                double centrality_tol) {
  SolverSettings s{checked_tolerance(feastol, "feastol"), checked_tolerance(abstol, "abstol"),
                   checked_tolerance(reltol, "reltol"), checked_max_iter(max_iter)};
  s.barrier = checked_barrier(barrier);
  s.centrality_tol = checked_tolerance(centrality_tol, "centrality_tol");
  return s;
}

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

// A boxed problem's bounds: lo, hi, mu (n,) float64 and friction_index (n,) int32 (−1: fixed bounds),
// kept alive by the caller's arrays.
struct BoxedBounds {
  Array lo, hi, mu;
  IndexArray friction;
  LcpBounds bounds;
  BoxedBounds(py::handle lo_in, py::handle hi_in, py::handle friction_in, py::handle mu_in, int n)
      : lo(Array::ensure(lo_in)),
        hi(Array::ensure(hi_in)),
        mu(Array::ensure(mu_in)),
        friction(IndexArray::ensure(friction_in)) {
    check_length(lo, n, "lo");
    check_length(hi, n, "hi");
    check_length(mu, n, "mu");
    check_length(friction, n, "friction_index");
    for (int i = 0; i < n; ++i)
      if (friction.data()[i] >= n || friction.data()[i] < -1) throw py::value_error("friction_index out of range");
    bounds = {lo.data(), hi.data(), friction.data(), mu.data()};
  }
};

using SetArray = py::array_t<int8_t, py::array::c_style | py::array::forcecast>;

const EntrySet* entry_sets(const SetArray& sets, int n) {
  check_length(sets, n, "sets");
  for (int i = 0; i < n; ++i)
    if (sets.data()[i] < 0 || sets.data()[i] > 2) throw py::value_error("sets must hold 0 (clamping), 1 or 2");
  return reinterpret_cast<const EntrySet*>(sets.data());
}

py::tuple report_tuple(Array f, const LcpReport& report) {
  return py::make_tuple(f, static_cast<int>(report.status), report.iterations, report.residual);
}

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
      "boxed_lemke",
      [](const Array& A, const Array& b, py::handle lo, py::handle hi, py::handle friction, py::handle mu, double tol) {
        const int n = square_size(A, b);
        const BoxedBounds boxed(lo, hi, friction, mu, n);
        Array f(n);
        std::fill_n(f.mutable_data(), n, 0.0);
        LcpReport report;
        {
          py::gil_scoped_release release;
          BoxedLemkeWorkspace work;
          report = solve_boxed_lemke(n, A.data(), b.data(), boxed.bounds, f.mutable_data(), work, tol);
        }
        return report_tuple(f, report);
      },
      py::arg("A"), py::arg("b"), py::arg("lo"), py::arg("hi"), py::arg("friction_index"), py::arg("mu"),
      py::arg("tol"),
      "(f, status code, pivots, residual) of the boxed LCP by Lemke's method on its Stewart–Trinkle form "
      "(solve_boxed_lemke).");
  m.def(
      "pgs",
      [](const Array& A, const Array& b, py::object lo_in, py::object hi_in, py::object friction_in, py::object mu_in,
         const Array& f0, int max_iterations, double tol, bool polished) {
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
          if (polished) {
            ActiveSetWorkspace active;
            std::vector<double> w(n);
            std::vector<EntrySet> sets(n);
            report = solve_pgs_polished(n, A.data(), b.data(), bounds, f.mutable_data(), w.data(), sets.data(), work,
                                        active, max_iterations, tol);
          } else {
            report = solve_pgs(n, A.data(), b.data(), bounds, f.mutable_data(), work, max_iterations, tol);
          }
        }
        return report_tuple(f, report);
      },
      py::arg("A"), py::arg("b"), py::arg("lo"), py::arg("hi"), py::arg("friction_index"), py::arg("mu"), py::arg("f0"),
      py::arg("max_iterations"), py::arg("tol"), py::arg("polished"),
      "(f, status code, sweeps, residual) of the (boxed) LCP by projected Gauss–Seidel from f0; with polished, "
      "exact solves on the iterate's sets along the way (solve_pgs_polished).");
  m.def(
      "classify",
      [](const Array& A, const Array& b, py::handle lo, py::handle hi, py::handle friction, py::handle mu,
         const Array& f, const Array& w, double tol) {
        const int n = square_size(A, b);
        check_length(f, n, "f");
        check_length(w, n, "w");
        const BoxedBounds boxed(lo, hi, friction, mu, n);
        SetArray sets(n);
        py::array_t<bool> tied(n);
        const MatrixScale scale = matrix_scale(n, A.data());
        classify(n, scale, b.data(), f.data(), w.data(), boxed.bounds, tol,
                 reinterpret_cast<EntrySet*>(sets.mutable_data()));
        const double w_tol = tolerances(n, scale, b.data(), f.data(), tol).w;
        for (int i = 0; i < n; ++i) tied.mutable_data()[i] = sets.data()[i] != 0 && std::abs(w.data()[i]) <= w_tol;
        return py::make_tuple(sets, tied);
      },
      py::arg("A"), py::arg("b"), py::arg("lo"), py::arg("hi"), py::arg("friction_index"), py::arg("mu"), py::arg("f"),
      py::arg("w"), py::arg("tol"),
      "(sets (n,) int8: 0 clamping, 1 at the lower bound, 2 at the upper; tied (n,) bool: at a bound with w = 0).");
  m.def(
      "solve_on_sets",
      [](const Array& A, const Array& b, py::handle lo, py::handle hi, py::handle friction, py::handle mu,
         const SetArray& sets_in, double tol) {
        const int n = square_size(A, b);
        const BoxedBounds boxed(lo, hi, friction, mu, n);
        const EntrySet* sets = entry_sets(sets_in, n);
        Array f(n), w(n);
        bool ok;
        {
          py::gil_scoped_release release;
          ActiveSetWorkspace ws;
          solve_on_sets(n, A.data(), b.data(), boxed.bounds, sets, f.mutable_data(), w.mutable_data(), ws);
          ok = verified(n, matrix_scale(n, A.data()), b.data(), f.data(), w.data(), boxed.bounds, sets, tol) &&
               natural_residual(n, A.data(), b.data(), f.data(), w.data(), boxed.bounds) <= tol;
        }
        return py::make_tuple(f, w, ok);
      },
      py::arg("A"), py::arg("b"), py::arg("lo"), py::arg("hi"), py::arg("friction_index"), py::arg("mu"),
      py::arg("sets"), py::arg("tol"),
      "(f, w, verified) of the least-squares-minimal solution on the sets (Nimble App. B); verified: it "
      "verifies on the sets with a natural residual within tol.");
  m.def(
      "polish",
      [](const Array& A, const Array& b, py::handle lo, py::handle hi, py::handle friction, py::handle mu,
         const Array& f_in, double tol) {
        const int n = square_size(A, b);
        check_length(f_in, n, "f");
        const BoxedBounds boxed(lo, hi, friction, mu, n);
        Array f(n), w(n);
        std::copy(f_in.data(), f_in.data() + n, f.mutable_data());
        bool ok;
        {
          py::gil_scoped_release release;
          std::vector<EntrySet> sets(n);
          ActiveSetWorkspace ws;
          lcp_velocity(n, A.data(), b.data(), f.data(), w.mutable_data());
          const MatrixScale scale = matrix_scale(n, A.data());
          classify(n, scale, b.data(), f.data(), w.data(), boxed.bounds, tol, sets.data());
          ok = polish(n, A.data(), scale, b.data(), boxed.bounds, f.mutable_data(), w.mutable_data(), sets.data(), tol,
                      ws) == Polished::within_tolerance;
        }
        return py::make_tuple(f, ok);
      },
      py::arg("A"), py::arg("b"), py::arg("lo"), py::arg("hi"), py::arg("friction_index"), py::arg("mu"), py::arg("f"),
      py::arg("tol"),
      "(f, polished): f solved exactly on the sets of the approximate solution f when that verifies with a "
      "natural residual within tol.");
  m.def(
      "natural_residual",
      [](const Array& A, const Array& b, py::handle lo, py::handle hi, py::handle friction, py::handle mu,
         const Array& f) {
        const int n = square_size(A, b);
        check_length(f, n, "f");
        const BoxedBounds boxed(lo, hi, friction, mu, n);
        std::vector<double> w(n);
        lcp_velocity(n, A.data(), b.data(), f.data(), w.data());
        return natural_residual(n, A.data(), b.data(), f.data(), w.data(), boxed.bounds);
      },
      py::arg("A"), py::arg("b"), py::arg("lo"), py::arg("hi"), py::arg("friction_index"), py::arg("mu"), py::arg("f"),
      "The natural residual of f relative to the problem's scale (lcp.hpp's natural_residual): the same for a "
      "problem and for the same problem in other units, zero exactly at a solution.");
  m.def(
      "project_onto_friction_cone",
      [](const Array& impulses, const Array& mu) {
        if (impulses.ndim() != 2 || impulses.shape(1) != 3) throw py::value_error("impulses must be (nc, 3)");
        const py::ssize_t nc = impulses.shape(0);
        check_length(mu, static_cast<int>(nc), "mu");
        Array out({nc, py::ssize_t(3)});
        for (py::ssize_t c = 0; c < nc; ++c)
          ncp_detail::project_onto_cone(impulses.data() + 3 * c, mu.data()[c], out.mutable_data() + 3 * c);
        return out;
      },
      py::arg("impulses"), py::arg("mu"), "Euclidean projection of [t1, t2, n] rows onto ‖t‖ ≤ μ n.");
  m.def(
      "ncp_admm",
      [](const Array& G, const Array& g, const Array& mu, double rho, double tol, int max_iterations) {
        const int n = square_size(G, g);
        if (n % 3 != 0) throw py::value_error("g must have 3 entries per contact");
        check_length(mu, n / 3, "mu");
        Array lambda(n), v(n);
        py::array_t<int8_t> modes(n / 3);
        LcpReport report;
        {
          py::gil_scoped_release release;
          NcpWorkspace work;
          report = solve_ncp_admm(n / 3, G.data(), g.data(), mu.data(), rho, tol, max_iterations, lambda.mutable_data(),
                                  v.mutable_data(), work);
          contact_modes(n / 3, lambda.data(), v.data(), largest_magnitude(n, g.data()), mode_tolerance(tol),
                        modes.mutable_data());
        }
        return py::make_tuple(lambda, v, modes, static_cast<int>(report.status), report.iterations, report.residual);
      },
      py::arg("G"), py::arg("g"), py::arg("mu"), py::arg("rho"), py::arg("tol"), py::arg("max_iterations"),
      "(impulses, velocities, modes, status code, iterations, residual) of the contact NCP by ADMM with mode "
      "polishing, then by the fixed point of Acary et al. with interior-point cone QPs.");
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
  m.def(
      "mlcp_kkt_adjoint",
      [](const Array& M, const Array& A, const Array& G, const Array& F, const Array& z, const Array& s,
         const Array& rhs) {
        const int n = static_cast<int>(M.shape(0)), p = static_cast<int>(A.shape(0)), k = static_cast<int>(z.shape(0));
        check_shape(M, n, n, "M");
        check_shape(A, p, n, "A");
        check_shape(G, k, n, "G");
        check_shape(F, k, k, "F");
        check_length(s, k, "s");
        check_length(rhs, n + k + p, "rhs");
        MlcpProblem problem{n, p, k, M.data(), nullptr, A.data(), G.data(), F.data(), nullptr};
        Array adjoint(n + k + p);
        std::copy(rhs.data(), rhs.data() + n + k + p, adjoint.mutable_data());
        bool regular = false;
        {
          py::gil_scoped_release release;
          MlcpNewtonSystem newton;
          std::vector<double> weights;
          regular = mlcp_kkt_adjoint(problem, z.data(), s.data(), adjoint.mutable_data(), newton, weights);
        }
        if (!regular) throw py::value_error("the KKT matrix at the solution is singular");
        return adjoint;
      },
      py::arg("M"), py::arg("A"), py::arg("G"), py::arg("F"), py::arg("z"), py::arg("s"), py::arg("rhs"),
      "[d_x; z∘d_z; d_y] from rhs = [∂ℓ/∂x; ∂ℓ/∂z; ∂ℓ/∂y] at a mixed-LCP solution (the KKT backward pass).");
}

}  // namespace

void dcol::python::bind_solvers(py::module_& m) {
  py::native_enum<SolveStatus>(m, "Status", "enum.IntEnum",
                               "Outcome of an interior-point solve; SMOOTHED: exact proximity derivatives were asked "
                               "for where none exists, and the smoothed ones are given (dcol.geom.derivatives).")
      .value("SOLVED", SolveStatus::solved)
      .value("SOLVED_INACCURATE", SolveStatus::solved_inaccurate)
      .value("MAX_ITERATIONS", SolveStatus::max_iterations)
      .value("NUMERICAL_ERROR", SolveStatus::numerical_error)
      .value("SMOOTHED", SolveStatus::smoothed)
      .finalize();

  py::class_<SolverSettings>(m, "SolverSettings")
      .def(py::init(&checked_settings), py::arg("feastol") = 1e-9, py::arg("abstol") = 1e-8, py::arg("reltol") = 1e-8,
           py::arg("max_iter") = 50, py::arg("barrier") = 0.0, py::arg("centrality_tol") = 1e-2)
      .def_property(
          "feastol", [](const SolverSettings& s) { return s.feastol; },
          [](SolverSettings& s, double v) { s.feastol = checked_tolerance(v, "feastol"); })
      .def_property(
          "abstol", [](const SolverSettings& s) { return s.abstol; },
          [](SolverSettings& s, double v) { s.abstol = checked_tolerance(v, "abstol"); })
      .def_property(
          "reltol", [](const SolverSettings& s) { return s.reltol; },
          [](SolverSettings& s, double v) { s.reltol = checked_tolerance(v, "reltol"); })
      .def_property(
          "barrier", [](const SolverSettings& s) { return s.barrier; },
          [](SolverSettings& s, double v) { s.barrier = checked_barrier(v); })
      .def_property(
          "centrality_tol", [](const SolverSettings& s) { return s.centrality_tol; },
          [](SolverSettings& s, double v) { s.centrality_tol = checked_tolerance(v, "centrality_tol"); })
      .def_property(
          "max_iter", [](const SolverSettings& s) { return s.max_iter; },
          [](SolverSettings& s, const py::int_& v) { s.max_iter = checked_max_iter(v); })
      // Pickled as the constructor's arguments, checked again when unpickled.
      .def(py::pickle(
          [](const SolverSettings& s) {
            return py::make_tuple(s.feastol, s.abstol, s.reltol, s.max_iter, s.barrier, s.centrality_tol);
          },
          [](const py::tuple& state) {
            if (state.size() != 6) throw py::value_error("SolverSettings state must hold 6 values");
            return checked_settings(state[0].cast<double>(), state[1].cast<double>(), state[2].cast<double>(),
                                    state[3].cast<py::int_>(), state[4].cast<double>(), state[5].cast<double>());
          }))
      .def("__repr__", [](const SolverSettings& s) {
        // Python's float repr: std::to_string printed every tolerance as 0.000000.
        auto number = [](double v) { return std::string(py::repr(py::float_(v))); };
        return "SolverSettings(feastol=" + number(s.feastol) + ", abstol=" + number(s.abstol) +
               ", reltol=" + number(s.reltol) + ", max_iter=" + std::to_string(s.max_iter) +
               ", barrier=" + number(s.barrier) + ", centrality_tol=" + number(s.centrality_tol) + ")";
      });

  m.attr("CONE_MAX_VARIABLES") = kConeMaxVars;
  m.attr("CONE_MAX_ROWS") = kConeMaxRows;
  m.attr("CONE_MAX_CONES") = kConeMaxCones;
  m.def("solve_cone_program", &solve_cone_program, py::arg("c"), py::arg("G"), py::arg("h"), py::arg("l"),
        py::arg("soc_dims"), py::arg("settings"));
  bind_lcp(m);
}
