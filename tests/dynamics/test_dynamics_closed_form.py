"""dcol.dynamics against hand-derived closed forms, structural identities, energy conservation, and errors.

Closed forms (gravity g along -z, angles about +y so that R_y(t) (0, 0, d) = (d sin t, 0, d cos t)):

* pendulum: pivot at the origin, COM at (0, 0, -l) in the link frame, mass m, inertia I_yy about the
  COM: M = m l^2 + I_yy, c = m g l sin(theta).
* cart-pole: cart on a prismatic x joint (mass m_c), pole on a revolute y joint at the cart origin with
  COM at (0, 0, l) (mass m_p, inertia I_p about the COM):
      M = [[m_c + m_p, m_p l cos t], [m_p l cos t, m_p l^2 + I_p]]
      c = [-m_p l sin(t) tdot^2, -m_p g l sin(t)]
* double pendulum: energy E = 1/2 v^T M v + sum_b m_b g z_b(COM) is conserved by qdd = aba(q, v, 0).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import dcol.dynamics as dyn
from dcol.validation import MAX_THREADS
from tests.support.pinocchio_oracle import rotation_from_quaternion

G = 9.81


def assert_close(actual, expected, what, rtol=1e-10):
    actual = np.asarray(actual, dtype=float)
    expected = np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, expected {expected.shape}"
    scale = max(1.0, float(np.max(np.abs(expected)))) if expected.size else 1.0
    err = float(np.max(np.abs(actual - expected))) if expected.size else 0.0
    assert err <= rtol * scale, (
        f"{what}: max abs error {err:.3e} (scale {scale:.3e})\nactual\n{actual}\nexpected\n{expected}"
    )


def Ry(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def inertial_xml(mass, xyz, ixx, iyy, izz, ixy=0.0, ixz=0.0, iyz=0.0):
    return (
        f'<inertial><origin xyz="{xyz[0]:.17g} {xyz[1]:.17g} {xyz[2]:.17g}" rpy="0 0 0"/>'
        f'<mass value="{mass:.17g}"/>'
        f'<inertia ixx="{ixx:.17g}" ixy="{ixy:.17g}" ixz="{ixz:.17g}"'
        f' iyy="{iyy:.17g}" iyz="{iyz:.17g}" izz="{izz:.17g}"/></inertial>'
    )


# --------------------------------------------------------------------------- models
PEND = {"m": 1.7, "l": 0.8, "Iyy": 0.09, "L": 1.3}


def pendulum_urdf(m=PEND["m"], l=PEND["l"], Iyy=PEND["Iyy"], L=PEND["L"]):
    return f"""<?xml version="1.0"?>
<robot name="pendulum">
  <link name="world"/>
  <link name="rod">{inertial_xml(m, (0, 0, -l), 0.08, Iyy, 0.02)}</link>
  <link name="tip"/>
  <joint name="pivot" type="revolute">
    <parent link="world"/><child link="rod"/>
    <origin xyz="0 0 0" rpy="0 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="10" velocity="10"/>
  </joint>
  <joint name="tip_joint" type="fixed">
    <parent link="rod"/><child link="tip"/><origin xyz="0 0 {-L:.17g}" rpy="0 0 0"/>
  </joint>
</robot>"""


CP = {"mc": 1.3, "mp": 0.4, "l": 0.6, "Ip": 0.02}


def cartpole_urdf(mc=CP["mc"], mp=CP["mp"], l=CP["l"], Ip=CP["Ip"]):
    return f"""<?xml version="1.0"?>
<robot name="cartpole">
  <link name="rail"/>
  <link name="cart">{inertial_xml(mc, (0, 0, 0), 0.1, 0.2, 0.3)}</link>
  <link name="pole">{inertial_xml(mp, (0, 0, l), 0.021, Ip, 0.002)}</link>
  <joint name="slider" type="prismatic">
    <parent link="rail"/><child link="cart"/>
    <origin xyz="0 0 0.5" rpy="0 0 0"/><axis xyz="1 0 0"/>
    <limit lower="-2" upper="2" effort="10" velocity="10"/>
  </joint>
  <joint name="hinge" type="continuous">
    <parent link="cart"/><child link="pole"/>
    <origin xyz="0 0 0" rpy="0 0 0"/><axis xyz="0 1 0"/>
  </joint>
</robot>"""


DP = {"m1": 1.0, "m2": 0.7, "l1": 1.0, "l2": 0.9, "I1": 1.0 / 12, "I2": 0.7 * 0.81 / 12}


def double_pendulum_urdf():
    p = DP
    return f"""<?xml version="1.0"?>
