"""Checks of array and scalar arguments, shared by every dcol package, with one wording for their errors.

Each check takes an argument's value and its name, returns the value converted (float64 arrays,
floats, ints) and otherwise raises an error whose message starts with the name: TypeError when the
value is of the wrong kind (not numbers, not a tensor), ValueError when it is of the right kind but
outside its domain (shape, NaN or inf, range). Integer arguments are counts and indices: a float or
a bool given for one is a ValueError too, as out of their domain.

Arrays come back as read-only, C-contiguous float64 copies, ready for the native core and safe
from later changes to the caller's array. Shapes are tuples of dimensions: an int is a fixed
length, a str names a free one ("m", "n", "N", "T"), and a pair (name, length) is a length set by
another argument, printed both ways: "G must have shape (len(h), len(c)) = (3, 2), got (2, 2)".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias, TypeGuard, TypeVar

import numpy as np

from dcol.typing import ArrayLike, FloatArray

__all__ = [
    "Dimension",
    "Shape",
    "shape_text",
    "shape_error",
    "float_array",
    "checked_array",
    "checked_vectors",
    "quaternion_norms",
    "check_quaternion_norms",
    "checked_real",
    "checked_finite",
    "checked_positive",
    "checked_nonnegative",
    "checked_interval",
    "is_integer",
    "checked_integer",
    "MAX_THREADS",
    "checked_threads",
    "MAX_ITERATIONS",
    "checked_iterations",
    "checked_instance",
    "checked_tensor",
]

Dimension: TypeAlias = int | str | tuple[str, int]
"""A fixed length, the name of a free length, or (name, length) for a length set by another argument."""

Shape: TypeAlias = tuple[Dimension, ...]

T = TypeVar("T")


def _tuple_text(items: Sequence[object]) -> str:
    """Items written as Python writes a tuple: (a, b), and (a,) for one."""
    inner = ", ".join(str(item) for item in items)
    return f"({inner},)" if len(items) == 1 else f"({inner})"


def shape_text(shape: Shape) -> str:
    """A shape as error messages write it: "(m, 3)", "(3,)", "(n, n) = (4, 4)"."""
    text = _tuple_text([d[0] if isinstance(d, tuple) else d for d in shape])
    if any(isinstance(d, tuple) for d in shape):
        text += " = " + _tuple_text([d[1] if isinstance(d, tuple) else d for d in shape])
    return text


def shape_error(name: str, expected: Sequence[Shape], got: tuple[int, ...]) -> ValueError:
    """The error of an argument whose shape is none of the expected ones: "r must have shape (3,) or
    (N, 3), got (2,)"."""
    texts = [shape_text(shape) for shape in expected]
    alternatives = texts[0] if len(texts) == 1 else ", ".join(texts[:-1]) + " or " + texts[-1]
    return ValueError(f"{name} must have shape {alternatives}, got {got}")


def _has_shape(shape: tuple[int, ...], expected: Shape) -> bool:
    return len(shape) == len(expected) and all(
        isinstance(want, str) or got == (want[1] if isinstance(want, tuple) else want)
        for got, want in zip(shape, expected)
    )


def float_array(value: ArrayLike, name: str, *, copy: bool = False) -> FloatArray:
    """value as a C-contiguous float64 array (a new one with copy, else only when needed), shape and
    values unchecked; TypeError naming the argument when numpy cannot convert it, ValueError when a
    number is beyond float64's range."""
    if np.iscomplexobj(value):  # numpy would drop the imaginary parts with a warning at most
        raise TypeError(f"{name} must be an array of real numbers, got complex ones")
    try:
        if copy:
            return np.array(value, dtype=np.float64, order="C")
        return np.asarray(value, dtype=np.float64, order="C")
    except OverflowError as err:  # Python integers beyond float64's range
        raise ValueError(f"{name} holds a number beyond float64's range") from err
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be an array of real numbers") from err


def checked_array(value: ArrayLike, name: str, shape: Shape, *, infinite: bool = False) -> FloatArray:
    """Read-only, C-contiguous float64 copy of value with the given shape, finite: with infinite=True
    ±inf entries are allowed (bounds), NaN never."""
    array = float_array(value, name, copy=True)
    if not _has_shape(array.shape, shape):
        raise shape_error(name, [shape], array.shape)
    if infinite:
        if np.isnan(array).any():
            raise ValueError(f"{name} must not contain NaN")
    elif not np.isfinite(array).all():
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    array.setflags(write=False)
    return array


def checked_vectors(value: ArrayLike, name: str, width: int) -> tuple[FloatArray, bool]:
    """One vector (width,) or a batch of them (N, width), as checked_array's (N, width) rows, and
    whether value had the batch axis (functions that take either return results shaped alike)."""
    array = float_array(value, name)
    if array.ndim not in (1, 2) or array.shape[-1] != width:
        raise shape_error(name, [(width,), ("N", width)], array.shape)
    return checked_array(array.reshape(-1, width), name, ("N", width)), array.ndim == 2


