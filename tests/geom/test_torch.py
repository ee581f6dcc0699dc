"""The PyTorch wrapper of batched proximity (extra [torch]) against torch.autograd.gradcheck."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from dcol.geom import Capsule, Ellipsoid, Polytope  # noqa: E402
from dcol.geom import torch as dcol_torch  # noqa: E402
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
        return dcol_torch.proximity(a, r_a, q_a, b, r_b, q_b)

    # Finite differences (step 1e-6) of the same smoothed solution the derivatives are exact for.
    assert torch.autograd.gradcheck(function, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


def test_backward_reaches_the_inputs(rng):
    r_a, q_a, r_b, q_b = poses(rng, 3)
    alpha, x = dcol_torch.proximity(Capsule(0.4, 1.2), r_a, q_a, Capsule(0.2, 0.5), r_b, q_b)
    (alpha.sum() + x.sum()).backward()
    for tensor in (r_a, q_a, r_b, q_b):
        assert tensor.grad is not None and torch.all(torch.isfinite(tensor.grad))
    # Moving both bodies together leaves α unchanged: ∂α/∂r_a = −∂α/∂r_b.
    r_a.grad = r_b.grad = None
    alpha, _ = dcol_torch.proximity(Capsule(0.4, 1.2), r_a, q_a, Capsule(0.2, 0.5), r_b, q_b)
    alpha.sum().backward()
    torch.testing.assert_close(r_a.grad, -r_b.grad, rtol=1e-6, atol=1e-9)


def test_bad_tensors_are_refused(rng):
    r_a, q_a, r_b, q_b = poses(rng, 2)
    with pytest.raises(TypeError, match="float64"):
        dcol_torch.proximity(Capsule(0.4, 1.2), r_a.float(), q_a, Capsule(0.2, 0.5), r_b, q_b)
    with pytest.raises(TypeError, match="torch.Tensor"):
        dcol_torch.proximity(Capsule(0.4, 1.2), r_a.detach().numpy(), q_a, Capsule(0.2, 0.5), r_b, q_b)
