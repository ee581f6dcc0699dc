"""Limits and settings: the face limit of the native solver and the solver settings' ranges."""

import numpy as np
import pytest

from dcol.geom import (
    MAX_FACES,
    Polygon,
    Polytope,
    Scene,
    Sphere,
    contact_jacobian,
    contact_jacobian_batch,
    contacts,
    distance_jacobian,
    distance_jacobian_batch,
    proximity,
    proximity_batch,
    proximity_gradient,
    proximity_gradient_batch,
    proximity_jacobian,
    proximity_jacobian_batch,
    shape_parameter_jacobian,
    signed_distance,
    signed_distance_batch,
)
from dcol.solvers import SolverSettings, solve_cone_program
from dcol.validation import MAX_THREADS
from tests.support.oracle import proximity_oracle

IDENTITY = [1.0, 0.0, 0.0, 0.0]


def test_too_many_faces():
    angles = np.linspace(0, 2 * np.pi, MAX_FACES + 2)[:-1]
    C = np.column_stack([np.cos(angles), np.sin(angles)])
    with pytest.raises(ValueError, match=f"at most {MAX_FACES}"):
        Polygon(C, np.ones(len(angles)), 0.1)


_R, _Q = np.zeros((2, 3)), np.tile(IDENTITY, (2, 1))
_BALL = Sphere(1.0)
_PAIR = (_BALL, _R, _Q, _BALL, _R + 1.5, _Q)  # a batch of two pose pairs
_ONE = (_BALL, _R[0], _Q[0], _BALL, _R[0] + 1.5, _Q[0])
_SCENE = Scene()
_SCENE.add_body(_BALL)
_SCENE.add_body(_BALL)

# Every dcol.geom and dcol.solvers function that takes threads or settings, as keywords → call.
_CALLS_WITH_THREADS = {
    "proximity_batch": lambda **kw: proximity_batch(*_PAIR, **kw),
    "proximity_jacobian_batch": lambda **kw: proximity_jacobian_batch(*_PAIR, **kw),
    "proximity_gradient_batch": lambda **kw: proximity_gradient_batch(*_PAIR, **kw),
    "contact_jacobian_batch": lambda **kw: contact_jacobian_batch(*_PAIR, **kw),
    "signed_distance_batch": lambda **kw: signed_distance_batch(*_PAIR, **kw),
    "distance_jacobian_batch": lambda **kw: distance_jacobian_batch(*_PAIR, **kw),
    "Scene.contacts": lambda **kw: _SCENE.contacts(_R + [[0.0, 0.0, 0.0], [1.5, 0.0, 0.0]], _Q, **kw),
}
_CALLS_WITH_SETTINGS = {
    **_CALLS_WITH_THREADS,
    "proximity": lambda **kw: proximity(*_ONE, **kw),
    "proximity_jacobian": lambda **kw: proximity_jacobian(*_ONE, **kw),
    "proximity_gradient": lambda **kw: proximity_gradient(*_ONE, **kw),
    "contact_jacobian": lambda **kw: contact_jacobian(*_ONE, **kw),
    "shape_parameter_jacobian": lambda **kw: shape_parameter_jacobian(*_ONE, **kw),
    "signed_distance": lambda **kw: signed_distance(*_ONE, **kw),
    "distance_jacobian": lambda **kw: distance_jacobian(*_ONE, **kw),
    "contacts": lambda **kw: contacts(*_ONE, **kw),
    "solve_cone_program": lambda **kw: solve_cone_program([1.0], [[-1.0]], [0.0], {"l": 1, "q": []}, **kw),
}


@pytest.mark.parametrize("function", sorted(_CALLS_WITH_THREADS))
def test_threads_must_be_a_sensible_count(function):
    """Zero, negative, fractional, boolean, textual and absurdly many threads are refused by name,
    before anything reaches the native core (which would print its signatures for 2**40)."""
    call = _CALLS_WITH_THREADS[function]
    call(threads=2)
    for threads in (0, -1, 1.5, True, "2", MAX_THREADS + 1, 2**40):
        with pytest.raises(ValueError, match=rf"threads must be an integer in \[1, {MAX_THREADS}\], got"):
            call(threads=threads)


