"""Fuzz of dcol.geom: DCOL proximity, its derivatives, the signed distance and contacts over random
pairs of every kind, at length units 1e-4 … 1e4, penetrating, touching, coincident, near and far
apart, with quaternions of any norm and degenerate-but-valid shapes.

What is checked against what: α against the cvxpy + Clarabel oracle (tests/support/oracle.py) on the
same configuration in unit lengths and unit quaternions (α does not depend on either), against the
balls about each shape's origin that it holds and that hold it (α lies between the α of the two ball
pairs, a closed form), and against its own swap (α(a, b) = α(b, a)); touching pairs are built from the
oracle's α by the scaling law α(origins t times as far apart) = t α; the distance against
tests/support/distance_oracle.py. Answers with a success status must check out; otherwise the status
must say so.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dcol.geom import (
    Box,
    Capsule,
    Cone,
    Cylinder,
    Sphere,
    contact_jacobian,
    contacts,
    distance_jacobian,
    proximity,
    proximity_gradient,
    proximity_jacobian,
    signed_distance,
)
from dcol.solvers import Status
from tests.support.distance_oracle import euclidean_distance
from tests.support.distance_oracle import signed_distance as oracle_signed_distance
from tests.support.fuzz import (
    DEGENERATE,
    degenerate_shape,
    finite,
    fuzz_settings,
    norm_exponents,
    quaternion_with_norm,
    record,
    scale_exponents,
    seeds,
    unit,
)
from tests.support.optional import oracle
from tests.support.oracle import bounding_radii, gauge, proximity_oracle
from tests.support.shapes import KINDS, body_position, random_quaternion, random_shape, regime_distance, scaled_copy

cp = oracle("cvxpy")

REGIMES = ["penetrating", "near", "separated", "touching", "coincident", "far"]
SUCCESS = (Status.SOLVED, Status.SOLVED_INACCURATE, Status.SMOOTHED)


class Configuration:
    """Shapes a, b at body poses (r_a, q_a), (r_b, q_b) with unit quaternions, lengths of order one; the
    same rotations as the quaternions handed to dcol, qin_a and qin_b (of norms 10**e_a, 10**e_b, whose
    rounding, for subnormal norms, is part of the rotation); the distance D of the shape origins and
    the summed radii of the balls about the origins inside and around the shapes."""

    def __init__(self, a, b, origin_a, origin_b, q_a, q_b, e_a=0.0, e_b=0.0):
        self.a, self.b = a, b
        self.qin_a, self.qin_b = quaternion_with_norm(q_a, e_a), quaternion_with_norm(q_b, e_b)
        self.q_a, self.q_b = unit(self.qin_a), unit(self.qin_b)
        self.r_a, self.r_b = body_position(a, origin_a, self.q_a), body_position(b, origin_b, self.q_b)
        offset = origin_b - origin_a
        largest = np.abs(offset).max()  # the norm in two steps: its square would overflow beyond 1e154
        self.D = float(largest * np.linalg.norm(offset / largest)) if largest > 0 else 0.0
        (inner_a, outer_a), (inner_b, outer_b) = bounding_radii(a), bounding_radii(b)
        self.inner, self.outer = inner_a + inner_b, outer_a + outer_b

    def poses(self):
        return self.a, self.r_a, self.q_a, self.b, self.r_b, self.q_b

    def dcol_poses(self, s):
        """The poses handed to dcol, in units s: scaled shapes and positions, quaternions of any norm."""
        return scaled_copy(self.a, s), s * self.r_a, self.qin_a, scaled_copy(self.b, s), s * self.r_b, self.qin_b

    def oracle(self):
        return proximity_oracle(*self.poses())[0]


def place(a, b, rng, regime, far_exponent=3.0, e_a=0.0, e_b=0.0):
    """Configuration of a and b with their origins at the regime's distance along a random direction."""
    (inner_a, outer_a), (inner_b, outer_b) = bounding_radii(a), bounding_radii(b)
    inner, outer = inner_a + inner_b, outer_a + outer_b
    distance = {
        "touching": lambda: rng.uniform(inner, 2.0 * outer),
        "coincident": lambda: 0.0,
        "far": lambda: 10.0**far_exponent * outer,
    }.get(regime, lambda: regime_distance(a, b, rng, regime))()
    direction = unit(rng.normal(size=3))
    origin_a = rng.normal(size=3)
    q_a, q_b = random_quaternion(rng), random_quaternion(rng)
    config = Configuration(a, b, origin_a, origin_a + distance * direction, q_a, q_b, e_a, e_b)
    if regime == "touching":
        # Scaling law: with the origins 1/α times as far apart, the shapes touch (α = 1).
        config = Configuration(a, b, origin_a, origin_a + distance / config.oracle() * direction, q_a, q_b, e_a, e_b)
    return config


