"""``dcol demo``: one of each primitive, DCOL proximity for every pair, and a picture."""

import itertools

import numpy as np

from dcol.geom import Capsule, Cone, Cylinder, Ellipsoid, Polygon, Polytope, Sphere, proximity
from dcol.geom.tessellate import surface_mesh


def demo_scene():
    """(name, shape, position, quaternion) for one of each primitive, some of them overlapping."""
    hexagon = np.linspace(0, 2 * np.pi, 7)[:-1]
    octahedron_plus = np.array(
        [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1], [0.6, 0.6, 0.6], [-0.6, -0.6, 0.6]]
    )
    return [
        ("polytope", Polytope.from_vertices(0.8 * octahedron_plus), [0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]),
        ("capsule", Capsule(0.35, 1.2), [1.6, 0.3, 0.2], [0.92, 0.0, 0.2, 0.35]),
        ("cylinder", Cylinder(0.4, 1.0), [0.2, 1.8, 0.0], [0.7, 0.0, 0.0, 0.7]),
        ("cone", Cone(1.4, np.deg2rad(25)), [-1.5, 0.6, 0.1], [0.3, 0.0, 0.0, 0.95]),
        ("sphere", Sphere(0.5), [-0.4, -1.4, 0.3], [1.0, 0.0, 0.0, 0.0]),
        ("ellipsoid", Ellipsoid(np.diag([1 / 0.7**2, 1 / 0.35**2, 1 / 0.5**2])), [1.4, -1.3, 0.0], [0.9, 0.3, 0.0, 0.3]),
        ("polygon", Polygon(np.column_stack([np.cos(hexagon), np.sin(hexagon)]), np.full(6, 0.5), 0.1),
         [0.0, 0.2, 1.1], [0.95, 0.3, 0.0, 0.0]),
    ]


def _vector(v):
    return "[" + " ".join(f"{c:6.3f}" for c in v) + "]"


def run_demo(output_path="dcol-demo.png"):
    """Print α, contact points and normals for the 21 pairs of the demo scene and draw it.

    Returns a dict with ``pairs`` (list of (name_a, name_b, ProximityResult)) and ``output``.
    """
    scene = demo_scene()
    pairs = []
    print(f"{'pair':20s} {'alpha':>7s} {'distance':>8s}  {'p_a':22s} {'p_b':22s} {'normal':22s} status  its")
    for (name_a, a, r_a, q_a), (name_b, b, r_b, q_b) in itertools.combinations(scene, 2):
        res = proximity(a, r_a, q_a, b, r_b, q_b)
        pairs.append((name_a, name_b, res))
        print(f"{name_a + '-' + name_b:20s} {res.alpha:7.4f} {res.distance:8.4f}  {_vector(res.p_a):22s} "
              f"{_vector(res.p_b):22s} {_vector(res.normal):22s} {res.status.name:7s} {res.iterations:3d}")
    touching = sum(res.alpha <= 1.0 for _, _, res in pairs)
    print(f"{len(pairs)} pairs, {touching} touching or penetrating (alpha <= 1)")
    _draw(scene, pairs, output_path)
    print(f"picture written to {output_path}")
    return {"pairs": pairs, "output": output_path}


def _draw(scene, pairs, output_path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from mpl_toolkits.mplot3d.art3d import Poly3DCollection
    except ImportError as err:
        raise SystemExit('the demo picture needs matplotlib: pip install "dcol[viz]"') from err

    fig = plt.figure(figsize=(9, 8))
    ax = fig.add_subplot(projection="3d")
    for (name, shape, r, q), color in zip(scene, plt.get_cmap("tab10").colors):
        vertices, faces = surface_mesh(shape, r, q)
        ax.add_collection3d(Poly3DCollection(vertices[faces], facecolor=color, edgecolor="none", alpha=0.35))
        ax.text(*np.asarray(r, float) + [0, 0, 0.1], name, fontsize=9)
    for _, _, res in pairs:
        if res.alpha < 1.5:
            ends = np.array([res.p_a, res.p_b]).T
            ax.scatter(*ends, color="red", s=14, depthshade=False)
            ax.plot(*ends, color="red", linewidth=0.8)
            ax.quiver(*res.x, *(0.4 * res.normal), color="black", linewidth=1.0)
    ax.set(xlim=(-2.3, 2.3), ylim=(-2.3, 2.3), zlim=(-1.5, 1.8), xlabel="x", ylabel="y", zlabel="z")
    ax.set_box_aspect((4.6, 4.6, 3.3))
    ax.set_title("DCOL proximity: contact points (red) and normals (black) of pairs with alpha < 1.5")
    fig.tight_layout()
    fig.savefig(output_path, dpi=110)
    plt.close(fig)
