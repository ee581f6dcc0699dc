"""Pinocchio (`pin`) as a test-only oracle for `dcol.dynamics`, with every result in OUR conventions.

The oracle only reads these attributes of a dcol Model: joint_names, joint_kinds, joint_q_index,
joint_v_index, nq, nv, nbodies, gravity.  Everything else comes from pinocchio's own URDF parser, so the
two sides share nothing but the URDF file.

Convention differences handled here (see the dynamics API notes):

* continuous joints: ours nq = 1 (angle), pinocchio nq = 2 (cos, sin); both have nv = 1;
* free flyer: ours q = [x, y, z, qw, qx, qy, qz], pinocchio [x, y, z, qx, qy, qz, qw]; same body twist v;
* joint order: ours is depth-first in file order, pinocchio's may differ: everything is mapped by joint
  name, v-vectors by the permutation ``perm`` with ``x_ours = x_pin[perm]``;
* bodies: our body b is our joint b; pinocchio's body of joint id j holds ``model.inertias[j]`` and the
  regressor columns ``10 (j - 1) : 10 j``;
* crba / computeMinverse / derivative outputs that pinocchio fills only in the upper triangle are
  symmetrized.

Pinocchio is imported lazily, on first use: the pure numpy helpers here (rotation_from_quaternion) serve
tests that do not need it.
"""

from __future__ import annotations

import numpy as np


def _pin():
    import pinocchio as pin

    return pin


def symmetrize_upper(A):
    """Full symmetric matrix from the upper triangle of A (pinocchio fills only that part in places)."""
    A = np.array(A, dtype=float)
    A = A.reshape(int(round(np.sqrt(A.size))), -1)
    return np.triu(A) + np.triu(A, 1).T


def rotation_from_quaternion(quat):
    """3x3 rotation matrix of a (normalized here) scalar-first quaternion [w, x, y, z]."""
    w, x, y, z = np.asarray(quat, dtype=float) / np.linalg.norm(quat)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