<robot name="double_pendulum">
  <link name="world"/>
  <link name="upper">{inertial_xml(p["m1"], (0, 0, -p["l1"] / 2), p["I1"], p["I1"], 1e-3)}</link>
  <link name="lower">{inertial_xml(p["m2"], (0, 0, -p["l2"] / 2), p["I2"], p["I2"], 1e-3)}</link>
  <joint name="shoulder" type="revolute">
    <parent link="world"/><child link="upper"/>
    <origin xyz="0 0 2" rpy="0 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-3.1" upper="3.1" effort="10" velocity="10"/>
  </joint>
  <joint name="elbow" type="continuous">
    <parent link="upper"/><child link="lower"/>
    <origin xyz="0 0 {-p["l1"]:.17g}" rpy="0 0 0"/><axis xyz="0 1 0"/>
  </joint>
</robot>"""


def spatial_tree_urdf():
    """3D tree with skewed axes, offsets and full inertia tensors; revolute, prismatic, continuous, fixed."""
    return f"""<?xml version="1.0"?>
<robot name="tree3d">
  <link name="base">{inertial_xml(2.0, (0, 0, 0.1), 0.1, 0.1, 0.1)}</link>
  <link name="a">{inertial_xml(1.2, (0.1, 0.05, -0.2), 0.05, 0.04, 0.03, 0.005, -0.004, 0.002)}</link>
  <link name="b">{inertial_xml(0.8, (0.0, 0.2, 0.1), 0.02, 0.03, 0.025, -0.003, 0.001, 0.004)}</link>
  <link name="c">{inertial_xml(0.5, (0.15, 0.0, 0.0), 0.01, 0.02, 0.02)}</link>
  <link name="d">{inertial_xml(0.6, (-0.1, 0.1, 0.05), 0.02, 0.02, 0.03, 0.001, 0.002, -0.003)}</link>
  <link name="e">{inertial_xml(0.3, (0.05, 0.05, 0.05), 0.01, 0.012, 0.011)}</link>
  <joint name="ja" type="revolute">
    <parent link="base"/><child link="a"/><origin xyz="0.1 0 0.3" rpy="0.2 0.1 -0.3"/><axis xyz="0 0.6 0.8"/>
    <limit lower="-2" upper="2" effort="10" velocity="10"/>
  </joint>
  <joint name="jb" type="prismatic">
    <parent link="a"/><child link="b"/><origin xyz="0 0.1 -0.4" rpy="0 0.4 0"/><axis xyz="0.8 0 0.6"/>
    <limit lower="-0.3" upper="0.3" effort="10" velocity="10"/>
  </joint>
  <joint name="jc" type="continuous">
    <parent link="b"/><child link="c"/><origin xyz="0.2 0.2 0" rpy="-0.5 0 0.2"/><axis xyz="1 0 0"/>
  </joint>
  <joint name="jd" type="fixed">
    <parent link="a"/><child link="d"/><origin xyz="-0.2 0 0" rpy="0 0 1.0"/>
  </joint>
  <joint name="je" type="revolute">
    <parent link="d"/><child link="e"/><origin xyz="0 0.1 0.1" rpy="0.3 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" effort="10" velocity="10"/>
  </joint>
