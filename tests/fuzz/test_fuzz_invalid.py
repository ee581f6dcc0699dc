"""Fuzz of the argument checks: every public entry point given one corrupted argument (NaN or inf
entries, wrong lengths and ranks, zero and non-rotation orientations, wrong types, out-of-range
parameters) raises ValueError or TypeError, never another error, never a crash, never an answer.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dcol.dynamics import ModelBuilder, World
from dcol.geom import (
    Box,
    Capsule,
    Cone,
    Cylinder,
    Ellipsoid,
    Polygon,
    Polytope,
    Sphere,
    contact_jacobian,
    contacts,
    distance_jacobian,
    proximity,
    proximity_batch,
    proximity_gradient,
    proximity_jacobian,
    signed_distance,
    support_point,
)
from dcol.solvers import (
    SolverSettings,
    solve_boxed_lcp,
    solve_cone_program,
    solve_contact_ncp,
    solve_lcp,
    solve_mlcp,
)
from tests.support.fuzz import fuzz_settings, record

IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])
SQUARE = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])


def corrupted_vector(draw, length):
    """A value that is not a finite real vector of `length` entries."""
    kind = draw(st.sampled_from(["nan", "inf", "length", "rank", "type", "none", "strings"]))
    if kind in ("nan", "inf"):
        v = np.zeros(length)
        v[draw(st.integers(0, length - 1))] = np.nan if kind == "nan" else draw(st.sampled_from([np.inf, -np.inf]))
        return v
    if kind == "length":
        return np.ones(draw(st.integers(0, 8).filter(lambda n: n != length)))
    if kind == "rank":
        return np.ones((draw(st.integers(2, 3)), length))
    if kind == "type":
        return draw(st.sampled_from(["abc", object(), {"x": 1}, b"bytes"]))
    if kind == "none":
        return None
    return ["a"] * length


def corrupted_orientation(draw):
    """Not a nonzero finite quaternion, nor a rotation matrix."""
    kind = draw(st.sampled_from(["zero", "vector", "matrix", "reflection", "matrix nan"]))
    if kind == "zero":
        return np.zeros(4)
    if kind == "vector":
        return corrupted_vector(draw, 4)
    if kind == "matrix":
        return np.eye(3) + draw(st.floats(0.1, 10.0)) * np.ones((3, 3))
    if kind == "reflection":
        return -np.eye(3)
    return np.full((3, 3), np.nan)


def corrupted_shape(draw):
    return draw(st.sampled_from([None, 1.0, "sphere", np.zeros(3), Sphere, [None], [Sphere(1.0)]]))


PAIR_FUNCTIONS = {
    "proximity": proximity,
    "proximity_jacobian": proximity_jacobian,
    "proximity_gradient": proximity_gradient,
    "contact_jacobian": contact_jacobian,
    "signed_distance": signed_distance,
    "distance_jacobian": distance_jacobian,
    "contacts": contacts,
}


def expect_clear_error(family, call, detail):
    """call() must raise ValueError or TypeError (warnings, such as numpy's on a lossy conversion, are
    errors here: a lossy conversion is no check)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            call()
        except (ValueError, TypeError):
            return record(family, "error")
        except Exception as err:  # noqa: BLE001 — any other error is the finding
            return record(family, "wrong", f"{type(err).__name__}: {err} — {detail}")
    record(family, "wrong", f"no error — {detail}")


@fuzz_settings(short=60)
@given(data=st.data(), function=st.sampled_from(sorted(PAIR_FUNCTIONS)), argument=st.integers(0, 5))
def test_pair_functions_reject_corrupted_arguments(data, function, argument):
    args = [Sphere(1.0), np.zeros(3), IDENTITY, Box([0.5, 0.5, 0.5]), np.array([3.0, 0.0, 0.0]), IDENTITY]
    if argument in (0, 3):
        args[argument] = corrupted_shape(data.draw)
    elif argument in (1, 4):
        args[argument] = corrupted_vector(data.draw, 3)
    else:
        args[argument] = corrupted_orientation(data.draw)
    expect_clear_error("invalid inputs, shape pairs", lambda: PAIR_FUNCTIONS[function](*args), f"{function}{args}")


