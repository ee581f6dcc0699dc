"""dcol.geom.collision_constraints: α over the knots against closed forms, its Jacobians against central
differences, and its argument checks."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from dcol.geom import Box, Cone, Cylinder, Obstacle, Sphere, collision_constraints, proximity

IDENTITY = [1.0, 0, 0, 0]


def test_two_spheres_closed_form():
    # Two spheres: α = ‖r_b − r_a‖ / (R_a + R_b), ∂α/∂δp_a = −(r_b − r_a) / (‖r_b − r_a‖ (R_a + R_b)).
    obstacles = [Obstacle(Sphere(0.5), [3.0, 0, 0], IDENTITY), Obstacle(Sphere(0.25), [0, -2.0, 1.0], IDENTITY)]
    r = np.array([[0.0, 0, 0], [1.0, 1.0, 0.5]])
    result = collision_constraints(Sphere(0.25), r, np.tile(IDENTITY, (2, 1)), obstacles)
    assert result.alpha.shape == (2, 2) and result.jacobian.shape == (2, 2, 6)
    for k in range(2):
        for j, obstacle in enumerate(obstacles):
            gap = obstacle.r - r[k]
            radii = 0.25 + obstacle.shape.R
            assert result.alpha[k, j] == pytest.approx(np.linalg.norm(gap) / radii, rel=1e-7)
            np.testing.assert_allclose(result.jacobian[k, j, :3], -gap / (np.linalg.norm(gap) * radii), atol=1e-6)
            np.testing.assert_allclose(result.jacobian[k, j, 3:], 0.0, atol=1e-6)


def knot_poses(rng: np.random.Generator, knots: int) -> tuple[np.ndarray, np.ndarray]:
    r = rng.uniform(-1.5, 1.5, size=(knots, 3))
    q = Rotation.random(knots, random_state=rng).as_quat(scalar_first=True)
    q[q[:, 0] < 0] *= -1  # w ≥ 0, where the "mrp" columns are the derivatives in p = v / (1 + w)
    return r, q


OBSTACLES = [
    Obstacle(Box([0.4, 0.3, 0.2]), [2.5, 0.0, 0.0], [0.9, 0.1, 0.2, 0.3]),
    Obstacle(Cylinder(0.3, 1.0), [0.0, 2.5, 0.5], [np.cos(np.pi / 4), 0, np.sin(np.pi / 4), 0]),  # upright
    Obstacle(Sphere(0.4), [-0.5, -0.5, -2.5], IDENTITY),
]


def test_alpha_matches_proximity_pair_by_pair():
    r, q = knot_poses(np.random.default_rng(1), 4)
    cone = Cone(H=1.0, beta=0.4)
    result = collision_constraints(cone, r, q, OBSTACLES)
    for k in range(4):
        for j, obstacle in enumerate(OBSTACLES):
            single = proximity(cone, r[k], q[k], obstacle.shape, obstacle.r, obstacle.q)
            assert result.alpha[k, j] == pytest.approx(single.alpha, rel=1e-7)
    assert np.all(result.status == 0)


def rotate(q: np.ndarray, delta_theta: np.ndarray) -> np.ndarray:
    """The quaternion of exp([δθ]×) Q, a world-frame rotation applied to q."""
    turned = Rotation.from_rotvec(delta_theta) * Rotation.from_quat(q, scalar_first=True)
    return turned.as_quat(scalar_first=True)


def mrp_quaternion(p: np.ndarray) -> np.ndarray:
    squared = p @ p
    return np.concatenate([[1.0 - squared], 2.0 * p]) / (1.0 + squared)


@pytest.mark.parametrize("parameterization", ["rigid", "mrp"])
def test_jacobian_against_central_differences(parameterization):
    rng = np.random.default_rng(2)
    r, q = knot_poses(rng, 3)
    shape = Box([0.3, 0.2, 0.5])
    result = collision_constraints(shape, r, q, OBSTACLES, parameterization=parameterization)
    step = 1e-6
    for k in range(3):
        mrp = q[k, 1:] / (1.0 + q[k, 0])
        for column in range(6):
            delta = np.zeros(6)
            delta[column] = step
            poses = []
            for sign in (1.0, -1.0):
                if parameterization == "rigid":
                    poses.append((r[k] + sign * delta[:3], rotate(q[k], sign * delta[3:])))
                else:
                    poses.append((r[k] + sign * delta[:3], mrp_quaternion(mrp + sign * delta[3:])))
            for j, obstacle in enumerate(OBSTACLES):
                plus, minus = (proximity(shape, *pose, obstacle.shape, obstacle.r, obstacle.q).alpha for pose in poses)
                assert result.jacobian[k, j, column] == pytest.approx((plus - minus) / (2 * step), rel=1e-4, abs=1e-6)


def test_bad_input_names_the_argument():
    r, q = np.zeros((2, 3)), np.tile(IDENTITY, (2, 1))
    with pytest.raises(ValueError, match="Obstacle r must be finite"):
        Obstacle(Sphere(0.5), [np.nan, 0, 0], IDENTITY)
    with pytest.raises(ValueError, match="Obstacle q must be finite"):
        Obstacle(Sphere(0.5), [0, 0, 0], [np.nan, 0, 0, 0])
    with pytest.raises(ValueError, match="Obstacle q: the quaternion must be nonzero"):
        Obstacle(Sphere(0.5), [0, 0, 0], [0, 0, 0, 0])
    with pytest.raises(TypeError, match="Obstacle shape must be a dcol.geom shape"):
        Obstacle("sphere", [0, 0, 0], IDENTITY)  # type: ignore[arg-type]
    obstacles = [Obstacle(Sphere(0.5), [3.0, 0, 0], IDENTITY)]
    with pytest.raises(ValueError, match=r"r must have shape \(3,\) or \(N, 3\)"):
        collision_constraints(Sphere(0.5), np.zeros((2, 2)), q, obstacles)
    with pytest.raises(ValueError, match=r"q must have shape \(2, 4\)"):
        collision_constraints(Sphere(0.5), r, np.tile(IDENTITY, (3, 1)), obstacles)
    with pytest.raises(ValueError, match="r must be finite"):
        collision_constraints(Sphere(0.5), [[np.nan, 0, 0], [0, 0, 0]], q, obstacles)
    with pytest.raises(ValueError, match="obstacles must be a non-empty sequence"):
        collision_constraints(Sphere(0.5), r, q, [])
    with pytest.raises(TypeError, match=r"obstacles\[1\] must be a dcol.geom.Obstacle"):
        collision_constraints(Sphere(0.5), r, q, [obstacles[0], Sphere(0.5)])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="obstacles must all give their orientation in one form"):
        collision_constraints(Sphere(0.5), r, q, [obstacles[0], Obstacle(Sphere(0.5), [0, 3.0, 0], np.eye(3))])