</robot>"""


def _models():
    out = {
        "pendulum": dyn.load_urdf(pendulum_urdf()),
        "cartpole": dyn.load_urdf(cartpole_urdf()),
        "double_pendulum": dyn.load_urdf(double_pendulum_urdf()),
        "tree3d": dyn.load_urdf(spatial_tree_urdf()),
        "tree3d_floating": dyn.load_urdf(spatial_tree_urdf(), floating_base=True),
    }
    for name in dyn.DATASET_ROBOTS:
        m = dyn.load_dataset_robot(name)
        if m.nv:
            out["datasets/" + name] = m
    return out


_MODEL_CACHE = {}


def models():
    if not _MODEL_CACHE:
        _MODEL_CACHE.update(_models())
    return _MODEL_CACHE


# --------------------------------------------------------------------------- pendulum
def test_pendulum_closed_form():
    m, l, Iyy, L = PEND["m"], PEND["l"], PEND["Iyy"], PEND["L"]
    model = dyn.load_urdf(pendulum_urdf())
    assert model.nq == model.nv == model.nbodies == 1
    assert list(model.joint_names) == ["pivot"]
    rng = np.random.default_rng(0)
    for th in (0.0, 0.7, -2.1, 2.9):
        q, v = np.array([th]), np.array([rng.normal()])
        a, tau = np.array([rng.normal()]), np.array([rng.normal()])
        Mref = m * l * l + Iyy
        cref = m * G * l * np.sin(th)
        assert_close(dyn.crba(model, q), [[Mref]], f"pendulum M at {th}")
        assert_close(dyn.minverse(model, q), [[1 / Mref]], f"pendulum Minv at {th}")
        assert_close(dyn.bias_forces(model, q, v), [cref], f"pendulum c at {th}")
        assert_close(dyn.rnea(model, q, v, a), Mref * a + cref, f"pendulum rnea at {th}")
        assert_close(dyn.aba(model, q, v, tau), (tau - cref) / Mref, f"pendulum aba at {th}")
        dq, dv, _ = dyn.rnea_derivatives(model, q, v, a)
        assert_close(dq, [[m * G * l * np.cos(th)]], "pendulum dtau/dq")
        assert_close(dv, [[0.0]], "pendulum dtau/dv")
        # tip frame and its Jacobian
        r, quat = dyn.frame_placement(model, q, "tip")
        assert_close(r, [-L * np.sin(th), 0, -L * np.cos(th)], f"pendulum tip position at {th}")
        assert_close(rotation_from_quaternion(quat), Ry(th), f"pendulum tip rotation at {th}")
        J = dyn.frame_jacobian(model, q, "tip")
        assert_close(J, [[-L * np.cos(th)], [0], [L * np.sin(th)], [0], [1], [0]], f"pendulum tip Jacobian at {th}")
        # inertial parameters of the rod about the pivot (body frame)
        Io = np.diag([0.08 + m * l * l, Iyy + m * l * l, 0.02])
        expected = [m, 0, 0, -m * l, Io[0, 0], 0, Io[1, 1], 0, 0, Io[2, 2]]
        assert_close(dyn.inertial_parameters(model), [expected], "pendulum inertial parameters")


def test_pendulum_custom_gravity():
    m, l = PEND["m"], PEND["l"]
    model = dyn.load_urdf(pendulum_urdf(), gravity=(1.5, 0.0, -3.7))
    assert_close(model.gravity, [1.5, 0, -3.7], "gravity attribute")
    th = 0.6
    # potential V = -m g . p_com with p_com = R_y(th) (0, 0, -l) = (-l sin th, 0, -l cos th)
    # dV/dth = -m g . (-l cos th, 0, l sin th)
    gvec = np.array([1.5, 0.0, -3.7])
    cref = -m * gvec @ np.array([-l * np.cos(th), 0, l * np.sin(th)])
    assert_close(dyn.bias_forces(model, [th], [0.3]), [cref], "pendulum torque under custom gravity")


# --------------------------------------------------------------------------- cart-pole
def test_cartpole_closed_form():
    mc, mp, l, Ip = CP["mc"], CP["mp"], CP["l"], CP["Ip"]
    model = dyn.load_urdf(cartpole_urdf())
    assert model.nq == model.nv == 2
    iv = {n: int(i) for n, i in zip(model.joint_names, model.joint_v_index)}
    iq = {n: int(i) for n, i in zip(model.joint_names, model.joint_q_index)}
    assert dict(zip(model.joint_names, model.joint_kinds)) == {"slider": "prismatic", "hinge": "continuous"}
    rng = np.random.default_rng(1)
    # the closed form does not depend on x: include the cart far along its rail (precision check)
    for x in (0.3, -1.2, 850.0, -4000.0):
        th = rng.uniform(-np.pi, np.pi)
        xd, thd = rng.normal(size=2)
        q = np.zeros(2)
        q[iq["slider"]], q[iq["hinge"]] = x, th
        v = np.zeros(2)
        v[iv["slider"]], v[iv["hinge"]] = xd, thd
        s, c = np.sin(th), np.cos(th)
        Mn = np.array([[mc + mp, mp * l * c], [mp * l * c, mp * l * l + Ip]])
        cn = np.array([-mp * l * s * thd**2, -mp * G * l * s])
        order = [iv["slider"], iv["hinge"]]  # named -> ours
        M = np.zeros((2, 2))
        M[np.ix_(order, order)] = Mn
        cvec = np.zeros(2)
        cvec[order] = cn
        assert_close(dyn.crba(model, q), M, "cartpole M")
        assert_close(dyn.bias_forces(model, q, v), cvec, "cartpole c")
        a = rng.normal(size=2)
        assert_close(dyn.rnea(model, q, v, a), M @ a + cvec, "cartpole rnea")
        tau = rng.normal(size=2)
        assert_close(dyn.aba(model, q, v, tau), np.linalg.solve(M, tau - cvec), "cartpole aba")
        assert_close(dyn.minverse(model, q), np.linalg.inv(M), "cartpole Minv")
        # d c / d v: only the pole's centripetal term -mp l sin(t) tdot^2 depends on v
        _, dc_dv = dyn.bias_force_derivatives(model, q, v)
        ref = np.zeros((2, 2))
        ref[iv["slider"], iv["hinge"]] = -2 * mp * l * s * thd
        assert_close(dc_dv, ref, "cartpole dc/dv")


# --------------------------------------------------------------------------- structural identities
@pytest.mark.parametrize("name", ["pendulum", "cartpole", "double_pendulum", "tree3d", "tree3d_floating", "datasets"])
def test_mass_matrix_spd_and_inverse_dynamics_roundtrip(name):
    selected = {k: m for k, m in models().items() if k == name or (name == "datasets" and k.startswith("datasets/"))}
    if not selected:
        pytest.skip("no dataset robots")
    rng = np.random.default_rng(2)
    for key, model in selected.items():
        for _ in range(3):
            q = np.asarray(dyn.random_configuration(model, rng))
            v, tau = rng.normal(size=model.nv), 3 * rng.normal(size=model.nv)
            M = np.asarray(dyn.crba(model, q))
            assert_close(M, M.T, f"{key}: M symmetric", rtol=1e-13)
            eig = np.linalg.eigvalsh(M)
            assert eig.min() > 1e-10 * max(1.0, eig.max()), f"{key}: M not positive definite (eigenvalues {eig})"
            assert_close(np.asarray(dyn.minverse(model, q)) @ M, np.eye(model.nv), f"{key}: Minv M", rtol=1e-9)
            qdd = np.asarray(dyn.aba(model, q, v, tau))
            assert_close(dyn.rnea(model, q, v, qdd), tau, f"{key}: rnea(aba(tau))", rtol=1e-9)
            c = np.asarray(dyn.bias_forces(model, q, v))
            assert_close(M @ qdd + c, tau, f"{key}: M qdd + c", rtol=1e-9)
            assert_close(dyn.rnea(model, q, v, np.zeros(model.nv)), c, f"{key}: c = rnea(q, v, 0)", rtol=1e-12)


# --------------------------------------------------------------------------- energy conservation
def _rk4(model, q, v, dt, steps, tau=None):
    tau = np.zeros(model.nv) if tau is None else tau

    def f(qq, vv):
        return vv, np.asarray(dyn.aba(model, qq, vv, tau))

    for _ in range(steps):
        k1q, k1v = f(q, v)
        k2q, k2v = f(q + 0.5 * dt * k1q, v + 0.5 * dt * k1v)
        k3q, k3v = f(q + 0.5 * dt * k2q, v + 0.5 * dt * k2v)
        k4q, k4v = f(q + dt * k3q, v + dt * k3v)
        q = q + dt / 6 * (k1q + 2 * k2q + 2 * k3q + k4q)
        v = v + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
    return q, v


def _potential_from_frames(model, q):
    """V = -sum_b m_b g . (r_b + R_b c_b) from inertial_parameters and body frame placements."""
    P = np.asarray(dyn.inertial_parameters(model))
    g = np.asarray(model.gravity, dtype=float)
    V = 0.0
    for b, body in enumerate(model.body_names):
        r, quat = dyn.frame_placement(model, q, body)
        V -= g @ (P[b, 0] * np.asarray(r) + rotation_from_quaternion(quat) @ P[b, 1:4])
    return V


def test_double_pendulum_energy_conservation():
    p = DP
    model = dyn.load_urdf(double_pendulum_urdf())
    assert model.nq == model.nv == 2
    iq = {n: int(i) for n, i in zip(model.joint_names, model.joint_q_index)}
    iv = {n: int(i) for n, i in zip(model.joint_names, model.joint_v_index)}

    def energy(q, v):
        t1, t2 = q[iq["shoulder"]], q[iq["elbow"]]
        z1 = 2.0 - p["l1"] / 2 * np.cos(t1)
        z2 = 2.0 - p["l1"] * np.cos(t1) - p["l2"] / 2 * np.cos(t1 + t2)
        V = G * (p["m1"] * z1 + p["m2"] * z2)
        T = 0.5 * v @ np.asarray(dyn.crba(model, q)) @ v
        return T, V

    q = np.zeros(2)
    q[iq["shoulder"]], q[iq["elbow"]] = 1.1, -0.7
    v = np.zeros(2)
    v[iv["shoulder"]], v[iv["elbow"]] = 0.8, -1.5
    # closed-form M of the double pendulum (angles about +y, relative elbow angle)
    t2 = q[iq["elbow"]]
    a1 = p["m1"] * (p["l1"] / 2) ** 2 + p["I1"] + p["m2"] * p["l1"] ** 2
    a2 = p["m2"] * (p["l2"] / 2) ** 2 + p["I2"]
    b = p["m2"] * p["l1"] * p["l2"] / 2 * np.cos(t2)
    Mn = np.array([[a1 + a2 + 2 * b, a2 + b], [a2 + b, a2]])
    order = [iv["shoulder"], iv["elbow"]]
    Mref = np.zeros((2, 2))
    Mref[np.ix_(order, order)] = Mn
    assert_close(dyn.crba(model, q), Mref, "double pendulum M closed form")
    T0, V0 = energy(q, v)
    assert_close(_potential_from_frames(model, q), V0, "potential from frames vs closed form", rtol=1e-12)
    q1, v1 = _rk4(model, q, v, 1e-3, 1000)
    T1, V1 = energy(q1, v1)
    assert abs(q1 - q).max() > 0.1, "the pendulum should have moved"
    scale = abs(T0) + abs(V0)
    assert abs((T1 + V1) - (T0 + V0)) <= 1e-6 * scale, f"energy drift {(T1 + V1) - (T0 + V0):.3e} (scale {scale:.3e})"


@pytest.mark.parametrize("gravity", [(0.0, 0.0, 0.0), (0.0, 0.0, -9.81)])
def test_tree_energy_conservation(gravity):
    model = dyn.load_urdf(spatial_tree_urdf(), gravity=gravity)
    rng = np.random.default_rng(5)
    q = np.asarray(dyn.random_configuration(model, rng))
    # keep the prismatic joint well inside its limits is irrelevant: limits are not enforced by aba
    v = rng.normal(size=model.nv)

    def energy(q, v):
        return 0.5 * v @ np.asarray(dyn.crba(model, q)) @ v + _potential_from_frames(model, q)

    E0 = energy(q, v)
    q1, v1 = _rk4(model, q, v, 1e-3, 1000)
    E1 = energy(q1, v1)
    scale = 0.5 * v @ np.asarray(dyn.crba(model, q)) @ v + abs(_potential_from_frames(model, q))
    assert abs(q1 - q).max() > 0.05
    assert abs(E1 - E0) <= 1e-6 * scale, f"energy drift {E1 - E0:.3e} (scale {scale:.3e})"


# --------------------------------------------------------------------------- malformed URDF
def _one_link(extra_link_xml="", joint_type="revolute", inertial=None, name="arm"):
    inertial = inertial_xml(1.0, (0, 0, 0), 0.1, 0.1, 0.1) if inertial is None else inertial
    return f"""<?xml version="1.0"?>