@pytest.mark.parametrize("function", sorted(_CALLS_WITH_SETTINGS))
def test_settings_of_the_wrong_type_are_named(function):
    call = _CALLS_WITH_SETTINGS[function]
    call(settings=SolverSettings(barrier=1e-9, centrality_tol=1e-5))  # one every function takes
    # proximity is the native function itself, with the native wording.
    for settings, kind in ((3, "int"), ("fast", "str"), ({"max_iter": 10}, "dict")):
        with pytest.raises(TypeError, match=rf"settings must be a (dcol\.solvers\.)?SolverSettings.*, got .*{kind}"):
            call(settings=settings)


def test_torch_proximity_checks_threads_and_settings():
    torch = pytest.importorskip("torch")
    from dcol.geom.torch import proximity as torch_proximity

    r, q = torch.zeros((2, 3), dtype=torch.float64), torch.tensor(_Q)
    with pytest.raises(ValueError, match=rf"threads must be an integer in \[1, {MAX_THREADS}\], got 1099511627776"):
        torch_proximity(_BALL, r, q, _BALL, r + 3.0, q, threads=2**40)
    with pytest.raises(TypeError, match="settings must be a SolverSettings, got int"):
        torch_proximity(_BALL, r, q, _BALL, r + 3.0, q, settings=3)


@pytest.mark.parametrize(
    "field, value, error, message",
    [
        ("max_iter", 1.5, ValueError, "max_iter must be an integer ≥ 0, got 1.5"),
        ("max_iter", "10", ValueError, "max_iter must be an integer ≥ 0, got '10'"),
        ("max_iter", True, ValueError, "max_iter must be an integer ≥ 0, got True"),
        ("max_iter", 10**12, ValueError, r"max_iter must be in \[0, 10000\], got 1000000000000"),
        ("feastol", "1e-8", TypeError, "feastol must be a real number, got '1e-8'"),
        ("abstol", 1e-8j, TypeError, r"abstol must be a real number, got 1e-08j"),
        ("barrier", [0.0], TypeError, r"barrier must be a real number, got \[0.0\]"),
        ("centrality_tol", np.nan, ValueError, r"centrality_tol must be in \(0, 1\), got nan"),
    ],
    ids=["float", "str", "bool", "huge", "str tolerance", "complex", "list", "NaN"],
)
def test_settings_of_the_wrong_kind_are_named(field, value, error, message):
    """Values of the wrong kind were pybind11's list of signatures; numpy integers were refused."""
    with pytest.raises(error, match=message):
        SolverSettings(**{field: value})
    settings = SolverSettings()
    with pytest.raises(error, match=message):
        setattr(settings, field, value)
    assert repr(settings) == repr(SolverSettings())  # unchanged
    assert SolverSettings(max_iter=np.int64(7), feastol=np.float32(0.5)).max_iter == 7
    with pytest.raises(TypeError, match="reltol must be a real number, got None"):
        settings.reltol = None  # None stands for the default in the constructor only


def test_complex_arrays_are_refused():
    """numpy would cast complex numbers to real ones, dropping their imaginary parts."""
    with pytest.raises(TypeError, match="r_a must be an array of real numbers"):
        signed_distance_batch(Sphere(1.0), [[0.0, 0.0, 1j]], [IDENTITY], Sphere(1.0), [[3.0, 0.0, 0.0]], [IDENTITY])
    with pytest.raises(TypeError, match="b must be an array of real numbers, got complex ones"):
        Polytope(np.vstack([np.eye(3), -np.eye(3)]), np.ones(6) + 0j)
    with pytest.raises(TypeError, match="c must be an array of real numbers, got complex ones"):
        solve_cone_program([1.0 + 0j], [[-1.0]], [0.0], {"l": 1, "q": []})


def test_largest_polytope_still_solves():
    """A polytope at the face limit takes the largest solver size class."""
    rng = np.random.default_rng(3)
    normals = rng.normal(size=(MAX_FACES, 3))
    big = Polytope(normals / np.linalg.norm(normals, axis=1, keepdims=True), np.ones(MAX_FACES))
    res = proximity(big, np.zeros(3), IDENTITY, big, [2.5, 0.3, 0.1], IDENTITY)
    assert res.converged and 1.0 < res.alpha < 1.3
    alpha_ref, _ = proximity_oracle(big, np.zeros(3), IDENTITY, big, [2.5, 0.3, 0.1], IDENTITY)
    assert res.alpha == pytest.approx(alpha_ref, rel=1e-6)


