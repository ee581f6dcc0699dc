"""How dcol's results print: one line whose length does not grow with their arrays.

A result holds arrays of any size (a contact set's points, a solver's iterates); printing them all
buries the few numbers a reader looks for (the status, the iteration count, α). :func:`summary_repr`,
the ``__repr__`` of the result dataclasses, shows those in full and each larger array by its dtype
and shape.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from typing import Any, cast

import numpy as np

__all__ = ["SHOWN_ARRAY_SIZE", "summary_repr", "value_text"]

SHOWN_ARRAY_SIZE = 4
"""Arrays of at most this many entries print their values (a point, a quaternion); larger ones their shape."""


def _number_text(number: float | np.floating) -> str:
    return f"{float(number):.6g}"


def value_text(value: object) -> str:
    """One field's value as summary_repr writes it: an enumeration by name (Status.SOLVED), a real
    number by its 6 significant digits, a small array (numpy's or a tensor) by its values, a larger
    one as ``<float64 (K, 3)>``, a dict by its number of entries, a named tuple field by field."""
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, (float, np.floating)):
        return _number_text(value)
    if hasattr(value, "shape") and hasattr(value, "dtype"):  # numpy arrays, torch tensors
        if math.prod(value.shape) <= SHOWN_ARRAY_SIZE:
            values = cast(Any, value).tolist()  # a tensor's values without its autograd record
            return np.array2string(np.asarray(values), separator=", ", formatter={"float_kind": _number_text})
        return f"<{value.dtype} {tuple(value.shape)}>"
    if isinstance(value, dict):
        return f"<{len(value)} entries>"
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a NamedTuple of arrays (an LCP's bounds)
        fields = ", ".join(f"{name}={value_text(getattr(value, name))}" for name in value._fields)
        return f"{type(value).__name__}({fields})"
    return repr(value)


def summary_repr(result: object) -> str:
    """``Name(field=value, …)`` of a dataclass instance, each field as :func:`value_text` writes it,
    fields holding None left out."""
    fields = (
        f"{field.name}={value_text(value)}"
        for field in dataclasses.fields(result)  # type: ignore[arg-type]
        if (value := getattr(result, field.name)) is not None
    )
    return f"{type(result).__name__}({', '.join(fields)})"
