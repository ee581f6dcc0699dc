"""DCOL's α by a GJK ray cast (dcol._native.gjk_alpha alone, and with the signed distance), and the GJK/EPA
signed distance's derivatives (dcol._native.gjk_distance_jacobian, what
dcol.dynamics.CollisionModel computes for polytopes, spheres, capsules, padded polygons and cylinders), against the
cone programs (dcol.geom.proximity_gradient and
dcol.geom.distance_jacobian, solved tightly) and central differences along the bodies' rigid motions.

α and its gradient are compared on separated, touching (α = 1, by scaling the origins' offset: α is
positively homogeneous in it) and deeply overlapping pairs. The distance's derivatives are compared with the
cone program's where the shapes are apart, and with central differences everywhere (overlapping: EPA's
minimum translation distance, which the cone program does not compute); the witness points and the normal
only where they move smoothly (the central differences' two sides agree).
"""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from dcol import _native
from dcol.geom import distance_jacobian, proximity, proximity_gradient
from dcol.solvers import SolverSettings, Status
from tests.support.oracle import rotation_matrix
from tests.support.shapes import KINDS, random_configuration

TIGHT = SolverSettings(feastol=1e-10, abstol=1e-10, reltol=1e-10)
CORE_KINDS = ["polytope", "sphere", "capsule", "polygon"]
PAIRS = [(a, b) for i, a in enumerate(CORE_KINDS) for b in CORE_KINDS[i:]]
# Cylinders against every shape with a core and each other: GJK on the cylinder's support function, the
# features it ends on refined to rounding (gjk.cpp's refine_round_distance and refine_round_scaling).
CYLINDER_PAIRS = [("cylinder", kind) for kind in [*CORE_KINDS, "cylinder"]]
# Pairs with a cone or an ellipsoid, left to the cone programs.
ROUND_PAIRS = [(a, b) for i, a in enumerate(KINDS) for b in KINDS[i:] if {a, b} & {"cone", "ellipsoid"}]
STEP = 1e-6


def scaled_apart(config, factor):
    """The configuration with shape b's body moved so that the shapes' frame origins' offset is scaled."""
    a, r_a, q_a, b, r_b, q_b = config
    frame_a = r_a + rotation_matrix(q_a) @ a.offset_position
    frame_b = r_b + rotation_matrix(q_b) @ b.offset_position
    return a, r_a, q_a, b, r_b + (factor - 1.0) * (frame_b - frame_a), q_b


def moved(config, k, step):
    """The configuration after the rigid motion step·e_k of [δp_a, δθ_a, δp_b, δθ_b] (Q ← exp(δθ^) Q)."""
    a, r_a, q_a, b, r_b, q_b = config
    poses = [[np.array(r_a, float), np.array(q_a, float)], [np.array(r_b, float), np.array(q_b, float)]]
    side, j = divmod(k, 6)
    if j < 3:
        poses[side][0][j] += step
    else:
        turn = Rotation.from_rotvec(step * np.eye(3)[j - 3]) * Rotation.from_quat(np.roll(poses[side][1], -1))
        poses[side][1] = np.roll(turn.as_quat(), 1)
    return a, poses[0][0], poses[0][1], b, poses[1][0], poses[1][1]


def configurations(rng, regimes=("separated", "near", "penetrating"), count=4, pairs=PAIRS):
    for kind_a, kind_b in pairs:
        for regime in regimes:
            for _ in range(count):
                yield kind_a, kind_b, random_configuration(kind_a, kind_b, rng, regime, offsets=True)


