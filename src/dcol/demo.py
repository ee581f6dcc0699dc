"""``dcol demo``: one of each primitive, DCOL proximity for every pair, a table and a picture.

Seven shapes on a ring, each close enough to its neighbours that some pairs penetrate (α < 1) and
some nearly touch. The tables need nothing but dcol; the pictures need the ``viz`` extra: matplotlib
for the picture, viser for the simulation's animation.
"""

import importlib
import itertools
import os
from pathlib import Path
from typing import Any

import numpy as np

from dcol.geom import Capsule, Cone, Cylinder, Ellipsoid, Polygon, Polytope, Shape, Sphere, proximity, signed_distance
from dcol.geom.tessellate import surface_mesh
from dcol.typing import ArrayLike, FloatArray

__all__ = ["demo_scene", "run_demo"]

CLOSE_ALPHA: float = 1.5  # pairs drawn with their contact points and normal
_RING_RADIUS = 0.85
_NORMAL_LENGTH = 0.3
_LABEL_LIFT = np.array([0.0, 0.0, 0.08])  # keeps a pair's α label off its contact marks


def _axis_angle(axis: ArrayLike, degrees: float) -> FloatArray:
    """(4,) float64 quaternion [w, x, y, z] of a rotation by ``degrees`` about ``axis`` (3,)."""
    axis = np.asarray(axis, dtype=np.float64)
    half = np.deg2rad(degrees) / 2.0
    return np.r_[np.cos(half), np.sin(half) * axis / np.linalg.norm(axis)]


def _on_ring(slot: float, z: float = 0.0) -> FloatArray:
    """(3,) float64 position of slot (0 to 7, fractions allowed) on a ring of 7 about the z axis,
    slot 0 on +y, at height z."""
    angle = np.pi / 2.0 + 2.0 * np.pi * slot / 7.0
    return np.array([_RING_RADIUS * np.cos(angle), _RING_RADIUS * np.sin(angle), z])


def demo_scene() -> list[tuple[str, Shape, FloatArray, FloatArray]]:
    """The demo's shapes at their poses: a ring of seven, each near its two neighbours.

    Returns
    -------
    list of (name str, shape, r (3,) float64, q (4,) float64 quaternion [w, x, y, z]).
    """
    hexagon = np.linspace(0.0, 2.0 * np.pi, 6, endpoint=False)
    gem = np.array(
        [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1.3], [0, 0, -1.3], [0.7, 0.7, 0.7], [-0.7, 0.7, -0.7]]
    )
    return [
        ("polytope", Polytope.from_vertices(0.45 * gem), _on_ring(0), _axis_angle([0, 0, 1], 20)),
        ("capsule", Capsule(R=0.22, L=0.8), _on_ring(1, 0.15), _axis_angle([0, 0, 1], 141)),
        ("cylinder", Cylinder(R=0.28, L=0.6), _on_ring(2, -0.1), _axis_angle([1, 0, 1], 60)),
        ("cone", Cone(H=0.9, beta=np.deg2rad(25)), _on_ring(3), _axis_angle([0, 1, 0], -50)),
        ("sphere", Sphere(R=0.38), _on_ring(4), np.array([1.0, 0.0, 0.0, 0.0])),
        ("ellipsoid", Ellipsoid(np.diag([0.55**-2, 0.28**-2, 0.36**-2])), _on_ring(5), _axis_angle([1, 1, 0], 40)),
        (
            "polygon",
            Polygon(np.column_stack([np.cos(hexagon), np.sin(hexagon)]), np.full(6, 0.36), R=0.06),
            _on_ring(6.15, 0.1),  # a little past its slot, into the polytope
            _axis_angle([1, 0, 0], 70),
        ),
    ]


def _vector(v: FloatArray) -> str:
    """Fixed-width text of a (3,) vector."""
    return "[" + " ".join(f"{c:6.3f}" for c in v) + "]"


def _print_table(pairs: list[dict[str, Any]]) -> None:
    print(
        f"{'pair':20s} {'alpha':>7s} {'distance':>8s}  {'p_a':22s} {'p_b':22s} {'normal':22s} {'status':17s} iterations"
    )
    for pair in pairs:
        res = pair["result"]
        print(
            f"{pair['a'] + '-' + pair['b']:20s} {res.alpha:7.4f} {pair['distance']:8.4f}  {_vector(res.p_a)} "
            f"{_vector(res.p_b)} {_vector(res.normal)} {res.status.name:17s} {res.iterations:10d}"
        )
    print(
        "alpha: the scaling of both shapes at which they touch, > 1 apart, < 1 overlapping; "
        "distance: metres, negative by the penetration depth when overlapping"
    )


