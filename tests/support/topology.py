"""Checks of a polytope's topology against its definition, shared by the topology and mesh tests."""

import numpy as np


def check_topology(A, b, topology, atol=1e-9):
    """Assert the defining properties of the topology of {y : A y ≤ b}.

    Returns the number of faces with at least 3 vertices and, for each polygon side (i, j), i < j,
    how many faces have it."""
    V, E, faces, normals = topology.vertices, topology.edges, topology.faces, topology.face_normals
    lengths = np.linalg.norm(A, axis=1)
    assert V.dtype == np.float64 and V.ndim == 2 and V.shape[1] == 3
    assert E.dtype == np.int64 and E.ndim == 2 and E.shape[1] == 2
    assert len(faces) == len(A) and all(f.dtype == np.int64 for f in faces)
    np.testing.assert_allclose(normals, A / lengths[:, None], atol=1e-15)
    assert not V.flags.writeable and not E.flags.writeable and not normals.flags.writeable

    # Vertices: feasible, distinct, each on at least three planes.
    gaps = (b[:, None] - A @ V.T) / lengths[:, None]  # (m, k) distances inside each plane
    assert np.all(gaps > -atol)
    assert np.all(np.sum(gaps < atol, axis=0) >= 3)
    assert np.min(np.linalg.norm(V[:, None] - V[None], axis=2) + np.eye(len(V))) > atol

    # Faces: exactly the vertices on their plane, counterclockwise about the outward normal.
    side_count = {}
    for f, face in enumerate(faces):
        assert set(face.tolist()) == set(np.nonzero(gaps[f] < atol)[0].tolist())
        if len(face) < 3:
            continue
        corners = V[face]
        steps = np.roll(corners, -1, axis=0) - corners  # step i runs from corner i to corner i + 1
        turns = np.cross(steps, np.roll(steps, -1, axis=0))
        assert np.all(turns @ normals[f] > 0.0), f"face {f} is not a counterclockwise convex polygon"
        for i, j in zip(face, np.roll(face, -1), strict=True):
            side = (min(i, j), max(i, j))
            side_count[side] = side_count.get(side, 0) + 1

    # Edges: the polygons' sides, each once, smaller index first.
    assert np.all(E[:, 0] < E[:, 1])
    assert len({tuple(e) for e in E.tolist()}) == len(E)
    assert {tuple(e) for e in E.tolist()} == set(side_count)
    polygons = sum(len(face) >= 3 for face in faces)
    return polygons, side_count


def check_closed_solid(A, b, topology):
    """check_topology's checks plus closure: each edge on two faces and Euler's V − E + F = 2."""
    polygons, side_count = check_topology(A, b, topology)
    assert set(side_count.values()) == {2}
    assert len(topology.vertices) - len(topology.edges) + polygons == 2
