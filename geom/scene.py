"""Scenes of many bodies, each with one or more shapes: broadphase, filtering and all contacts.

The broadphase bounds every shape by an axis-aligned box from its support points (grown by half the
margin on every side, so two shapes within the margin always have overlapping boxes) and sweeps and
prunes along x in the native core: O(N log N) plus the overlapping pairs. Pairs of shapes on the
same body never collide; collision groups and masks (a pair collides only if each one's group meets
the other's mask, as in Bullet) and explicitly excluded body pairs filter the rest. The narrow phase
is :func:`dcol.geom.contacts` for every remaining pair, in one native call (several threads if
asked). Poses change without rebuilding anything: pass the current ones to each query.
"""

from dataclasses import dataclass

import numpy as np

from dcol import _native

from .contacts import ContactSet
from .distance import DISTANCE_SETTINGS
from .proximity import checked_threads
from .shapes import Shape
from .validation import checked_real

__all__ = ["Scene", "SceneContacts"]

_ALL_GROUPS = 0xFFFFFFFF


@dataclass(frozen=True)
class SceneContacts(ContactSet):
    """The contacts of a scene (K of them; see :class:`dcol.geom.ContactSet` for the fields), with
    body_a, body_b, shape_a, shape_b : (K,) int64, the bodies and shapes (scene indices) of each
    contact, a the first of the pair. Derivatives are with respect to rigid motions of body_a, then
    body_b (12 columns)."""

    body_a: np.ndarray = None
    body_b: np.ndarray = None
    shape_a: np.ndarray = None
    shape_b: np.ndarray = None


def _mask(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value <= _ALL_GROUPS:
        raise ValueError(f"{name} must be an integer bit mask in [0, 2**32), got {value!r}")
    return int(value)


class Scene:
    """Bodies with shapes, queried at poses given per call.

    Bodies are numbered in the order they are added; ``poses`` arguments are then (B, 3) positions
    and (B, 4) quaternions ``[w, x, y, z]`` or (B, 3, 3) rotation matrices, one per body.
    """

    def __init__(self):
        self._shapes = []
        self._body_of_shape = []
        self._groups = []
        self._masks = []
        self._names = []
        self._excluded = set()
        self._allowed = None  # collision_matrix, cached until a body or an exclusion is added

    def add_body(self, shapes, *, name=None, group=1, mask=_ALL_GROUPS):
        """Adds a body with one shape or a sequence of shapes (each with its offset in the body).

        group, mask : 32-bit masks; bodies i and j collide only if group_i & mask_j and group_j & mask_i.
        Returns the body's index.
        """
        shapes = [shapes] if isinstance(shapes, Shape) else list(shapes)
        if not shapes or not all(isinstance(s, Shape) for s in shapes):
            raise TypeError("shapes must be a dcol.geom shape or a non-empty sequence of them")
        body = len(self._names)
        self._names.append(name)
        self._groups.append(_mask(group, "group"))
        self._masks.append(_mask(mask, "mask"))
        self._shapes.extend(shapes)
        self._body_of_shape.extend([body] * len(shapes))
        self._allowed = None
        return body

    def exclude(self, body_i, body_j):
        """Never report contacts between these two bodies (e.g. neighbours joined in a robot)."""
        for value, name in ((body_i, "body_i"), (body_j, "body_j")):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < self.num_bodies:
                raise ValueError(f"{name} must be a body index in [0, {self.num_bodies}), got {value!r}")
        self._excluded.add((min(body_i, body_j), max(body_i, body_j)))
        self._allowed = None

    @property
    def num_bodies(self):
        return len(self._names)

    @property
    def shapes(self):
        """list of the scene's shapes, in the order of the shape indices."""
        return list(self._shapes)

    @property
    def body_of_shape(self):
        """(S,) int64 body index of every shape."""
        return np.array(self._body_of_shape, dtype=np.int64)

    def collision_matrix(self):
        """(B, B) bool: whether bodies i and j may collide (different bodies, group_i & mask_j and
        group_j & mask_i, not excluded)."""
        return self._collision_matrix().copy()

    def _collision_matrix(self):
        if self._allowed is not None:
            return self._allowed
        groups, masks = np.array(self._groups, dtype=np.uint64), np.array(self._masks, dtype=np.uint64)
        allowed = ((groups[:, None] & masks[None, :]) != 0) & ((groups[None, :] & masks[:, None]) != 0)
        np.fill_diagonal(allowed, False)
        for i, j in self._excluded:
            allowed[i, j] = allowed[j, i] = False
        self._allowed = allowed
        return allowed

    def candidate_pairs(self, r, q, *, margin=0.0):
        """(K, 2) int64 shape index pairs (i < j) whose bounding boxes overlap when grown by the margin,
        after filtering: the pairs the narrow phase examines."""
        pairs, _, _ = _native.broadphase(self._shapes, self.body_of_shape, r, q, checked_real(margin, "margin"))
        body = self.body_of_shape[pairs]
        return pairs[self._collision_matrix()[body[:, 0], body[:, 1]]]

    def bounding_boxes(self, r, q, *, margin=0.0):
        """(S, 3), (S, 3) float64 lower and upper corners of every shape's box grown by margin / 2."""
        _, lower, upper = _native.broadphase(self._shapes, self.body_of_shape, r, q, checked_real(margin, "margin"))
        return lower, upper

    def contacts(self, r, q, *, margin=0.0, feature_tolerance=1e-3, derivatives=False, settings=None, threads=None):
        """All contacts of the scene at body poses (r, q): SceneContacts.

        margin, feature_tolerance, derivatives, settings : as :func:`dcol.geom.contacts`;
        threads : int, worker threads of the narrow phase (default 1).
        """
        pairs = self.candidate_pairs(r, q, margin=margin)
        out = _native.scene_contacts(
            self._shapes,
            self.body_of_shape,
            r,
            q,
            pairs,
            checked_real(margin, "margin"),
            checked_real(feature_tolerance, "feature_tolerance"),
            bool(derivatives),
            DISTANCE_SETTINGS if settings is None else settings,
            checked_threads(threads),
        )
        shape_pair = pairs[out.pop("pair")].reshape(-1, 2)
        body = self.body_of_shape[shape_pair]
        return SceneContacts(
            **out, shape_a=shape_pair[:, 0], shape_b=shape_pair[:, 1], body_a=body[:, 0], body_b=body[:, 1]
        )
