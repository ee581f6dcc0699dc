"""Self-tests of the derivative oracle (tests/support/derivative_oracle.py) against finite differences.

References: α from tests/support/oracle.py's proximity_oracle (cvxpy + Clarabel); x, the contact points and the
normal from the derivative oracle's own refined solve (contact_oracle), whose values are checked here
against proximity_oracle and the closed-form gauges and support functions of tests/support/oracle.py. x from
proximity_oracle is only good to ~1e-5 (an interior-point solve at a 1e-10 gap; see _refine in
derivative_oracle.py), too coarse to difference finely, so it gets a loose check only.

Finite differences use the fourth-order central stencil. proximity_oracle's α is good to ~1e-11, so
steps of 1e-5–1e-6 would leave 1e-6–1e-5 of noise: its step is 1e-3 (errors ≤ 5e-7 measured). The
refined solve is accurate to rounding and takes step 1e-4 (errors ≤ 3e-9 measured), which also keeps
clear of changes of active constraints a few 1e-3 away.
"""

import numpy as np
import pytest
from scipy.linalg import expm

from dcol.geom import Capsule, Cone, Cylinder, Ellipsoid, Polygon, Polytope, Sphere
from tests.support.derivative_oracle import (
    SHAPE_PARAMETERS,
    complementarity_margin,
    contact_jacobian_oracle,
    contact_oracle,
    proximity_gradient_oracle,
    proximity_jacobian_oracle,
    shape_parameter_jacobian_oracle,
)
from tests.support.oracle import (
    bounding_radii,
    gauge,
    proximity_oracle,
    rotation_matrix,
    shape_frame,
    shape_kind,
    support,
)
from tests.support.shapes import body_position, random_quaternion, random_shape

ORACLE_STEP, EXACT_STEP = 1e-3, 1e-4
ALPHA_RTOL = 1e-6  # α rows and the distance, against proximity_oracle
EXACT_RTOL = 1e-7  # x, contact points and normal, against the refined solve
ORACLE_X_RTOL = 3e-2  # x rows against proximity_oracle: its x errors differentiate to up to 1.5e-2 relative

# Each kind on each side at least once, both regimes, with and without offset poses. The seeds give
# generic configurations: no parallel faces in contact, no contact within a few 1e-3 of an edge.
CASES = [
    ("polytope", "ellipsoid", "separated", True, 0),
    ("capsule", "polytope", "penetrating", False, 1),
    ("cylinder", "sphere", "separated", True, 2),
    ("cone", "capsule", "penetrating", True, 3),
    ("sphere", "cone", "separated", False, 4),
    ("ellipsoid", "polygon", "penetrating", True, 5),
    ("polygon", "cylinder", "separated", False, 6),
]
CASE_IDS = [f"{a}-{b}-{regime}" + ("-offset" if offsets else "") for a, b, regime, offsets, _ in CASES]
PARAMETERIZATIONS = ["quaternion", "mrp", "rigid"]

_OCTANTS = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)


def _shape(kind, rng, offsets):
    if kind == "polytope":
        # Random half-spaces make a simple polytope (three faces at each vertex); at a vertex where more
        # faces meet, as in the hull of random points, the dual is not unique and there is no derivative.
        offset = (0.5 * rng.normal(size=3), random_quaternion(rng)) if offsets else None
        normals = np.vstack([rng.normal(size=(3, 3)), _OCTANTS])
        return Polytope(normals, rng.uniform(0.4, 1.2, size=len(normals)), offset=offset)
    return random_shape(kind, rng, offsets)


def configuration(kind_a, kind_b, regime, offsets, seed):
    """(a, r_a, q_a, b, r_b, q_b) with the shape origins at a distance that sets the regime."""
    rng = np.random.default_rng(seed)
    a, b = _shape(kind_a, rng, offsets), _shape(kind_b, rng, offsets)
    (inner_a, outer_a), (inner_b, outer_b) = bounding_radii(a), bounding_radii(b)
    if regime == "penetrating":
        distance = rng.uniform(0.3, 0.8) * (inner_a + inner_b)
    else:
        distance = rng.uniform(1.2, 2.0) * (outer_a + outer_b)
    direction = rng.normal(size=3)
    origin_a = rng.normal(size=3)
    origin_b = origin_a + distance * direction / np.linalg.norm(direction)
    q_a, q_b = random_quaternion(rng), random_quaternion(rng)
    return a, body_position(a, origin_a, q_a), q_a, b, body_position(b, origin_b, q_b), q_b


