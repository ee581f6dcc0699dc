"""Scenes of many bodies, each with one or more shapes: broadphase, filtering and all contacts.

The broadphase bounds every shape by an axis-aligned box from its support points (grown by half the
margin on every side, so two shapes within the margin always have overlapping boxes) and sweeps and
prunes along x in the native core: O(N log N) plus the overlapping pairs. Pairs of shapes on the
same body never collide; collision groups and masks (a pair collides only if each one's group meets
the other's mask, as in Bullet) and explicitly excluded body pairs filter the rest. The narrow phase
is :func:`dcol.geom.contacts` for every remaining pair, in one native call (several threads if
asked). Poses change without rebuilding anything: pass the current ones to each query.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from dcol import _native
from dcol.solvers import SolverSettings
from dcol.typing import ArrayLike, BoolArray, FloatArray, IntArray
from dcol.validation import checked_instance, checked_integer, checked_real, checked_threads

from .contacts import ContactSet
from .distance import DISTANCE_SETTINGS
from .shapes import Shape

__all__ = ["Scene", "SceneContacts"]

_ALL_GROUPS = 0xFFFFFFFF


@dataclass(frozen=True, repr=False)  # the repr of ContactSet
class SceneContacts(ContactSet):
    """The contacts of a scene (K of them; see :class:`dcol.geom.ContactSet` for the fields), with
    body_a, body_b, shape_a, shape_b : (K,) int64, the bodies and shapes (scene indices) of each
    contact, a the first of the pair. Derivatives are with respect to rigid motions of body_a, then
    body_b (12 columns)."""

    body_a: IntArray = field(kw_only=True)
    body_b: IntArray = field(kw_only=True)
    shape_a: IntArray = field(kw_only=True)
    shape_b: IntArray = field(kw_only=True)


class Scene:
    """Bodies with shapes, queried at poses given per call.

    Bodies are numbered in the order they are added; ``poses`` arguments are then (B, 3) positions
    and (B, 4) quaternions ``[w, x, y, z]`` or (B, 3, 3) rotation matrices, one per body.
    """

    def __init__(self) -> None:
        self._shapes: list[Shape] = []
        self._body_of_shape: list[int] = []
        self._groups: list[int] = []
        self._masks: list[int] = []
        self._names: list[str | None] = []
        self._excluded: set[tuple[int, int]] = set()
        self._allowed: BoolArray | None = None  # collision_matrix, cached until a body or an exclusion is added

    def add_body(
        self, shapes: Shape | Sequence[Shape], *, name: str | None = None, group: int = 1, mask: int = _ALL_GROUPS
    ) -> int:
        """Adds a body with one shape or a sequence of shapes (each with its offset in the body).

        group, mask : 32-bit masks; bodies i and j collide only if group_i & mask_j and group_j & mask_i.
        Returns the body's index.
        """
        shapes = [shapes] if isinstance(shapes, Shape) else list(shapes)
        if not shapes or not all(isinstance(s, Shape) for s in shapes):
            raise TypeError("shapes must be a dcol.geom shape or a non-empty sequence of them")
        body = len(self._names)
        self._names.append(name)
        self._groups.append(checked_integer(group, "group", minimum=0, maximum=_ALL_GROUPS))
        self._masks.append(checked_integer(mask, "mask", minimum=0, maximum=_ALL_GROUPS))
        self._shapes.extend(shapes)
        self._body_of_shape.extend([body] * len(shapes))
        self._allowed = None
        return body

    def exclude(self, body_i: int, body_j: int) -> None:
        """Never report contacts between these two bodies (e.g. neighbours joined in a robot)."""
        i = checked_integer(body_i, "body_i", minimum=0, maximum=self.num_bodies - 1)
        j = checked_integer(body_j, "body_j", minimum=0, maximum=self.num_bodies - 1)
        self._excluded.add((min(i, j), max(i, j)))
        self._allowed = None

    def __repr__(self) -> str:
        return f"Scene(bodies={self.num_bodies}, shapes={len(self._shapes)}, excluded pairs={len(self._excluded)})"

    @property
    def num_bodies(self) -> int:
        return len(self._names)

    @property
    def body_names(self) -> list[str | None]:
        """list of the names the bodies were added with (None where none was given), by body index."""
        return list(self._names)

    @property
    def shapes(self) -> list[Shape]:
        """list of the scene's shapes, in the order of the shape indices."""
        return list(self._shapes)

    @property
    def body_of_shape(self) -> IntArray:
        """(S,) int64 body index of every shape."""
        return np.array(self._body_of_shape, dtype=np.int64)

    def collision_matrix(self) -> BoolArray:
        """(B, B) bool: whether bodies i and j may collide (different bodies, group_i & mask_j and
        group_j & mask_i, not excluded)."""
        return self._collision_matrix().copy()

    def _collision_matrix(self) -> BoolArray:
        if self._allowed is not None:
            return self._allowed
        groups, masks = np.array(self._groups, dtype=np.uint64), np.array(self._masks, dtype=np.uint64)
        allowed = ((groups[:, None] & masks[None, :]) != 0) & ((groups[None, :] & masks[:, None]) != 0)
        np.fill_diagonal(allowed, False)
        for i, j in self._excluded:
            allowed[i, j] = allowed[j, i] = False
        self._allowed = allowed
        return allowed

    def candidate_pairs(self, r: ArrayLike, q: ArrayLike, *, margin: float = 0.0) -> IntArray:
        """(K, 2) int64 shape index pairs (i < j) whose bounding boxes overlap when grown by the margin,
        after filtering: the pairs the narrow phase examines."""
        return self._candidate_pairs(r, q, checked_real(margin, "margin"))

    def _candidate_pairs(self, r: ArrayLike, q: ArrayLike, margin: float) -> IntArray:
        pairs, _, _ = _native.broadphase(self._shapes, self.body_of_shape, r, q, margin)
        body = self.body_of_shape[pairs]
        return pairs[self._collision_matrix()[body[:, 0], body[:, 1]]]

    def bounding_boxes(self, r: ArrayLike, q: ArrayLike, *, margin: float = 0.0) -> tuple[FloatArray, FloatArray]:
        """(S, 3), (S, 3) float64 lower and upper corners of every shape's box grown by margin / 2."""
        _, lower, upper = _native.broadphase(self._shapes, self.body_of_shape, r, q, checked_real(margin, "margin"))
        return lower, upper

    def contacts(
        self,
        r: ArrayLike,
        q: ArrayLike,
        *,
        margin: float = 0.0,
        feature_tolerance: float = 1e-3,
        derivatives: bool = False,
        settings: SolverSettings | None = None,
        threads: int | None = None,
    ) -> SceneContacts:
        """All contacts of the scene at body poses (r, q): SceneContacts.

        margin, feature_tolerance, derivatives, settings : as :func:`dcol.geom.contacts`;
        threads : int, worker threads of the narrow phase (default 1).
        """
        margin = checked_real(margin, "margin")
        pairs = self._candidate_pairs(r, q, margin)
        out = _native.scene_contacts(
            self._shapes,
            self.body_of_shape,
            r,
            q,
            pairs,
            margin,
            checked_real(feature_tolerance, "feature_tolerance"),
            bool(derivatives),
            checked_instance(settings, "settings", SolverSettings, DISTANCE_SETTINGS),
            checked_threads(threads),
        )
        shape_pair = pairs[out.pop("pair")].reshape(-1, 2)
        body = self.body_of_shape[shape_pair]
        return SceneContacts(
            **out, shape_a=shape_pair[:, 0], shape_b=shape_pair[:, 1], body_a=body[:, 0], body_b=body[:, 1]
        )