@fuzz_settings(short=20)
@given(data=st.data(), argument=st.integers(0, 5), count=st.integers(1, 4))
def test_proximity_batch_rejects_corrupted_arguments(data, argument, count):
    args = [
        Sphere(1.0),
        np.zeros((count, 3)),
        np.tile(IDENTITY, (count, 1)),
        Box([0.5, 0.5, 0.5]),
        np.tile([3.0, 0.0, 0.0], (count, 1)),
        np.tile(IDENTITY, (count, 1)),
    ]
    if argument in (0, 3):
        args[argument] = data.draw(st.sampled_from([None, "sphere", [Sphere(1.0)] * (count + 1), [None] * count]))
    elif argument in (1, 4):
        bad = np.zeros((count, 3))
        kind = data.draw(st.sampled_from(["nan", "count", "width"]))
        if kind == "nan":
            bad[data.draw(st.integers(0, count - 1)), data.draw(st.integers(0, 2))] = np.nan
        args[argument] = {"nan": bad, "count": np.zeros((count + 1, 3)), "width": np.zeros((count, 2))}[kind]
    else:
        bad = np.tile(IDENTITY, (count, 1))
        bad[data.draw(st.integers(0, count - 1))] = 0.0
        args[argument] = data.draw(st.sampled_from([bad, np.zeros((count, 3)), np.tile(IDENTITY, (count + 2, 1))]))
    threads = data.draw(st.sampled_from([None, 1, 0, -1]))
    if threads in (0, -1):
        args = [Sphere(1.0), np.zeros((count, 3)), np.tile(IDENTITY, (count, 1)), *args[3:]]
    expect_clear_error(
        "invalid inputs, batches", lambda: proximity_batch(*args, threads=threads), f"{args} threads={threads}"
    )


# Each takes a value that is no valid size: ≤ 0, NaN, ±inf or not a number.
SHAPE_CASES = {
    "Sphere R": lambda v: Sphere(v),
    "Capsule R": lambda v: Capsule(v, 1.0),
    "Capsule L": lambda v: Capsule(1.0, v),
    "Cylinder R": lambda v: Cylinder(v, 1.0),
    "Cone H": lambda v: Cone(v, 0.5),
    "Cone beta ≤ 0": lambda v: Cone(1.0, v),
    "Cone beta ≥ π/2": lambda v: Cone(1.0, np.pi / 2 - v if isinstance(v, float) else v),
    "Box half extent": lambda v: Box([1.0, v, 1.0]),
    "Ellipsoid eigenvalue": lambda v: Ellipsoid(np.diag([1.0, 1.0, v])),
    "Polygon R": lambda v: Polygon(SQUARE, np.ones(4), v),
    "Polygon d": lambda v: Polygon(SQUARE, np.array([1.0, 1.0, v, 1.0]), 0.1),
    "Polytope b": lambda v: Polytope(np.vstack([np.eye(3), -np.eye(3)]), np.array([1.0, 1.0, 1.0, 1.0, 1.0, v])),
    "offset position": lambda v: Sphere(1.0, offset=([0.0, v, 0.0], IDENTITY)),
}


@fuzz_settings(short=40)
@given(
    case=st.sampled_from(sorted(SHAPE_CASES)),
    value=st.one_of(
        st.sampled_from([0.0, -1.0, np.nan, np.inf, -np.inf, "abc", None]),
        st.floats(max_value=0.0, allow_nan=False),
    ),
)
def test_shapes_reject_invalid_parameters(case, value):
    """Sizes ≤ 0, NaN, ±inf or not numbers; cone angles outside (0, π/2); ellipsoids not positive
    definite; half-spaces that do not hold the origin strictly. (An offset position may be ≤ 0: only
    its NaN, inf and non-numbers are invalid.)"""
    if case == "offset position" and isinstance(value, float) and np.isfinite(value):
        return
    expect_clear_error("invalid inputs, shapes", lambda: SHAPE_CASES[case](value), f"{case}({value!r})")