<robot name="bad">
  <link name="base"/>
  <link name="{name}">{inertial}{extra_link_xml}</link>
  <joint name="arm_joint" type="{joint_type}">
    <parent link="base"/><child link="{name}"/><origin xyz="0 0 0" rpy="0 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
</robot>"""


def test_error_cycle():
    urdf = f"""<?xml version="1.0"?>
<robot name="loop">
  <link name="root"/>
  <link name="loop_a">{inertial_xml(1.0, (0, 0, 0), 0.1, 0.1, 0.1)}</link>
  <link name="loop_b">{inertial_xml(1.0, (0, 0, 0), 0.1, 0.1, 0.1)}</link>
  <joint name="root_to_a" type="fixed"><parent link="root"/><child link="loop_a"/></joint>
  <joint name="loop_ab" type="revolute"><parent link="loop_a"/><child link="loop_b"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="loop_ba" type="revolute"><parent link="loop_b"/><child link="loop_a"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""
    with pytest.raises(ValueError, match=r"loop_a|loop_b|loop_ab|loop_ba|root_to_a"):
        dyn.load_urdf(urdf)


def test_error_pure_cycle_without_root():
    urdf = f"""<?xml version="1.0"?>
<robot name="loop">
  <link name="loop_a">{inertial_xml(1.0, (0, 0, 0), 0.1, 0.1, 0.1)}</link>
  <link name="loop_b">{inertial_xml(1.0, (0, 0, 0), 0.1, 0.1, 0.1)}</link>
  <joint name="loop_ab" type="continuous"><parent link="loop_a"/><child link="loop_b"/><axis xyz="0 0 1"/></joint>
  <joint name="loop_ba" type="continuous"><parent link="loop_b"/><child link="loop_a"/><axis xyz="0 0 1"/></joint>
</robot>"""
    with pytest.raises(ValueError, match=r"loop_a|loop_b|loop_ab|loop_ba"):
        dyn.load_urdf(urdf)


