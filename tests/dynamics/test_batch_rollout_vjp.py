"""BatchRollout.vjp, reverse mode through N native rollouts from their steps' Jacobians, against
Rollout.vjp of each world, which linearizes every step again at its own solution (a path of its own,
checked against finite differences in test_simulation_derivatives)."""

import numpy as np
import pytest

from dcol.dynamics import World, load_dataset_robot, neutral


def test_batch_vjp_is_each_rollouts_vjp():
    """The half-cheetah dropped onto the ground under random controls (contacts come and go): every
    cotangent of every world as its own Rollout.vjp gives it, to the batch Jacobians' agreement with the
    steps' (test_simulation_batch)."""
    rng = np.random.default_rng(11)
    world = World(load_dataset_robot("half_cheetah"), dt=2e-3, friction=0.8)
    nv, steps, count = world.model.nv, 30, 3
    q0 = np.tile(neutral(world.model), (count, 1))
    q0[:, 1] = [-0.19, -0.15, -0.1]  # the root's height: feet just above the ground, then higher
    v0 = rng.normal(scale=0.2, size=(count, nv))
    taus = rng.normal(size=(count, steps, nv))
    grad_q, grad_v = rng.normal(size=(count, steps + 1, nv)), rng.normal(size=(count, steps + 1, nv))
    batch = world.rollout_batch(q0, v0, taus, derivatives=True)
    assert batch.contacts.max() > 0
    cot = batch.vjp(grad_q, grad_v)
    assert cot.q.shape == cot.v.shape == (count, nv)
    assert cot.tau.shape == (count, steps, nv) and cot.params.shape == (count, world.num_params)
    for n in range(count):
        reference = world.rollout(q0[n], v0[n], taus[n], derivatives=True).vjp(grad_q[n], grad_v[n])
        for name, got, expected in zip(reference._fields, cot, reference):
            scale = max(1.0, np.abs(expected).max())
            assert np.abs(got[n] - expected).max() <= 1e-7 * scale, (n, name)


def test_batch_vjp_with_one_gradient_and_none():
    """An omitted gradient is zero; no gradient at all gives zero cotangents."""
    world = World(load_dataset_robot("cartpole"), ground=False)
    q0, v0 = np.array([[0.1, 0.2], [-0.3, 0.5]]), np.zeros((2, 2))
    batch = world.rollout_batch(q0, v0, np.ones((4, 2)), derivatives=True)
    grad_v = np.zeros((2, 5, 2))
    grad_v[:, -1] = [1.0, -2.0]
    only_v = batch.vjp(grad_v=grad_v)
    both = batch.vjp(np.zeros((2, 5, 2)), grad_v)
    for got, expected in zip(only_v, both):
        assert np.array_equal(got, expected)
    assert np.abs(only_v.tau).max() > 0
    assert all(not np.any(part) for part in batch.vjp())


def test_batch_vjp_needs_the_jacobians_with_their_parameter_blocks():
    world = World(load_dataset_robot("cartpole"), ground=False)
    q0, v0 = np.zeros((1, 2)), np.zeros((1, 2))
    with pytest.raises(ValueError, match=r"derivatives=True, parameters=True"):
        world.rollout_batch(q0, v0, np.zeros((3, 2))).vjp()
    with pytest.raises(ValueError, match=r"derivatives=True, parameters=True"):
        world.rollout_batch(q0, v0, np.zeros((3, 2)), derivatives=True, parameters=False).vjp()
    batch = world.rollout_batch(q0, v0, np.zeros((3, 2)), derivatives=True)
    with pytest.raises(ValueError, match="grad_q"):
        batch.vjp(np.zeros((1, 3, 2)))
