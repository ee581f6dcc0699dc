"""Write the small meshes of this folder (run it from anywhere: ``python datasets/meshes/make_meshes.py``).

Every mesh is built from exact coordinates here, checked to be a closed, outward-wound surface of
the intended volume, and written next to this script. Sizes are in metres.
"""

import os

import numpy as np
import trimesh

HERE = os.path.dirname(os.path.abspath(__file__))


def prism(outline, triangles, height):
    """Closed mesh of the polygon ``outline`` (n, 2), counterclockwise, extruded from z = 0 to height.

    triangles : (t, 3) indices into outline, counterclockwise, tiling the polygon (the caps).
    """
    n = len(outline)
    bottom = np.column_stack([outline, np.zeros(n)])
    top = np.column_stack([outline, np.full(n, height)])
    following = np.roll(np.arange(n), -1)
    walls = np.vstack(
        [
            np.column_stack([np.arange(n), following, following + n]),
            np.column_stack([np.arange(n), following + n, np.arange(n) + n]),
        ]
    )
    faces = np.vstack([np.asarray(triangles)[:, ::-1], np.asarray(triangles) + n, walls])
    return trimesh.Trimesh(np.vstack([bottom, top]), faces, process=False)


def shoelace_area(outline):
    x, y = outline.T
    return 0.5 * (np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def l_block():
    """L-shaped block: a 0.3 × 0.1 bar and a 0.1 × 0.1 bar on top of its left end, 0.1 deep.
    Origin at the outer corner, on the surface (not inside)."""
    outline = np.array([[0.0, 0.0], [0.3, 0.0], [0.3, 0.1], [0.1, 0.1], [0.1, 0.2], [0.0, 0.2]])
    # A fan from the reflex corner (0.1, 0.1) covers the L.
    triangles = [[3, 4, 5], [3, 5, 0], [3, 0, 1], [3, 1, 2]]
    return prism(outline, triangles, 0.1), shoelace_area(outline) * 0.1


def u_block():
    """U-shaped block: 0.3 wide, 0.2 high, a 0.1 × 0.1 notch in the top middle, 0.1 deep."""
    outline = np.array([[0.0, 0.0], [0.3, 0.0], [0.3, 0.2], [0.2, 0.2], [0.2, 0.1], [0.1, 0.1], [0.1, 0.2], [0.0, 0.2]])
    triangles = [[0, 1, 4], [1, 2, 4], [2, 3, 4], [0, 4, 5], [0, 5, 7], [5, 6, 7]]
    return prism(outline, triangles, 0.1), shoelace_area(outline) * 0.1


def chamfered_box():
    """Convex box 0.4 × 0.3 × 0.2 centred at the origin with 0.02 chamfers on every edge: 26 faces
    (6 rectangles, 12 chamfer strips, 8 corner triangles)."""
    half, cut = np.array([0.2, 0.15, 0.1]), 0.02
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    corners = np.vstack([signs * (half - cut * (1 - np.eye(3)[axis])) for axis in range(3)])
    hull = trimesh.convex.convex_hull(corners)
    volume = np.prod(2 * half) - cut**2 * 2 * np.sum(2 * half - 2 * cut) - 8 * cut**3 + 8 * cut**3 / 6
    return hull, volume


def tetrahedron():
    """Irregular tetrahedron far from the mesh origin (the origin is outside it)."""
    corners = np.array([[1.0, 0.5, 0.2], [1.3, 0.5, 0.2], [1.0, 0.9, 0.2], [1.1, 0.6, 0.5]])
    volume = abs(np.linalg.det(corners[1:] - corners[0])) / 6.0
    return trimesh.convex.convex_hull(corners), volume


def main():
    meshes = {
        "l_block.obj": l_block(),
        "u_block.obj": u_block(),
        "chamfered_box.stl": chamfered_box(),
        "tetrahedron.stl": tetrahedron(),
    }
    for name, (mesh, volume) in meshes.items():
        assert mesh.is_volume, name  # closed, consistently wound, outward
        assert np.isclose(mesh.volume, volume, rtol=1e-12), (name, mesh.volume, volume)
        mesh.export(os.path.join(HERE, name))
        print(f"{name}: {len(mesh.vertices)} vertices, {len(mesh.faces)} triangles, volume {volume:.6g} m^3")


if __name__ == "__main__":
    main()
