"""dcol.dynamics derivatives against central finite differences of dcol's own functions (no pinocchio).

Models are small URDF strings written here: a chain (revolute + prismatic + continuous joints, a fixed
joint lumping a link, and a joint after the fixed one), a branching tree, and the tree on a floating
base.  Configuration perturbations use ``integrate`` (tangent space), so floating bases work.
Step 1e-6; tolerance 1e-6 relative to max(1, max |reference|).
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import dcol.dynamics as dyn
from tests.support.pinocchio_oracle import rotation_from_quaternion

EPS = 1e-6
RTOL = 1e-6


def assert_close(actual, expected, what, rtol=RTOL):
    actual = np.asarray(actual, dtype=float)
    expected = np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, expected {expected.shape}"
    assert np.all(np.isfinite(actual)), f"{what}: non-finite entries"
    scale = max(1.0, float(np.max(np.abs(expected))))
    err = float(np.max(np.abs(actual - expected)))
    idx = np.unravel_index(np.argmax(np.abs(actual - expected)), expected.shape)
    assert err <= rtol * scale, (
        f"{what}: max abs error {err:.3e} at {idx} (actual {actual[idx]:.10g}, reference {expected[idx]:.10g}), "
        f"scale {scale:.3e}"
    )


# --------------------------------------------------------------------------- URDF strings
def _fmt(x):
    return " ".join(f"{float(t):.17g}" for t in np.atleast_1d(x))


def rpy_matrix(rpy):
    """URDF fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    return Rotation.from_euler("xyz", rpy).as_matrix()


def random_inertial(rng):
    """mass, COM xyz, inertial-frame rpy, and a physically valid rotational inertia (about the COM)."""
    second_moments = rng.uniform(0.01, 0.05, size=3)  # principal moments (b+c, a+c, a+b): triangle inequality
    principal = second_moments.sum() - second_moments
    R = Rotation.random(random_state=int(rng.integers(1 << 30))).as_matrix()
    return {
        "mass": float(rng.uniform(0.5, 2.0)),
        "xyz": rng.normal(scale=0.15, size=3),
        "rpy": rng.uniform(-1.0, 1.0, size=3),
        "inertia": R @ np.diag(principal) @ R.T,
    }


def make_urdf(name, links, joints):
    """links: {name: inertial dict or None}; joints: list of dicts (name, type, parent, child, xyz, rpy, axis)."""
    out = [f'<?xml version="1.0"?>\n<robot name="{name}">']
    for lname, inertial in links.items():
        if inertial is None:
            out.append(f'  <link name="{lname}"/>')
            continue
        I = inertial["inertia"]
        out.append(
            f'  <link name="{lname}">\n    <inertial>\n'
            f'      <origin xyz="{_fmt(inertial["xyz"])}" rpy="{_fmt(inertial["rpy"])}"/>\n'
            f'      <mass value="{_fmt(inertial["mass"])}"/>\n'
            f'      <inertia ixx="{_fmt(I[0, 0])}" ixy="{_fmt(I[0, 1])}" ixz="{_fmt(I[0, 2])}" '
            f'iyy="{_fmt(I[1, 1])}" iyz="{_fmt(I[1, 2])}" izz="{_fmt(I[2, 2])}"/>\n'
            f"    </inertial>\n  </link>"
        )
    for j in joints:
        body = (
            f'  <joint name="{j["name"]}" type="{j["type"]}">\n'
            f'    <parent link="{j["parent"]}"/>\n    <child link="{j["child"]}"/>\n'
            f'    <origin xyz="{_fmt(j["xyz"])}" rpy="{_fmt(j["rpy"])}"/>\n'
        )
        if j["type"] != "fixed":
            body += f'    <axis xyz="{_fmt(j["axis"])}"/>\n'
        if j["type"] in ("revolute", "prismatic"):
            lo, hi = j.get("limit", (-2.0, 2.0))
            body += f'    <limit lower="{_fmt(lo)}" upper="{_fmt(hi)}" effort="100" velocity="10"/>\n'
        out.append(body + "  </joint>")
    out.append("</robot>\n")
    return "\n".join(out)


