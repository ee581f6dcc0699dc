"""Rollouts, steps and rollout gradients of many worlds sharded over a Ray cluster (extra
``[distributed]``).

:func:`rollout_many`, :func:`step_many` and :func:`rollout_vjp_many` split a batch into chunks of
`chunk` worlds and run each chunk as one Ray task. On its worker a task runs the native batch of
:class:`~dcol.dynamics.World`: ``rollout_batch``, ``step_batch``, or ``rollout_batch`` with
derivatives and :meth:`~dcol.dynamics.BatchRollout.vjp`, on as many threads as Ray gave the task CPUs
(`cpus_per_task`). The results come back in the batch's order.

The world is put in Ray's object store once per call. A worker unpickles it once, rebuilding its
native part (World.__getstate__), and keeps it for the chunks of the same call it runs after the
first.

Same answers: the native batches compute each world on its own, whatever else is in its batch and
however many threads run it, so every result is that of the single-process call on the same inputs
bit for bit, on workers with the same instruction set as the caller's (the proximity kernels are
chosen at run time by the CPU's). For the same reason a task that Ray runs again after its worker
died (up to `max_retries` times) returns the same result.

Connect to a running cluster with ``ray.init(address=...)`` first, or start a local one with
``ray.init()``; without either, the first call starts a local Ray instance, as Ray's own calls do.

Errors: the arguments are checked, and the world is pickled, before any task is sent; errors name
the argument and the rule. A chunk that fails (a world's contact problem cannot be solved, or its
worker died more than `max_retries` times) raises RuntimeError naming the chunk and its worlds, and
the chunks still pending are cancelled. A worker's warnings are issued again in the caller, naming
the chunk.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

try:
    import ray
    import ray.cloudpickle
    import ray.exceptions
except ImportError as err:  # the [distributed] extra is optional: say how to get it, as the other extras do
    raise ImportError(
        'dcol.dynamics.distributed needs Ray, which is not installed: pip install "dcol[distributed]"'
    ) from err

from dcol.typing import ArrayLike, FloatArray
from dcol.validation import checked_array, checked_integer

from .simulation import BatchRollout, BatchStep, StepCotangents, World

__all__ = ["rollout_many", "step_many", "rollout_vjp_many"]

Result = TypeVar("Result", BatchRollout, BatchStep, StepCotangents)


def rollout_many(
    world: World,
    q0: ArrayLike,
    v0: ArrayLike,
    taus: ArrayLike,
    *,
    derivatives: bool = False,
    parameters: bool = True,
    bounce: bool = True,
    chunk: int | None = None,
    cpus_per_task: int = 1,
    max_retries: int = 3,
) -> BatchRollout:
    """:meth:`World.rollout_batch` of N worlds, in chunks run as Ray tasks (module docstring).

    Parameters
    ----------
    world : dcol.dynamics.World, pickled once into Ray's object store.
    q0 : (N, nq) float64 starts; v0 : (N, nv) float64 velocities (one state of each for N = 1).
    taus : (N, T, nv) float64 controls, or (T, nv) for the same controls in every world.
    derivatives, parameters, bounce : as rollout_batch's (every step's Jacobians, their θ blocks, the
        elastic-bounce correction).
    chunk : worlds per task; by default the batch is split evenly over the cluster's task slots (its
        CPUs divided by cpus_per_task), one chunk each.
    cpus_per_task : the CPUs Ray reserves for each task, and the threads its native batch runs on.
    max_retries : how many times Ray runs a task again after its worker process died.

    Returns
    -------
    BatchRollout : q (N, T + 1, nq), v (N, T + 1, nv), contacts (N, T) int32, jacobians (blocks with
    leading (N, T) axes) or None; rollout_batch's bit for bit.
    """
    starts, velocities = _checked_world(world)._checked_states(q0, v0, "q0", "v0")
    controls = world._checked_controls(taus, starts.shape[0])
    options = {"derivatives": bool(derivatives), "parameters": bool(parameters), "bounce": bool(bounce)}
    return _sharded(world, _rollout_chunk, [starts, velocities, controls], options, chunk, cpus_per_task, max_retries)


def step_many(
    world: World,
    q: ArrayLike,
    v: ArrayLike,
    tau: ArrayLike | None = None,
    *,
    derivatives: bool = False,
    parameters: bool = True,
    bounce: bool = True,
    chunk: int | None = None,
    cpus_per_task: int = 1,
    max_retries: int = 3,
) -> BatchStep:
    """:meth:`World.step_batch` of N states, in chunks run as Ray tasks (module docstring).

    q (N, nq), v (N, nv), tau (N, nv) float64 (zero if None); derivatives, parameters, bounce as
    step_batch's; chunk, cpus_per_task, max_retries as :func:`rollout_many`'s.

    Returns a :class:`BatchStep`: q (N, nq), v (N, nv), contacts (N,) int32, jacobians (blocks with a
    leading N axis) or None; step_batch's bit for bit.
    """
    configurations, velocities = _checked_world(world)._checked_states(q, v, "q", "v")
    shape = (configurations.shape[0], world.model.nv)
    forces = np.zeros(shape) if tau is None else checked_array(tau, "tau", shape)
    options = {"derivatives": bool(derivatives), "parameters": bool(parameters), "bounce": bool(bounce)}
    batched = [configurations, velocities, forces]
    return _sharded(world, _step_chunk, batched, options, chunk, cpus_per_task, max_retries)


def rollout_vjp_many(
    world: World,
    q0: ArrayLike,
    v0: ArrayLike,
    taus: ArrayLike,
    grad_q: ArrayLike | None = None,
    grad_v: ArrayLike | None = None,
    *,
    bounce: bool = True,
    chunk: int | None = None,
    cpus_per_task: int = 1,
    max_retries: int = 3,
) -> StepCotangents:
    """The vector–Jacobian products of N rollouts, in chunks run as Ray tasks (module docstring): each
    task runs its worlds' rollout_batch with derivatives and BatchRollout.vjp, so that only the
    cotangents travel back. The trajectories are those of :func:`rollout_many` on the same inputs
    (the step is deterministic): compute the loss's gradients from them first.

    q0, v0, taus : as :func:`rollout_many`'s.
    grad_q : (N, T + 1, nv) float64 ∂ℓ/∂q of the trajectories (tangents, as Rollout.vjp's), grad_v :
        (N, T + 1, nv) ∂ℓ/∂v; zero where None.
    bounce : the elastic-bounce correction of the step Jacobians (rollout_batch's).
    chunk, cpus_per_task, max_retries : as :func:`rollout_many`'s.

    Returns
    -------
    StepCotangents : q (N, nv) and v (N, nv) ∂ℓ/∂(q0, v0), tau (N, T, nv) ∂ℓ/∂τ, params (N, 10 nbodies
    + 2) ∂ℓ/∂θ of each world; BatchRollout.vjp's of the single-process rollout_batch bit for bit.
    """
    starts, velocities = _checked_world(world)._checked_states(q0, v0, "q0", "v0")
    controls = world._checked_controls(taus, starts.shape[0])
    count, steps = controls.shape[:2]
    shape = (count, steps + 1, world.model.nv)
    gradients = [
        None if grad is None else checked_array(grad, name, shape)
        for grad, name in ((grad_q, "grad_q"), (grad_v, "grad_v"))
    ]
    batched = [starts, velocities, controls, *gradients]
    return _sharded(world, _vjp_chunk, batched, {"bounce": bool(bounce)}, chunk, cpus_per_task, max_retries)


# --- the chunks' work, on the workers --------------------------------------------------------------


def _rollout_chunk(
    world: World, threads: int, starts: FloatArray, velocities: FloatArray, controls: FloatArray, **options: bool
) -> BatchRollout:
    return world.rollout_batch(starts, velocities, controls, threads=threads, progress=False, **options)


def _step_chunk(
    world: World, threads: int, configurations: FloatArray, velocities: FloatArray, forces: FloatArray, **options: bool
) -> BatchStep:
    return world.step_batch(configurations, velocities, forces, threads=threads, **options)


def _vjp_chunk(
    world: World,
    threads: int,
    starts: FloatArray,
    velocities: FloatArray,
    controls: FloatArray,
    grad_q: FloatArray | None,
    grad_v: FloatArray | None,
    *,
    bounce: bool,
) -> StepCotangents:
    rollouts = world.rollout_batch(
        starts, velocities, controls, derivatives=True, parameters=True, bounce=bounce, threads=threads, progress=False
    )
    return rollouts.vjp(grad_q, grad_v)


@functools.lru_cache(maxsize=2)
def _unpickled_world(stored: ray.ObjectRef) -> World:
    """The world of a call, unpickled once per worker (the chunks of one call share it)."""
    return ray.get(stored)


@ray.remote
def _run_chunk(
    stored: list[ray.ObjectRef], work: Callable[..., Any], arrays: list[FloatArray | None], options: dict[str, bool]
) -> tuple[Any, list[tuple[type[Warning], str]]]:
    """One chunk on a worker: the result of work(world, threads, *arrays, **options) and the warnings
    it issued. The world comes as a reference in a list, which Ray leaves unresolved, so that a worker
    unpickles it once per call (_unpickled_world); threads are the CPUs Ray gave the task."""
    threads = max(1, round(ray.get_runtime_context().get_assigned_resources().get("CPU", 1.0)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = work(_unpickled_world(stored[0]), threads, *arrays, **options)
    return result, [(warning.category, str(warning.message)) for warning in caught]


# --- on the caller --------------------------------------------------------------------------------


def _checked_world(world: object) -> World:
    if not isinstance(world, World):
        raise TypeError(f"world must be a dcol.dynamics.World, got {type(world).__name__}")
    return world


def _stored(world: World) -> ray.ObjectRef:
    """The world in Ray's object store; TypeError naming the part of it that does not pickle (pickled
    first on its own: ray.put's error does not say which part failed)."""
    try:
        ray.cloudpickle.dumps(world)
    except Exception as err:  # pickling raises TypeError, PicklingError, AttributeError, … by the object
        raise TypeError(
            f"world cannot be sent to Ray's workers: {_unpicklable_part(world)} cannot be pickled "
            f"({type(err).__name__}: {err})"
        ) from err
    return ray.put(world)


def _unpicklable_part(world: World) -> str:
    """'its attribute NAME (TYPE)' for the first attribute of world's pickled state that does not
    pickle (a user's callback, say), else 'it'."""
    for name, value in world.__getstate__().items():
        try:
            ray.cloudpickle.dumps(value)
        except Exception:  # as in _stored
            return f"its attribute {name!r} ({type(value).__name__})"
    return "it"


def _chunk_size(chunk: object, count: int, cpus_per_task: int) -> int:
    if chunk is not None:
        return checked_integer(chunk, "chunk", minimum=1)
    if not ray.is_initialized():
        ray.init()
    slots = max(1, int(ray.cluster_resources().get("CPU", 1.0)) // cpus_per_task)
    return math.ceil(count / slots)


def _sharded(
    world: World,
    work: Callable[..., Result],
    batched: Sequence[FloatArray | None],
    options: dict[str, bool],
    chunk: object,
    cpus_per_task: object,
    max_retries: object,
) -> Result:
    """work on the chunks of the batched arrays (a leading axis N each; None is passed as is), one
    Ray task per chunk, the results joined in order."""
    count = next(array.shape[0] for array in batched if array is not None)
    if count == 0:
        raise ValueError("the batch is empty: q0 (or q) must hold at least one state")
    cpus = checked_integer(cpus_per_task, "cpus_per_task", minimum=1)
    retries = checked_integer(max_retries, "max_retries", minimum=0)
    size = _chunk_size(chunk, count, cpus)
    stored = _stored(world)
    task = _run_chunk.options(num_cpus=cpus, max_retries=retries)
    bounds = [(start, min(start + size, count)) for start in range(0, count, size)]
    pending = [
        task.remote([stored], work, [None if a is None else a[start:stop] for a in batched], options)
        for start, stop in bounds
    ]
    parts = []
    try:
        for index, ((start, stop), reference) in enumerate(zip(bounds, pending)):
            where = f"chunk {index} (worlds {start}–{stop - 1})"
            try:
                result, caught = ray.get(reference)
            except ray.exceptions.RayTaskError as error:  # the work raised: say what, in the chunk's terms
                cause = getattr(error, "cause", None) or error
                raise RuntimeError(f"{where} failed: {type(cause).__name__}: {cause}") from error
            except ray.exceptions.RayError as error:  # the worker died, more often than max_retries
                raise RuntimeError(f"{where} failed: {type(error).__name__}: {error}") from error
            for category, message in caught:
                warnings.warn(f"{where}: {message}", category, stacklevel=3)
            parts.append(result)
    except BaseException:
        # Only the chunks not yet finished: cancelling one whose worker died (its error already stored)
        # can abort the driver in Ray's task manager ("Tried to complete task that was not pending").
        _, unfinished = ray.wait(pending, num_returns=len(pending), timeout=0)
        for reference in unfinished:
            ray.cancel(reference)
        raise
    return _joined(parts)


def _joined(parts: Sequence[Any]) -> Any:
    """Per-chunk results (NamedTuples of arrays, nested NamedTuples or None) as one, along the batch axis."""
    first = parts[0]
    if first is None:
        return None
    if isinstance(first, tuple):
        return type(first)(*(_joined([part[i] for part in parts]) for i in range(len(first))))
    return np.concatenate(parts)
