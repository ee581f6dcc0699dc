"""dcol.dynamics.distributed on a local Ray cluster of two CPUs, and on a running cluster of two nodes
reached by its address: rollouts, steps and rollout gradients of many worlds against the
single-process native batches (World.rollout_batch, step_batch, BatchRollout.vjp), bit for bit; a
worker killed mid-task, retried with the same result; failures named by chunk; bad input refused
before any task is sent."""

import os
import subprocess
import sys
import textwrap
import threading
import warnings

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="dcol.dynamics.distributed needs Ray: pip install 'dcol[distributed]'")

from dcol.dynamics import World, distributed, load_dataset_robot, neutral  # noqa: E402

WORLDS, STEPS = 64, 20


@pytest.fixture(scope="module", autouse=True)
def local_cluster():
    """One local cluster for the module (starting one takes seconds), shut down after it."""
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=200 * 1024**2)
    yield
    ray.shutdown()


def _cheetah_world(kind=World, **kwargs):
    return kind(load_dataset_robot("half_cheetah"), dt=2e-3, friction=0.8, **kwargs)


def _cheetah_batch(count=WORLDS, steps=STEPS):
    """Half-cheetahs dropped onto the ground from different heights and speeds, under random controls:
    contacts come and go, so the steps' LCPs, warm starts and Jacobians all take part."""
    rng = np.random.default_rng(30)
    model = load_dataset_robot("half_cheetah")
    q0 = np.tile(neutral(model), (count, 1))
    q0[:, 1] = rng.uniform(-0.2, -0.1, count)  # the root's height: feet at or just above the ground
    v0 = rng.normal(scale=0.3, size=(count, model.nv))
    return q0, v0, rng.normal(size=(count, steps, model.nv))


def _assert_identical(got, expected, where="result"):
    """Same type and fields, arrays equal bit for bit with the same dtype and shape."""
    assert type(got) is type(expected), where
    if isinstance(expected, tuple):
        for name, g, e in zip(expected._fields, got, expected):
            _assert_identical(g, e, f"{where}.{name}")
    elif expected is None:
        assert got is None, where
    else:
        np.testing.assert_array_equal(got, expected, err_msg=where, strict=True)


@pytest.mark.parametrize("derivatives", [False, True])
@pytest.mark.parametrize("chunk", [None, 7])
def test_rollout_many_is_rollout_batch_bit_for_bit(derivatives, chunk):
    """64 worlds in two chunks (one per CPU, the default) or in chunks of 7 (the last of 1)."""
    world = _cheetah_world()
    q0, v0, taus = _cheetah_batch()
    expected = world.rollout_batch(q0, v0, taus, derivatives=derivatives)
    assert expected.contacts.max() > 0
    _assert_identical(distributed.rollout_many(world, q0, v0, taus, derivatives=derivatives, chunk=chunk), expected)


def test_shared_controls_and_two_cpus_per_task():
    """taus (T, nv) for every world, as rollout_batch takes them; a task of 2 CPUs runs 2 threads."""
    world = _cheetah_world(_Warns)
    q0, v0, taus = _cheetah_batch()
    expected = World.rollout_batch(world, q0, v0, taus[0])
    with pytest.warns(RuntimeWarning) as caught:
        got = distributed.rollout_many(world, q0, v0, taus[0], chunk=16, cpus_per_task=2)
    _assert_identical(got, expected)
    assert [str(warning.message) for warning in caught] == [
        f"chunk {i} (worlds {16 * i}–{16 * i + 15}): rollout_batch on 2 threads" for i in range(4)
    ]


def test_rollout_vjp_many_is_the_batch_vjp_bit_for_bit():
    world = _cheetah_world()
    q0, v0, taus = _cheetah_batch()
    rng = np.random.default_rng(1)
    grad_q = rng.normal(size=(WORLDS, STEPS + 1, world.model.nv))
    grad_v = rng.normal(size=(WORLDS, STEPS + 1, world.model.nv))
    expected = world.rollout_batch(q0, v0, taus, derivatives=True).vjp(grad_q, grad_v)
    _assert_identical(distributed.rollout_vjp_many(world, q0, v0, taus, grad_q, grad_v, chunk=10), expected)
    only_v = world.rollout_batch(q0, v0, taus, derivatives=True, bounce=False).vjp(grad_v=grad_v)
    _assert_identical(distributed.rollout_vjp_many(world, q0, v0, taus, grad_v=grad_v, bounce=False), only_v)