def _joint(name, jtype, parent, child, xyz, rpy, axis=(0, 0, 1), limit=None):
    d = {
        "name": name,
        "type": jtype,
        "parent": parent,
        "child": child,
        "xyz": np.array(xyz, float),
        "rpy": np.array(rpy, float),
    }
    a = np.array(axis, float)
    d["axis"] = a / np.linalg.norm(a)
    if limit is not None:
        d["limit"] = limit
    return d


def chain_spec(seed=1):
    rng = np.random.default_rng(seed)
    links = {n: random_inertial(rng) for n in ("base", "l1", "l2", "l3", "tool", "l5")}
    joints = [
        _joint("j1", "revolute", "base", "l1", (0.1, 0.2, 0.3), (0.3, -0.2, 0.5), (0, 0, 1), (-2.5, 2.5)),
        _joint("j2", "prismatic", "l1", "l2", (0.4, 0.0, 0.1), (0.1, 0.2, 0.3), (1, 2, 2), (-0.5, 0.5)),
        _joint("j3", "continuous", "l2", "l3", (0.0, 0.3, 0.0), (-0.4, 0.1, 0.0), (0, 1, 0)),
        _joint("j4", "fixed", "l3", "tool", (0.2, 0.1, -0.1), (0.5, 0.5, 0.0)),
        _joint("j5", "revolute", "tool", "l5", (0.0, 0.0, 0.25), (0.0, 0.3, -0.2), (1, 1, 0), (-2.0, 2.0)),
    ]
    return "chain", links, joints


def tree_spec(seed=2):
    rng = np.random.default_rng(seed)
    names = ("torso", "a1", "a2", "b1", "b2", "c_mount", "c1", "a3")
    links = {n: random_inertial(rng) for n in names}
    joints = [
        _joint("ja1", "revolute", "torso", "a1", (0.2, 0.1, 0.0), (0.0, 0.0, 0.4), (0, 1, 0), (-2.0, 2.0)),
        _joint("ja2", "continuous", "a1", "a2", (0.3, 0.0, -0.1), (0.2, 0.0, 0.0), (1, 0, 1)),
        _joint("jb1", "prismatic", "torso", "b1", (-0.2, 0.1, 0.0), (0.0, -0.3, 0.0), (0, 0, 1), (-0.3, 0.4)),
        _joint("jb2", "revolute", "b1", "b2", (0.0, 0.0, -0.3), (0.1, 0.2, 0.3), (1, 0, 0), (-1.5, 1.5)),
        _joint("jc0", "fixed", "torso", "c_mount", (0.0, -0.25, 0.1), (0.3, 0.0, -0.6)),
        _joint("jc1", "revolute", "c_mount", "c1", (0.1, 0.0, 0.0), (0.0, 0.0, 0.0), (0, 1, 1), (-2.0, 2.0)),
        # a second child of a1, declared after the other branches
        _joint("ja3", "revolute", "a1", "a3", (0.0, 0.2, 0.1), (0.0, 0.5, 0.0), (0, 0, 1), (-2.0, 2.0)),
    ]
    return "tree", links, joints


SPECS = {"chain": (chain_spec, False), "tree": (tree_spec, False), "floating_tree": (tree_spec, True)}


class Case:
    def __init__(self, key):
        spec_fn, floating = SPECS[key]
        self.key = key
        self.floating = floating
        self.name, self.links, self.joints = spec_fn()
        self.model = dyn.load_urdf(make_urdf(self.name, self.links, self.joints), floating_base=floating)
        rng = np.random.default_rng(11 + len(key))
        m = self.model
        self.states = []
        for _ in range(2):
            q = np.asarray(dyn.random_configuration(m, rng), dtype=float)
            self.states.append((q, rng.normal(size=m.nv), rng.normal(size=m.nv), 3.0 * rng.normal(size=m.nv)))

    def load_with(self, links):
        return dyn.load_urdf(make_urdf(self.name, links, self.joints), floating_base=self.floating)

    @property
    def link_names(self):
        return list(self.links)


