"""The figure the trajectory-optimization examples share (cartpole_swing_up.py, catapult.py,
jump_worm.py): each method's cost against iterations and against wall time, and a third panel for the
example's trajectory; and how every optimization example writes its figure. Needs matplotlib."""

import matplotlib.pyplot as plt


def cost_figure(results):
    """A figure of three panels for results {method name: OptimizationResult}: the costs of each
    history against iterations and wall time in the first two; returns (figure, the third panel)."""
    figure, (by_iteration, by_time, trajectory) = plt.subplots(1, 3, figsize=(13, 3.8))
    for name, result in results.items():
        costs = [p.cost for p in result.history]
        by_iteration.plot([p.iteration for p in result.history], costs, label=name)
        by_time.plot([p.elapsed for p in result.history], costs, label=name)
    # A cost that rewards (the jump-worm's height) goes negative, where a logarithmic axis cannot follow.
    positive = all(p.cost > 0.0 for result in results.values() for p in result.history)
    for axes, label in ((by_iteration, "iteration"), (by_time, "wall time (s)")):
        axes.set(xlabel=label, ylabel="cost", yscale="log" if positive else "linear")
    by_iteration.legend()
    return figure, trajectory


def save(figure, path):
    """Lays the figure out, writes it to path and says so."""
    figure.tight_layout()
    figure.savefig(path)
    print(f"wrote {path}")