def test_error_unknown_joint_type():
    with pytest.raises(ValueError, match=r"arm_joint") as info:
        dyn.load_urdf(_one_link(joint_type="screwy"))
    assert "screwy" in str(info.value)


def test_error_missing_mass():
    inertial = (
        '<inertial><origin xyz="0 0 0"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>'
    )
    with pytest.raises(ValueError, match=r"heavy_link"):
        dyn.load_urdf(_one_link(inertial=inertial, name="heavy_link"))


def test_error_negative_mass():
    with pytest.raises(ValueError, match=r"heavy_link"):
        dyn.load_urdf(_one_link(inertial=inertial_xml(-1.0, (0, 0, 0), 0.1, 0.1, 0.1), name="heavy_link"))


def test_error_indefinite_inertia():
    # positive diagonal but indefinite: eigenvalues of [[1, 2, 0], [2, 1, 0], [0, 0, 1]] are -1, 1, 3
    bad = inertial_xml(1.0, (0, 0, 0), 1.0, 1.0, 1.0, ixy=2.0)
    with pytest.raises(ValueError, match=r"wobbly_link"):
        dyn.load_urdf(_one_link(inertial=bad, name="wobbly_link"))


def test_error_negative_definite_inertia():
    bad = inertial_xml(1.0, (0, 0, 0), -0.1, 0.1, 0.1)
    with pytest.raises(ValueError, match=r"wobbly_link"):
        dyn.load_urdf(_one_link(inertial=bad, name="wobbly_link"))