def expected_alpha(config, regime, tolerance=1e-6):
    """(α, exact) of the oracle, or None when it cannot certify α (Clarabel short of its tolerances on
    extreme aspect ratios): the other checks still apply. exact: Clarabel's x lies in both shapes
    scaled by its α (closed-form gauges, to `tolerance`). Otherwise α is the largest gauge at that x,
    an upper bound on the true α (as at any x): Clarabel's feasibility tolerance is absolute, and on
    shapes 1e-6 across an x a hair off its constraints lies far outside the scaled shapes, with an α
    far below the true one (a needle cylinder against a needle cone, both ~2e-6 across: α 8.0e-6 at an
    x of gauges 2.3e-3 and 9.1e-4, where dcol's α 1.30e-3 holds at its own x)."""
    if regime == "coincident":
        return 0.0, True
    if regime == "touching":
        return 1.0, True
    try:
        alpha, x = proximity_oracle(*config.poses())
    except (RuntimeError, cp.error.SolverError):
        return None
    try:
        largest = max(gauge(config.a, config.r_a, config.q_a, x), gauge(config.b, config.r_b, config.q_b, x))
    except RuntimeError:  # a polygon's gauge is a cone program: Clarabel's α as it is
        return alpha, True
    if largest <= alpha * (1 + tolerance) + 1e-8:
        return alpha, True
    return largest, False


def alpha_problem(alpha, expected, tolerance, absolute=1e-8, proven_above=False):
    """What is wrong with α against expected_alpha's answer `expected`, or None: above the oracle's α (or
    its upper bound) by more than `tolerance` (relative, plus `absolute`), or below its exact α by as
    much, unless `proven_above`: dcol's x lies in both shapes scaled by α (closed-form gauges), so that
    α is at least the true α, and an oracle's α above it is the oracle's shortfall (a flat cone against
    a sliver polygon 5e4 sizes apart: Clarabel once held 48181.84 at its x, dcol 48175.80 at its own)."""
    if expected is None:
        return None
    value, exact = expected
    if alpha > value * (1 + tolerance) + absolute:
        return f"alpha {alpha!r} above the oracle's {value!r}" + ("" if exact else " (the largest gauge at its x)")
    if exact and not proven_above and alpha < value * (1 - tolerance) - absolute:
        return f"alpha {alpha!r} below the oracle's {value!r}"
    return None


def check_proximity(family, config, regime, scale, settled, tolerance=1e-6):
    """proximity on the configuration in units `scale`. `settled`: an ordinary input, where anything but
    SOLVED is a wrong answer too. `tolerance`: relative, of α against the oracle."""
    a, r_a, q_a, b, r_b, q_b = config.dcol_poses(scale)
    detail = f"regime={regime} scale={scale:.3g} q_a={q_a} q_b={q_b} a={config.a!r} b={config.b!r}"
    res = proximity(a, r_a, q_a, b, r_b, q_b)
    if res.status != Status.SOLVED:
        if settled:
            return record(family, "wrong", f"status {res.status.name} on an ordinary input: {detail}")
        return record(family, "status")
    if not finite(res.alpha, res.x, res.p_a, res.p_b, res.distance, res.normal):
        return record(family, "nan", f"SOLVED with a non-finite output: alpha={res.alpha} {detail}")
    problems = []
    # Between the α of the inner balls and of the outer balls (closed forms).
    if not config.D / config.outer * (1 - 1e-6) <= res.alpha <= config.D / config.inner * (1 + 1e-6) + 1e-8:
        problems.append(f"alpha {res.alpha!r} outside [{config.D / config.outer!r}, {config.D / config.inner!r}]")
    swapped = proximity(b, r_b, q_b, a, r_a, q_a)
    if swapped.status == Status.SOLVED and abs(swapped.alpha - res.alpha) > 1e-7 * res.alpha + 1e-8:
        problems.append(f"alpha(a, b) = {res.alpha!r} but alpha(b, a) = {swapped.alpha!r}")
    # x lies in both shapes scaled by α (a polygon's gauge is a cone program: skipped when Clarabel
    # cannot certify it).
    x = res.x / scale
    x_holds = True
    for shape, r, q in ((config.a, config.r_a, config.q_a), (config.b, config.r_b, config.q_b)):
        try:
            value = gauge(shape, r, q, x)
        except RuntimeError:
            x_holds = False
            continue
        if value > res.alpha * (1 + 1e-6) + 1e-7:
            problems.append(f"x outside the scaled shape {shape!r}: gauge {value!r}")
            x_holds = False
    expected = expected_alpha(config, regime, tolerance)
    wrong_alpha = alpha_problem(res.alpha, expected, tolerance, proven_above=x_holds)
    if wrong_alpha is not None:
        problems.append(wrong_alpha)
    record(family, "wrong" if problems else "ok", "; ".join(problems) + " — " + detail)


