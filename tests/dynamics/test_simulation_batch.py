"""World.rollout_batch and World.step_batch (native loops, GIL released, threads) against World.rollout
and World.step, which run the same native step one call at a time with the warm start handed over in
each Step: the trajectories and Jacobians agree bit for bit, so the Python API loses nothing on the way
(warm starts, parameters, controls)."""

import numpy as np
import pytest

from dcol.dynamics import World, load_dataset_robot, neutral
from tests.support.bodies import ball_model, box_pile_model, floating_state


def assert_matches_python(world, q0, v0, taus):
    """Every world of the batch against its own World.rollout, bit for bit."""
    batch = world.rollout_batch(q0, v0, taus)
    for n in range(q0.shape[0]):
        reference = world.rollout(q0[n], v0[n], taus[n], keep_steps=True)
        assert np.array_equal(batch.q[n], reference.q), f"world {n}: q"
        assert np.array_equal(batch.v[n], reference.v), f"world {n}: v"
        assert np.array_equal(batch.contacts[n], [len(step.contacts) for step in reference.steps])
    return batch


def test_box_pile_with_friction_matches_the_python_rollout():
    """Three cubes, one dropped onto another, one sliding: manifolds, stacking, friction, warm starts
    across steps and changes of the contact set."""
    world = World(box_pile_model(3), dt=1e-3, friction=0.5)
    starts = [
        floating_state(
            ([0.0, 0.0, 0.1], [0.0, 0.0, 0.0]), ([0.05, 0.0, 0.34], [0.0, 0.0, 0.0]), ([0.5, 0.0, 0.1], [vx, 0.0, 0.0])
        )
        for vx in (0.8, 0.5)
    ]
    q0, v0 = (np.array(x) for x in zip(*starts))
    taus = np.zeros((2, 150, world.model.nv))
    batch = assert_matches_python(world, q0, v0, taus)
    assert batch.contacts[:, -1].min() >= 8  # the top cube landed: 4 ground + 4 stacked + the slider's


@pytest.mark.slow
def test_native_piles_of_ten_boxes_settle():
    """The ten-box pile of test_simulation_physics, four random ones at once on two threads: every
    stack settles at rest with its centres at z_i = 0.1 + 0.2 i (1 mm), no speed beyond the free fall
    through all gaps."""
    count, gap, dt, steps, worlds = 10, 0.01, 2e-3, 2000, 4
    rng = np.random.default_rng(7)
    q0 = np.zeros((worlds, 7 * count))
    for n in range(worlds):
        for i in range(count):
            yaw = rng.uniform(-0.1, 0.1)
            q0[n, 7 * i : 7 * i + 7] = np.r_[
                rng.uniform(-0.02, 0.02, 2), 0.1 + gap + (0.2 + gap) * i, np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)
            ]
    world = World(box_pile_model(count), dt=dt)
    batch = world.rollout_batch(q0, np.zeros((worlds, 6 * count)), np.zeros((steps, 6 * count)), threads=2)
    twists = batch.v.reshape(worlds, steps + 1, count, 6)
    assert np.abs(twists[..., :3]).max() < np.sqrt(2 * 9.81 * count * gap) + 0.1
    assert np.abs(twists[:, -1]).max() < 1e-4
    heights = batch.q[:, -1].reshape(worlds, count, 7)[:, :, 2]
    np.testing.assert_allclose(heights, np.tile(0.1 + 0.2 * np.arange(count), (worlds, 1)), atol=1e-3)


def test_bouncing_balls_match_the_python_rollout():
    world = World(ball_model(), dt=1e-3, restitution=0.8)
    starts = [floating_state(([0.0, 0.0, height], [vx, 0.0, 0.0])) for height, vx in ((0.5, 0.2), (0.3, -1.0))]
    q0, v0 = (np.array(x) for x in zip(*starts))
    batch = assert_matches_python(world, q0, v0, np.zeros((2, 500, 6)))
    # both bounced: the vertical velocity changed sign from falling to rising
    assert np.all(batch.v[:, :, 2].max(axis=1) > 1.0)


@pytest.mark.parametrize("robot", ["jump_worm", "catapult"])
def test_robots_with_controls_and_joint_limits_match_the_python_rollout(robot):
    model = load_dataset_robot(robot)
    world = World(model, dt=1e-3)
    rng = np.random.default_rng(3)
    q0 = np.tile(neutral(model), (2, 1))
    q0[1] += 0.05 * rng.normal(size=model.nq) * np.array([kind != "floating" for kind in _kinds_per_q(model)])
    v0 = 0.1 * rng.normal(size=(2, model.nv))
    taus = rng.normal(0.0, 2.0, (2, 120, model.nv))
    assert_matches_python(world, q0, v0, taus)


