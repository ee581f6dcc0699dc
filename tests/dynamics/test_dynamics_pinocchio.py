"""dcol.dynamics against Pinocchio (`pin`) on real robots from example-robot-data and on datasets/robots.

Every quantity is compared in OUR conventions through tests/support/pinocchio_oracle.py (continuous joints
nq = 1, scalar-first quaternions, our joint order mapped by name).  Tolerance: 1e-9 relative to
max(1, max |reference|) in the max norm.
"""

from __future__ import annotations

import functools
import os

import numpy as np
import pytest

import dcol.dynamics as dyn
from tests.support.optional import example_robots_dir, oracle
from tests.support.pinocchio_oracle import PinocchioOracle, rotation_from_quaternion

pin = oracle("pinocchio")
example_robots_dir()  # the robots compared

RTOL = 1e-9
N_STATES = 3


# --------------------------------------------------------------------------- helpers
def assert_close(actual, expected, what, rtol=RTOL):
    actual = np.asarray(actual, dtype=float)
    expected = np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, expected {expected.shape}"
    assert np.all(np.isfinite(actual)), f"{what}: non-finite entries"
    if expected.size == 0:
        return
    scale = max(1.0, float(np.max(np.abs(expected))))
    err = float(np.max(np.abs(actual - expected)))
    idx = np.unravel_index(np.argmax(np.abs(actual - expected)), expected.shape)
    assert err <= rtol * scale, (
        f"{what}: max abs error {err:.3e} at {idx} (actual {actual[idx]:.12g}, reference {expected[idx]:.12g}), "
        f"reference scale {scale:.3e}, relative {err / scale:.3e} > {rtol:.0e}"
    )


def erd_model_dir():
    try:
        return os.path.join(dyn.example_robot_data_dir(), "example-robot-data", "robots")
    except ValueError:
        pytest.skip("example-robot-data is not installed")


def package_dirs():
    """The share folder holding "example-robot-data", so package://example-robot-data/... resolves."""
    try:
        return [dyn.example_robot_data_dir()]
    except ValueError:
        return []


ERD_ROBOTS = [(name, relative, floating) for name, (relative, floating) in dyn.EXAMPLE_ROBOTS.items()]
DATASET_ROBOTS = [
    (f"datasets/{name}", dyn.dataset_robot_path(name), floating) for name, floating in dyn.DATASET_ROBOTS.items()
]
ROBOT_IDS = [r[0] for r in ERD_ROBOTS] + [r[0] for r in DATASET_ROBOTS]


def near_origin(model, q, rng, half_width=1.0):
    """Redraw prismatic coordinates with a very wide range (e.g. planar roots limited to +-1000 m) in +-1 m.

    Far from the world origin pinocchio's own computeMinverse / computeABADerivatives lose digits
    (at 500 m: M @ computeMinverse(q) - I ~ 1e-8, while dcol's M^-1 still matches inv(M) to 1e-15), so
    the oracle is no longer good to 1e-9 there.  dcol at such configurations is checked without
    pinocchio in test_dynamics_closed_form.py (cart-pole far along its rail, SPD/round-trip checks).
    """
    q = q.copy()
    lower = np.asarray(model.lower_limits, dtype=float)
    upper = np.asarray(model.upper_limits, dtype=float)
    for kind, iq in zip(model.joint_kinds, np.asarray(model.joint_q_index, dtype=int)):
        if kind == "prismatic" and not (upper[iq] - lower[iq] <= 2 * half_width):
            lo, hi = max(lower[iq], -half_width), min(upper[iq], half_width)
            q[iq] = rng.uniform(lo, hi) if lo < hi else q[iq]
    return q