@fuzz_settings(short=40)
@given(
    kind_a=st.sampled_from(KINDS),
    kind_b=st.sampled_from(KINDS),
    regime=st.sampled_from(REGIMES),
    seed=seeds,
    scale_exponent=scale_exponents,
    e_a=norm_exponents,
    e_b=norm_exponents,
    far_exponent=st.floats(1.0, 6.0),
)
def test_proximity_of_random_pairs(kind_a, kind_b, regime, seed, scale_exponent, e_a, e_b, far_exponent):
    """Every pair of kinds, with offsets, in every regime, units 1e-4 … 1e4, quaternion norms
    1e-320 … 1e300, up to 1e6 sizes apart."""
    rng = np.random.default_rng(seed)
    a, b = random_shape(kind_a, rng, offset=True), random_shape(kind_b, rng, offset=True)
    config = place(a, b, rng, regime, far_exponent, e_a, e_b)
    # Ordinary: neither extreme units nor extreme distances, where SOLVED is expected.
    ordinary = abs(scale_exponent) <= 2 and (regime != "far" or far_exponent <= 3)
    check_proximity("proximity, random pairs", config, regime, 10.0**scale_exponent, settled=ordinary)


@fuzz_settings(short=25)
@given(
    kind_a=st.sampled_from(DEGENERATE),
    kind_b=st.sampled_from(DEGENERATE + KINDS),
    regime=st.sampled_from(["penetrating", "near", "separated", "touching", "coincident"]),
    seed=seeds,
    aspect_exponent=st.floats(-6.0, 0.0),
    scale_exponent=scale_exponents,
)
def test_proximity_of_degenerate_shapes(kind_a, kind_b, regime, seed, aspect_exponent, scale_exponent):
    """Aspect ratios down to 1e-6, polytopes of MAX_FACES faces or with nearly repeated faces: a
    failure status is allowed (the solver may not reach its tolerances), a wrong α with SOLVED is not."""
    rng = np.random.default_rng(seed)
    t = 10.0**aspect_exponent
    try:
        a = degenerate_shape(kind_a, t, rng)
        b = degenerate_shape(kind_b, 10.0 ** rng.uniform(aspect_exponent, 0.0), rng) if kind_b in DEGENERATE else None
        b = random_shape(kind_b, rng, offset=True) if b is None else b
    except ValueError:
        return record("proximity, degenerate shapes", "error")
    try:
        config = place(a, b, rng, regime)
    except RuntimeError:  # the oracle could not certify the touching configuration
        return
    # Clarabel itself loses digits on aspect ratios of 1e-6 (tan β of a flat cone is 1e6).
    check_proximity("proximity, degenerate shapes", config, regime, 10.0**scale_exponent, False, tolerance=1e-4)