def test_largest_polytopes_in_a_batch():
    """A batch of one shape pair too large for the lane kernels is solved pair by pair: every pose
    pair, the last incomplete group of lanes included, gets the α of the independent oracle."""
    rng = np.random.default_rng(4)
    normals = rng.normal(size=(MAX_FACES, 3))
    big = Polytope(normals / np.linalg.norm(normals, axis=1, keepdims=True), np.ones(MAX_FACES))
    count = 6
    r_b = np.column_stack([np.linspace(2.2, 3.0, count), rng.uniform(-0.3, 0.3, (count, 2))])
    q = np.tile(IDENTITY, (count, 1))
    batch = proximity_batch(big, np.zeros((count, 3)), q, big, r_b, q)
    assert np.all(batch.status == 0)
    for k in range(count):
        alpha_ref, _ = proximity_oracle(big, np.zeros(3), IDENTITY, big, r_b[k], IDENTITY)
        assert batch.alpha[k] == pytest.approx(alpha_ref, rel=1e-6)


@pytest.mark.parametrize(
    "field,value", [("feastol", 0.0), ("abstol", -1.0), ("reltol", 2.0), ("max_iter", -1), ("max_iter", 10**12)]
)
def test_invalid_settings_raise(field, value):
    with pytest.raises(ValueError, match=field):
        SolverSettings(**{field: value})
    settings = SolverSettings()
    with pytest.raises(ValueError, match=field):
        setattr(settings, field, value)


def test_settings_repr_rebuilds_the_settings():
    settings = SolverSettings(feastol=3e-10, abstol=2e-8, reltol=5e-9, max_iter=17, barrier=1e-9, centrality_tol=1e-5)
    rebuilt = eval(repr(settings), {"SolverSettings": SolverSettings})
    for field in ("feastol", "abstol", "reltol", "max_iter", "barrier", "centrality_tol"):
        assert getattr(rebuilt, field) == getattr(settings, field)


# Quaternions of any nonzero finite norm are orientations: their squared norm may under- or
# overflow (below 1e-154 or above 1e154) while the quaternion itself is fine.
QUATERNION_SCALES = (1e-300, 1e-160, 1e-155, 1e155, 1e160, 1e300)


@pytest.mark.parametrize("scale", QUATERNION_SCALES)
def test_quaternions_of_extreme_norm_give_the_unit_quaternions_results(scale):
    q_a = np.array([0.9, 0.3, -0.2, 0.25])
    q_b = np.array([0.1, -0.7, 0.4, 0.5])
    shapes = (Polytope(np.vstack([np.eye(3), -np.eye(3)]), np.ones(6)), Sphere(0.7))
    r_b = np.array([2.1, 0.4, -0.3])
    unit_a, unit_b = q_a / np.linalg.norm(q_a), q_b / np.linalg.norm(q_b)
    reference = proximity(shapes[0], np.zeros(3), unit_a, shapes[1], r_b, unit_b)
    result = proximity(shapes[0], np.zeros(3), scale * q_a, shapes[1], r_b, scale * q_b)
    assert result.converged and reference.converged
    assert result.alpha == pytest.approx(reference.alpha, rel=1e-12)
    np.testing.assert_allclose(result.normal, reference.normal, atol=1e-12)
    batch = proximity_batch(shapes[0], [np.zeros(3)], [scale * q_a], shapes[1], [r_b], [scale * q_b])
    assert batch.alpha[0] == pytest.approx(reference.alpha, rel=1e-12)
    contact = contacts(shapes[0], np.zeros(3), scale * q_a, shapes[1], r_b, scale * q_b, margin=10.0)
    reference_contact = contacts(shapes[0], np.zeros(3), unit_a, shapes[1], r_b, unit_b, margin=10.0)
    np.testing.assert_allclose(contact.separation, reference_contact.separation, rtol=1e-10)
    rigid = {"parameterization": "rigid"}
    jacobian = proximity_jacobian(shapes[0], np.zeros(3), scale * q_a, shapes[1], r_b, scale * q_b, **rigid)
    reference_jacobian = proximity_jacobian(shapes[0], np.zeros(3), unit_a, shapes[1], r_b, unit_b, **rigid)
    # The rotation of a rescaled quaternion differs in its last bits, which moves the derivatives,
    # those of the barrier problem where the solver stops, by up to ~1e-7 (entries of order 1).
    np.testing.assert_allclose(jacobian.jacobian, reference_jacobian.jacobian, rtol=0, atol=1e-6)