@pytest.mark.parametrize("derivatives", [False, True])
def test_step_many_is_step_batch_bit_for_bit(derivatives):
    world = _cheetah_world()
    q0, v0, taus = _cheetah_batch(steps=1)
    expected = world.step_batch(q0, v0, taus[:, 0], derivatives=derivatives)
    _assert_identical(distributed.step_many(world, q0, v0, taus[:, 0], derivatives=derivatives, chunk=9), expected)
    _assert_identical(distributed.step_many(world, q0, v0), world.step_batch(q0, v0))


class _Warns(World):
    """A world whose rollout_batch warns, saying its thread count."""

    def rollout_batch(self, *args, threads=None, **kwargs):
        warnings.warn(f"rollout_batch on {threads} threads", RuntimeWarning, stacklevel=1)
        return super().rollout_batch(*args, threads=threads, **kwargs)


class _DiesOnce(World):
    """A world whose first rollout_batch anywhere kills its worker process after computing (mid-task:
    the work is lost); `marker` is the file that says it happened."""

    marker = ""

    def rollout_batch(self, *args, **kwargs):
        result = super().rollout_batch(*args, **kwargs)
        try:
            os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return result
        os._exit(1)


def test_a_killed_worker_is_retried_with_the_same_result(tmp_path):
    world = _cheetah_world(_DiesOnce)
    world.marker = str(tmp_path / "died")
    q0, v0, taus = _cheetah_batch()
    expected = World.rollout_batch(world, q0, v0, taus)
    got = distributed.rollout_many(world, q0, v0, taus, max_retries=1)
    assert os.path.exists(world.marker)  # a worker did die
    _assert_identical(got, expected)


class _FailsAt(World):
    """A world whose rollout_batch fails for the chunk starting at world `first` (its q0[0, 0] is
    `tag`): by killing its worker, or by raising."""

    tag = 0.0
    how = "die"

    def rollout_batch(self, q0, *args, **kwargs):
        if q0[0, 0] == self.tag:
            if self.how == "die":
                os._exit(1)
            raise RuntimeError("rollout 3 failed at step 5")
        return super().rollout_batch(q0, *args, **kwargs)


@pytest.mark.parametrize("how", ["die", "raise"])
def test_a_failed_chunk_is_named(how):
    world = _cheetah_world(_FailsAt)
    world.how = how
    q0, v0, taus = _cheetah_batch()
    world.tag = q0[32, 0] = 0.125
    expected = "chunk 1 \\(worlds 32–63\\) failed: " + ("WorkerCrashedError" if how == "die" else "RuntimeError")
    with pytest.raises(RuntimeError, match=expected):
        distributed.rollout_many(world, q0, v0, taus, max_retries=0)


def test_worker_warnings_are_issued_again_naming_the_chunk():
    q0, v0, taus = _cheetah_batch(count=4, steps=2)
    with pytest.warns(RuntimeWarning) as caught:
        distributed.rollout_many(_cheetah_world(_Warns), q0, v0, taus, chunk=2)
    expected = ["chunk 0 (worlds 0–1): rollout_batch on 1 threads", "chunk 1 (worlds 2–3): rollout_batch on 1 threads"]
    assert [str(warning.message) for warning in caught] == expected


@pytest.fixture
def no_task_sent(monkeypatch):
    """Any task submitted fails the test: the errors under test must come first."""

    class Refuses:
        def options(self, **_):
            raise AssertionError("a task was sent")

    monkeypatch.setattr(distributed, "_run_chunk", Refuses())