_CASES = {}


@pytest.fixture(params=list(SPECS))
def case(request):
    if request.param not in _CASES:
        _CASES[request.param] = Case(request.param)
    return _CASES[request.param]


def fd_q(model, fn, q, eps=EPS):
    """Central differences of fn along each tangent direction of q: stacked along a new LAST axis."""
    cols = []
    for k in range(model.nv):
        dv = np.zeros(model.nv)
        dv[k] = eps
        fp = np.asarray(fn(np.asarray(dyn.integrate(model, q, dv))), dtype=float)
        fm = np.asarray(fn(np.asarray(dyn.integrate(model, q, -dv))), dtype=float)
        cols.append((fp - fm) / (2 * eps))
    return np.stack(cols, axis=-1)


def fd_vec(fn, x, eps=EPS):
    cols = []
    for k in range(len(x)):
        dx = np.zeros(len(x))
        dx[k] = eps
        cols.append((np.asarray(fn(x + dx), dtype=float) - np.asarray(fn(x - dx), dtype=float)) / (2 * eps))
    return np.stack(cols, axis=-1)


# --------------------------------------------------------------------------- basic structure
def test_model_structure(case):
    m = case.model
    movable = [j["name"] for j in case.joints if j["type"] != "fixed"]
    expected_names = (["root_joint"] if case.floating else []) + movable
    assert sorted(m.joint_names) == sorted(expected_names)
    assert m.nbodies == len(expected_names)
    assert m.nv == len(movable) + (6 if case.floating else 0)
    assert m.nq == len(movable) + (7 if case.floating else 0)
    assert set(case.link_names) | {j["name"] for j in case.joints} <= set(m.frame_names)


def test_integrate_difference_roundtrip(case):
    m = case.model
    rng = np.random.default_rng(0)
    for q, v, _, _ in case.states:
        q1 = np.asarray(dyn.integrate(m, q, 0.4 * v))
        assert_close(dyn.difference(m, q, q1), 0.4 * v, "difference(q, integrate(q, v))", rtol=1e-10)
        assert_close(dyn.difference(m, q, q), np.zeros(m.nv), "difference(q, q)", rtol=1e-12)
        if case.floating:
            # body-frame twist: small step moves the base along R v_lin
            R = rotation_from_quaternion(q[3:7])
            dv = np.zeros(m.nv)
            dv[:3] = 1e-7 * rng.normal(size=3)
            q2 = np.asarray(dyn.integrate(m, q, dv))
            assert_close((q2[:3] - q[:3]) / 1e-7, R @ dv[:3] / 1e-7, "floating integrate translation", rtol=1e-6)


def test_tangent_maps_fd(case):
    """T = ∂integrate(q, δ)/∂δ and T⁺ = ∂difference(q, q′)/∂q′ at δ = 0, q′ = q, by central
    differences; q's quaternion scaled to norm 1.7, which both functions normalize."""
    m = case.model
    q = case.states[0][0].copy()
    if case.floating:
        q[3:7] *= 1.7
    to_configuration, to_tangent = dyn.tangent_maps(m, q)
    assert to_configuration.shape == (m.nq, m.nv) and to_tangent.shape == (m.nv, m.nq)
    assert_close(to_configuration, fd_vec(lambda d: dyn.integrate(m, q, d), np.zeros(m.nv)), "T")
    assert_close(to_tangent, fd_vec(lambda q1: dyn.difference(m, q, q1), q), "T+")
    batch = np.stack([q, case.states[1][0]])
    batch_to_configuration, batch_to_tangent = dyn.tangent_maps(m, batch)
    assert_close(batch_to_configuration[0], to_configuration, "batched T", rtol=1e-14)
    assert_close(batch_to_tangent[1], dyn.tangent_maps(m, batch[1])[1], "batched T+", rtol=1e-14)


