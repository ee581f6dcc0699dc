"""Progress bars of dcol's long loops (rollouts, optimizers), one rule for all of them.

A function that may run for a while takes ``progress``: None (the default) shows a bar on standard
error when the work is at least the function's threshold and standard error is a terminal (so logs,
pipes, notebooks' captured output and CI stay clean); True always shows it; False never does. The
bars are tqdm's, drawn on standard error.
"""

from __future__ import annotations

import sys

from tqdm import tqdm

__all__ = ["progress_bar"]


def progress_bar(total: int, progress: bool | None, *, minimum: int, description: str, unit: str) -> tqdm:
    """A tqdm bar over ``total`` units of work, shown by the rule of the module docstring.

    Parameters
    ----------
    total : int, the units of work (steps, world-steps, iterations).
    progress : bool or None, the caller's argument: None shows the bar when total ≥ minimum and
        standard error is a terminal; True always; False never.
    minimum : int, the least total that shows a bar by default.
    description : str, the bar's label; unit : str, the unit of total ("step").

    Returns
    -------
    tqdm, to be updated with ``update(n)`` and closed (it is a context manager); a disabled bar
    costs next to nothing and prints nothing.
    """
    if progress is not None and not isinstance(progress, bool):
        raise TypeError(f"progress must be True, False or None, got {progress!r}")
    show = progress if progress is not None else total >= minimum and sys.stderr.isatty()
    return tqdm(total=total, desc=description, unit=unit, disable=not show, file=sys.stderr, dynamic_ncols=True)