@pytest.mark.parametrize(
    "filename",
    ["/nonexistent_dir_dcol/meshes/missing_part.stl", "package://no_such_package_dcol/meshes/missing_part.stl"],
)
def test_error_missing_mesh(filename):
    geom = f'<collision><geometry><mesh filename="{filename}"/></geometry></collision>'
    with pytest.raises(ValueError, match=r"missing_part\.stl"):
        dyn.load_urdf(_one_link(extra_link_xml=geom))


def test_error_not_xml():
    with pytest.raises(ValueError):
        dyn.load_urdf("<robot name='x'><link name='a'></robot")


def test_urdf_as_bytes_or_with_a_byte_order_mark():
    """The XML given as bytes (UTF-8 with a BOM too) or as a string with a BOM, or with blank lines
    before its XML declaration, is the XML, not a file name: the same model as the plain string."""
    text = spatial_tree_urdf()
    reference = dyn.load_urdf(text)
    assert text.startswith("<?xml")
    for source in (text.encode(), "\ufeff".encode() + text.encode(), "\ufeff" + text, "\n  " + text, "\ufeff\n" + text):
        model = dyn.load_urdf(source)
        assert (model.nq, model.nv, model.nbodies) == (reference.nq, reference.nv, reference.nbodies)
        np.testing.assert_array_equal(model.masses, reference.masses)


def test_xacro_is_named():
    xacro = (
        '<robot name="x" xmlns:xacro="http://www.ros.org/wiki/xacro">'
        '<xacro:property name="l" value="0.5"/><link name="a"/></robot>'
    )
    with pytest.raises(ValueError, match="xacro file.*expand it first"):
        dyn.load_urdf(xacro)
    with pytest.raises(ValueError, match="xacro file"):
        dyn.load_urdf(_one_link(extra_link_xml='<visual><geometry><box size="${l} 1 1"/></geometry></visual>'))


def test_urdf_source_of_another_type():
    with pytest.raises(TypeError, match="source must be a path or the URDF's XML"):
        dyn.load_urdf(42)


@pytest.mark.parametrize("argument", ["lower", "upper", "velocity_limit", "effort_limit", "damping"])
def test_joint_limits_and_damping_are_checked(argument):
    """A complex number (numpy would drop its imaginary part), NaN or a wrong length is refused by name."""
    values = {"lower": -1.0, "upper": 1.0, "velocity_limit": 2.0, "effort_limit": 3.0, "damping": 0.1}

    def add(value):
        builder = dyn.ModelBuilder()
        arguments = {**values, argument: value}
        builder.add_body("a", parent=None, joint="j", kind="revolute", mass=1.0, inertia=np.eye(3), **arguments)
        return builder.build()

    name = f"joint 'j' {argument.removesuffix('_limit')}"
    with pytest.raises(TypeError, match=f"{name} must be an array of real numbers, got complex ones"):
        add([values[argument] + 0.5j])
    with pytest.raises(ValueError, match=f"{name} must not contain NaN"):
        add(np.nan)
    with pytest.raises(ValueError, match=rf"{name} must have shape \(1,\), got \(2,\)"):
        add([values[argument]] * 2)