def _kinds_per_q(model):
    kinds = np.empty(model.nq, dtype=object)
    for start, kind in zip(model.joint_q_index, model.joint_kinds):
        kinds[start : start + (7 if kind == "floating" else 1)] = kind
    return kinds


def test_threads_and_shared_controls():
    """threads split the worlds without changing any result; controls (T, nv) apply to every world."""
    world = World(box_pile_model(2), dt=1e-3)
    rng = np.random.default_rng(0)
    q0, v0 = [], []
    for _ in range(6):
        q, v = floating_state(
            ([0.0, 0.0, 0.1 + 0.05 * rng.random()], rng.normal(size=3) * 0.2), ([0.3, 0.0, 0.3], [0.0, 0.0, 0.0])
        )
        q0.append(q)
        v0.append(v)
    q0, v0 = np.array(q0), np.array(v0)
    taus = rng.normal(size=(80, world.model.nv))
    one = world.rollout_batch(q0, v0, taus, threads=1)
    two = world.rollout_batch(q0, v0, np.broadcast_to(taus, (6,) + taus.shape), threads=2)
    assert np.array_equal(one.q, two.q) and np.array_equal(one.v, two.v)
    assert np.array_equal(one.contacts, two.contacts)


def test_parameters_reach_the_native_world():
    """with_parameters (heavier cube, other friction) reaches the native world of both paths."""
    world = World(box_pile_model(1), dt=1e-3, friction=0.5)
    q0, v0 = floating_state(([0.0, 0.0, 0.1], [1.0, 0.0, 0.0]))
    taus = np.zeros((1, 100, 6))
    taus[..., 0] = 2.0  # a push along x, resisted by friction ∝ weight
    base = world.rollout_batch(q0[None], v0[None], taus)
    params = world.parameters()
    params[0] *= 3.0  # mass
    params[-2] = 0.2  # μ
    heavier = world.with_parameters(params)
    moved = assert_matches_python(heavier, q0[None], v0[None], taus)
    assert not np.allclose(moved.q, base.q)


def test_bad_input_is_rejected_with_the_argument_named():
    world = World(ball_model(), dt=1e-3)
    q0, v0 = floating_state(([0.0, 0.0, 0.5], [0.0, 0.0, 0.0]))
    q0, v0 = q0[None], v0[None]
    with pytest.raises(ValueError, match="taus"):
        world.rollout_batch(q0, v0, np.zeros((10, 5)))
    with pytest.raises(ValueError, match="taus"):
        world.rollout_batch(q0, v0, np.full((1, 10, 6), np.nan))
    with pytest.raises(ValueError, match="v0"):
        world.rollout_batch(q0, np.zeros((2, 6)), np.zeros((10, 6)))
    with pytest.raises(ValueError, match="q0"):
        world.rollout_batch(np.zeros((1, 7)), v0, np.zeros((10, 6)))
    with pytest.raises(ValueError, match="threads"):
        world.rollout_batch(q0, v0, np.zeros((10, 6)), threads=0)


# --- World.step_batch: independent steps and their native Jacobians -------------------------------


def _box_world():
    """Five states of a box on the ground, sliding or sticking under random pushes: face manifolds,
    friction at its bounds, singular clamping sets (four coplanar contacts)."""
    world = World(box_pile_model(1), dt=1e-2, friction=0.5, restitution=0.4)
    rng = np.random.default_rng(4)
    q0, v0 = [], []
    for _ in range(5):
        q, v = floating_state(([0.0, 0.0, 0.0998], rng.normal(size=3) * [0.3, 0.3, 0.01]))
        q0.append(q)
        v0.append(v)
    return world, np.array(q0), np.array(v0), rng.normal(size=(5, 6))