class PinocchioOracle:
    """Pinocchio model built from the same URDF as a dcol Model, answering in dcol's ordering."""

    # pinocchio joint short names accepted for each of our joint kinds
    _PIN_KINDS = {
        "revolute": ("JointModelRX", "JointModelRY", "JointModelRZ", "JointModelRevoluteUnaligned"),
        "continuous": ("JointModelRUBX", "JointModelRUBY", "JointModelRUBZ", "JointModelRevoluteUnboundedUnaligned"),
        "prismatic": ("JointModelPX", "JointModelPY", "JointModelPZ", "JointModelPrismaticUnaligned"),
        "floating": ("JointModelFreeFlyer",),
    }

    def __init__(self, urdf_path, floating_base, model):
        pin = _pin()
        self.pin = pin
        self.model = model
        if floating_base:
            self.pmodel = pin.buildModelFromUrdf(str(urdf_path), pin.JointModelFreeFlyer())
        else:
            self.pmodel = pin.buildModelFromUrdf(str(urdf_path))
        pm = self.pmodel
        pm.gravity.linear = np.asarray(model.gravity, dtype=float).copy()
        pm.gravity.angular = np.zeros(3)
        self.pdata = pm.createData()
        # the same model without gravity, for d(M^-1 z)/dq = d qdd/dq of ABA at v = 0, tau = z
        if floating_base:
            self.pmodel0 = pin.buildModelFromUrdf(str(urdf_path), pin.JointModelFreeFlyer())
        else:
            self.pmodel0 = pin.buildModelFromUrdf(str(urdf_path))
        self.pmodel0.gravity.linear = np.zeros(3)
        self.pmodel0.gravity.angular = np.zeros(3)
        self.pdata0 = self.pmodel0.createData()

        names = list(model.joint_names)
        kinds = list(model.joint_kinds)
        q_index = np.asarray(model.joint_q_index, dtype=int)
        v_index = np.asarray(model.joint_v_index, dtype=int)
        if len(names) != model.nbodies or len(kinds) != model.nbodies:
            raise AssertionError("joint_names / joint_kinds must have one entry per body")
        if pm.nv != model.nv:
            raise AssertionError(f"nv differs: dcol {model.nv}, pinocchio {pm.nv}")
        if pm.njoints - 1 != model.nbodies:
            raise AssertionError(f"movable joint count differs: dcol {model.nbodies}, pinocchio {pm.njoints - 1}")

        self.joint_ids = np.zeros(model.nbodies, dtype=int)  # our body b -> pinocchio joint id
        perm = -np.ones(model.nv, dtype=int)
        self._q_plan = []  # (kind, our q start, pin q start)
        for b, (name, kind) in enumerate(zip(names, kinds)):
            if not pm.existJointName(name):
                raise AssertionError(f"joint {name!r} not in the pinocchio model")
            jid = pm.getJointId(name)
            joint = pm.joints[jid]
            if kind not in self._PIN_KINDS:
                raise AssertionError(f"unknown joint kind {kind!r}")
            if joint.shortname() not in self._PIN_KINDS[kind]:
                raise AssertionError(f"joint {name!r}: dcol kind {kind!r} but pinocchio {joint.shortname()}")
            nv_j = 6 if kind == "floating" else 1
            if joint.nv != nv_j:
                raise AssertionError(f"joint {name!r}: nv {nv_j} vs pinocchio {joint.nv}")
            self.joint_ids[b] = jid
            perm[v_index[b] : v_index[b] + nv_j] = np.arange(joint.idx_v, joint.idx_v + nv_j)
            self._q_plan.append((kind, int(q_index[b]), int(joint.idx_q)))
        if sorted(perm.tolist()) != list(range(model.nv)):
            raise AssertionError(f"joint_v_index does not give a permutation of the velocity vector: {perm}")
        self.perm = perm  # x_ours = x_pin[perm];  x_pin[perm] = x_ours
        self.inv_perm = np.argsort(perm)
        nq_ours = sum(7 if k == "floating" else 1 for k, _, _ in self._q_plan)
        if nq_ours != model.nq:
            raise AssertionError(f"nq {model.nq} does not match joint kinds ({nq_ours})")

    # ------------------------------------------------------------------ conversions
    def q_to_pin(self, q):
        q = np.asarray(q, dtype=float)
        qp = np.zeros(self.pmodel.nq)
        for kind, iq, ip in self._q_plan:
            if kind == "continuous":
                qp[ip], qp[ip + 1] = np.cos(q[iq]), np.sin(q[iq])
            elif kind == "floating":
                quat = q[iq + 3 : iq + 7] / np.linalg.norm(q[iq + 3 : iq + 7])
                qp[ip : ip + 3] = q[iq : iq + 3]
                qp[ip + 3 : ip + 6] = quat[1:]
                qp[ip + 6] = quat[0]
            else:
                qp[ip] = q[iq]
        return qp

    def q_from_pin(self, qp):
        qp = np.asarray(qp, dtype=float)
        q = np.zeros(self.model.nq)
        for kind, iq, ip in self._q_plan:
            if kind == "continuous":
                q[iq] = np.arctan2(qp[ip + 1], qp[ip])
            elif kind == "floating":
                q[iq : iq + 3] = qp[ip : ip + 3]
                q[iq + 3] = qp[ip + 6]
                q[iq + 4 : iq + 7] = qp[ip + 3 : ip + 6]
            else:
                q[iq] = qp[ip]
        return q

    def v_to_pin(self, v):
        v = np.asarray(v, dtype=float)
        out = np.zeros(self.pmodel.nv)
        out[self.perm] = v
        return out

    def v_from_pin(self, vp):
        return np.asarray(vp, dtype=float)[self.perm]

    def mat_from_pin(self, A):
        """nv x nv matrix (rows and columns both in v ordering) to our ordering."""
        nv = self.pmodel.nv
        return np.asarray(A, dtype=float).reshape(nv, nv)[np.ix_(self.perm, self.perm)]

    def cols_from_pin(self, A, rows=6):
        """Matrix whose columns are in v ordering (rows not velocity-indexed)."""
        return np.asarray(A, dtype=float).reshape(rows, self.pmodel.nv)[:, self.perm]

    def regressor_from_pin(self, Y):
        """nv x 10*nbodies regressor: rows to our v order, body column blocks to our body order."""
        pm = self.pmodel
        Y = np.asarray(Y, dtype=float).reshape(pm.nv, 10 * (pm.njoints - 1))[self.perm, :]
        cols = np.concatenate([np.arange(10 * (j - 1), 10 * j) for j in self.joint_ids])
        return Y[:, cols]

    # ------------------------------------------------------------------ algorithms
    def _args(self, q, *vectors):
        return (self.pmodel, self.pdata, self.q_to_pin(q)) + tuple(self.v_to_pin(x) for x in vectors)

    def crba(self, q):
        M = self.pin.crba(*self._args(q))
        return self.mat_from_pin(symmetrize_upper(M))

    def bias_forces(self, q, v):
        return self.v_from_pin(self.pin.nonLinearEffects(*self._args(q, v)))

    def rnea(self, q, v, a):
        return self.v_from_pin(self.pin.rnea(*self._args(q, v, a)))

    def aba(self, q, v, tau):
        return self.v_from_pin(self.pin.aba(*self._args(q, v, tau)))

    def minverse(self, q):
        Minv = self.pin.computeMinverse(*self._args(q))
        return self.mat_from_pin(symmetrize_upper(Minv))

    def rnea_derivatives(self, q, v, a):
        """(dtau_dq, dtau_dv, M) in our ordering."""
        out = self.pin.computeRNEADerivatives(*self._args(q, v, a))
        dq, dv, M = (np.array(x) for x in out)
        return self.mat_from_pin(dq), self.mat_from_pin(dv), self.mat_from_pin(symmetrize_upper(M))

    def aba_derivatives(self, q, v, tau):
        """(dqdd_dq, dqdd_dv, M^-1) in our ordering."""
        out = self.pin.computeABADerivatives(*self._args(q, v, tau))
        dq, dv, Minv = (np.array(x) for x in out)
        return self.mat_from_pin(dq), self.mat_from_pin(dv), self.mat_from_pin(symmetrize_upper(Minv))

    def minverse_derivative(self, q, z):
        """d(M^-1 z)/dq in the tangent space: ABA derivatives of the gravity-free model at v = 0, tau = z."""
        zero = np.zeros(self.pmodel.nv)
        out = self.pin.computeABADerivatives(
            self.pmodel0, self.pdata0, self.q_to_pin(q), self.v_to_pin(zero), self.v_to_pin(z)
        )
        return self.mat_from_pin(np.array(out[0]))

    def regressor(self, q, v, a):
        Y = self.pin.computeJointTorqueRegressor(*self._args(q, v, a))
        return self.regressor_from_pin(Y)

    def inertial_parameters(self):
        """(nbodies, 10) pinocchio Inertia.toDynamicParameters() of each of our bodies."""
        return np.array([np.asarray(self.pmodel.inertias[int(j)].toDynamicParameters()) for j in self.joint_ids])

    # ------------------------------------------------------------------ frames
    def frame_id(self, name):
        """Pinocchio frame id of a URDF link (preferred) or joint name."""
        pin, pm = self.pin, self.pmodel
        for ftype in (pin.FrameType.BODY, pin.FrameType.JOINT, pin.FrameType.FIXED_JOINT):
            if pm.existFrame(name, ftype):
                return pm.getFrameId(name, ftype)
        raise KeyError(f"frame {name!r} not in the pinocchio model")

    def frame_placement(self, q, name):
        """(r (3,), R (3, 3)) world placement of a frame."""
        fid = self.frame_id(name)
        self.pin.framesForwardKinematics(self.pmodel, self.pdata, self.q_to_pin(q))
        M = self.pdata.oMf[fid]
        return np.array(M.translation), np.array(M.rotation)

    def frame_jacobian(self, q, name, reference="LOCAL_WORLD_ALIGNED"):
        """(6, nv) [linear; angular] frame Jacobian in pinocchio's `reference` (default: world axes at
        the frame origin)."""
        fid = self.frame_id(name)
        J = self.pin.computeFrameJacobian(
            self.pmodel, self.pdata, self.q_to_pin(q), fid, getattr(self.pin.ReferenceFrame, reference)
        )
        return self.cols_from_pin(J)

    def frame_jacobian_time_variation(self, q, v, name):
        """d/dt of the LOCAL_WORLD_ALIGNED frame Jacobian along v (= sum_k dJ/dq_k v_k)."""
        pin = self.pin
        fid = self.frame_id(name)
        self.pin.computeJointJacobiansTimeVariation(self.pmodel, self.pdata, self.q_to_pin(q), self.v_to_pin(v))
        self.pin.updateFramePlacements(self.pmodel, self.pdata)
        dJ = pin.getFrameJacobianTimeVariation(self.pmodel, self.pdata, fid, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        return self.cols_from_pin(dJ)

    # ------------------------------------------------------------------ sanity
    def integrate(self, q, v):
        return self.q_from_pin(self.pin.integrate(self.pmodel, self.q_to_pin(q), self.v_to_pin(v)))

    def self_check(self, q, v, tau, tol=1e-8):
        """Raise AssertionError unless pinocchio's own results agree with each other in our ordering.

        Checks: rnea(aba(tau)) == tau, M Minv == I, M == dtau/da, nonLinearEffects == rnea(q, v, 0),
        rnea(q, v, a) == M a + c, regressor @ parameters == rnea, q round trip, integrate consistency.
        """

        def close(a, b, what):
            a, b = np.asarray(a), np.asarray(b)
            err = np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b)))
            if not err <= tol:
                raise AssertionError(f"pinocchio oracle not self-consistent: {what} (rel. err {err:.3e})")

        qdd = self.aba(q, v, tau)
        close(self.rnea(q, v, qdd), tau, "rnea(aba(tau)) != tau")
        M = self.crba(q)
        Minv = self.minverse(q)
        close(M @ Minv, np.eye(self.model.nv), "M @ Minv != I")
        c = self.bias_forces(q, v)
        close(c, self.rnea(q, v, np.zeros(self.model.nv)), "nonLinearEffects != rnea(q, v, 0)")
        close(M @ qdd + c, tau, "M qdd + c != tau")
        _, _, M2 = self.rnea_derivatives(q, v, qdd)
        close(M2, M, "rnea derivatives' M != crba")
        _, _, Minv2 = self.aba_derivatives(q, v, tau)
        close(Minv2, Minv, "aba derivatives' Minv != computeMinverse")
        Y = self.regressor(q, v, qdd)
        close(Y @ self.inertial_parameters().ravel(), tau, "regressor @ parameters != rnea")
        q_rt = self.q_from_pin(self.q_to_pin(q))
        close(self.q_to_pin(q_rt), self.q_to_pin(q), "q round trip")
        # a tiny step of integrate moves frame positions by J dv: ties the v permutation to frames too
        return True