@fuzz_settings(short=20)
@given(normals=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_polytopes_reject_unbounded_half_spaces(normals, seed):
    """At most three half-spaces, or normals all in one half of space: the set is unbounded."""
    rng = np.random.default_rng(seed)
    A = np.abs(rng.normal(size=(normals + 3, 3))) + 0.1  # every normal in the positive octant
    expect_clear_error("invalid inputs, shapes", lambda: Polytope(A, np.ones(len(A))), f"Polytope({A})")
    A = rng.normal(size=(normals, 3))
    expect_clear_error("invalid inputs, shapes", lambda: Polytope(A, np.ones(normals)), f"Polytope({A})")


A2 = np.array([[2.0, 1.0], [1.0, 2.0]])
B2 = np.array([-1.0, -1.0])
NCP_G = np.array([[2.0, 0.0, 0.5], [0.0, 2.0, 0.0], [0.5, 0.0, 1.0]])
NCP_g = np.array([0.3, 0.0, -1.0])
E0 = (np.zeros((0, 2)), np.zeros((0, 0)), np.zeros(0))

PAIR = (Sphere(1.0), np.zeros(3), IDENTITY, Sphere(1.0), np.array([3.0, 0.0, 0.0]), IDENTITY)

SOLVER_CASES = {
    "lcp A nan": lambda: solve_lcp(A2 * np.nan, B2),
    "lcp A not square": lambda: solve_lcp(np.ones((2, 3)), B2),
    "lcp b length": lambda: solve_lcp(A2, np.ones(3)),
    "lcp tol 0": lambda: solve_lcp(A2, B2, tol=0.0),
    "lcp tol nan": lambda: solve_lcp(A2, B2, tol=np.nan),
    "lcp method": lambda: solve_lcp(A2, B2, method="simplex"),
    "lcp pgs not symmetric": lambda: solve_lcp(np.array([[2.0, 1.0], [0.0, 2.0]]), B2, method="pgs"),
    "lcp ipm not monotone": lambda: solve_lcp(-A2, B2, method="ipm"),
    "lcp warm start": lambda: solve_lcp(A2, B2, warm_start="previous"),
    "lcp max_iterations negative": lambda: solve_lcp(A2, B2, max_iterations=-1),
    "lcp max_iterations fractional": lambda: solve_lcp(A2, B2, method="pgs", max_iterations=2.5),
    "boxed lo > hi": lambda: solve_boxed_lcp(A2, B2, [1.0, 1.0], [0.0, 0.0]),
    "boxed lo nan": lambda: solve_boxed_lcp(A2, B2, [np.nan, 0.0], [1.0, 1.0]),
    "boxed friction index out of range": lambda: solve_boxed_lcp(
        A2, B2, [0.0, 0.0], [1.0, 1.0], friction_index=[5, -1], mu=[1.0, 1.0]
    ),
    "boxed friction index on itself": lambda: solve_boxed_lcp(
        A2, B2, [0.0, 0.0], [1.0, 1.0], friction_index=[0, -1], mu=[1.0, 1.0]
    ),
    "boxed friction index floats": lambda: solve_boxed_lcp(
        A2, B2, [0.0, 0.0], [1.0, 1.0], friction_index=[-1.0, 0.0], mu=[1.0, 1.0]
    ),
    "boxed mu negative": lambda: solve_boxed_lcp(
        A2, B2, [0.0, 0.0], [1.0, 1.0], friction_index=[-1, 0], mu=[-1.0, -1.0]
    ),
    "boxed A indefinite": lambda: solve_boxed_lcp(-A2, B2, [0.0, 0.0], [1.0, 1.0]),
    "mlcp q length": lambda: solve_mlcp(np.eye(2), np.ones(3), *E0),
    "mlcp M nan": lambda: solve_mlcp(np.eye(2) * np.nan, np.ones(2), *E0),
    "mlcp A width": lambda: solve_mlcp(np.eye(2), np.ones(2), *E0, A=np.ones((1, 3))),
    "mlcp tol negative": lambda: solve_mlcp(np.eye(2), np.ones(2), *E0, tol=-1.0),
    "mlcp max_iterations negative": lambda: solve_mlcp(np.eye(2), np.ones(2), *E0, max_iterations=-1),
    "ncp g length": lambda: solve_contact_ncp(np.eye(4), np.ones(4), 0.5),
    "ncp G not symmetric": lambda: solve_contact_ncp(np.triu(np.ones((3, 3))), NCP_g, 0.5),
    "ncp G indefinite": lambda: solve_contact_ncp(-NCP_G, NCP_g, 0.5),
    "ncp mu negative": lambda: solve_contact_ncp(NCP_G, NCP_g, -0.5),
    "ncp mu nan": lambda: solve_contact_ncp(NCP_G, NCP_g, np.nan),
    "ncp mu length": lambda: solve_contact_ncp(NCP_G, NCP_g, [0.5, 0.5]),
    "ncp rho 0": lambda: solve_contact_ncp(NCP_G, NCP_g, 0.5, rho=0.0),
    "ncp rho nan": lambda: solve_contact_ncp(NCP_G, NCP_g, 0.5, rho=np.nan),
    "ncp max_iterations negative": lambda: solve_contact_ncp(NCP_G, NCP_g, 0.5, max_iterations=-1),
    "cone rows": lambda: solve_cone_program(np.ones(2), np.ones((3, 2)), np.ones(3), {"l": 2}),
    "cone c nan": lambda: solve_cone_program(np.ones(2) * np.nan, np.ones((3, 2)), np.ones(3), {"l": 3}),
    "cone empty cone": lambda: solve_cone_program(np.ones(2), np.ones((3, 2)), np.ones(3), {"l": 3, "q": [0]}),
    "cone too many rows": lambda: solve_cone_program(np.ones(2), np.ones((300, 2)), np.ones(300), {"l": 300}),
    "cone too many variables": lambda: solve_cone_program(np.ones(40), np.eye(40), np.ones(40), {"l": 40}),
    "cone key": lambda: solve_cone_program(np.ones(2), np.ones((3, 2)), np.ones(3), {"x": 3}),
    "settings max_iter negative": lambda: SolverSettings(max_iter=-1),
    "settings feastol nan": lambda: SolverSettings(feastol=np.nan),
    "settings barrier negative": lambda: SolverSettings(barrier=-1.0),
    "proximity settings": lambda: proximity(
        Sphere(1.0), np.zeros(3), IDENTITY, Sphere(1.0), [3, 0, 0], IDENTITY, settings=1
    ),
    "contacts margin nan": lambda: contacts(
        Sphere(1.0), np.zeros(3), IDENTITY, Sphere(1.0), [3, 0, 0], IDENTITY, margin=np.nan
    ),
    "contacts margin negative": lambda: contacts(
        Sphere(1.0), np.zeros(3), IDENTITY, Sphere(1.0), [3, 0, 0], IDENTITY, margin=-1.0
    ),
    "contacts feature tolerance 0": lambda: contacts(
        Sphere(1.0), np.zeros(3), IDENTITY, Sphere(1.0), [3, 0, 0], IDENTITY, feature_tolerance=0.0
    ),
    "jacobian parameterization": lambda: proximity_jacobian(
        Sphere(1.0), np.zeros(3), IDENTITY, Sphere(1.0), [3, 0, 0], IDENTITY, parameterization="euler"
    ),
    "jacobian matrix with quaternion columns": lambda: proximity_jacobian(
        Sphere(1.0), np.zeros(3), np.eye(3), Sphere(1.0), [3, 0, 0], IDENTITY, parameterization="quaternion"
    ),
    "support point zero direction": lambda: support_point(Sphere(1.0), np.zeros(3), IDENTITY, np.zeros(3)),
}


@fuzz_settings(short=40, long=200)
@given(case=st.sampled_from(sorted(SOLVER_CASES)))
def test_solvers_and_settings_reject_invalid_arguments(case):
    expect_clear_error("invalid inputs, solvers", SOLVER_CASES[case], case)


def free_body_world():
    return World(body_model(), dt=1e-3)


def body_model(mass=1.0, inertia=None, kind="floating"):
    """A model of one body, built (some checks run at build time)."""
    builder = ModelBuilder(gravity=(0.0, 0.0, -9.81))
    inertia = np.eye(3) / 150 if inertia is None else inertia
    builder.add_body("b", parent=None, joint="j", kind=kind, mass=mass, inertia=inertia)
    builder.add_shape("b", Box([0.1, 0.1, 0.1]))
    return builder.build()


DYNAMICS_CASES = {
    "mass 0": lambda: body_model(mass=0.0),
    "mass nan": lambda: body_model(mass=np.nan),
    "inertia indefinite": lambda: body_model(inertia=-np.eye(3)),
    "inertia not symmetric": lambda: body_model(inertia=np.triu(np.ones((3, 3)))),
    "inertia nan": lambda: body_model(inertia=np.full((3, 3), np.nan)),
    "joint kind": lambda: body_model(kind="hinge"),
    "world dt 0": lambda: World(free_body_world().model, dt=0.0),
    "world friction negative": lambda: World(free_body_world().model, friction=-0.1),
    "world restitution 2": lambda: World(free_body_world().model, restitution=2.0),
    "world contact model": lambda: World(free_body_world().model, contact_model="pgs"),
    "step q nan": lambda: free_body_world().step(np.r_[0.0, 0.0, np.nan, IDENTITY], np.zeros(6)),
    "step q zero quaternion": lambda: free_body_world().step(np.r_[0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0], np.zeros(6)),
    "step q length": lambda: free_body_world().step(np.zeros(6), np.zeros(6)),
    "step v inf": lambda: free_body_world().step(np.r_[0.0, 0.0, 1.0, IDENTITY], np.r_[np.inf, np.zeros(5)]),
    "step tau length": lambda: free_body_world().step(np.r_[0.0, 0.0, 1.0, IDENTITY], np.zeros(6), np.zeros(7)),
    "rollout_batch taus nan": lambda: free_body_world().rollout_batch(
        np.r_[0.0, 0.0, 1.0, IDENTITY][None], np.zeros((1, 6)), np.full((3, 6), np.nan)
    ),
    "step_batch q zero quaternion": lambda: free_body_world().step_batch(
        np.r_[0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0][None], np.zeros((1, 6))
    ),
    "step_batch threads 0": lambda: free_body_world().step_batch(
        np.r_[0.0, 0.0, 1.0, IDENTITY][None], np.zeros((1, 6)), threads=0
    ),
}


@fuzz_settings(short=20, long=100)
@given(case=st.sampled_from(sorted(DYNAMICS_CASES)))
def test_dynamics_rejects_invalid_arguments(case):
    expect_clear_error("invalid inputs, dynamics", DYNAMICS_CASES[case], case)


def test_complex_positions_are_refused_by_name():
    """The native pair functions once cast complex positions and orientations to real ones, dropping
    the imaginary parts with a ComplexWarning at most."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        with pytest.raises(TypeError, match="r_a must be an array of real numbers, got complex ones"):
            proximity(Sphere(1.0), np.array([0.0, 1j, 0.0]), IDENTITY, Sphere(1.0), [3.0, 0.0, 0.0], IDENTITY)
        with pytest.raises(TypeError, match="q_b must be an array of real numbers, got complex ones"):
            proximity(Sphere(1.0), [0.0, 0.0, 0.0], IDENTITY, Sphere(1.0), [3.0, 0.0, 0.0], [1.0 + 0j, 0, 0, 0])


def test_a_huge_integer_position_is_refused_by_name():
    """An integer position beyond float64's range (numpy raised a bare OverflowError)."""
    with pytest.raises(ValueError, match="r_a holds a number beyond float64's range"):
        signed_distance(Sphere(1.0), [10**400, 0, 0], IDENTITY, Sphere(1.0), [3.0, 0.0, 0.0], IDENTITY)


def test_a_list_of_one_shape_is_no_shape():
    """Every pair function refuses [shape] for a shape (signed_distance and distance_jacobian took it,
    through their batch functions)."""
    for function in PAIR_FUNCTIONS.values():
        with pytest.raises(TypeError):
            function([Sphere(1.0)], np.zeros(3), IDENTITY, Box([0.5, 0.5, 0.5]), np.array([3.0, 0.0, 0.0]), IDENTITY)