def test_valid_one_link_loads():
    """The error fixtures above are otherwise valid: the unmodified one-link URDF loads."""
    model = dyn.load_urdf(_one_link())
    assert model.nv == 1 and list(model.joint_names) == ["arm_joint"]


# --------------------------------------------------------------------------- bad arguments
@pytest.fixture(scope="module")
def tree():
    return dyn.load_urdf(spatial_tree_urdf())


@pytest.mark.parametrize(
    "fname",
    [
        "rnea",
        "aba",
        "rnea_derivatives",
        "aba_derivatives",
        "crba",
        "minverse",
        "frame_placement",
        "frame_jacobian",
        "bias_forces",
    ],
)
def test_bad_q(tree, fname):
    m = tree
    q = np.asarray(dyn.neutral(m), dtype=float)
    v = np.zeros(m.nv)
    calls = {
        "rnea": lambda qq: dyn.rnea(m, qq, v, v),
        "aba": lambda qq: dyn.aba(m, qq, v, v),
        "rnea_derivatives": lambda qq: dyn.rnea_derivatives(m, qq, v, v),
        "aba_derivatives": lambda qq: dyn.aba_derivatives(m, qq, v, v),
        "crba": lambda qq: dyn.crba(m, qq),
        "minverse": lambda qq: dyn.minverse(m, qq),
        "frame_placement": lambda qq: dyn.frame_placement(m, qq, "c"),
        "frame_jacobian": lambda qq: dyn.frame_jacobian(m, qq, "c"),
        "bias_forces": lambda qq: dyn.bias_forces(m, qq, v),
    }
    fn = calls[fname]
    fn(q)  # valid call works
    for bad in (np.zeros(m.nq + 1), np.zeros((m.nq, 1)), np.zeros(0)):
        with pytest.raises(ValueError, match=r"\bq\b"):
            fn(bad)
    q_nan = q.copy()
    q_nan[1] = np.nan
    with pytest.raises(ValueError, match=r"\bq\b"):
        fn(q_nan)
    q_inf = q.copy()
    q_inf[0] = np.inf
    with pytest.raises(ValueError, match=r"\bq\b"):
        fn(q_inf)


def test_bad_v_a_tau(tree):
    m = tree
    q = np.asarray(dyn.neutral(m), dtype=float)
    z = np.zeros(m.nv)
    short = np.zeros(m.nv - 1)
    nan = z.copy()
    nan[0] = np.nan
    with pytest.raises(ValueError, match=r"\bv\b"):
        dyn.rnea(m, q, short, z)
    with pytest.raises(ValueError, match=r"\bv\b"):
        dyn.bias_forces(m, q, nan)
    with pytest.raises(ValueError, match=r"\ba\b"):
        dyn.rnea(m, q, z, short)
    with pytest.raises(ValueError, match=r"\ba\b"):
        dyn.rnea(m, q, z, nan)
    with pytest.raises(ValueError, match=r"\btau\b"):
        dyn.aba(m, q, z, short)
    with pytest.raises(ValueError, match=r"\btau\b"):
        dyn.aba(m, q, z, nan)


def test_bad_batch_mismatch(tree):
    m = tree
    Q = np.array([dyn.neutral(m)] * 3, dtype=float)
    with pytest.raises(ValueError):
        dyn.rnea(m, Q, np.zeros((2, m.nv)), np.zeros((3, m.nv)))


def _calls_with_threads(m):
    """Every dcol.dynamics function and World method that takes threads, as threads → call."""
    q, z = np.asarray(dyn.neutral(m), dtype=float), np.zeros(m.nv)
    world = dyn.World(m, ground=False)
    return {
        "frame_placement": lambda t: dyn.frame_placement(m, q, "c", threads=t),
        "frame_jacobian": lambda t: dyn.frame_jacobian(m, q, "c", threads=t),
        "frame_jacobian_derivative": lambda t: dyn.frame_jacobian_derivative(m, q, "c", threads=t),
        "rnea": lambda t: dyn.rnea(m, q, z, z, threads=t),
        "bias_forces": lambda t: dyn.bias_forces(m, q, z, threads=t),
        "gravity_forces": lambda t: dyn.gravity_forces(m, q, threads=t),
        "crba": lambda t: dyn.crba(m, q, threads=t),
        "aba": lambda t: dyn.aba(m, q, z, z, threads=t),
        "minverse": lambda t: dyn.minverse(m, q, threads=t),
        "rnea_derivatives": lambda t: dyn.rnea_derivatives(m, q, z, z, threads=t),
        "aba_derivatives": lambda t: dyn.aba_derivatives(m, q, z, z, threads=t),
        "bias_force_derivatives": lambda t: dyn.bias_force_derivatives(m, q, z, threads=t),
        "minverse_derivative": lambda t: dyn.minverse_derivative(m, q, z, threads=t),
        "rnea_parameter_derivatives": lambda t: dyn.rnea_parameter_derivatives(m, q, z, z, threads=t),
        "aba_parameter_derivatives": lambda t: dyn.aba_parameter_derivatives(m, q, z, z, threads=t),
        "World": lambda t: dyn.World(m, ground=False, threads=t),
        "World.step_batch": lambda t: world.step_batch(q[None], z[None], threads=t),
        "World.rollout_batch": lambda t: world.rollout_batch(q[None], z[None], np.zeros((1, 2, m.nv)), threads=t),
    }


