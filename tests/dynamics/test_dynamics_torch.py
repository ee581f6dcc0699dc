"""The PyTorch wrappers of World.step and World.rollout (extra [torch]) against torch.autograd.gradcheck,
central finite differences of World.rollout and the reverse mode they wrap.

States are chosen inside one contact mode (a box sticking on its face, a box sliding on it, a
cart-pole in the air), where the step is differentiable and finite differences with step 1e-6 stay in
the mode. The box's quaternion has norm 1.3: gradcheck perturbs its four components, which the
simulation normalizes.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from dcol.dynamics import World, load_dataset_robot, neutral  # noqa: E402
from dcol.dynamics import torch as dynamics_torch  # noqa: E402

EPS = 1e-6
# Finite differences of the step are accurate to ~1e-9 here; the margin covers other machines' rounding.
ATOL, RTOL = 1e-6, 1e-4


def tensor(array):
    return torch.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)


def pose(position, axis=(1.0, 0.0, 0.0), angle=0.0, norm=1.0):
    """q of a floating body: position and a quaternion of the given norm."""
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    return np.r_[position, norm * np.cos(angle / 2), norm * np.sin(angle / 2) * axis]


@pytest.fixture(scope="module")
def box_model():
    return load_dataset_robot("box", floating_base=True)


@pytest.fixture(scope="module")
def sticking_box(box_model):
    """A turned 0.2 m, 1 kg cube sinking 0.2 mm into the ground, pushed and twisted under μ = 1: four
    contacts, all clamping (static friction). e = 0.3 (too slow to bounce) keeps the finite
    differences of e inside [0, 1]."""
    world = World(box_model, dt=1e-2, friction=1.0, restitution=0.3)
    q = pose([0.0, 0.0, 0.0998], (0, 0, 1), 0.2, norm=1.3)
    v = np.array([0.02, 0.0, -0.01, 0.0, 0.0, 0.0])
    tau = np.array([1.0, 0.5, 0.0, 0.0, 0.0, 0.1])
    return world, q, v, tau


@pytest.fixture(scope="module")
def cartpole():
    """The cart-pole in the air (no ground, joints far from their limits): no contact rows at all.
    e = 0.3 keeps the finite differences of e inside [0, 1]."""
    model = load_dataset_robot("cartpole")
    return World(model, ground=False, dt=1e-2, restitution=0.3), neutral(model) + [0.1, 0.3], np.array([0.2, -0.5])


def test_step_gradcheck_box_sticking(sticking_box):
    world, q, v, tau = sticking_box
    step = world.step(q, v, tau)
    assert len(step.contacts) == 4 and step.lcp.clamping.all() and not step.bouncing.any()

    def function(q, v, tau, params):
        return dynamics_torch.step(world, q, v, tau, params)

    inputs = [tensor(q), tensor(v), tensor(tau), tensor(world.parameters())]
    assert torch.autograd.gradcheck(function, inputs, eps=EPS, atol=ATOL, rtol=RTOL)


def test_rollout_gradcheck_box_sticking(sticking_box):
    world, q, v, tau = sticking_box
    taus = np.tile(tau, (3, 1))
    result = world.rollout(q, v, taus, keep_steps=True)
    assert all(len(s.contacts) == 4 and s.lcp.clamping.all() for s in result.steps)

    def function(q0, v0, taus, params):
        return dynamics_torch.rollout(world, q0, v0, taus, params)

    inputs = [tensor(q), tensor(v), tensor(taus), tensor(world.parameters())]
    assert torch.autograd.gradcheck(function, inputs, eps=EPS, atol=ATOL, rtol=RTOL)


def test_gradcheck_cartpole_without_contacts(cartpole):
    world, q, v = cartpole
    taus = np.array([[1.0, 0.0], [0.5, 0.1], [-0.3, 0.0]])

    def one_step(q, v, params):  # tau=None: zero joint forces
        return dynamics_torch.step(world, q, v, None, params)

    def trajectory(q0, v0, taus, params):
        return dynamics_torch.rollout(world, q0, v0, taus, params)

    params = world.parameters()
    assert torch.autograd.gradcheck(one_step, [tensor(q), tensor(v), tensor(params)], eps=EPS, atol=ATOL, rtol=RTOL)
    assert torch.autograd.gradcheck(
        trajectory, [tensor(q), tensor(v), tensor(taus), tensor(params)], eps=EPS, atol=ATOL, rtol=RTOL
    )


def test_parameter_gradient_of_sliding_box_against_finite_differences(box_model):
    """A box sliding at 0.5 m/s, pushed along x, friction at its Coulomb bound: the gradient of a loss
    on the whole trajectory with respect to θ (mass, μ among them) against central differences of
    World.rollout with θ ± h."""
    world = World(box_model, dt=1e-2, friction=0.3, restitution=0.3)
    q0, v0 = pose([0.0, 0.0, 0.0999]), np.array([0.5, 0.0, 0.0, 0.0, 0.0, 0.0])
    taus = np.tile([2.0, 0.0, 0.0, 0.0, 0.0, 0.0], (5, 1))
    assert all(
        len(s.contacts) == 4 and (s.lcp.at_lower | s.lcp.at_upper)[1::3].all()
        for s in world.rollout(q0, v0, taus, keep_steps=True).steps
    )
    rng = np.random.default_rng(0)
    weight_q, weight_v = torch.from_numpy(rng.normal(size=(6, 7))), torch.from_numpy(rng.normal(size=(6, 6)))

    def loss(qs, vs):  # tensors
        return (weight_q * qs).sum() + (weight_v * vs).sum()

    theta = world.parameters()
    params = tensor(theta)
    loss(*dynamics_torch.rollout(world, tensor(q0), tensor(v0), tensor(taus), params)).backward()
    finite = np.empty_like(theta)
    for k in range(theta.size):
        h = EPS * max(1.0, abs(theta[k]))
        plus, minus = (
            world.with_parameters(theta + sign * h * np.eye(theta.size)[k]).rollout(q0, v0, taus)
            for sign in (1.0, -1.0)
        )
        finite[k] = (
            loss(torch.from_numpy(plus.q), torch.from_numpy(plus.v))
            - loss(torch.from_numpy(minus.q), torch.from_numpy(minus.v))
        ).item() / (2 * h)
    np.testing.assert_allclose(params.grad.numpy(), finite, rtol=1e-5, atol=1e-7)
    # Mass (θ[0]) and μ (θ[-2]) both move the box: the comparison is not of two zeros.
    assert abs(finite[0]) > 1e-2 and abs(finite[-2]) > 1e-2


def test_gradients_equal_the_reverse_mode_they_wrap(cartpole):
    """Without floating joints the coordinate and tangent spaces coincide: the torch gradients are
    Step.vjp's and Rollout.vjp's cotangents of the same loss weights."""
    world, q, v = cartpole
    taus = np.array([[1.0, 0.0], [0.5, 0.1], [-0.3, 0.0], [0.0, 0.2]])
    rng = np.random.default_rng(1)
    weight_q, weight_v = rng.normal(size=(5, 2)), rng.normal(size=(5, 2))

    inputs = [tensor(q), tensor(v), tensor(taus), tensor(world.parameters())]
    qs, vs = dynamics_torch.rollout(world, *inputs)
    ((torch.from_numpy(weight_q) * qs).sum() + (torch.from_numpy(weight_v) * vs).sum()).backward()
    cot = world.rollout(q, v, taus, derivatives=True).vjp(weight_q, weight_v)
    for tensor_input, expected in zip(inputs, cot):
        np.testing.assert_allclose(tensor_input.grad.numpy(), expected, rtol=1e-12, atol=1e-14)

    inputs = [tensor(q), tensor(v), tensor(taus[0]), tensor(world.parameters())]
    q_next, v_next = dynamics_torch.step(world, *inputs)
    ((torch.from_numpy(weight_q[1]) * q_next).sum() + (torch.from_numpy(weight_v[1]) * v_next).sum()).backward()
    cot = world.step(q, v, taus[0], derivatives=True).vjp(weight_q[1], weight_v[1])
    for tensor_input, expected in zip(inputs, cot):
        np.testing.assert_allclose(tensor_input.grad.numpy(), expected, rtol=1e-12, atol=1e-14)


def test_forward_is_the_simulation_and_params_none_is_the_world(sticking_box):
    world, q, v, tau = sticking_box
    expected = world.rollout(q, v, np.tile(tau, (2, 1)))
    q_in = tensor(q)
    qs, vs = dynamics_torch.rollout(world, q_in, tensor(v), torch.tensor(np.tile(tau, (2, 1))))
    np.testing.assert_array_equal(qs.detach().numpy(), expected.q)
    np.testing.assert_array_equal(vs.detach().numpy(), expected.v)
    q_next, v_next = dynamics_torch.step(world, q_in, tensor(v), torch.tensor(tau), torch.tensor(world.parameters()))
    np.testing.assert_array_equal(q_next.detach().numpy(), expected.q[1])
    np.testing.assert_array_equal(v_next.detach().numpy(), expected.v[1])


def test_rollout_of_no_steps_passes_gradients_straight_through(sticking_box):
    world, q, v, _ = sticking_box
    q0, v0, params = tensor(q), tensor(v), tensor(world.parameters())
    qs, vs = dynamics_torch.rollout(world, q0, v0, torch.zeros((0, 6), dtype=torch.float64), params)
    (qs.sum() + 2.0 * vs.sum()).backward()
    np.testing.assert_array_equal(q0.grad.numpy(), np.ones(7))  # including the quaternion's norm
    np.testing.assert_array_equal(v0.grad.numpy(), np.full(6, 2.0))
    np.testing.assert_array_equal(params.grad.numpy(), np.zeros(world.num_params))


def _bad_step_inputs(world, q, v, tau):
    good = {
        "q": torch.tensor(q),
        "v": torch.tensor(v),
        "tau": torch.tensor(tau),
        "params": torch.tensor(world.parameters()),
    }
    negative_friction = world.parameters()
    negative_friction[-2] = -0.1
    return good, [
        ("q", good["q"][:6], ValueError, r"q must have shape \(7,\)"),
        ("q", q, TypeError, "q must be a torch.Tensor"),
        ("v", good["v"].float(), TypeError, "v must have dtype torch.float64"),
        ("tau", torch.full((6,), float("nan"), dtype=torch.float64), ValueError, "tau must be finite"),
        ("params", good["params"][:-1], ValueError, r"params must have shape \(12,\)"),
        ("params", torch.tensor(negative_friction), ValueError, "params: friction"),
        ("q", torch.zeros(7, dtype=torch.float64), ValueError, "quaternion must be nonzero"),
    ]


def test_bad_inputs_are_refused(sticking_box):
    world, q, v, tau = sticking_box
    good, cases = _bad_step_inputs(world, q, v, tau)
    for name, value, error, message in cases:
        with pytest.raises(error, match=message):
            dynamics_torch.step(world, **{**good, name: value})
    with pytest.raises(TypeError, match="world must be a dcol.dynamics.World"):
        dynamics_torch.step(world.model, **good)
    q0, v0, taus = good["q"], good["v"], good["tau"][None]
    with pytest.raises(ValueError, match=r"taus must have shape \(T, 6\)"):
        dynamics_torch.rollout(world, q0, v0, good["tau"])
    with pytest.raises(ValueError, match="q0 must be finite"):
        dynamics_torch.rollout(world, torch.full((7,), float("inf"), dtype=torch.float64), v0, taus)
    with pytest.raises(TypeError, match="v0 must have dtype torch.float64"):
        dynamics_torch.rollout(world, q0, v0.float(), taus)