def test_bad_input_is_refused_before_any_task_is_sent(no_task_sent):
    world = _cheetah_world()
    q0, v0, taus = _cheetah_batch(count=4, steps=3)
    nv = world.model.nv
    with pytest.raises(ValueError, match=r"v0 must have shape \(9,\) or \(4, 9\), got \(3, 9\)"):
        distributed.rollout_many(world, q0, v0[:3], taus)
    with pytest.raises(ValueError, match=r"taus must have shape \(4, T, 9\), got \(5, 3, 9\)"):
        distributed.rollout_many(world, q0, v0, np.zeros((5, 3, nv)))
    with pytest.raises(ValueError, match=r"grad_v must have shape \(4, 4, 9\)"):
        distributed.rollout_vjp_many(world, q0, v0, taus, grad_v=np.zeros((4, 3, nv)))
    with pytest.raises(ValueError, match=r"tau must have shape \(4, 9\)"):
        distributed.step_many(world, q0, v0, np.zeros((2, nv)))
    with pytest.raises(ValueError, match="q0 must"):
        distributed.rollout_many(world, np.full_like(q0, np.nan), v0, taus)
    with pytest.raises(ValueError, match="empty"):
        distributed.rollout_many(world, q0[:0], v0[:0], taus[:0])
    with pytest.raises(ValueError, match="chunk"):
        distributed.rollout_many(world, q0, v0, taus, chunk=0)
    with pytest.raises(ValueError, match="cpus_per_task"):
        distributed.step_many(world, q0, v0, cpus_per_task=0)
    with pytest.raises(TypeError, match="world must be a dcol.dynamics.World, got Model"):
        distributed.rollout_many(world.model, q0, v0, taus)


def test_a_world_that_does_not_pickle_is_refused_naming_its_part(no_task_sent):
    """A user's callback holding a lock: Ray's pickler takes lambdas, not locks."""
    world = _cheetah_world()
    lock = threading.Lock()
    world.on_contact = lambda step: lock.locked()
    q0, v0, taus = _cheetah_batch(count=4, steps=3)
    message = r"world cannot be sent to Ray's workers: its attribute 'on_contact' \(function\) cannot be pickled"
    with pytest.raises(TypeError, match=message):
        distributed.rollout_many(world, q0, v0, taus)


RUNNING_CLUSTER = """
import numpy as np
import ray
from ray.cluster_utils import Cluster
from dcol.dynamics import World, load_dataset_robot, neutral
from dcol.dynamics.distributed import rollout_many, rollout_vjp_many

cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
try:
    cluster.add_node(num_cpus=1)
    ray.init(address=cluster.address)
    assert sum(node["Alive"] for node in ray.nodes()) == 2
    world = World(load_dataset_robot("half_cheetah"), dt=2e-3)
    rng = np.random.default_rng(2)
    q0 = np.tile(neutral(world.model), (16, 1))
    q0[:, 1] = rng.uniform(-0.2, -0.1, 16)
    v0, taus = rng.normal(size=(16, 9)), rng.normal(size=(16, 10, 9))
    grad_v = rng.normal(size=(16, 11, 9))
    got = rollout_many(world, q0, v0, taus, chunk=4)
    expected = world.rollout_batch(q0, v0, taus)
    assert all(np.array_equal(g, e) for g, e in zip(got[:3], expected[:3]))
    got = rollout_vjp_many(world, q0, v0, taus, grad_v=grad_v, chunk=4)
    expected = world.rollout_batch(q0, v0, taus, derivatives=True).vjp(grad_v=grad_v)
    assert all(np.array_equal(g, e) for g, e in zip(got, expected))
    print("identical on", cluster.address)
finally:
    ray.shutdown()
    cluster.shutdown()
"""


@pytest.mark.slow
def test_a_running_cluster_reached_by_its_address():
    """A cluster of two nodes (ray.cluster_utils, what `ray start` makes) joined with
    ray.init(address=...), in a process of its own: a driver joins one cluster at a time."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(RUNNING_CLUSTER)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "identical on" in done.stdout


@pytest.mark.slow
def test_the_cem_example_runs():
    """examples/cem_cartpole_ray.py on a local cluster of its own, a short run."""
    example = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "cem_cartpole_ray.py")
    arguments = ["--samples", "16", "--iterations", "2", "--seconds", "0.5"]
    done = subprocess.run([sys.executable, example, *arguments], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("best cost") == 2 and "from upright" in done.stdout