def quaternion_norms(quaternions: FloatArray) -> FloatArray:
    """‖q‖ over the last axis of (..., 4) quaternions, scaled by their largest entry so that it
    neither under- nor overflows: every nonzero finite quaternion has a positive finite norm (0 for
    zero, NaN where an entry is not finite)."""
    largest = np.max(np.abs(quaternions), axis=-1, keepdims=True)
    scale = np.where(largest > 0.0, largest, 1.0)
    return largest[..., 0] * np.sqrt(np.sum((quaternions / scale) ** 2, axis=-1))


def check_quaternion_norms(quaternions: FloatArray, name: str, what: str = "quaternion") -> None:
    """ValueError unless every quaternion (..., 4) of finite entries is nonzero: the norm the
    functions taking quaternions of any norm divide by."""
    if not np.all(quaternion_norms(quaternions) > 0.0):
        raise ValueError(f"{name}: the {what} must be nonzero")


def checked_real(value: object, name: str) -> float:
    """float(value) for a real number (int, float, numpy scalar or 0-d array; not a bool); TypeError
    otherwise."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]  # the numpy scalar it holds
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    return float(value)


def checked_finite(value: object, name: str) -> float:
    """A real number that is neither NaN nor ±inf."""
    number = checked_real(value, name)
    if not np.isfinite(number):
        raise ValueError(f"{name} must be finite (no NaN or inf), got {value!r}")
    return number


def checked_positive(value: object, name: str) -> float:
    """A finite real number > 0: sizes, time steps, tolerances."""
    number = checked_real(value, name)
    if not (np.isfinite(number) and number > 0.0):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return number


def checked_nonnegative(value: object, name: str) -> float:
    """A finite real number ≥ 0: masses, friction coefficients, margins."""
    number = checked_real(value, name)
    if not (np.isfinite(number) and number >= 0.0):
        raise ValueError(f"{name} must be finite and ≥ 0, got {value!r}")
    return number


def checked_interval(
    value: object, name: str, low: float, high: float, *, open_low: bool = False, open_high: bool = False
) -> float:
    """A real number in [low, high], or (low, high] etc. with open_low / open_high (NaN never is)."""
    number = checked_real(value, name)
    above = number > low if open_low else number >= low
    below = number < high if open_high else number <= high
    if not (above and below):
        interval = f"{'(' if open_low else '['}{low:g}, {high:g}{')' if open_high else ']'}"
        raise ValueError(f"{name} must be in {interval}, got {value!r}")
    return number


def is_integer(value: object) -> TypeGuard[int | np.integer]:
    """Whether value is an int or a numpy integer (a bool, although an int, is not)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def checked_integer(value: object, name: str, *, minimum: int, maximum: int | None = None) -> int:
    """int(value) for an integer in [minimum, maximum] (no upper bound when maximum is None);
    ValueError naming the argument otherwise, for a float or a bool too."""
    if is_integer(value) and minimum <= value and (maximum is None or value <= maximum):
        return int(value)
    if maximum is not None:
        domain = f"an integer in [{minimum}, {maximum}]"
    else:
        domain = "a positive integer" if minimum == 1 else f"an integer ≥ {minimum}"
    raise ValueError(f"{name} must be {domain}, got {value!r}")


# More worker threads than a batch function starts: each is an operating-system thread.
MAX_THREADS = 1024


def checked_threads(threads: object) -> int:
    """The worker-thread count of the batch functions: None means 1, else an integer in
    [1, MAX_THREADS]."""
    return 1 if threads is None else checked_integer(threads, "threads", minimum=1, maximum=MAX_THREADS)


# The native solvers count their iterations in C ints.
MAX_ITERATIONS = 2**31 - 1


def checked_iterations(max_iterations: object) -> int:
    """The iteration limit of a solver (pivots, sweeps, iterations): an integer in [0, MAX_ITERATIONS]."""
    return checked_integer(max_iterations, "max_iterations", minimum=0, maximum=MAX_ITERATIONS)


def checked_instance(value: object, name: str, kind: type[T], default: T) -> T:
    """value, which must be an instance of kind (default for None); TypeError naming the argument."""
    if value is None:
        return default
    if not isinstance(value, kind):
        raise TypeError(f"{name} must be a {kind.__name__}, got {type(value).__name__}")
    return value


def checked_tensor(tensor: object, name: str) -> FloatArray:
    """A float64 copy of the values of a torch tensor, which must be float64 on the CPU (detached from
    autograd): the argument check of the PyTorch wrappers. Shapes and values are left to the
    functions the wrappers call, which check them under the same names."""
    import torch  # the [torch] extra is optional: only its wrappers call this

    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
    if tensor.dtype != torch.float64:
        raise TypeError(f"{name} must have dtype torch.float64, got {tensor.dtype}")
    if tensor.device.type != "cpu":
        raise ValueError(f"{name} must be on the CPU, got {tensor.device}")
    return np.array(tensor.detach().numpy(), dtype=np.float64)
