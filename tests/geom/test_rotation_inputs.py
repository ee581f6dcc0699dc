"""Orientations as users bring them: scipy Rotation objects and scalar-last quaternions [x, y, z, w]
(through dcol.geom.quaternion_from_xyzw) give the results of the same rotation as a scalar-first
quaternion [w, x, y, z], in every function that takes a pose; scipy's own matrices are the reference."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import dcol.dynamics as dd
import dcol.geom as dg
from dcol.geom.rotations import rotation_matrix

BOX, CAPSULE = dg.Box([0.5, 0.3, 0.2]), dg.Capsule(0.2, 0.6)
R_A, R_B = np.array([0.0, 0.1, 0.0]), np.array([0.9, 0.2, 0.1])
ROTATIONS = Rotation.from_euler("xyz", [[0.3, -0.5, 1.1], [-1.2, 0.4, 2.5]])
XYZW = ROTATIONS.as_quat()  # scipy's order, unit
WXYZ = np.column_stack([XYZW[:, 3], XYZW[:, :3]])  # written out by hand, not by the function under test


def test_quaternion_from_xyzw_reorders_one_or_many():
    np.testing.assert_array_equal(dg.quaternion_from_xyzw(XYZW[0]), WXYZ[0])
    np.testing.assert_array_equal(dg.quaternion_from_xyzw(XYZW), WXYZ)
    with pytest.raises(ValueError, match=r"q_xyzw must have shape \(4,\) or \(N, 4\), got \(3,\)"):
        dg.quaternion_from_xyzw([0.0, 0.0, 1.0])
    with pytest.raises(ValueError, match=r"q_xyzw must be finite"):
        dg.quaternion_from_xyzw([0.0, 0.0, np.nan, 1.0])


def test_a_rotation_is_its_scipy_matrix():
    for rotation, quaternion in zip(ROTATIONS, WXYZ):
        np.testing.assert_allclose(rotation_matrix(rotation), rotation.as_matrix(), atol=1e-15)
        np.testing.assert_allclose(rotation_matrix(quaternion), rotation.as_matrix(), atol=1e-15)
    with pytest.raises(ValueError, match=r"q must be a quaternion .* or a scipy Rotation, got shape \(2, 4\)"):
        rotation_matrix(ROTATIONS, "q")  # two rotations where one is taken


def _poses():
    """The pose pair of b relative to a in the three spellings: Rotation, [x, y, z, w] converted, [w, x, y, z]."""
    return {
        "Rotation": (ROTATIONS[0], ROTATIONS[1]),
        "xyzw": (dg.quaternion_from_xyzw(XYZW[0]), dg.quaternion_from_xyzw(XYZW[1])),
        "wxyz": (WXYZ[0], WXYZ[1]),
    }


SINGLE = {
    "proximity": lambda q_a, q_b: dg.proximity(BOX, R_A, q_a, CAPSULE, R_B, q_b),
    "proximity_jacobian": lambda q_a, q_b: dg.proximity_jacobian(BOX, R_A, q_a, CAPSULE, R_B, q_b),
    "contact_jacobian mrp": lambda q_a, q_b: dg.contact_jacobian(
        BOX, R_A, q_a, CAPSULE, R_B, q_b, parameterization="mrp"
    ),
    "signed_distance": lambda q_a, q_b: dg.signed_distance(BOX, R_A, q_a, CAPSULE, R_B, q_b),
    "distance_jacobian": lambda q_a, q_b: dg.distance_jacobian(BOX, R_A, q_a, CAPSULE, R_B, q_b),
    "contacts": lambda q_a, q_b: dg.contacts(BOX, R_A, q_a, CAPSULE, R_B, q_b, margin=1.0, derivatives=True),
    "support_point": lambda q_a, q_b: dg.support_point(BOX, R_A, q_a, [1.0, 0.0, 0.0]),
}


def _fields(result):
    """The arrays and numbers of a result, by name."""
    if isinstance(result, np.ndarray):
        return {"value": result}
    names = [name for name in dir(result) if not name.startswith("_") and name not in ("rules",)]
    values = {name: getattr(result, name) for name in names}
    return {name: value for name, value in values.items() if isinstance(value, (float, int, np.ndarray))}


@pytest.mark.parametrize("name", sorted(SINGLE))
def test_single_pair_functions_agree_across_orientation_spellings(name):
    results = {spelling: _fields(SINGLE[name](*pose)) for spelling, pose in _poses().items()}
    reference = results.pop("wxyz")
    assert reference
    for spelling, fields in results.items():
        assert fields.keys() == reference.keys(), spelling
        for field, value in fields.items():
            # A Rotation's quaternion is the one scipy stores, the same unit quaternion: results agree
            # to the solver's rounding (the same problem solved from bit-different inputs).
            np.testing.assert_allclose(value, reference[field], rtol=1e-9, atol=1e-9, err_msg=f"{spelling} {field}")


def test_the_proximity_of_a_rotation_is_that_of_its_scipy_matrix():
    """The matrix path is independent of the quaternion conversion."""
    by_rotation = dg.proximity(BOX, R_A, ROTATIONS[0], CAPSULE, R_B, ROTATIONS[1])
    by_matrix = dg.proximity(BOX, R_A, ROTATIONS[0].as_matrix(), CAPSULE, R_B, ROTATIONS[1].as_matrix())
    assert by_rotation.alpha == pytest.approx(by_matrix.alpha, rel=1e-9)
    np.testing.assert_allclose(by_rotation.x, by_matrix.x, atol=1e-9)


def test_batches_take_a_rotation_of_n():
    n = 6
    rotations = Rotation.from_euler("zyx", np.random.default_rng(3).uniform(-np.pi, np.pi, size=(n, 3)))
    quaternions = np.roll(rotations.as_quat(), 1, axis=1)
    r_b = np.tile(R_B, (n, 1))
    for function in (dg.proximity_batch, dg.proximity_jacobian_batch, dg.signed_distance_batch):
        by_rotation = function(BOX, np.zeros((n, 3)), rotations, CAPSULE, r_b, rotations)
        by_quaternion = function(BOX, np.zeros((n, 3)), quaternions, CAPSULE, r_b, quaternions)
        np.testing.assert_allclose(by_rotation.alpha, by_quaternion.alpha, rtol=1e-9)


def test_scenes_shapes_and_models_take_rotations():
    offset_rotation = ROTATIONS[0]
    by_rotation = dg.Capsule(0.2, 0.6, offset=([0.1, 0.0, 0.0], offset_rotation))
    by_quaternion = dg.Capsule(0.2, 0.6, offset=([0.1, 0.0, 0.0], WXYZ[0]))
    np.testing.assert_allclose(by_rotation.offset_rotation, offset_rotation.as_matrix(), atol=1e-15)
    np.testing.assert_allclose(by_rotation.offset_rotation, by_quaternion.offset_rotation, atol=1e-15)

    scene = dg.Scene()
    scene.add_body(BOX)
    scene.add_body(CAPSULE)
    r = np.array([R_A, R_B])
    found = scene.contacts(r, ROTATIONS, margin=1.0)
    expected = scene.contacts(r, WXYZ, margin=1.0)
    np.testing.assert_allclose(found.point, expected.point, atol=1e-9)

    builder = dd.ModelBuilder()
    builder.add_body("link", parent=None, joint="hinge", kind="revolute", placement=([0, 0, 1], offset_rotation))
    builder.add_body("tip", parent="link", joint="slide", kind="prismatic", mass=1.0, inertia=np.eye(3))
    model = builder.build()
    np.testing.assert_allclose(model.joint_rotations[0], offset_rotation.as_matrix(), atol=1e-15)