# --------------------------------------------------------------------------- dynamics derivatives
def test_rnea_derivatives_fd(case):
    m = case.model
    for q, v, a, _ in case.states:
        dq, dv, M = dyn.rnea_derivatives(m, q, v, a)
        assert_close(dq, fd_q(m, lambda qq: dyn.rnea(m, qq, v, a), q), f"{case.key} dtau/dq")
        assert_close(dv, fd_vec(lambda vv: dyn.rnea(m, q, vv, a), v), f"{case.key} dtau/dv")
        assert_close(M, fd_vec(lambda aa: dyn.rnea(m, q, v, aa), a), f"{case.key} dtau/da")
        assert_close(M, dyn.crba(m, q), f"{case.key} rnea_derivatives M vs crba", rtol=1e-10)


def test_aba_derivatives_fd(case):
    m = case.model
    for q, v, _, tau in case.states:
        dq, dv, dtau = dyn.aba_derivatives(m, q, v, tau)
        assert_close(dq, fd_q(m, lambda qq: dyn.aba(m, qq, v, tau), q), f"{case.key} dqdd/dq")
        assert_close(dv, fd_vec(lambda vv: dyn.aba(m, q, vv, tau), v), f"{case.key} dqdd/dv")
        assert_close(dtau, fd_vec(lambda tt: dyn.aba(m, q, v, tt), tau), f"{case.key} dqdd/dtau")
        assert_close(dtau, dyn.minverse(m, q), f"{case.key} aba_derivatives Minv vs minverse", rtol=1e-10)


def test_bias_force_derivatives_fd(case):
    m = case.model
    for q, v, _, _ in case.states:
        dq, dv = dyn.bias_force_derivatives(m, q, v)
        assert_close(dq, fd_q(m, lambda qq: dyn.bias_forces(m, qq, v), q), f"{case.key} dc/dq")
        assert_close(dv, fd_vec(lambda vv: dyn.bias_forces(m, q, vv), v), f"{case.key} dc/dv")


def test_minverse_derivative_fd(case):
    m = case.model
    rng = np.random.default_rng(4)
    for q, _, _, _ in case.states:
        z = rng.normal(size=m.nv)
        ref = fd_q(m, lambda qq: np.asarray(dyn.minverse(m, qq)) @ z, q)
        assert_close(dyn.minverse_derivative(m, q, z), ref, f"{case.key} d(Minv z)/dq")


# --------------------------------------------------------------------------- kinematics
def _frames(case):
    return case.link_names + [j["name"] for j in case.joints]


def test_frame_jacobian_fd(case):
    """Linear rows = d(frame origin)/dq, angular rows = world-frame rotation increment log(R+ R-^T)/(2 eps)."""
    m = case.model
    for q, _, _, _ in case.states:
        for f in _frames(case):
            J = np.asarray(dyn.frame_jacobian(m, q, f))
            assert J.shape == (6, m.nv)
            lin = np.zeros((3, m.nv))
            ang = np.zeros((3, m.nv))
            for k in range(m.nv):
                dv = np.zeros(m.nv)
                dv[k] = EPS
                rp, qp = dyn.frame_placement(m, np.asarray(dyn.integrate(m, q, dv)), f)
                rm, qm = dyn.frame_placement(m, np.asarray(dyn.integrate(m, q, -dv)), f)
                lin[:, k] = (np.asarray(rp) - np.asarray(rm)) / (2 * EPS)
                dR = rotation_from_quaternion(qp) @ rotation_from_quaternion(qm).T
                ang[:, k] = Rotation.from_matrix(dR).as_rotvec() / (2 * EPS)
            assert_close(J[:3], lin, f"{case.key} linear Jacobian of {f}")
            assert_close(J[3:], ang, f"{case.key} angular Jacobian of {f}")