@pytest.mark.parametrize("bounce", [True, False])
def test_step_batch_matches_python_steps_and_jacobians(bounce):
    """Each step of the batch against World.step and Step.jacobians (themselves checked against
    central differences in test_simulation_derivatives), blocks of θ included; a ball's elastic
    impact for the bounce terms."""
    world, q, v, tau = _box_world()
    ball = World(ball_model(), dt=1e-2, restitution=0.6, friction=0.3)
    q_ball, v_ball = floating_state(([0.0, 0.0, 0.105], [0.3, 0.0, -2.0]))  # closing 5 mm within the step
    for w, qs, vs, taus in ((world, q, v, tau), (ball, q_ball[None], v_ball[None], np.zeros((1, 6)))):
        batch = w.step_batch(qs, vs, taus, derivatives=True, bounce=bounce)
        for n in range(qs.shape[0]):
            step = w.step(qs[n], vs[n], taus[n], derivatives=True)
            assert np.array_equal(batch.q[n], step.q) and np.array_equal(batch.v[n], step.v)
            assert batch.contacts[n] == len(step.contacts)
            expected = step.jacobians(bounce=bounce)
            for name, block in zip(expected._fields, expected):
                got = getattr(batch.jacobians, name)[n]
                assert np.abs(got - block).max() <= 1e-9 * max(1.0, np.abs(block).max()), (n, name)
    assert step.bouncing.all()  # the ball's impact took the saltation terms
    # ∂z⁺/∂z: reversed by the impact's saltation terms, about +1 for the discrete step (gravity and
    # friction keep both off the closed forms −e and 1 of test_simulation_derivatives).
    z_z = batch.jacobians.q_q[0, 2, 2]
    assert z_z < 0.0 if bounce else z_z == pytest.approx(1.0, abs=1e-3)


def test_step_batch_without_parameters_threads_and_no_derivatives():
    """parameters=False leaves θ's blocks out and the rest unchanged; threads change nothing; without
    derivatives the states are the same and jacobians is None."""
    world, q, v, tau = _box_world()
    full = world.step_batch(q, v, tau, derivatives=True, threads=1)
    state_only = world.step_batch(q, v, tau, derivatives=True, parameters=False, threads=2)
    assert state_only.jacobians.q_params is None and state_only.jacobians.v_params is None
    for name in ("q_q", "q_v", "q_tau", "v_q", "v_v", "v_tau"):
        assert np.array_equal(getattr(full.jacobians, name), getattr(state_only.jacobians, name)), name
    assert full.jacobians.v_params.shape == (5, 6, world.num_params)
    plain = world.step_batch(q, v, tau)
    assert plain.jacobians is None
    assert np.array_equal(plain.q, full.q) and np.array_equal(plain.v, full.v)
    assert np.array_equal(plain.contacts, full.contacts)


def test_step_batch_bad_input_is_rejected_with_the_argument_named():
    world = World(ball_model(), dt=1e-3)
    q, v = floating_state(([0.0, 0.0, 0.5], [0.0, 0.0, 0.0]))
    q, v = q[None], v[None]
    with pytest.raises(ValueError, match="tau"):
        world.step_batch(q, v, np.zeros((1, 5)))
    with pytest.raises(ValueError, match="v"):
        world.step_batch(q, np.full((1, 6), np.inf))
    with pytest.raises(ValueError, match="v"):
        world.step_batch(q, np.zeros((2, 6)))
    with pytest.raises(ValueError, match="q"):
        world.step_batch(np.zeros((1, 7)), v)
    with pytest.raises(ValueError, match="threads"):
        world.step_batch(q, v, threads=0)


@pytest.mark.parametrize("robot", ["box_pile", "half_cheetah"])
def test_rollout_batch_jacobians_are_those_of_the_steps_taken(robot):
    """rollout_batch(derivatives=True) against World.rollout(derivatives=True) step by step: the
    warm-started steps' Jacobians (a sliding, landing box pile; the half-cheetah falling onto the
    ground under random controls), θ blocks included. (Where a contact set leaves the impulses
    undetermined, e.g. the jump worm's five feet on seven joints, the two paths' solvers may settle on
    impulses that differ along the null space, which moves the Jacobians' ∂(Jᵀf)/∂q terms.)"""
    rng = np.random.default_rng(5)
    if robot == "box_pile":
        world = World(box_pile_model(2), dt=2e-3, friction=0.4)
        q0, v0 = floating_state(([0.0, 0.0, 0.1], [0.6, 0.1, 0.0]), ([0.3, 0.0, 0.2], [0.0, 0.0, 0.0]))
        taus = np.zeros((40, world.model.nv))
    else:
        world = World(load_dataset_robot("half_cheetah"), dt=2e-3, friction=0.8)
        q0, v0 = neutral(world.model), np.zeros(world.model.nv)
        q0[1] = -0.19  # the root's height: the feet just above the ground
        taus = rng.normal(size=(40, world.model.nv))
    batch = world.rollout_batch(q0[None], v0[None], taus[None], derivatives=True)
    reference = world.rollout(q0, v0, taus, derivatives=True)
    assert np.array_equal(batch.q[0], reference.q)
    for t, step in enumerate(reference.steps):
        expected = step.jacobians()
        for name, block in zip(expected._fields, expected):
            got = getattr(batch.jacobians, name)[0, t]
            assert np.abs(got - block).max() <= 1e-8 * max(1.0, np.abs(block).max()), (t, name)
    assert batch.jacobians.v_params.shape == (1, 40, world.model.nv, world.num_params)
    assert max(len(step.contacts) for step in reference.steps) > 0


