"""Equality constraints of the planar engine (LCP-physics §A.4.1): each joint's Jacobian 𝓙_e is the
time derivative of its position error, checked by central differences along random velocities, and
a hinge's blocks are the ones the appendix writes."""

import numpy as np
import pytest

from dcol.dynamics.planar import AxisConstraint, Body, Circle, FixedJoint, Hinge, PlanarWorld, rectangle

BODIES = (Body(Circle(0.2)), Body(rectangle(1.0, 0.3), 2.0), Body(Circle(0.5), 0.5))
JOINTS = {
    "hinge between bodies": Hinge(0, (0.3, -0.1), 1, (-0.5, 0.1)),
    "hinge to the world": Hinge(2, (0.0, 0.4), None, (1.0, 2.0)),
    "fixed between bodies": FixedJoint(1, 2, (0.2, 0.7), angle=0.3),
    "fixed to the world": FixedJoint(0, None, (0.5, -1.0), angle=-0.2),
    "rotation held": AxisConstraint(1, "angle", 0.4),
    "x held": AxisConstraint(2, "x", -1.0),
    "y held": AxisConstraint(0, "y", 2.0),
}


@pytest.mark.parametrize("name", list(JOINTS))
def test_jacobian_is_the_derivative_of_the_position_error(name):
    world = PlanarWorld(BODIES, (JOINTS[name],))
    rng = np.random.default_rng(len(name))
    positions, velocities = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
    eps = 1e-6
    expected = (
        world.equality_error(positions + eps * velocities) - world.equality_error(positions - eps * velocities)
    ) / (2 * eps)
    np.testing.assert_allclose(world.equality_jacobian(positions) @ velocities.reshape(-1), expected, atol=1e-8)


def test_hinge_blocks_are_those_of_the_appendix():
    """𝓙_e^(a) = [−r_ay 1 0; r_ax 0 1], 𝓙_e^(b) = [r_by −1 0; −r_bx 0 −1], r the world-frame arms."""
    world = PlanarWorld(BODIES[:2], (Hinge(0, (1.0, 0.0), 1, (0.0, 2.0)),))
    positions = np.array([[np.pi / 2, 0.0, 0.0], [0.0, 5.0, 5.0]])
    r_a, r_b = (0.0, 1.0), (0.0, 2.0)  # body a turned by 90°: its (1, 0) points along world y
    expected = np.array(
        [[-r_a[1], 1, 0, r_b[1], -1, 0], [r_a[0], 0, 1, -r_b[0], 0, -1]],
    )
    np.testing.assert_allclose(world.equality_jacobian(positions), expected, atol=1e-15)


def test_errors_vanish_where_the_joint_holds():
    world = PlanarWorld(BODIES[:2], (Hinge(0, (1.0, 0.0), 1, (0.0, 2.0)), FixedJoint(1, None, (3.0, 4.0), 0.5)))
    positions = np.array([[0.0, 3.0, 2.0], [0.5, 3.0, 4.0]])
    positions[0, 1:] = positions[1, 1:] + [-2.0 * np.sin(0.5), 2.0 * np.cos(0.5)] - [1.0, 0.0]
    np.testing.assert_allclose(world.equality_error(positions), np.zeros(5), atol=1e-15)


def test_bad_joints_are_refused():
    with pytest.raises(ValueError, match=r"joints\[1\] binds body 7, but there are 3 bodies"):
        PlanarWorld(BODIES, (Hinge(0, (0, 0), 1, (0, 0)), Hinge(7, (0, 0), None, (0, 0))))
    with pytest.raises(ValueError, match="body_a and body_b must differ"):
        Hinge(1, (0, 0), 1, (0, 0))
    with pytest.raises(ValueError, match="body_a must be an integer ≥ 0"):
        FixedJoint(-1, None, (0, 0))
    with pytest.raises(ValueError, match="axis must be one of"):
        AxisConstraint(0, "z", 0.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="anchor_a must have shape"):
        Hinge(0, (0, 0, 0), None, (0, 0))