@pytest.fixture(scope="module", params=CASES, ids=CASE_IDS)
def case(request):
    return configuration(*request.param)


# Pose coordinates θ of both bodies in each parameterization, mapped to arguments of the oracles.


def _hat(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def _mrp_rotation(p):
    """The standard MRP rotation I + (8[p]×² + 4(1 − pᵀp)[p]×)/(1 + pᵀp)²."""
    P, s = _hat(p), p @ p
    return np.eye(3) + (8 * P @ P + 4 * (1 - s) * P) / (1 + s) ** 2


def _unit_quaternion_w_positive(q):
    q = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return q if q[0] >= 0 else -q


def _mrp(q):
    unit = _unit_quaternion_w_positive(q)
    return unit[1:] / (1 + unit[0])


def _quaternion_of_mrp(p):
    return np.r_[1 - p @ p, 2 * p] / (1 + p @ p)


def _rotated_quaternion(q, dtheta):
    """exp(δθ) ⊗ q: the rotation by δθ (world frame) applied after q, as a quaternion product."""
    angle = np.linalg.norm(dtheta)
    w, v = np.cos(angle / 2), np.sinc(angle / (2 * np.pi)) * dtheta / 2  # sinc(x) = sin(πx)/(πx)
    return np.r_[w * q[0] - v @ q[1:], w * q[1:] + q[0] * v + np.cross(v, q[1:])]


def nominal_coordinates(config, parameterization):
    _, r_a, q_a, _, r_b, q_b = config
    if parameterization == "quaternion":
        return np.r_[r_a, q_a, r_b, q_b]
    if parameterization == "mrp":
        return np.r_[r_a, _mrp(q_a), r_b, _mrp(q_b)]
    return np.zeros(12)


def pose_arguments(config, parameterization, theta):
    """Oracle arguments (a, r_a, q_a, b, r_b, q_b) at pose coordinates θ; orientations (4,) or (3, 3)."""
    a, r_a, q_a, b, r_b, q_b = config
    if parameterization == "quaternion":
        return a, theta[:3], theta[3:7], b, theta[7:10], theta[10:]
    if parameterization == "mrp":
        return a, theta[:3], _mrp_rotation(theta[3:6]), b, theta[6:9], _mrp_rotation(theta[9:])
    Q_a, Q_b = expm(_hat(theta[3:6])) @ rotation_matrix(q_a), expm(_hat(theta[9:])) @ rotation_matrix(q_b)
    return a, r_a + theta[:3], Q_a, b, r_b + theta[6:9], Q_b


def central_difference(f, theta, step):
    """Fourth-order central differences of an array-valued f at θ: shape f(θ).shape + (len(θ),)."""
    columns = []
    for k in range(len(theta)):
        e = np.zeros(len(theta))
        e[k] = step
        values = [np.asarray(f(theta + t * e), dtype=float) for t in (-2, -1, 1, 2)]
        columns.append((values[0] - 8 * values[1] + 8 * values[2] - values[3]) / (12 * step))
    return np.stack(columns, axis=-1)


def _map_jacobian(f, point, step=1e-6):
    """Second-order central differences of a closed-form map (no solve): errors ~1e-11."""
    return np.column_stack([(f(point + step * e) - f(point - step * e)) / (2 * step) for e in np.eye(len(point))])


def assert_close(actual, expected, rtol, what, scale=None):
    """max |actual − expected| ≤ rtol · scale, by default scale = max |expected|."""
    scale = np.max(np.abs(expected)) if scale is None else scale
    error = np.max(np.abs(actual - expected))
    assert error <= rtol * scale, f"{what}: error {error:.2e} = {error / scale:.1e} relative, allowed {rtol:.0e}"


# Values of the refined cone program against the independent oracle.


def test_contact_oracle_values(case):
    a, r_a, q_a, b, r_b, q_b = case
    values = contact_oracle(*case)
    alpha, x = values["alpha"], values["x"]
    alpha_ref, x_ref = proximity_oracle(*case)
    assert alpha == pytest.approx(alpha_ref, rel=1e-9)
    assert gauge(a, r_a, q_a, x) == pytest.approx(alpha, rel=1e-9)  # x on the boundary of both scaled shapes
    assert gauge(b, r_b, q_b, x) == pytest.approx(alpha, rel=1e-9)
    np.testing.assert_allclose(x, x_ref, atol=1e-4 * (1 + np.max(np.abs(x))))

    (origin_a, _), (origin_b, _) = shape_frame(a, r_a, q_a), shape_frame(b, r_b, q_b)
    np.testing.assert_allclose(values["p_a"], origin_a + (x - origin_a) / alpha, rtol=1e-12)
    np.testing.assert_allclose(values["p_b"], origin_b + (x - origin_b) / alpha, rtol=1e-12)
    assert values["distance"] == pytest.approx(np.linalg.norm(origin_a - origin_b) * abs(1 - 1 / alpha), rel=1e-9)

    # The plane through x with the normal supports both scaled shapes, a below it and b above.
    n = values["normal"]
    assert np.linalg.norm(n) == pytest.approx(1.0, abs=1e-12)
    assert support(a, r_a, q_a, n, alpha) == pytest.approx(n @ x, abs=1e-9)
    assert support(b, r_b, q_b, -n, alpha) == pytest.approx(-n @ x, abs=1e-9)


@pytest.mark.parametrize(
    "R_a, R_b, offset", [(0.5, 0.3, [2.0, 0.3, 0.0]), (1.0, 0.7, [1.2, 0.3, 0.0]), (0.4, 0.4, [0.5, 0.3, 0.0])]
)
def test_complementarity_margin_of_two_spheres(R_a, R_b, offset):
    # Closed form: each sphere's cone has s = αR(1, u) and y = (1/(R_a + R_b))(1, −u), so v = y − s lies
    # √2 αR and √2/(R_a + R_b) from the two cone boundaries; the row α ≥ 0 has v = −α.
    identity = np.array([1.0, 0.0, 0.0, 0.0])
    center_distance = np.linalg.norm(offset)
    alpha = center_distance / (R_a + R_b)
    expected = min(alpha, np.sqrt(2) * alpha * min(R_a, R_b), np.sqrt(2) / (R_a + R_b))
    margin = complementarity_margin(Sphere(R_a), np.zeros(3), identity, Sphere(R_b), np.array(offset), identity)
    assert margin == pytest.approx(expected, rel=1e-9)


def test_mrp_convention():
    q = np.array([-0.3, 0.5, -0.7, 0.2])  # w < 0: the MRP is that of −q/‖q‖
    np.testing.assert_allclose(_mrp_rotation(_mrp(q)), rotation_matrix(q), atol=1e-14)
    assert np.linalg.norm(_mrp(q)) <= 1


# Pose Jacobians.


@pytest.mark.parametrize("parameterization", PARAMETERIZATIONS)
def test_pose_jacobian_against_finite_differences(case, parameterization):
    alpha, _, J = proximity_jacobian_oracle(*case, parameterization=parameterization)
    assert J.shape == (4, 14 if parameterization == "quaternion" else 12)
    theta = nominal_coordinates(case, parameterization)

    def oracle_solution(t):
        alpha_t, x_t = proximity_oracle(*pose_arguments(case, parameterization, t))
        return np.r_[x_t, alpha_t]

    def refined_x(t):
        return contact_oracle(*pose_arguments(case, parameterization, t))["x"]

    oracle_fd = central_difference(oracle_solution, theta, ORACLE_STEP)
    assert_close(J[3], oracle_fd[3], ALPHA_RTOL, f"∂α ({parameterization}) vs proximity_oracle")
    assert_close(J[:3], central_difference(refined_x, theta, EXACT_STEP), EXACT_RTOL, f"∂x ({parameterization})")
    assert_close(J[:3], oracle_fd[:3], ORACLE_X_RTOL, f"∂x ({parameterization}) vs proximity_oracle")

    alpha_g, gradient = proximity_gradient_oracle(*case, parameterization=parameterization)
    assert alpha_g == alpha
    np.testing.assert_array_equal(gradient, J[3])


def test_quaternion_jacobian_ignores_the_norm(case):
    _, _, q_a, _, _, q_b = case
    _, _, J = proximity_jacobian_oracle(*case)
    scale = np.max(np.abs(J))
    assert np.max(np.abs(J[:, 3:7] @ q_a)) <= 1e-12 * scale
    assert np.max(np.abs(J[:, 10:14] @ q_b)) <= 1e-12 * scale


def test_parameterizations_agree_through_the_rotation_maps(case):
    a, r_a, q_a, b, r_b, q_b = case
    _, _, J_quaternion = proximity_jacobian_oracle(*case)
    _, _, J_mrp = proximity_jacobian_oracle(*case, parameterization="mrp")
    _, _, J_rigid = proximity_jacobian_oracle(*case, parameterization="rigid")
    atol = 1e-8 * np.max(np.abs(J_quaternion))
    positions_q, positions_3 = [0, 1, 2, 7, 8, 9], [0, 1, 2, 6, 7, 8]
    np.testing.assert_allclose(J_mrp[:, positions_3], J_quaternion[:, positions_q], atol=atol)
    np.testing.assert_allclose(J_rigid[:, positions_3], J_quaternion[:, positions_q], atol=atol)

    # MRP through p ↦ q(p), at the unit quaternion with w ≥ 0 that p comes from; rigid through
    # δθ ↦ exp(δθ) ⊗ q at the given q.
    units = _unit_quaternion_w_positive(q_a), _unit_quaternion_w_positive(q_b)
    _, _, J_units = proximity_jacobian_oracle(a, r_a, units[0], b, r_b, units[1])
    bodies = [(slice(3, 7), slice(3, 6), units[0], q_a), (slice(10, 14), slice(9, 12), units[1], q_b)]
    for rotation_q, rotation_3, unit, q in bodies:
        dq_dp = _map_jacobian(_quaternion_of_mrp, _mrp(unit))
        np.testing.assert_allclose(J_mrp[:, rotation_3], J_units[:, rotation_q] @ dq_dp, atol=atol)
        dq_dtheta = _map_jacobian(lambda dtheta: _rotated_quaternion(np.asarray(q, dtype=float), dtheta), np.zeros(3))
        np.testing.assert_allclose(J_rigid[:, rotation_3], J_quaternion[:, rotation_q] @ dq_dtheta, atol=atol)


# Shape parameters.

_REBUILD = {
    "polytope": lambda p, offset: Polytope(p["A"], p["b"], offset=offset),
    "capsule": lambda p, offset: Capsule(p["R"], p["L"], offset=offset),
    "cylinder": lambda p, offset: Cylinder(p["R"], p["L"], offset=offset),
    "cone": lambda p, offset: Cone(p["H"], p["beta"], offset=offset),
    "sphere": lambda p, offset: Sphere(p["R"], offset=offset),
    "ellipsoid": lambda p, offset: Ellipsoid(p["P"], offset=offset),
    "polygon": lambda p, offset: Polygon(p["C"], p["d"], p["R"], offset=offset),
}


def _perturbed_shape(shape, name, index, delta):
    """The shape with entry ``index`` of attribute ``name`` moved by delta; P moves symmetrically (P_ij and
    P_ji by delta/2 each), along which the derivative is the oracle's entry [:, i, j]."""
    kind = shape_kind(shape)
    parameters = {key: np.array(getattr(shape, key), dtype=float) for key in SHAPE_PARAMETERS[kind]}
    if name == "P":
        parameters["P"][index] += delta / 2
        parameters["P"][index[::-1]] += delta / 2
    else:
        parameters[name][index] += delta
    return _REBUILD[kind](parameters, (shape.offset_position, shape.offset_rotation))


def test_shape_parameter_jacobians_against_finite_differences(case):
    a, r_a, q_a, b, r_b, q_b = case
    _, _, jacobians = shape_parameter_jacobian_oracle(*case)
    sides = {"a": a, "b": b}
    expected_keys = {(side, name) for side, shape in sides.items() for name in SHAPE_PARAMETERS[shape_kind(shape)]}
    assert set(jacobians) == expected_keys
    # Some entries have no effect (a capsule's length when its side is in contact): errors are relative
    # to the largest entry over all parameters.
    alpha_scale = max(np.max(np.abs(J[3])) for J in jacobians.values())
    x_scale = max(np.max(np.abs(J[:3])) for J in jacobians.values())
    for (side, name), J in jacobians.items():
        shape = sides[side]
        assert J.shape == (4,) + np.shape(getattr(shape, name))
        if name == "P":
            np.testing.assert_allclose(J, np.swapaxes(J, 1, 2), atol=1e-12 * np.max(np.abs(J)))

        alpha_fd, x_fd = [], []
        for index in np.ndindex(np.shape(getattr(shape, name))):

            def arguments(t, index=index):
                moved = _perturbed_shape(shape, name, index, t[0])
                return (moved, r_a, q_a, b, r_b, q_b) if side == "a" else (a, r_a, q_a, moved, r_b, q_b)

            alpha_fd.append(central_difference(lambda t: proximity_oracle(*arguments(t))[0], np.zeros(1), ORACLE_STEP))
            x_fd.append(central_difference(lambda t: contact_oracle(*arguments(t))["x"], np.zeros(1), EXACT_STEP))
        J_flat = J.reshape(4, -1)
        what = f"∂/∂{name} of shape {side}"
        assert_close(J_flat[3], np.concatenate(alpha_fd), ALPHA_RTOL, f"α {what} vs proximity_oracle", alpha_scale)
        assert_close(J_flat[:3], np.hstack(x_fd), EXACT_RTOL, f"x {what}", x_scale)


# Contact points, distance and normal.


@pytest.mark.parametrize("parameterization", PARAMETERIZATIONS)
def test_contact_jacobians_against_finite_differences(case, parameterization):
    values, jacobians = contact_jacobian_oracle(*case, parameterization=parameterization)
    for key, value in contact_oracle(*case).items():
        np.testing.assert_array_equal(values[key], value)
    _, _, J = proximity_jacobian_oracle(*case, parameterization=parameterization)
    np.testing.assert_array_equal(jacobians["alpha"], J[3])
    np.testing.assert_array_equal(jacobians["x"], J[:3])
    theta = nominal_coordinates(case, parameterization)

    def refined(t):
        v = contact_oracle(*pose_arguments(case, parameterization, t))
        return np.r_[v["p_a"], v["p_b"], v["normal"]]

    def distance(t):  # DCOL eq. 30 from proximity_oracle's α and the frame origins alone
        a, r_a, q_a, b, r_b, q_b = pose_arguments(case, parameterization, t)
        (origin_a, _), (origin_b, _) = shape_frame(a, r_a, q_a), shape_frame(b, r_b, q_b)
        return np.linalg.norm(origin_a - origin_b) * abs(1 - 1 / proximity_oracle(a, r_a, q_a, b, r_b, q_b)[0])

    fd = central_difference(refined, theta, EXACT_STEP)
    assert_close(jacobians["p_a"], fd[0:3], EXACT_RTOL, f"∂p_a ({parameterization})")
    assert_close(jacobians["p_b"], fd[3:6], EXACT_RTOL, f"∂p_b ({parameterization})")
    assert_close(jacobians["normal"], fd[6:9], EXACT_RTOL, f"∂normal ({parameterization})")
    distance_fd = central_difference(distance, theta, ORACLE_STEP)
    assert_close(jacobians["distance"], distance_fd, ALPHA_RTOL, f"∂distance ({parameterization})")