def test_reprs_are_short_and_say_what_matters():
    """A 300-step rollout prints in a line (it printed every step's solver internals), and the world,
    its scene, steps and batches say their sizes."""
    model = load_dataset_robot("half_cheetah")
    world = World(model)
    q, v = neutral(model), np.zeros(model.nv)
    rollout = world.rollout(q, v, np.zeros((300, model.nv)))
    text = repr(rollout)
    assert len(text) < 500 and text.startswith("Rollout(T=300, nq=9, nv=9, contacts per step ")
    assert repr(world).startswith("World(Model('half_cheetah', nq=9, nv=9, nbodies=9, joints: rootx (prismatic), ")
    assert "dt=0.001, contact_model='lcp'" in repr(world)
    assert repr(world.scene).startswith("Scene(bodies=")
    assert repr(world.step(q, v)).startswith("Step(nq=9, nv=9, contacts=")
    batch = world.rollout_batch(np.tile(q, (2, 1)), np.tile(v, (2, 1)), np.zeros((2, 5, model.nv)))
    assert repr(batch).startswith("BatchRollout(N=2, T=5, nq=9, nv=9, contacts per step")
    steps = world.step_batch(np.tile(q, (3, 1)), np.tile(v, (3, 1)), np.zeros((3, model.nv)), derivatives=True)
    assert repr(steps).startswith("BatchStep(N=3, nq=9, nv=9, contacts") and repr(steps).endswith("derivatives=True)")


def test_rollout_runs_natively_unless_steps_are_kept_with_the_same_trajectory():
    """World.rollout without derivatives is one native call (rollout_batch's); keep_steps=True takes
    the steps one call at a time and keeps them: the same trajectory and contact counts bit for bit
    (a rollout that fails names its step on both paths: the test below)."""
    world = World(box_pile_model(2), dt=1e-3, friction=0.5)
    q0, v0 = floating_state(([0.0, 0.0, 0.1], [0.3, 0.0, 0.0]), ([0.02, 0.0, 0.32], [0.0, 0.0, 0.0]))
    taus = np.zeros((120, world.model.nv))
    native, kept = world.rollout(q0, v0, taus), world.rollout(q0, v0, taus, keep_steps=True)
    for name in ("q", "v", "contacts"):
        assert np.array_equal(getattr(native, name), getattr(kept, name)), name
    assert np.array_equal(kept.contacts, [len(step.contacts) for step in kept.steps])
    assert kept.contacts[-1] >= 8
    with pytest.raises(ValueError, match=r"kept no Step objects: call World.rollout\(\.\.\., keep_steps=True\)"):
        _ = native.steps


@pytest.mark.parametrize("contact_model", ["lcp", "ncp"])
def test_a_contact_solve_that_overflowed_fails_its_step(contact_model):
    """A box slid at 1e200 m/s under another: the contact solve's numbers overflow, and under either
    contact model the step fails by name (natively, with kept steps, and by World.step) instead of
    going on with its iterate; the NCP's step first falls back to the boxed LCP, which fails too. (The
    NCP's ADMM once reported SOLVED there, with the residual of its overflowed terms reading zero, and
    the rollout went on.)"""
    world = World(box_pile_model(2), dt=1e-3, friction=0.5, contact_model=contact_model)
    q0, v0 = floating_state(([0.0, 0.0, 0.1], [0.3, 0.0, 0.0]), ([0.02, 0.0, 0.32], [0.0, 0.0, 0.0]))
    taus = np.zeros((120, world.model.nv))
    v_diverging = v0.copy()
    v_diverging[0] = 1e200
    fallback = ", then the boxed LCP," if contact_model == "ncp" else ""
    problem = f"the contact {contact_model.upper()}{fallback} or the position correction was not solved"
    with pytest.raises(RuntimeError, match=rf"^the rollout failed at step 1: {problem}"):
        world.rollout(q0, v_diverging, taus)
    with pytest.raises(RuntimeError, match=rf"^step 1: {problem}"):
        world.rollout(q0, v_diverging, taus, keep_steps=True)
    first = world.step(q0, v_diverging)
    with pytest.raises(RuntimeError, match=problem):
        world.step(first.q, first.v)
