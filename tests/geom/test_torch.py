"""The PyTorch wrapper of proximity (extra [torch]) against torch.autograd.gradcheck, for one pose pair
and for batches."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from dcol.geom import DERIVATIVE_SETTINGS, Capsule, Ellipsoid, Polytope, proximity  # noqa: E402
from dcol.geom import torch as dcol_torch  # noqa: E402
from dcol.solvers import Status  # noqa: E402
from tests.support.shapes import random_quaternion  # noqa: E402


def poses(rng, n):
    r_a = rng.normal(size=(n, 3))
    r_b = r_a + rng.uniform(1.0, 3.0, size=(n, 1)) * rng.normal(size=(n, 3)) / np.sqrt(3)
    q_a = np.array([random_quaternion(rng) for _ in range(n)])
    q_b = np.array([random_quaternion(rng) for _ in range(n)])
    return [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (r_a, q_a, r_b, q_b)]


@pytest.mark.parametrize(
    "a,b",
    [
        (Capsule(0.4, 1.2), Ellipsoid(np.diag([1.0, 3.0, 2.0]))),
        (Polytope.from_vertices(np.random.default_rng(1).normal(size=(12, 3))), Capsule(0.3, 0.8)),
    ],
)
def test_gradcheck(a, b, rng):
    inputs = poses(rng, 4)

    def function(r_a, q_a, r_b, q_b):
        out = dcol_torch.proximity(a, r_a, q_a, b, r_b, q_b)
        return out.alpha, out.x, out.p_a, out.p_b, out.distance, out.normal

    # Finite differences (step 1e-6) of the same smoothed solution the derivatives are exact for.
    assert torch.autograd.gradcheck(function, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


def test_backward_reaches_the_inputs(rng):
    r_a, q_a, r_b, q_b = poses(rng, 3)
    out = dcol_torch.proximity(Capsule(0.4, 1.2), r_a, q_a, Capsule(0.2, 0.5), r_b, q_b)
    (out.alpha.sum() + out.x.sum()).backward()
    for tensor in (r_a, q_a, r_b, q_b):
        assert tensor.grad is not None and torch.all(torch.isfinite(tensor.grad))
    # Moving both bodies together leaves α unchanged: ∂α/∂r_a = −∂α/∂r_b.
    r_a.grad = r_b.grad = None
    dcol_torch.proximity(Capsule(0.4, 1.2), r_a, q_a, Capsule(0.2, 0.5), r_b, q_b).alpha.sum().backward()
    torch.testing.assert_close(r_a.grad, -r_b.grad, rtol=1e-6, atol=1e-9)


def test_one_pose_pair_gives_the_whole_result_of_proximity(rng):
    a, b = Capsule(0.4, 1.2), Ellipsoid(np.diag([1.0, 3.0, 2.0]))
    r_a, q_a, r_b, q_b = (tensor[0].detach().requires_grad_() for tensor in poses(rng, 1))
    out = dcol_torch.proximity(a, r_a, q_a, b, r_b, q_b)
    assert out.alpha.shape == () and out.distance.shape == () and out.p_a.shape == (3,) and out.normal.shape == (3,)
    assert out.status is Status.SOLVED and type(out.iterations) is int
    pose_a, pose_b = [t.detach().numpy() for t in (r_a, q_a)], [t.detach().numpy() for t in (r_b, q_b)]
    expected = proximity(a, *pose_a, b, *pose_b, settings=DERIVATIVE_SETTINGS)  # the same smoothed problem
    for name in ("alpha", "x", "p_a", "p_b", "distance", "normal"):
        np.testing.assert_allclose(getattr(out, name).detach().numpy(), getattr(expected, name), atol=1e-8)

    def function(r_a, q_a, r_b, q_b):
        single = dcol_torch.proximity(a, r_a, q_a, b, r_b, q_b)
        return single.alpha, single.x, single.p_a, single.p_b, single.distance, single.normal

    assert torch.autograd.gradcheck(function, (r_a, q_a, r_b, q_b), eps=1e-6, atol=1e-5, rtol=1e-3)


def test_bad_tensors_are_refused(rng):
    r_a, q_a, r_b, q_b = poses(rng, 2)
    with pytest.raises(TypeError, match="float64"):
        dcol_torch.proximity(Capsule(0.4, 1.2), r_a.float(), q_a, Capsule(0.2, 0.5), r_b, q_b)
    with pytest.raises(TypeError, match="torch.Tensor"):
        dcol_torch.proximity(Capsule(0.4, 1.2), r_a.detach().numpy(), q_a, Capsule(0.2, 0.5), r_b, q_b)
