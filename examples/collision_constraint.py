"""Use DCOL's α as a collision constraint: sweep a capsule past a box and report where α < 1.

Run: python examples/collision_constraint.py
"""

import numpy as np

from dcol.geom import Box, Capsule, proximity_batch

box = Box([0.5, 0.5, 0.5])
capsule = Capsule(R=0.2, L=1.0)

# The capsule slides along x at height 0.6 while turning about z.
steps = 201
positions = np.column_stack([np.linspace(-3.0, 3.0, steps), np.zeros(steps), np.full(steps, 0.6)])
angles = np.linspace(0.0, np.pi, steps)
quaternions = np.column_stack([np.cos(angles / 2), np.zeros(steps), np.zeros(steps), np.sin(angles / 2)])

result = proximity_batch(
    box, np.zeros((steps, 3)), np.tile([1.0, 0, 0, 0], (steps, 1)), capsule, positions, quaternions
)
colliding = result.alpha <= 1.0
print(f"{colliding.sum()} of {steps} poses collide; min alpha {result.alpha.min():.3f}")
first = np.argmax(colliding)
print(
    f"first contact near x = {positions[first, 0]:.2f}: point on box {result.p_a[first].round(3)}, "
    f"normal {result.normal[first].round(3)}"
)