def test_needle_cylinder_against_needle_cone_takes_the_oracle_at_its_word_only_where_its_x_holds():
    """A needle cylinder against a needle cone, both ~2e-6 across, their origins 3e-6 apart (from the
    degenerate family): Clarabel ends OPTIMAL at α 8.0e-6, but its x lies outside the cylinder scaled
    by 280 times that α (its absolute feasibility tolerance is as wide as the shapes), while dcol's α
    1.2996e-3 holds at dcol's x (closed-form gauges). The oracle's α counts only where its own x holds
    it; elsewhere the largest gauge at its x is an upper bound, which dcol's α keeps below."""
    a, b = Cylinder(1.959153116901161e-06, 1.0), Cone(1.0, 6.073601277943975e-06)
    r_a = np.array([0.494714687315827, 0.4213479021382639, -0.03899645489034614])
    q_a = np.array([0.0728985947937912, -0.3749545985395284, -0.2998584179946032, 0.8741737659464082])
    r_b = np.array([0.49471742663029766, 0.42134836090401373, -0.03899519017420058])
    q_b = np.array([-0.41667387780587184, -0.536473915626415, 0.7246970143227301, 0.11572750251517562])
    config = Configuration(a, b, r_a, r_b, q_a, q_b)  # no offsets: the bodies' origins are the shapes'
    res = proximity(*config.poses())
    assert res.status == Status.SOLVED
    assert max(gauge(a, r_a, q_a, res.x), gauge(b, r_b, q_b, res.x)) <= res.alpha * (1 + 1e-6)
    assert alpha_problem(res.alpha, expected_alpha(config, "penetrating", 1e-4), 1e-4) is None


# --- derivatives ------------------------------------------------------------------------------------------

DERIVATIVES = {
    "proximity_jacobian": lambda p, config: proximity_jacobian(*config, parameterization=p),
    "proximity_gradient": lambda p, config: proximity_gradient(*config, parameterization=p),
    "contact_jacobian": lambda p, config: contact_jacobian(*config, parameterization=p),
    "distance_jacobian": lambda p, config: distance_jacobian(*config, parameterization=p),
}


@fuzz_settings(short=40)
@given(
    function=st.sampled_from(sorted(DERIVATIVES)),
    parameterization=st.sampled_from(["quaternion", "mrp", "rigid"]),
    kind_a=st.sampled_from(KINDS),
    kind_b=st.sampled_from(KINDS),
    regime=st.sampled_from(["penetrating", "near", "separated", "far"]),
    seed=seeds,
    scale_exponent=scale_exponents,
    e_a=norm_exponents,
    e_b=norm_exponents,
    far_exponent=st.floats(1.0, 8.0),
)
def test_derivatives_are_finite_with_a_success_status(
    function, parameterization, kind_a, kind_b, regime, seed, scale_exponent, e_a, e_b, far_exponent
):
    """Every derivative function at random configurations: a success status (SOLVED, SOLVED_INACCURATE,
    SMOOTHED) comes with finite values and derivatives and with the oracle's α."""
    rng = np.random.default_rng(seed)
    a, b = random_shape(kind_a, rng, offset=True), random_shape(kind_b, rng, offset=True)
    config = place(a, b, rng, regime, far_exponent, e_a, e_b)
    poses = config.dcol_poses(10.0**scale_exponent)
    family = f"derivatives, {function}"
    res = DERIVATIVES[function](parameterization, poses)
    if res.status not in SUCCESS:
        return record(family, "status")
    fields = [value for name, value in vars(res).items() if name not in ("status", "iterations")]
    detail = f"{parameterization} regime={regime} D/size={config.D / config.outer:.3g} norms=1e{e_a:.1f},1e{e_b:.1f}"
    if not finite(*fields):
        return record(family, "nan", f"{Status(int(res.status)).name} with non-finite outputs: {detail}")
    tolerance = 1e-6 if res.status != Status.SOLVED_INACCURATE else 1e-3
    # Between the α of the inner and of the outer balls, and the oracle's α where it is reliable
    # (beyond 1e5 sizes apart Clarabel itself stops short of its tolerances).
    low, high = config.D / config.outer, config.D / config.inner
    if not low * (1 - tolerance) <= res.alpha <= high * (1 + tolerance):
        return record(family, "wrong", f"alpha {res.alpha!r} outside [{low!r}, {high!r}]: {detail}")
    expected = expected_alpha(config, regime, tolerance) if config.D / config.outer < 1e5 else None
    wrong_alpha = alpha_problem(res.alpha, expected, tolerance, absolute=0.0)
    if wrong_alpha is not None:
        return record(family, "wrong", f"{wrong_alpha}: {detail}")
    record(family, "ok")


