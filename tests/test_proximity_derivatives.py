"""Derivatives of DCOL proximity against the independent diffcp oracle (tests/derivative_oracle.py) and
against their own symmetries."""

import numpy as np
import pytest

from dcol.geom import (
    Box,
    Sphere,
    contact_jacobian,
    contact_jacobian_batch,
    proximity_gradient,
    proximity_gradient_batch,
    proximity_jacobian,
    proximity_jacobian_batch,
)
from dcol.solvers import SolverSettings, Status

from conftest import KINDS, random_configuration, random_quaternion
from derivative_oracle import PARAMETERIZATIONS, contact_jacobian_oracle
from oracle import rotation_matrix

PAIRS = [(ka, kb) for ka in KINDS for kb in KINDS]


def relative_error(value, reference):
    return np.max(np.abs(value - reference)) / max(np.max(np.abs(reference)), 1e-12)


def generic_configurations(rng, count_per_pair=1):
    """(kinds, configuration, oracle values and Jacobians) for every ordered pair, both regimes; the
    oracle refuses degenerate configurations (no derivative), which are skipped."""
    cases = []
    for index, (ka, kb) in enumerate(PAIRS * count_per_pair):
        regime = ("separated", "penetrating")[index % 2]
        for _ in range(5):
            config = random_configuration(ka, kb, rng, regime, offsets=index % 3 == 0)
            try:
                cases.append(((ka, kb), config, contact_jacobian_oracle(*config, parameterization="quaternion")))
                break
            except RuntimeError:
                continue
    return cases


@pytest.fixture(scope="module")
def cases():
    return generic_configurations(np.random.default_rng(20261123))


def test_all_pairs_agree_with_diffcp(cases):
    # The derivatives are those of the barrier-smoothed problem (μ = 1e-10), diffcp's those of the exact
    # one at its refined solution. Measured on this set: median relative error ≤ 1e-6 for every output,
    # largest ≲ 1e-4 (contacts near an edge, where the smoothing acts).
    assert len(cases) >= 45
    errors = {key: [] for key in ("alpha", "x", "p_a", "p_b", "distance", "normal")}
    for _, config, (values, reference) in cases:
        result = contact_jacobian(*config)
        assert result.status == Status.SOLVED
        assert abs(result.alpha - values["alpha"]) <= 1e-8 * max(1.0, values["alpha"])
        for key in errors:
            errors[key].append(relative_error(getattr(result, "d_" + key), reference[key]))
    for key, values in errors.items():
        assert np.median(values) <= 1e-6, key
        assert np.max(values) <= 3e-4, key


@pytest.mark.parametrize("parameterization", PARAMETERIZATIONS)
def test_parameterizations_agree_with_diffcp(parameterization, rng):
    for ka, kb in [("polytope", "ellipsoid"), ("capsule", "cone"), ("polygon", "cylinder"), ("sphere", "capsule")]:
        config = random_configuration(ka, kb, rng, "separated", offsets=True)
        values, reference = contact_jacobian_oracle(*config, parameterization=parameterization)
        result = proximity_jacobian(*config, parameterization=parameterization)
        expected = np.vstack([reference["x"], reference["alpha"]])
        assert result.jacobian.shape == expected.shape == (4, 14 if parameterization == "quaternion" else 12)
        assert relative_error(result.jacobian, expected) <= 1e-5, (ka, kb)


def test_quaternion_columns_see_the_normalization(rng):
    # J q = 0 on each body's quaternion columns: scaling q does not move anything.
    config = random_configuration("cone", "polytope", rng, "near")
    J = proximity_jacobian(*config).jacobian
    q_a, q_b = config[2], config[5]
    assert np.max(np.abs(J[:, 3:7] @ q_a)) <= 1e-10 * np.max(np.abs(J))
    assert np.max(np.abs(J[:, 10:14] @ q_b)) <= 1e-10 * np.max(np.abs(J))


@pytest.mark.parametrize("ka,kb", [("capsule", "polytope"), ("ellipsoid", "polygon"), ("cylinder", "sphere")])
def test_swapping_the_shapes_swaps_the_column_blocks(ka, kb, rng):
    a, r_a, q_a, b, r_b, q_b = random_configuration(ka, kb, rng, "separated", offsets=True)
    ab = contact_jacobian(a, r_a, q_a, b, r_b, q_b, parameterization="rigid")
    ba = contact_jacobian(b, r_b, q_b, a, r_a, q_a, parameterization="rigid")
    swap = np.r_[6:12, 0:6]
    for key, sign in (("alpha", 1), ("x", 1), ("distance", 1), ("normal", -1)):
        assert relative_error(sign * getattr(ba, "d_" + key)[..., swap], getattr(ab, "d_" + key)) <= 1e-5, key
    assert relative_error(ba.d_p_b[:, swap], ab.d_p_a) <= 1e-5