class Robot:
    """One robot loaded in both libraries plus seeded random states in our conventions."""

    def __init__(self, name, path, floating):
        self.name = name
        self.path = path
        self.floating = floating
        self.model = dyn.load_urdf(path, floating_base=floating, package_dirs=package_dirs())
        self.oracle = PinocchioOracle(path, floating, self.model)
        m = self.model
        rng = np.random.default_rng(sum(map(ord, name)))
        self.states = []
        for _ in range(N_STATES):
            q = near_origin(m, np.asarray(dyn.random_configuration(m, rng), dtype=float), rng)
            v = rng.normal(size=m.nv)
            a = rng.normal(size=m.nv)
            tau = rng.normal(size=m.nv) * 5.0
            self.states.append((q, v, a, tau))
        # a few link frames: first, middle and last body, plus links lumped through fixed joints
        pin_links = {f.name for f in self.oracle.pmodel.frames if f.type == pin.FrameType.BODY}
        bodies = [b for b in m.body_names if b in pin_links]
        picks = []
        if bodies:
            picks += [bodies[0], bodies[len(bodies) // 2], bodies[-1]]
        lumped = [f for f in m.frame_names if f in pin_links and f not in set(m.body_names)]
        picks += lumped[-2:]
        self.frames = list(dict.fromkeys(picks))
        # movable and fixed joint frames present in pinocchio as joint frames
        joint_frames = [
            f.name
            for f in self.oracle.pmodel.frames
            if f.type in (pin.FrameType.JOINT, pin.FrameType.FIXED_JOINT) and f.name in set(m.frame_names)
        ]
        self.joint_frames = [j for j in joint_frames if j not in pin_links][:: max(1, len(joint_frames) // 3)][:3]


_ROBOT_SPECS = {r[0]: r for r in ERD_ROBOTS + DATASET_ROBOTS}


@functools.cache
def _load(name):
    rid, rel, floating = _ROBOT_SPECS[name]
    path = rel if os.path.isabs(rel) else os.path.join(erd_model_dir(), rel)
    if not os.path.exists(path):
        pytest.skip(f"{path} not installed")
    return Robot(rid, path, floating)


@pytest.fixture(params=ROBOT_IDS)
def robot(request):
    r = _load(request.param)
    if r.model.nv == 0:
        pytest.skip(f"{r.name} has no degrees of freedom")
    return r


# --------------------------------------------------------------------------- oracle sanity
def test_oracle_self_consistent(robot):
    """Pinocchio agrees with itself in our ordering (aba/rnea inverse, M Minv = I, regressor, ...)."""
    for q, v, _, tau in robot.states:
        robot.oracle.self_check(q, v, tau)


def test_model_dimensions(robot):
    m, pm = robot.model, robot.oracle.pmodel
    n_cont = sum(k == "continuous" for k in m.joint_kinds)
    assert m.nv == pm.nv
    assert m.nq == pm.nq - n_cont
    assert m.nbodies == pm.njoints - 1
    assert len(m.body_names) == m.nbodies
    assert np.asarray(m.gravity).shape == (3,)
    assert ("root_joint" in m.joint_names) == robot.floating
    if robot.floating:
        assert m.joint_names[0] == "root_joint" and m.joint_kinds[0] == "floating"


def test_integrate_difference_match_pinocchio(robot):
    m, orc = robot.model, robot.oracle
    rng = np.random.default_rng(7)
    for q, _, _, _ in robot.states:
        dv = 0.3 * rng.normal(size=m.nv)
        q1 = np.asarray(dyn.integrate(m, q, dv))
        q1_pin = pin.integrate(orc.pmodel, orc.q_to_pin(q), orc.v_to_pin(dv))
        # compare through pinocchio's representation (quaternion sign / angle wrap independent)
        assert_close(pin.difference(orc.pmodel, q1_pin, orc.q_to_pin(q1)), np.zeros(m.nv), "integrate vs pinocchio")
        d = np.asarray(dyn.difference(m, q, q1))
        assert_close(d, dv, "difference(q, integrate(q, dv))")


def test_neutral_matches_pinocchio(robot):
    m, orc = robot.model, robot.oracle
    q0 = np.asarray(dyn.neutral(m))
    assert q0.shape == (m.nq,)
    assert_close(orc.q_to_pin(q0), pin.neutral(orc.pmodel), "neutral")


# --------------------------------------------------------------------------- algorithms
def test_crba(robot):
    for q, _, _, _ in robot.states:
        assert_close(dyn.crba(robot.model, q), robot.oracle.crba(q), f"{robot.name} M")


def test_bias_forces(robot):
    for q, v, _, _ in robot.states:
        assert_close(dyn.bias_forces(robot.model, q, v), robot.oracle.bias_forces(q, v), f"{robot.name} c")


def test_rnea(robot):
    for q, v, a, _ in robot.states:
        assert_close(dyn.rnea(robot.model, q, v, a), robot.oracle.rnea(q, v, a), f"{robot.name} rnea")


def test_aba(robot):
    for q, v, _, tau in robot.states:
        assert_close(dyn.aba(robot.model, q, v, tau), robot.oracle.aba(q, v, tau), f"{robot.name} aba")


def test_minverse(robot):
    for q, _, _, _ in robot.states:
        assert_close(dyn.minverse(robot.model, q), robot.oracle.minverse(q), f"{robot.name} Minv")


def test_rnea_derivatives(robot):
    for q, v, a, _ in robot.states:
        ours = dyn.rnea_derivatives(robot.model, q, v, a)
        ref = robot.oracle.rnea_derivatives(q, v, a)
        for name, x, y in zip(("dtau_dq", "dtau_dv", "M"), ours, ref):
            assert_close(x, y, f"{robot.name} rnea_derivatives {name}")


def test_aba_derivatives(robot):
    for q, v, _, tau in robot.states:
        ours = dyn.aba_derivatives(robot.model, q, v, tau)
        ref = robot.oracle.aba_derivatives(q, v, tau)
        for name, x, y in zip(("dqdd_dq", "dqdd_dv", "dqdd_dtau"), ours, ref):
            assert_close(x, y, f"{robot.name} aba_derivatives {name}")


def test_bias_force_derivatives(robot):
    zero = np.zeros(robot.model.nv)
    for q, v, _, _ in robot.states:
        dq, dv = dyn.bias_force_derivatives(robot.model, q, v)
        rq, rv, _ = robot.oracle.rnea_derivatives(q, v, zero)
        assert_close(dq, rq, f"{robot.name} dc_dq")
        assert_close(dv, rv, f"{robot.name} dc_dv")


def test_minverse_derivative(robot):
    """d(M^-1 z)/dq against pinocchio's ABA derivatives of the gravity-free model at v = 0, tau = z."""
    rng = np.random.default_rng(3)
    for q, _, _, _ in robot.states:
        z = rng.normal(size=robot.model.nv)
        ref = robot.oracle.minverse_derivative(q, z)
        assert_close(dyn.minverse_derivative(robot.model, q, z), ref, f"{robot.name} d(Minv z)/dq")


def test_regressor(robot):
    for q, v, a, _ in robot.states:
        Y = dyn.rnea_parameter_derivatives(robot.model, q, v, a)
        assert_close(Y, robot.oracle.regressor(q, v, a), f"{robot.name} joint torque regressor")


def test_aba_parameter_derivatives(robot):
    for q, v, _, tau in robot.states:
        qdd = robot.oracle.aba(q, v, tau)
        ref = -robot.oracle.minverse(q) @ robot.oracle.regressor(q, v, qdd)
        assert_close(dyn.aba_parameter_derivatives(robot.model, q, v, tau), ref, f"{robot.name} d qdd / d params")


def test_inertial_parameters(robot):
    assert_close(dyn.inertial_parameters(robot.model), robot.oracle.inertial_parameters(), f"{robot.name} parameters")


# --------------------------------------------------------------------------- frames
def test_frame_placement(robot):
    assert robot.frames, "no link frames to compare"
    for q, _, _, _ in robot.states:
        for f in robot.frames:
            r, quat = dyn.frame_placement(robot.model, q, f)
            quat = np.asarray(quat, dtype=float)
            assert abs(np.linalg.norm(quat) - 1.0) < 1e-12, f"{f}: quaternion not unit"
            r_ref, R_ref = robot.oracle.frame_placement(q, f)
            assert_close(r, r_ref, f"{robot.name} position of {f}")
            assert_close(rotation_from_quaternion(quat), R_ref, f"{robot.name} rotation of {f}")


def test_joint_frame_placement(robot):
    """URDF joint frames (movable: after the joint motion, as pinocchio; fixed: the joint origin)."""
    if not robot.joint_frames:
        pytest.skip("no joint frames")
    for q, _, _, _ in robot.states[:1]:
        for f in robot.joint_frames:
            r, quat = dyn.frame_placement(robot.model, q, f)
            r_ref, R_ref = robot.oracle.frame_placement(q, f)
            assert_close(r, r_ref, f"{robot.name} position of joint frame {f}")
            assert_close(rotation_from_quaternion(quat), R_ref, f"{robot.name} rotation of joint frame {f}")


def test_frame_jacobian(robot):
    for q, _, _, _ in robot.states:
        for f in robot.frames:
            J = dyn.frame_jacobian(robot.model, q, f)
            assert_close(J, robot.oracle.frame_jacobian(q, f), f"{robot.name} Jacobian of {f}")
            for ours, theirs in (("world", "WORLD"), ("local", "LOCAL")):
                J = dyn.frame_jacobian(robot.model, q, f, reference=ours)
                assert_close(J, robot.oracle.frame_jacobian(q, f, theirs), f"{robot.name} {ours} Jacobian of {f}")


def test_frame_jacobian_derivative_along_v(robot):
    """sum_k dJ/dq_k v_k equals pinocchio's LOCAL_WORLD_ALIGNED frame Jacobian time variation."""
    for q, v, _, _ in robot.states[:2]:
        for f in robot.frames:
            dJ = np.asarray(dyn.frame_jacobian_derivative(robot.model, q, f))
            assert dJ.shape == (6, robot.model.nv, robot.model.nv)
            assert_close(dJ @ v, robot.oracle.frame_jacobian_time_variation(q, v, f), f"{robot.name} dJ/dt of {f}")


# --------------------------------------------------------------------------- batching
def _stack(robot):
    Q, V, A, T = (np.array(x) for x in zip(*robot.states))
    return Q, V, A, T


def _check_batched(fn, batched_args, what):
    out = fn(*batched_args)
    n = len(batched_args[-1])
    for i in range(n):
        single = fn(*(x[i] for x in batched_args))
        if isinstance(single, tuple):
            assert isinstance(out, tuple) and len(out) == len(single), f"{what}: batched output structure"
            for k, (o, s) in enumerate(zip(out, single)):
                assert np.asarray(o).shape == (n,) + np.asarray(s).shape, f"{what}[{k}]: batched shape"
                assert_close(np.asarray(o)[i], s, f"{what}[{k}] batch item {i}", rtol=1e-12)
        else:
            assert np.asarray(out).shape == (n,) + np.asarray(single).shape, f"{what}: batched shape"
            assert_close(np.asarray(out)[i], single, f"{what} batch item {i}", rtol=1e-12)


def test_batched_equals_single(robot):
    m = robot.model
    Q, V, A, T = _stack(robot)
    Z = np.random.default_rng(5).normal(size=V.shape)
    f = robot.frames[0]
    cases = {
        "rnea": (lambda q, v, a: dyn.rnea(m, q, v, a), (Q, V, A)),
        "bias_forces": (lambda q, v: dyn.bias_forces(m, q, v), (Q, V)),
        "crba": (lambda q: dyn.crba(m, q), (Q,)),
        "aba": (lambda q, v, t: dyn.aba(m, q, v, t), (Q, V, T)),
        "minverse": (lambda q: dyn.minverse(m, q), (Q,)),
        "rnea_derivatives": (lambda q, v, a: dyn.rnea_derivatives(m, q, v, a), (Q, V, A)),
        "aba_derivatives": (lambda q, v, t: dyn.aba_derivatives(m, q, v, t), (Q, V, T)),
        "bias_force_derivatives": (lambda q, v: dyn.bias_force_derivatives(m, q, v), (Q, V)),
        "minverse_derivative": (lambda q, z: dyn.minverse_derivative(m, q, z), (Q, Z)),
        "rnea_parameter_derivatives": (lambda q, v, a: dyn.rnea_parameter_derivatives(m, q, v, a), (Q, V, A)),
        "aba_parameter_derivatives": (lambda q, v, t: dyn.aba_parameter_derivatives(m, q, v, t), (Q, V, T)),
        "integrate": (lambda q, v: dyn.integrate(m, q, v), (Q, 0.1 * V)),
        "frame_placement": (lambda q: tuple(dyn.frame_placement(m, q, f)), (Q,)),
        "frame_jacobian": (lambda q: dyn.frame_jacobian(m, q, f), (Q,)),
        "frame_jacobian_derivative": (lambda q: dyn.frame_jacobian_derivative(m, q, f), (Q,)),
    }
    for what, (fn, args) in cases.items():
        _check_batched(fn, args, f"{robot.name} {what}")
    # difference takes two configurations
    Q1 = np.array([dyn.integrate(m, q, 0.1 * v) for q, v in zip(Q, V)])
    _check_batched(lambda q0, q1: dyn.difference(m, q0, q1), (Q, Q1), f"{robot.name} difference")


def test_batched_against_pinocchio(robot):
    """The batched path itself (not only its agreement with the single path) matches pinocchio."""
    Q, V, A, T = _stack(robot)
    tau = np.asarray(dyn.rnea(robot.model, Q, V, A))
    qdd = np.asarray(dyn.aba(robot.model, Q, V, T))
    for i in range(len(Q)):
        assert_close(tau[i], robot.oracle.rnea(Q[i], V[i], A[i]), f"{robot.name} batched rnea item {i}")
        assert_close(qdd[i], robot.oracle.aba(Q[i], V[i], T[i]), f"{robot.name} batched aba item {i}")


def test_zero_dof_dataset_robots():
    """Robots without movable joints load with nv = 0 and empty dynamics (e.g. a static ground plane)."""
    for _, path, floating in DATASET_ROBOTS:
        if floating:
            continue
        m = dyn.load_urdf(path, floating_base=False, package_dirs=package_dirs())
        if m.nv:
            continue
        q = np.asarray(dyn.neutral(m))
        assert q.shape == (0,)
        assert np.asarray(dyn.crba(m, q)).shape == (0, 0)
        assert np.asarray(dyn.rnea(m, q, np.zeros(0), np.zeros(0))).shape == (0,)
        r, quat = dyn.frame_placement(m, q, m.frame_names[0])
        assert np.asarray(r).shape == (3,) and np.asarray(quat).shape == (4,)