@fuzz_settings(short=10)
@given(
    kind_a=st.sampled_from(["sphere", "ellipsoid"]),
    kind_b=st.sampled_from(["sphere", "ellipsoid"]),
    regime=st.sampled_from(["penetrating", "near", "separated"]),
    seed=seeds,
)
def test_alpha_gradient_matches_central_differences_of_the_oracle(kind_a, kind_b, regime, seed):
    """Between smooth, strictly convex shapes α is smooth in the positions: ∂α/∂r_b from
    proximity_gradient against central differences of the oracle's α."""
    rng = np.random.default_rng(seed)
    config = place(random_shape(kind_a, rng), random_shape(kind_b, rng), rng, regime)
    res = proximity_gradient(*config.poses(), parameterization="rigid")
    if res.status not in SUCCESS:
        return record("derivatives, gradient vs differences", "status")
    h = 1e-4 * config.outer
    differences = np.empty(3)
    for i in range(3):
        step = h * np.eye(3)[i]
        plus = proximity_oracle(config.a, config.r_a, config.q_a, config.b, config.r_b + step, config.q_b)[0]
        minus = proximity_oracle(config.a, config.r_a, config.q_a, config.b, config.r_b - step, config.q_b)[0]
        differences[i] = (plus - minus) / (2 * h)
    # The oracle's α is good to about its tolerance: its differences to that over h.
    error = np.abs(res.gradient[6:9] - differences).max()
    wrong = error > 1e-4 * np.abs(differences).max() + 1e-7 / h
    record("derivatives, gradient vs differences", "wrong" if wrong else "ok", f"{res.gradient[6:9]} vs {differences}")


def test_quaternion_jacobian_of_tiny_norms_says_so():
    """The derivative with respect to the raw components scales as 1/‖q‖: for ‖q‖ = 1e-310 it is not
    representable, which the status says (NUMERICAL_ERROR) rather than SOLVED with inf as it once did;
    the rigid columns at the same pose are finite and SOLVED."""
    q = quaternion_with_norm(np.array([0.3, -0.5, 0.7, 0.4]), -310.0)
    pair = (Sphere(1.0), np.zeros(3), q, Box([0.5, 0.5, 0.5]), np.array([3.0, 0.0, 0.0]), [1.0, 0.0, 0.0, 0.0])
    for function in (proximity_jacobian, proximity_gradient, contact_jacobian):
        assert function(*pair).status == Status.NUMERICAL_ERROR
        res = function(*pair, parameterization="rigid")
        fields = [value for name, value in vars(res).items() if name not in ("status", "iterations")]
        assert res.status in SUCCESS and finite(*fields)


def test_distance_jacobian_far_apart_says_so():
    """A polytope and a capsule (seeded) 1.8e6 m apart: the distance is found, but the solve's KKT
    system gives no finite derivatives; the status says so (NUMERICAL_ERROR) rather than
    SOLVED_INACCURATE with NaN as it once did."""
    rng = np.random.default_rng(0)
    a, b = random_shape("polytope", rng, offset=True), random_shape("capsule", rng, offset=True)
    res = distance_jacobian(*place(a, b, rng, "far", 6.0).dcol_poses(1.0))
    assert res.status == Status.NUMERICAL_ERROR or (
        res.status in SUCCESS and finite(res.d_distance, res.d_p_a, res.d_p_b, res.d_normal)
    )


# --- signed distance and contacts -------------------------------------------------------------------------