@pytest.mark.parametrize("pairs", [PAIRS, CYLINDER_PAIRS], ids=["cores", "cylinders"])
@pytest.mark.parametrize("scaling", [None, 1.0, 0.05])
def test_alpha_and_its_gradient_match_the_cone_program(scaling, pairs, rng):
    """None: as drawn; 1.0: scaled to touch (α = 1); 0.05: deeply overlapping (α = 0.05 of the drawn one's)."""
    compared = 0
    for kind_a, kind_b, config in configurations(rng, pairs=pairs):
        if scaling is not None:
            drawn = _native.gjk_distance_jacobian(*config)
            if drawn is None:
                continue
            config = scaled_apart(config, scaling / drawn["alpha"] if scaling == 1.0 else scaling)
        found = _native.gjk_distance_jacobian(*config)
        if found is None:  # overlapping flat cores: the cone program's, as CollisionModel does
            continue
        value = proximity(*config, settings=TIGHT)
        assert value.status == Status.SOLVED
        what = f"{kind_a}–{kind_b}: α {found['alpha']} vs cone program {value.alpha}"
        assert found["alpha"] == pytest.approx(value.alpha, rel=1e-8, abs=1e-12), what
        alone = _native.gjk_alpha(*config)  # without the signed distance: the same ray cast
        assert alone["alpha"] == found["alpha"] and np.array_equal(alone["d_alpha"], found["d_alpha"]), what
        # SMOOTHED: α is not differentiable there (features touching flat on flat), or too near to tell; the
        # gradient (and α) given are then the barrier-smoothed problem's.
        cone = proximity_gradient(*config, parameterization="rigid", settings=TIGHT)
        if cone.status == Status.SOLVED:
            scale = np.abs(cone.gradient).max()
            np.testing.assert_allclose(found["d_alpha"], cone.gradient, rtol=0, atol=1e-8 * scale, err_msg=what)
            compared += 1
    assert compared >= len(pairs) * 6


def test_alpha_alone_is_left_to_the_cone_program_for_cones_and_ellipsoids(rng):
    for kind_a, kind_b, config in configurations(rng, regimes=("separated",), count=1, pairs=ROUND_PAIRS):
        assert _native.gjk_alpha(*config) is None, f"{kind_a}–{kind_b}"


@pytest.mark.parametrize("pairs", [PAIRS, CYLINDER_PAIRS], ids=["cores", "cylinders"])
def test_distance_derivatives_match_the_cone_program_apart(pairs, rng):
    compared = 0
    for kind_a, kind_b, config in configurations(rng, regimes=("separated", "near"), pairs=pairs):
        found = _native.gjk_distance_jacobian(*config)
        if found is None or found["distance"] <= 1e-3:
            continue
        # The cone program's derivatives are its barrier-smoothed problem's (DISTANCE_SETTINGS).
        cone = distance_jacobian(*config)
        what = f"{kind_a}–{kind_b}"
        assert found["distance"] == pytest.approx(cone.distance, rel=1e-7, abs=1e-8), what
        np.testing.assert_allclose(found["d_distance"], cone.d_distance, rtol=1e-5, atol=1e-5, err_msg=what)
        compared += 1
    assert compared >= len(pairs) * 4


@pytest.mark.parametrize("pairs", [PAIRS, CYLINDER_PAIRS], ids=["cores", "cylinders"])
def test_derivatives_match_central_differences(pairs, rng):
    fields = ("alpha", "distance", "p_a", "p_b", "normal")
    compared = {"apart": 0, "overlapping": 0}
    for kind_a, kind_b, config in configurations(rng, count=3, pairs=pairs):
        found = _native.gjk_distance_jacobian(*config)
        if found is None:
            continue
        sides = [
            (
                _native.gjk_distance_jacobian(*moved(config, k, STEP)),
                _native.gjk_distance_jacobian(*moved(config, k, -STEP)),
            )
            for k in range(12)
        ]
        if any(plus is None or minus is None for plus, minus in sides):
            continue
        compared["apart" if found["distance"] > 0 else "overlapping"] += 1
        for field in fields:
            for k, (plus, minus) in enumerate(sides):
                change = np.asarray(plus[field]) - np.asarray(minus[field])
                if field in ("p_a", "p_b", "normal") and np.abs(change).max() > 1e-3:
                    continue  # a witness jumping between the points of a face or an edge
                numeric = change / (2 * STEP)
                analytic = np.asarray(found[f"d_{field}"])[..., k]
                np.testing.assert_allclose(
                    analytic, numeric, rtol=1e-4, atol=1e-4, err_msg=f"{kind_a}–{kind_b} ∂{field}/∂δ[{k}]"
                )
    assert compared["apart"] >= 20 and compared["overlapping"] >= 10, compared