def run_demo(output_path: str | os.PathLike[str] = "dcol-demo.png") -> dict[str, Any]:
    """Compute DCOL proximity for all 21 pairs of the demo scene, print a table, draw a picture.

    Parameters
    ----------
    output_path : str or path-like, PNG file to write.

    Returns
    -------
    dict with ``pairs``: list of 21 dicts ``{"a": name, "b": name, "result": ProximityResult, "distance":
    float}`` (the signed distance, < 0 overlapping), ``touching``: number of pairs with α ≤ 1, and
    ``output``: the picture's pathlib.Path.

    Raises
    ------
    ImportError if matplotlib or viser is missing, after the table is printed.
    """
    output = Path(output_path)
    scene = demo_scene()
    pairs = [
        {
            "a": name_a,
            "b": name_b,
            "result": proximity(a, r_a, q_a, b, r_b, q_b),
            "distance": signed_distance(a, r_a, q_a, b, r_b, q_b).distance,
        }
        for (name_a, a, r_a, q_a), (name_b, b, r_b, q_b) in itertools.combinations(scene, 2)
    ]
    _print_table(pairs)
    touching = sum(pair["result"].alpha <= 1.0 for pair in pairs)
    print(f"{len(pairs)} pairs, {touching} touching or penetrating (alpha <= 1)")
    _require_viz_extra()
    _draw(scene, pairs, output)
    print(f"picture written to {output}")
    return {"pairs": pairs, "touching": touching, "output": output}


def _require_viz_extra() -> None:
    """ImportError naming the viz extra unless its packages, matplotlib and viser, import."""
    for package in ("matplotlib", "viser"):
        try:
            importlib.import_module(package)
        except ImportError as err:
            raise ImportError(
                f'dcol demo draws with matplotlib and viser; {package} is not installed: pip install "dcol[viz]"'
            ) from err


def _draw(scene: list[tuple[str, Shape, FloatArray, FloatArray]], pairs: list[dict[str, Any]], output: Path) -> None:
    """Translucent shaded shapes, and for close pairs the contact points and the normal at p_a.

    The figure is drawn on its own Agg canvas, not through pyplot, so the caller's matplotlib
    backend and open figures are left alone.
    """
    from matplotlib import colormaps
    from matplotlib.artist import Artist
    from matplotlib.colors import LightSource
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    fig = Figure(figsize=(10, 8.5))
    # Drawing order by zorder (not matplotlib's depth guess) keeps the contact marks above the shapes.
    ax = fig.add_subplot(projection="3d", computed_zorder=False)
    light = LightSource(azdeg=315, altdeg=45)
    legend: list[Artist] = []
    corners = []
    for (name, shape, r, q), color in zip(scene, colormaps["tab10"](np.arange(len(scene)))):
        vertices, faces = surface_mesh(shape, r, q, resolution=32)
        ax.add_collection3d(
            Poly3DCollection(vertices[faces], facecolors=color, linewidths=0, alpha=0.35, shade=True, lightsource=light)
        )
        corners.append([vertices.min(axis=0), vertices.max(axis=0)])
        legend.append(Patch(facecolor=color, alpha=0.6, label=name))

    for pair in pairs:
        res = pair["result"]
        if res.alpha >= CLOSE_ALPHA:
            continue
        ends = np.array([res.p_a, res.p_b])
        mark = "crimson" if res.alpha <= 1.0 else "black"
        ax.plot(*ends.T, color=mark, linewidth=1.0, zorder=3)
        ax.scatter(*ends.T, color=mark, s=18, depthshade=False, zorder=4)
        arrow = _NORMAL_LENGTH * res.normal
        ax.quiver(*res.p_a, *arrow, color="navy", linewidth=1.3, arrow_length_ratio=0.3, zorder=5)
        ax.text(*(ends.mean(axis=0) + _LABEL_LIFT), f"α={res.alpha:.2f}", fontsize=8, color=mark, zorder=6)

    low, high = np.min([c[0] for c in corners], axis=0), np.max([c[1] for c in corners], axis=0)
    center, half = (low + high) / 2, (high - low).max() / 2 + 0.1
    ax.set(xlim=(center[0] - half, center[0] + half), ylim=(center[1] - half, center[1] + half))
    ax.set(zlim=(center[2] - half, center[2] + half), xlabel="x", ylabel="y", zlabel="z")
    ax.set_box_aspect((1, 1, 1))
    ax.view_init(elev=40, azim=-70)
    legend += [
        Line2D([], [], color="crimson", marker="o", markersize=4, label="p_a, p_b (α ≤ 1, penetrating)"),
        Line2D([], [], color="black", marker="o", markersize=4, label=f"p_a, p_b (1 < α < {CLOSE_ALPHA})"),
        Line2D([], [], color="navy", label="normal at p_a, from a to b"),
    ]
    ax.legend(handles=legend, loc="upper left", fontsize=8, framealpha=0.9)
    ax.set_title(
        f"dcol demo: DCOL proximity of 7 primitives ({len(pairs)} pairs)\n"
        f"contact points and normals of the pairs with α < {CLOSE_ALPHA}"
    )
    fig.tight_layout()
    fig.savefig(output, dpi=120)