@fuzz_settings(short=30)
@given(
    kind_a=st.sampled_from(KINDS),
    kind_b=st.sampled_from(KINDS),
    regime=st.sampled_from(["penetrating", "near", "separated", "touching", "far"]),
    seed=seeds,
    scale_exponent=scale_exponents,
    e_a=norm_exponents,
    far_exponent=st.one_of(st.floats(1.0, 30.0), st.floats(30.0, 250.0)),
)
def test_signed_distance_and_contacts(kind_a, kind_b, regime, seed, scale_exponent, e_a, far_exponent):
    """signed_distance: a success status comes with finite outputs, the oracle's Euclidean distance when
    apart, a negative one when α < 1. contacts (which has no status) with a margin beyond the distance:
    at least one contact, unit normals and orthonormal frames, finite separations no smaller than the
    signed distance."""
    rng = np.random.default_rng(seed)
    a, b = random_shape(kind_a, rng, offset=True), random_shape(kind_b, rng, offset=True)
    config = place(a, b, rng, regime, far_exponent, e_a)
    s = 10.0**scale_exponent
    poses = config.dcol_poses(s)
    ratio = config.D / config.outer
    detail = f"regime={regime} D/size={ratio:.3g} scale={s:.3g} a={a!r} b={b!r}"
    res = signed_distance(*poses)
    if res.status not in SUCCESS:
        record("distance, signed_distance", "status")
    elif not finite(res.distance, res.p_a, res.p_b, res.normal, res.alpha):
        record("distance, signed_distance", "nan", f"{Status(int(res.status)).name} non-finite: {detail}")
    else:
        size = s * config.outer
        wrong = abs(np.linalg.norm(res.normal) - 1.0) > 1e-6
        if regime in ("separated", "far") and ratio < 1e6:
            reference = s * euclidean_distance(*config.poses())[0]
            tolerance = (1e-6 if res.status == Status.SOLVED else 1e-3) * max(size, reference)
            wrong |= abs(res.distance - reference) > tolerance
        if regime == "penetrating":
            wrong |= res.distance > 1e-9 * size
        record("distance, signed_distance", "wrong" if wrong else "ok", f"{res.distance!r}: {detail}")

    margin = 2.0 * s * config.D + 1.0 * s * config.outer
    found = contacts(*poses, margin=margin)
    if found.status not in SUCCESS:  # a failed solve finds no contacts and says so
        return record("distance, contacts", "status")
    if len(found) == 0:
        return record("distance, contacts", "wrong", f"no contact within margin {margin!r}: {detail}")
    frames = np.stack([found.normal, found.tangent1, found.tangent2], axis=1)
    if not finite(found.point, found.separation, frames):
        return record("distance, contacts", "nan", f"non-finite contact: {detail}")
    problems = []
    if np.abs(frames @ frames.transpose(0, 2, 1) - np.eye(3)).max() > 1e-6:
        problems.append(f"frames not orthonormal, normals {found.normal}")
    if res.status == Status.SOLVED and regime in ("separated", "far") and ratio < 1e6:
        # Apart, the contacts are the features within the feature tolerance (1e-3 of the size) of the
        # witness plane: their separations are the distance, give or take that.
        slack = 2e-3 * s * config.outer
        if not res.distance - slack <= found.separation.min() <= res.distance + slack:
            problems.append(f"separations {found.separation} but signed distance {res.distance!r}")
    record("distance, contacts", "wrong" if problems else "ok", "; ".join(problems) + " — " + detail)


def test_capsule_box_contact_with_a_margin_reaches_the_overlap():
    """The box and the capsule of test_ncp_capsule_does_not_sink_into_a_box_at_5_ms (tests/fuzz/
    test_fuzz_simulation.py) at that rollout's step 30 overlap by 10.6 mm (the distance oracle), the
    capsule's end against an edge of the box's top face, whose normal is within a few degrees of the
    pair's. With a margin, as the World asks, the contacts reach that depth: the face's clipped patch
    (an edge–edge contact at +7.3 mm) no longer stands for the pair."""
    box = Box([0.13360279451910995, 0.05577931201875658, 0.10117366632876595])
    capsule = Capsule(0.19523284255720003, 0.273528609733259)
    r_a = [0.0037421028940864435, -0.035308648986314146, 0.1018803053150791]
    q_a = [0.5439823989243175, -0.0022214672050836944, 0.0014409832084250277, 0.8390924492041354]
    r_b = [-0.061321518068473385, -0.03482056256295886, 0.39764744196399565]
    q_b = [0.5725567478681985, 0.030024757526175543, -0.02001089557878866, 0.8190707225046084]
    depth = oracle_signed_distance(box, r_a, q_a, capsule, r_b, q_b)[0]
    assert depth < -0.01
    for margin in (0.0, 0.01):
        found = contacts(box, r_a, q_a, capsule, r_b, q_b, margin=margin)
        assert len(found) and found.separation.min() == pytest.approx(depth, abs=1e-4)


def test_profile_draws_extreme_inputs():
    """The strategies do reach the extremes the suite is about (a guard against a strategy that
    quietly stopped covering them)."""
    q = quaternion_with_norm(np.array([1.0, 2.0, 3.0, 4.0]), -320.0)
    assert 0.0 < np.abs(q).max() < 1e-319
    assert 1e299 < np.abs(quaternion_with_norm(np.array([1.0, 2.0, 3.0, 4.0]), 300.0)).max() <= 1e300
