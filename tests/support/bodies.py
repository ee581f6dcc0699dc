"""Free bodies (balls, piles of cubes), a pendulum, and their states, shared by the simulation tests."""

import numpy as np

from dcol.dynamics import ModelBuilder
from dcol.geom import Box, Sphere

G = 9.81
IDENTITY = [1.0, 0.0, 0.0, 0.0]


def floating_bodies(builder, bodies):
    """Adds free bodies (name, mass, rotational inertia about the com, shape) to a ModelBuilder."""
    for name, mass, inertia, shape in bodies:
        builder.add_body(
            name, parent=None, joint=f"{name}_free", kind="floating", mass=mass, inertia=inertia * np.eye(3)
        )
        builder.add_shape(name, shape)
    return builder.build()


def ball_model(radius=0.1, mass=1.0, gravity=G):
    """One free solid sphere (inertia 2/5 m R²)."""
    return floating_bodies(
        ModelBuilder(gravity=(0.0, 0.0, -gravity)), [("ball", mass, 0.4 * mass * radius**2, Sphere(radius))]
    )


def box_pile_model(count, half=0.1, mass=1.0):
    """`count` free cubes of side 2 half (inertia m (2 half)² / 6)."""
    return floating_bodies(
        ModelBuilder(), [(f"box{i}", mass, mass * (2 * half) ** 2 / 6, Box([half] * 3)) for i in range(count)]
    )


def column_pile(side, half=0.1, gap=0.01, spacing=0.05, seed=0):
    """side³ cubes of side 2 half in side × side columns of side, spacing apart, each cube `gap` above
    the one below with a few mm of sideways offset and a small yaw drawn with `seed`: its
    configuration q0 (7 side³,), for box_pile_model(side³, half)."""
    count = side**3
    rng = np.random.default_rng(seed)
    q0 = np.zeros(7 * count)
    for i in range(count):
        column, level = divmod(i, side)
        yaw = rng.uniform(-0.1, 0.1)
        x, y = (2 * half + spacing) * (column % side), (2 * half + spacing) * (column // side)
        q0[7 * i : 7 * i + 7] = np.r_[
            x + rng.uniform(-0.005, 0.005),
            y + rng.uniform(-0.005, 0.005),
            half + gap + (2 * half + gap) * level,
            np.cos(yaw / 2),
            0.0,
            0.0,
            np.sin(yaw / 2),
        ]
    return q0


def pendulum_model(length, mass=1.0, inertia=1e-6):
    """A bob of `mass` on a massless rod: its com `length` below a revolute hinge about +y (gravity
    −z), rotational inertia `inertia` I about the com."""
    builder = ModelBuilder()
    builder.add_body(
        "bob",
        parent=None,
        joint="hinge",
        kind="revolute",
        axis=(0.0, 1.0, 0.0),
        mass=mass,
        com=(0.0, 0.0, -length),
        inertia=inertia * np.eye(3),
    )
    return builder.build()


def floating_state(*bodies):
    """(q, v) of free bodies with identity orientation from (position (3,), velocity (3,)) pairs."""
    q = np.concatenate([np.r_[position, IDENTITY] for position, _ in bodies])
    v = np.concatenate([np.r_[velocity, 0.0, 0.0, 0.0] for _, velocity in bodies])
    return q, v