def test_point_jacobian_fd(case):
    """The Jacobian of a point fixed in a frame: d(r + R p)/dq, in world axes and in the frame's axes."""
    m = case.model
    point = np.array([0.3, -0.2, 0.5])
    for q, _, _, _ in case.states:
        for f in _frames(case):

            def world_point(qq):
                r, quaternion = dyn.frame_placement(m, qq, f)
                return np.asarray(r) + rotation_from_quaternion(quaternion) @ point

            lin = fd_q(m, world_point, q)
            J = np.asarray(dyn.frame_jacobian(m, q, f, point=point))
            assert_close(J[:3], lin, f"{case.key} point Jacobian of {f}")
            R = rotation_from_quaternion(dyn.frame_placement(m, q, f)[1])
            J_local = np.asarray(dyn.frame_jacobian(m, q, f, point=point, reference="local"))
            assert_close(J_local[:3], R.T @ lin, f"{case.key} local point Jacobian of {f}")


def test_frame_jacobian_derivative_fd(case):
    m = case.model
    for q, _, _, _ in case.states:
        for f in ("l5", "a2", "b2", "c1", "tool", "a3", "torso"):
            if f not in case.links:
                continue
            dJ = np.asarray(dyn.frame_jacobian_derivative(m, q, f))
            ref = fd_q(m, lambda qq: dyn.frame_jacobian(m, qq, f), q)
            assert_close(dJ, ref, f"{case.key} dJ/dq of {f}")


# --------------------------------------------------------------------------- inertial parameters
def _spatial_params(inertial, X_rot, X_pos):
    """[m, m c, I about origin] of a URDF inertial expressed in a frame where the link frame is (X_rot, X_pos)."""
    m = inertial["mass"]
    R_in = X_rot @ rpy_matrix(inertial["rpy"])
    c = X_pos + X_rot @ inertial["xyz"]
    Ic = R_in @ inertial["inertia"] @ R_in.T
    Io = Ic + m * (c @ c * np.eye(3) - np.outer(c, c))
    return np.array([m, *(m * c), Io[0, 0], Io[0, 1], Io[1, 1], Io[0, 2], Io[1, 2], Io[2, 2]])


def expected_parameters(case, model):
    """Hand computation: each body collects its link and links welded to it by fixed joints."""
    joints = {j["child"]: j for j in case.joints}
    root = next(n for n in case.links if n not in joints)
    params = {name: np.zeros(10) for name in model.joint_names}
    for link, inertial in case.links.items():
        R, p = np.eye(3), np.zeros(3)
        cur = link
        while cur in joints and joints[cur]["type"] == "fixed":
            j = joints[cur]
            Rj = rpy_matrix(j["rpy"])
            R, p = Rj @ R, Rj @ p + j["xyz"]
            cur = j["parent"]
        if cur in joints:
            owner = joints[cur]["name"]
        elif case.floating and cur == root:
            owner = "root_joint"
        else:
            continue  # welded to the world
        params[owner] += _spatial_params(inertial, R, p)
    return np.array([params[n] for n in model.joint_names])


def test_inertial_parameters_by_hand(case):
    P = np.asarray(dyn.inertial_parameters(case.model))
    assert P.shape == (case.model.nbodies, 10)
    assert_close(P, expected_parameters(case, case.model), f"{case.key} inertial parameters", rtol=1e-12)


# --------------------------------------------------------------------------- parameter derivatives
def _perturbed_links(case, rng, scale):
    links = copy.deepcopy(case.links)
    for inertial in links.values():
        inertial["mass"] *= 1.0 + scale * rng.uniform(-1, 1)
        inertial["xyz"] = inertial["xyz"] + scale * rng.normal(size=3)
        inertial["inertia"] = inertial["inertia"] * (1.0 + scale * rng.uniform(-1, 1))
    return links


