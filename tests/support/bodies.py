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