@pytest.mark.parametrize("function", sorted(_calls_with_threads(dyn.load_urdf(spatial_tree_urdf()))))
def test_threads_are_checked_by_name(tree, function):
    """Threads out of [1, MAX_THREADS] or not integers are refused with one message everywhere,
    before the native core (which printed its signatures for 2**40)."""
    call = _calls_with_threads(tree)[function]
    call(2)
    for threads in (0, 1.5, True, "2", 2**40):
        with pytest.raises(ValueError, match=rf"threads must be an integer in \[1, {MAX_THREADS}\], got"):
            call(threads)


def test_unknown_frame_name(tree):
    q = np.asarray(dyn.neutral(tree), dtype=float)
    with pytest.raises((ValueError, KeyError), match=r"no_such_frame"):
        dyn.frame_placement(tree, q, "no_such_frame")


def test_floating_quaternion_normalized_or_rejected():
    """A floating-base q with a non-unit quaternion is normalized (docs/conventions.md) or rejected;
    zero is rejected."""
    m = dyn.load_urdf(spatial_tree_urdf(), floating_base=True)
    rng = np.random.default_rng(9)
    q = np.asarray(dyn.random_configuration(m, rng), dtype=float)
    v, a = rng.normal(size=m.nv), rng.normal(size=m.nv)
    q2 = q.copy()
    q2[3:7] *= 2.5
    ref = np.asarray(dyn.rnea(m, q, v, a))
    try:
        out = np.asarray(dyn.rnea(m, q2, v, a))
    except ValueError as exc:
        assert re.search(r"\bq\b", str(exc))
    else:
        assert_close(out, ref, "rnea with a scaled quaternion")
    q0 = q.copy()
    q0[3:7] = 0.0
    with pytest.raises(ValueError, match=r"\bq\b"):
        dyn.rnea(m, q0, v, a)


@pytest.mark.parametrize("scale", [1e-300, 1e-160, 1e-155, 1e155, 1e160, 1e300])
def test_floating_quaternion_of_extreme_norm(scale):
    """Any nonzero finite quaternion is an orientation, also where its squared norm under- or
    overflows: the algorithms, integrate, difference and the tangent maps give the unit quaternion's
    results."""
    m = dyn.load_urdf(spatial_tree_urdf(), floating_base=True)
    rng = np.random.default_rng(11)
    q = np.asarray(dyn.random_configuration(m, rng), dtype=float)
    v, a = rng.normal(size=m.nv), rng.normal(size=m.nv)
    scaled = q.copy()
    scaled[3:7] *= scale
    for name, function in (("rnea", lambda q_: dyn.rnea(m, q_, v, a)), ("aba", lambda q_: dyn.aba(m, q_, v, a))):
        assert_close(np.asarray(function(scaled)), np.asarray(function(q)), f"{name} at quaternion scale {scale}")
    assert_close(dyn.integrate(m, scaled, v), dyn.integrate(m, q, v), "integrate")
    assert_close(dyn.difference(m, scaled, q), np.zeros(m.nv), "difference to the same orientation")
    to_configuration, to_tangent = dyn.tangent_maps(m, scaled)
    reference_configuration, reference_tangent = dyn.tangent_maps(m, q)
    assert_close(to_configuration, reference_configuration, "tangent map T, of the unit quaternion")
    quaternion_columns = to_tangent[:, 3:7] * scale  # T⁺'s quaternion columns scale with 1/‖ρ‖
    assert_close(np.hstack([to_tangent[:, :3], quaternion_columns, to_tangent[:, 7:]]), reference_tangent, "T⁺")