def test_regressor_linearity(case):
    """tau = Y p, and Y depends only on kinematics: the same Y reproduces rnea of re-massed models."""
    m = case.model
    rng = np.random.default_rng(8)
    others = [case.load_with(_perturbed_links(case, rng, 0.4)) for _ in range(2)]
    for q, v, a, _ in case.states:
        Y = np.asarray(dyn.rnea_parameter_derivatives(m, q, v, a))
        assert Y.shape == (m.nv, 10 * m.nbodies)
        p = np.asarray(dyn.inertial_parameters(m)).ravel()
        assert_close(Y @ p, dyn.rnea(m, q, v, a), f"{case.key} Y p vs rnea", rtol=1e-10)
        for other in others:
            assert_close(
                dyn.rnea_parameter_derivatives(other, q, v, a), Y, f"{case.key} Y independent of inertia", rtol=1e-10
            )
            p2 = np.asarray(dyn.inertial_parameters(other)).ravel()
            assert_close(Y @ p2, dyn.rnea(other, q, v, a), f"{case.key} Y p' vs rnea of re-massed model", rtol=1e-10)


def _param_directions(case):
    """URDF perturbations: (label, links(+eps), links(-eps)) for a mass, a COM and an inertia entry per body."""
    out = []
    for lname in case.links:
        for label, apply in (
            ("mass", lambda d, s: d.__setitem__("mass", d["mass"] + s)),
            ("com", lambda d, s: d.__setitem__("xyz", d["xyz"] + s * np.array([0.3, -0.5, 0.8]))),
            (
                "inertia",
                lambda d, s: d.__setitem__(
                    "inertia", d["inertia"] + s * np.array([[1.0, 0.2, 0.0], [0.2, 0.5, -0.1], [0.0, -0.1, 0.7]])
                ),
            ),
        ):
            lp, lm = copy.deepcopy(case.links), copy.deepcopy(case.links)
            apply(lp[lname], EPS)
            apply(lm[lname], -EPS)
            out.append((f"{lname}.{label}", lp, lm))
    return out


def test_parameter_derivatives_fd(case):
    """d tau/dp and d qdd/dp along URDF mass / COM / inertia perturbations, by central differences."""
    m = case.model
    q, v, a, tau = case.states[0]
    Y = np.asarray(dyn.rnea_parameter_derivatives(m, q, v, a))
    D = np.asarray(dyn.aba_parameter_derivatives(m, q, v, tau))
    assert D.shape == (m.nv, 10 * m.nbodies)
    checked = 0
    for label, lp, lm in _param_directions(case):
        mp, mm = case.load_with(lp), case.load_with(lm)
        dp = (np.asarray(dyn.inertial_parameters(mp)) - np.asarray(dyn.inertial_parameters(mm))).ravel() / (2 * EPS)
        if not np.any(dp):
            continue  # link welded to the world: no dynamic effect
        checked += 1
        dtau = (np.asarray(dyn.rnea(mp, q, v, a)) - np.asarray(dyn.rnea(mm, q, v, a))) / (2 * EPS)
        dqdd = (np.asarray(dyn.aba(mp, q, v, tau)) - np.asarray(dyn.aba(mm, q, v, tau))) / (2 * EPS)
        assert_close(Y @ dp, dtau, f"{case.key} d tau/dp along {label}")
        assert_close(D @ dp, dqdd, f"{case.key} d qdd/dp along {label}")
    assert checked >= 3 * m.nbodies


def test_aba_parameter_derivatives_formula(case):
    """d qdd/dp = -M^-1 Y(q, v, aba(q, v, tau))."""
    m = case.model
    for q, v, _, tau in case.states:
        qdd = np.asarray(dyn.aba(m, q, v, tau))
        ref = -np.asarray(dyn.minverse(m, q)) @ np.asarray(dyn.rnea_parameter_derivatives(m, q, v, qdd))
        assert_close(
            dyn.aba_parameter_derivatives(m, q, v, tau), ref, f"{case.key} aba parameter derivatives", rtol=1e-10
        )
