"""Invalid shapes and poses raise ValueError / TypeError whose message names the offending argument."""

import copy
import pickle
import re

import numpy as np
import pytest

from dcol.geom import (
    Box,
    Capsule,
    Cone,
    ConvexMesh,
    Cylinder,
    Ellipsoid,
    Polygon,
    Polytope,
    ProximityResult,
    Sphere,
    proximity,
    proximity_batch,
)
from dcol.solvers import SolverSettings, Status

IDENTITY_Q = [1.0, 0.0, 0.0, 0.0]
CUBE_A = np.vstack([np.eye(3), -np.eye(3)])
SQUARE_C = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
CUBE_V = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
SHEAR = np.array([[1.0, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
REFLECTION = np.diag([1.0, 1.0, -1.0])


def names(argument):
    """Regex matching the argument's name as a whole word."""
    return rf"(?<![\w.]){re.escape(argument)}(?!\w)"


INVALID_SHAPES = [
    # non-finite and non-positive sizes
    (lambda: Sphere(np.nan), "R"),
    (lambda: Sphere(np.inf), "R"),
    (lambda: Sphere(0.0), "R"),
    (lambda: Sphere(-1.0), "R"),
    (lambda: Capsule(0.0, 1.0), "R"),
    (lambda: Capsule(1.0, -1.0), "L"),
    (lambda: Capsule(1.0, np.nan), "L"),
    (lambda: Cylinder(-0.5, 1.0), "R"),
    (lambda: Cylinder(0.5, 0.0), "L"),
    (lambda: Cylinder(0.5, np.inf), "L"),
    (lambda: Cone(0.0, 0.5), "H"),
    (lambda: Cone(np.nan, 0.5), "H"),
    # beta outside (0, pi/2)
    (lambda: Cone(1.0, 0.0), "beta"),
    (lambda: Cone(1.0, -0.3), "beta"),
    (lambda: Cone(1.0, np.pi / 2), "beta"),
    (lambda: Cone(1.0, 2.0), "beta"),
    (lambda: Cone(1.0, np.nan), "beta"),
    # P symmetric positive definite, (3, 3), finite
    (lambda: Ellipsoid(np.array([[1.0, 0.3, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])), "P"),
    (lambda: Ellipsoid(np.diag([1.0, -1.0, 1.0])), "P"),
    (lambda: Ellipsoid(np.diag([1.0, 0.0, 1.0])), "P"),
    (lambda: Ellipsoid(np.full((3, 3), np.nan)), "P"),
    (lambda: Ellipsoid(np.eye(2)), "P"),
    (lambda: Ellipsoid(np.ones(3)), "P"),
    # polytope: b > 0, bounded, shapes, finite
    (lambda: Polytope(CUBE_A, [1, 1, 1, 1, 1, 0.0]), "b"),
    (lambda: Polytope(CUBE_A, [1, 1, -1, 1, 1, 1.0]), "b"),
    (lambda: Polytope(CUBE_A, [1, 1, 1, 1, 1, np.inf]), "b"),
    (lambda: Polytope(np.where(CUBE_A == 1, np.nan, CUBE_A), np.ones(6)), "A"),
    (lambda: Polytope(np.eye(3), np.ones(3)), "A"),  # three half-spaces: an open octant
    (lambda: Polytope(np.vstack([np.eye(3), np.eye(3) + 0.1]), np.ones(6)), "A"),  # all normals in one octant
    (lambda: Polytope(np.vstack([np.eye(3), -np.eye(3)])[:5], np.ones(5)), "A"),  # one side left open
    (lambda: Polytope(np.ones((6, 2)), np.ones(6)), "A"),
    (lambda: Polytope(np.ones(6), np.ones(6)), "A"),
    (lambda: Polytope(CUBE_A, np.ones(5)), "b"),
    (lambda: Polytope(CUBE_A, np.ones((6, 1))), "b"),
    # boxes
    (lambda: Polytope(CUBE_A, [1.0, 1.0, 1e-10, 1.0, 1.0, 1e-10]), "A, b"),  # corners merge: no solid
    (lambda: Box([1.0, 0.0, 1.0]), "half_extents"),
    (lambda: Box([1.0, -1.0, 1.0]), "half_extents"),
    (lambda: Box([1.0, np.nan, 1.0]), "half_extents"),
    (lambda: Box([1.0, 1.0]), "half_extents"),
    # polytopes from vertices: the origin strictly inside a solid hull
    (lambda: Polytope.from_vertices(CUBE_V + 1.0), "V"),
    (lambda: Polytope.from_vertices(CUBE_V + [1.0, 0.0, 0.0]), "V"),  # origin on a face
    (lambda: Polytope.from_vertices(CUBE_V * [1.0, 1.0, 0.0]), "V"),  # flat
    (lambda: Polytope.from_vertices(CUBE_V[:3]), "V"),
    (lambda: Polytope.from_vertices(CUBE_V[:, :2]), "V"),
    (lambda: Polytope.from_vertices(np.where(CUBE_V > 0, np.inf, CUBE_V)), "V"),
    # padded polygons: d > 0, bounded, shapes, R > 0
    (lambda: Polygon(SQUARE_C, [1.0, 1.0, 0.0, 1.0], 0.1), "d"),
    (lambda: Polygon(SQUARE_C, [1.0, 1.0, -2.0, 1.0], 0.1), "d"),
    (lambda: Polygon(SQUARE_C, [1.0, 1.0, np.nan, 1.0], 0.1), "d"),
    (lambda: Polygon(SQUARE_C, np.ones(3), 0.1), "d"),
    (lambda: Polygon(SQUARE_C[:2], np.ones(2), 0.1), "C"),  # two edges: open
    (lambda: Polygon(SQUARE_C[:3], np.ones(3), 0.1), "C"),  # three edges, one side open
    (lambda: Polygon(np.ones((4, 3)), np.ones(4), 0.1), "C"),
    (lambda: Polygon(np.where(SQUARE_C > 0, np.inf, SQUARE_C), np.ones(4), 0.1), "C"),
    (lambda: Polygon(SQUARE_C, np.ones(4), 0.0), "R"),
    (lambda: Polygon(SQUARE_C, np.ones(4), -0.1), "R"),
    # offset poses
    (lambda: Sphere(1.0, offset=([0.0, np.nan, 0.0], IDENTITY_Q)), "offset"),
    (lambda: Sphere(1.0, offset=([0.0, 0.0], IDENTITY_Q)), "offset"),
    (lambda: Capsule(1.0, 1.0, offset=(np.zeros(3), np.zeros(4))), "offset"),
    (lambda: Cone(1.0, 0.5, offset=(np.zeros(3), SHEAR)), "offset"),
    (lambda: Box([1.0, 1.0, 1.0], offset=(np.zeros(3), REFLECTION)), "offset"),
]


@pytest.mark.parametrize("make,argument", INVALID_SHAPES)
def test_invalid_shape_raises_value_error_naming_the_argument(make, argument):
    with pytest.raises(ValueError, match=names(argument)):
        make()


@pytest.mark.parametrize(
    "make,argument",
    [
        (lambda: Sphere("big"), "R"),
        (lambda: Capsule(1.0, None), "L"),
        (lambda: Cone(1.0, "wide"), "beta"),
        (lambda: Polytope([["a", "b", "c"]], [1.0]), "A"),
        (lambda: Sphere(1.0, offset=[0.0, 0.0, 0.0]), "offset"),
    ],
)
def test_wrong_types_raise_type_error_naming_the_argument(make, argument):
    with pytest.raises(TypeError, match=names(argument)):
        make()


def test_valid_shapes_are_accepted():
    """The boundary cases just inside the rules are fine."""
    Cone(1.0, np.pi / 2 - 1e-6)
    Ellipsoid(np.diag([1e-6, 1.0, 1e6]))
    Polytope.from_vertices(CUBE_V + 0.99)
    Polygon(SQUARE_C[[0, 1, 2, 3, 0]], np.ones(5), 1e-6)


POSE = dict(a=Sphere(1.0), r_a=np.zeros(3), q_a=IDENTITY_Q, b=Sphere(1.0), r_b=[3.0, 0.0, 0.0], q_b=IDENTITY_Q)


@pytest.mark.parametrize(
    "argument,value",
    [
        ("r_a", [0.0, np.nan, 0.0]),
        ("r_b", [np.inf, 0.0, 0.0]),
        ("r_a", [0.0, 0.0]),
        ("r_b", np.zeros((3, 1))),
        ("q_a", [0.0, 0.0, 0.0, 0.0]),
        ("q_b", [1.0, np.nan, 0.0, 0.0]),
        ("q_a", [1.0, 0.0, 0.0]),
        ("q_b", np.eye(4)),
        ("q_a", 2.0 * np.eye(3)),
        ("q_b", SHEAR),
        ("q_a", REFLECTION),
        ("q_b", np.full((3, 3), np.nan)),
    ],
)
def test_invalid_pose_raises_value_error_naming_the_argument(argument, value):
    with pytest.raises(ValueError, match=names(argument)):
        proximity(**{**POSE, argument: value})


@pytest.mark.parametrize("argument,value", [("a", "sphere"), ("b", None), ("r_a", "here")])
def test_wrong_pose_types_raise_type_error_naming_the_argument(argument, value):
    with pytest.raises(TypeError, match=names(argument)):
        proximity(**{**POSE, argument: value})


def test_proximity_takes_its_arguments_like_a_python_function():
    """proximity parses its arguments itself (CPython's vectorcall): positional, keyword or mixed."""
    positional = proximity(*POSE.values())
    shuffled = dict(reversed(list(POSE.items())))
    for result in (proximity(**shuffled), proximity(*list(POSE.values())[:3], **dict(list(POSE.items())[3:]))):
        assert result.alpha == positional.alpha
    assert proximity(*POSE.values(), settings=None).alpha == positional.alpha
    # Keyword names made at run time are not the interned ones: matched by their text.
    built = {"".join(list(name)): value for name, value in POSE.items()}
    assert proximity(**built, **{"".join(["sett", "ings"]): None}).alpha == positional.alpha
    # sphere–sphere closed form |r_a − r_b|/(R_a + R_b)
    assert positional.alpha == pytest.approx(3.0 / 2.0, rel=1e-9)


@pytest.mark.parametrize(
    "call,argument",
    [
        (lambda: proximity(*list(POSE.values())[:5]), "q_b"),
        (lambda: proximity(*list(POSE.values())[1:], a=POSE["a"]), "a"),
        (lambda: proximity(**POSE, setting=None), "setting"),
        (lambda: proximity(**POSE, settings=1e-9), "settings"),
    ],
)
def test_proximity_argument_errors_name_the_argument(call, argument):
    with pytest.raises(TypeError, match=names(argument)):
        call()


def test_proximity_result_is_read_only_and_its_arrays_are_copies():
    result = proximity(*POSE.values())
    assert isinstance(result, ProximityResult) and type(result).__module__ == "dcol.geom"
    for field in ("alpha", "x", "p_a", "p_b", "distance", "normal", "status", "iterations", "converged"):
        with pytest.raises(AttributeError):
            setattr(result, field, 0)
    # unit spheres at the origin and (3, 0, 0)
    np.testing.assert_allclose(result.x, [1.5, 0.0, 0.0], atol=1e-8)
    np.testing.assert_allclose(result.normal, [1.0, 0.0, 0.0], atol=1e-8)
    result.x[0] = 7.0
    assert result.x[0] == pytest.approx(1.5)
    assert result.status == Status.SOLVED and result.converged and result.iterations > 0
    assert repr(result).startswith("ProximityResult(alpha=1.5")
    with pytest.raises(TypeError):
        ProximityResult()


def test_proximity_takes_settings_only_by_keyword():
    with pytest.raises(TypeError, match="6 positional arguments"):
        proximity(*POSE.values(), None)


def batch_arguments(n=4):
    """Valid arguments of proximity_batch for n pose pairs of two unit spheres."""
    q = np.tile(IDENTITY_Q, (n, 1))
    return dict(a=Sphere(1.0), r_a=np.zeros((n, 3)), q_a=q, b=Sphere(1.0), r_b=np.full((n, 3), 3.0), q_b=q.copy())


@pytest.mark.parametrize(
    "argument,value",
    [
        ("r_b", np.zeros((3, 3))),
        ("q_a", np.tile(IDENTITY_Q, (3, 1))),
        ("q_b", np.tile(np.eye(3), (5, 1, 1))),
        ("r_a", np.zeros(3)),
        ("q_b", np.zeros((4, 3))),
        ("a", [Sphere(1.0)] * 3),
        ("b", [Sphere(1.0)] * 5),
    ],
)
def test_batch_with_mismatched_sizes_raises(argument, value):
    with pytest.raises(ValueError, match=names(argument)):
        proximity_batch(**{**batch_arguments(), argument: value})


@pytest.mark.parametrize("argument,row", [("r_a", [np.nan, 0.0, 0.0]), ("q_b", [0.0, 0.0, 0.0, 0.0])])
def test_batch_with_an_invalid_pose_raises(argument, row):
    arguments = batch_arguments()
    arguments[argument] = arguments[argument].copy()
    arguments[argument][2] = row
    with pytest.raises(ValueError, match=names(argument)):
        proximity_batch(**arguments, threads=2)


PICKLED_SHAPES = [
    lambda: Box([0.5, 0.3, 0.2], offset=([0.1, 0.0, 0.2], [0.9, 0.1, 0.3, 0.2])),
    lambda: Polytope(CUBE_A, np.array([1.0, 2.0, 1.0, 1.5, 1.0, 0.5])),
    lambda: Capsule(0.2, 0.9),
    lambda: Cylinder(0.3, 0.6, offset=([0.0, 0.1, 0.0], np.eye(3))),
    lambda: Cone(1.2, 0.4),
    lambda: Sphere(0.4),
    lambda: Ellipsoid(np.diag([1.0, 4.0, 9.0]) + 0.2),
    lambda: Polygon(SQUARE_C, np.array([0.3, 0.4, 0.5, 0.2]), 0.05),
    lambda: ConvexMesh(CUBE_V @ SHEAR.T + 0.3, offset=([0.2, 0.0, 0.0], [0.8, 0.0, 0.6, 0.0])),
]


@pytest.mark.parametrize("make", PICKLED_SHAPES)
def test_shapes_pickle_and_copy_to_identical_shapes(make):
    """Pickling or copying replays the constructor: the copy has the same type, parameters and frame,
    and the same proximity results, bit for bit."""
    shape = make()
    probe = Sphere(0.3)
    r_probe = np.array([1.4, 0.3, -0.2])
    expected = proximity(shape, np.zeros(3), IDENTITY_Q, probe, r_probe, IDENTITY_Q)
    for copied in (pickle.loads(pickle.dumps(shape)), copy.deepcopy(shape), copy.copy(shape)):
        assert type(copied) is type(shape) and copied is not shape
        for name in ("offset_position", "offset_rotation", *type(shape)._arguments):
            np.testing.assert_array_equal(getattr(copied, name), getattr(shape, name))
        result = proximity(copied, np.zeros(3), IDENTITY_Q, probe, r_probe, IDENTITY_Q)
        assert (result.alpha, result.iterations) == (expected.alpha, expected.iterations)
        np.testing.assert_array_equal(result.normal, expected.normal)


def test_settings_and_results_pickle():
    settings = SolverSettings(feastol=3e-10, abstol=2e-8, reltol=5e-9, max_iter=17, barrier=1e-9, centrality_tol=1e-5)
    restored = pickle.loads(pickle.dumps(settings))
    assert repr(restored) == repr(settings) and restored is not settings
    result = proximity(Sphere(1.0), np.zeros(3), IDENTITY_Q, Box([0.5, 0.5, 0.5]), [2.0, 0.3, 0.1], IDENTITY_Q)
    for copied in (pickle.loads(pickle.dumps(result)), copy.deepcopy(result)):
        assert isinstance(copied, ProximityResult)
        for name in ("alpha", "distance", "status", "iterations", "converged"):
            assert getattr(copied, name) == getattr(result, name)
        for name in ("x", "p_a", "p_b", "normal"):
            np.testing.assert_array_equal(getattr(copied, name), getattr(result, name))
    with pytest.raises(ValueError, match="state must hold 16 values"):
        type(result).__reduce__(result)[0]((1.0, 2.0))


@pytest.mark.parametrize("q_a", [[np.nan, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0], 2.0 * np.eye(3)])
def test_orientation_of_the_right_shape_shows_its_values(q_a):
    """A quaternion or matrix refused for its values is shown, not its (correct) shape."""
    with pytest.raises(ValueError, match=r"q_a must be a quaternion .*, got (\[|array)") as info:
        proximity(Sphere(1.0), np.zeros(3), q_a, Sphere(1.0), [3.0, 0.0, 0.0], IDENTITY_Q)
    assert "shape" not in str(info.value).split(", got ")[-1]


def test_box_from_side_lengths():
    """Box.from_size takes side lengths, as trimesh and coal do: the box of half those extents."""
    box = Box.from_size([2.0, 1.0, 0.5], offset=([0.1, 0.0, 0.0], IDENTITY_Q))
    np.testing.assert_array_equal(box.half_extents, [1.0, 0.5, 0.25])
    np.testing.assert_array_equal(box.offset_position, [0.1, 0.0, 0.0])
    assert proximity(box, np.zeros(3), IDENTITY_Q, Sphere(0.5), [3.1, 0.0, 0.0], IDENTITY_Q).alpha == pytest.approx(2.0)
    for size, error in (([1.0, 0.0, 1.0], ValueError), ([1.0, 1.0], ValueError), ("big", TypeError)):
        with pytest.raises(error, match=names("size")):
            Box.from_size(size)