def test_one_rigid_motion_of_both_bodies_rotates_the_jacobian(rng):
    a, r_a, q_a, b, r_b, q_b = random_configuration("cone", "capsule", rng, "penetrating", offsets=True)
    q_motion = random_quaternion(rng)
    R, t = rotation_matrix(q_motion), rng.normal(size=3)

    def compose(q):  # quaternion of R Q(q)
        w1, v1, w2, v2 = q_motion[0], q_motion[1:], q[0], q[1:]
        return np.r_[w1 * w2 - v1 @ v2, w1 * v2 + w2 * v1 + np.cross(v1, v2)]

    before = proximity_jacobian(a, r_a, q_a, b, r_b, q_b, parameterization="rigid")
    after = proximity_jacobian(a, R @ r_a + t, compose(q_a), b, R @ r_b + t, compose(q_b), parameterization="rigid")
    assert abs(after.alpha - before.alpha) <= 1e-8
    # World-frame perturbations rotate with the world: J' = [R 0; 0 1] J blockdiag(Rᵀ, …).
    rows = np.eye(4)
    rows[:3, :3] = R
    columns = np.kron(np.eye(4), R.T)
    assert relative_error(after.jacobian, rows @ before.jacobian @ columns) <= 1e-5


@pytest.mark.parametrize("parameterization", PARAMETERIZATIONS)
def test_gradient_is_the_alpha_row_of_the_jacobian(parameterization, rng):
    for ka, kb in [("polytope", "polytope"), ("ellipsoid", "cone"), ("polygon", "capsule")]:
        config = random_configuration(ka, kb, rng, "near")
        gradient = proximity_gradient(*config, parameterization=parameterization)
        jacobian = proximity_jacobian(*config, parameterization=parameterization)
        assert gradient.alpha == pytest.approx(jacobian.alpha, abs=1e-12)
        assert relative_error(gradient.gradient, jacobian.jacobian[3]) <= 1e-6


def test_batch_matches_single_calls(rng):
    a, _, _, b, _, _ = random_configuration("capsule", "ellipsoid", rng, "near", offsets=True)
    poses = [random_configuration("capsule", "ellipsoid", rng, "near") for _ in range(11)]
    r_a = np.array([p[1] for p in poses])
    q_a = np.array([p[2] for p in poses])
    r_b = r_a + 2.0 * rng.normal(size=(11, 3))
    q_b = np.array([random_quaternion(rng) for _ in poses])
    batch = contact_jacobian_batch(a, r_a, q_a, b, r_b, q_b, parameterization="mrp", threads=2)
    gradients = proximity_gradient_batch(a, r_a, q_a, b, r_b, q_b, parameterization="mrp")
    jacobians = proximity_jacobian_batch(a, r_a, q_a, b, r_b, q_b, parameterization="mrp")
    # Lanes and single calls round differently and so stop at different points within the centrality
    # tolerance of the central path; the derivatives there differ by up to ~1e-5 relative.
    for i in range(11):
        single = contact_jacobian(a, r_a[i], q_a[i], b, r_b[i], q_b[i], parameterization="mrp")
        for key in ("d_alpha", "d_x", "d_p_a", "d_p_b", "d_distance", "d_normal"):
            scale = np.max(np.abs(getattr(single, key)))
            np.testing.assert_allclose(getattr(batch, key)[i], getattr(single, key), rtol=0, atol=1e-4 * scale)
        np.testing.assert_allclose(jacobians.jacobian[i, 3], batch.d_alpha[i], rtol=0, atol=1e-12)
        np.testing.assert_allclose(gradients.gradient[i], single.d_alpha, rtol=0, atol=1e-4 * np.max(np.abs(single.d_alpha)))


def test_coincident_origins_give_finite_derivatives():
    result = contact_jacobian(Box([1.0, 0.5, 0.7]), np.zeros(3), [1, 0, 0, 0], Sphere(0.4), np.zeros(3), [1, 0, 0, 0])
    assert result.alpha == pytest.approx(0.0, abs=1e-6)
    for key in ("d_alpha", "d_x", "d_p_a", "d_p_b", "d_distance", "d_normal"):
        assert np.all(np.isfinite(getattr(result, key))), key


def test_bad_arguments_are_refused():
    box, sphere = Box([1.0, 1.0, 1.0]), Sphere(0.5)
    pose = (np.zeros(3), [1.0, 0, 0, 0])
    with pytest.raises(ValueError, match="parameterization"):
        proximity_jacobian(box, *pose, sphere, np.ones(3), [1.0, 0, 0, 0], parameterization="euler")
    with pytest.raises(ValueError, match="quaternions"):
        proximity_jacobian(box, np.zeros(3), np.eye(3), sphere, np.ones(3), np.eye(3))
    with pytest.raises(ValueError, match="barrier"):
        proximity_jacobian(box, *pose, sphere, np.ones(3), [1.0, 0, 0, 0], settings=SolverSettings())
    with pytest.raises(ValueError, match="r_b"):
        proximity_jacobian(box, *pose, sphere, [np.nan, 0, 0], [1.0, 0, 0, 0])
    with pytest.raises(ValueError, match="barrier"):
        SolverSettings(barrier=-1.0)
    rigid = proximity_jacobian(box, np.zeros(3), np.eye(3), sphere, np.ones(3) * 3, np.eye(3), parameterization="rigid")
    assert rigid.jacobian.shape == (4, 12)
