"""Profiles, strategies, independent residuals and the outcome tally of the fuzz suite (tests/fuzz).

Profiles: the short one runs in the default test run, derandomized so that CI sees the same
examples every time; the long one (``pytest tests/fuzz --fuzz-long``, or ``DCOL_FUZZ=long``) draws
many more examples at random and prints, at the end of the run, how many inputs each family tried and
how they ended (tests/conftest.py).

Outcomes of one input: ``ok`` (a success status whose answer checks out), ``status`` (a failure status
that says why there is no answer), ``error`` (ValueError or TypeError), ``nan`` (a success status with
a number that is not finite) and ``wrong`` (a success status whose answer fails the check). A crash
ends the run, so it is never tallied. Properties assert that no input ends ``nan`` or ``wrong``.
"""

from __future__ import annotations

import collections
import os

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

LONG = os.environ.get("DCOL_FUZZ", "").strip().lower() == "long"

OUTCOMES = ("ok", "status", "error", "nan", "wrong")
TALLY: collections.Counter[tuple[str, str]] = collections.Counter()


def fuzz_settings(short: int, long: int | None = None) -> settings:
    """Hypothesis settings of one property: `short` examples in the default run, `long` (default 25
    times as many) with the long profile. No deadline: a solve's time depends on the machine."""
    return settings(
        max_examples=(25 * short if long is None else long) if LONG else short,
        deadline=None,
        derandomize=not LONG,
        database=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
    )


def record(family: str, outcome: str, detail: str = "") -> None:
    """Tally one input's outcome; fail on ``nan`` and ``wrong``."""
    assert outcome in OUTCOMES, outcome
    TALLY[family, outcome] += 1
    if outcome in ("nan", "wrong"):
        raise AssertionError(f"{family}: {outcome}: {detail}")


def tally_table() -> list[str]:
    """The tally as the lines of a Markdown table, one row per family and a last row of their sums.
    Crashes are always 0: a crash ends the run before any table is printed."""
    families = sorted({family for family, _ in TALLY})
    lines = [
        "| family | inputs tried | crashes | silent NaN | wrong answers | clear errors | failure statuses |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for family in [*families, None]:
        chosen = families if family is None else [family]
        count = {outcome: sum(TALLY[name, outcome] for name in chosen) for outcome in OUTCOMES}
        lines.append(
            f"| {family or '**all families**'} | {sum(count.values())} | 0 | {count['nan']} | {count['wrong']} | "
            f"{count['error']} | {count['status']} |"
        )
    return lines


# --- numbers and poses -----------------------------------------------------------------------------------


def finite(*arrays: object) -> bool:
    return all(np.all(np.isfinite(np.asarray(array, dtype=float))) for array in arrays)


def unit(v: np.ndarray) -> np.ndarray:
    """v / ‖v‖ without under- or overflow (v nonzero and finite)."""
    v = np.asarray(v, dtype=float)
    v = v / np.max(np.abs(v))
    return v / np.linalg.norm(v)


def quaternion_with_norm(q: np.ndarray, exponent: float) -> np.ndarray:
    """The rotation of q as a quaternion of norm 10**exponent (down to the subnormal numbers and up
    to 1e300; the API normalizes quaternions of any nonzero finite norm)."""
    u = unit(q)
    if exponent < -290:  # in two factors: 10**exponent alone would lose the digits of a subnormal
        return (u * 1e-290) * 10.0 ** (exponent + 290)
    return u * 10.0**exponent


seeds = st.integers(0, 2**32 - 1)
# Quaternion norms: mostly ordinary, often extreme: 10**e for e across the whole double range.
norm_exponents = st.one_of(st.just(0.0), st.floats(-1.0, 1.0), st.floats(-320.0, 300.0))
# Length units 1e-4 … 1e4: α does not depend on them.
scale_exponents = st.one_of(st.just(0.0), st.floats(-4.0, 4.0))


# --- residuals of complementarity problems, computed here from the problem data --------------------------


def _worst(*values) -> float:
    """The largest of the values, where one that is not a number (arithmetic overflowed on an absurd
    solution) counts as infinite: it fails every tolerance instead of dropping out of the comparison."""
    worst = float(np.max(np.asarray(values, dtype=float)))
    return float("inf") if np.isnan(worst) else worst


def _normalized(A, b, f):
    """(A/a, b/a, f, scale): the same problem with A's largest entry one, so that w = A f + b is in f's
    units; scale is the size of f and of b/a (zero only for the trivial problem)."""
    A, b, f = (np.asarray(x, dtype=float) for x in (A, b, f))
    a = np.abs(A).max(initial=0.0)
    a = a if a > 0.0 else 1.0
    An, bn = A / a, b / a
    return An, bn, f, max(float(np.abs(f).max(initial=0.0)), float(np.abs(bn).max(initial=0.0)))


def lcp_violation(A, b, f) -> float:
    """Largest violation of f ≥ 0, w = A f + b ≥ 0, min(f, w) = 0, without units: the problem scaled so
    that A's largest entry is one (the same f), then f and w against the size of f and b."""
    An, bn, f, size = _normalized(A, b, f)
    if size == 0.0:
        return 0.0
    fn, wn = f / size, (An @ f + bn) / size
    return _worst(0.0, -fn.min(initial=0.0), -wn.min(initial=0.0), np.abs(np.minimum(fn, wn)).max(initial=0.0))


def boxed_lcp_violation(A, b, lo, hi, f, friction_index=None, mu=None) -> float:
    """Violation of the boxed LCP w = A f + b with lo ≤ f ≤ hi (friction entries within ±mu f_j): the
    natural map f − clamp(f − w, lo, hi), zero exactly at a solution, scaled as lcp_violation."""
    An, bn, f, size = _normalized(A, b, f)
    lo, hi = np.array(lo, dtype=float), np.array(hi, dtype=float)
    if friction_index is not None:
        index = np.asarray(friction_index)
        friction = index >= 0
        bound = np.asarray(mu, dtype=float) * np.maximum(f[np.maximum(index, 0)], 0.0)
        lo, hi = np.where(friction, -bound, lo), np.where(friction, bound, hi)
    if size == 0.0:
        return 0.0
    residual = f - np.clip(f - (An @ f + bn), lo, hi)
    return _worst(np.abs(residual).max(initial=0.0) / size)


def mlcp_violation(M, q, G, F, h, x, z, s, A=None, y=None) -> float:
    """Violation of M x + Aᵀy + Gᵀz + q = 0, A x = 0, G x + F z + s = h, s, z ≥ 0, sᵀz = 0, each
    equation against the size of its terms; complementarity by the products z_i s_i, z and s without
    units as in lcp_violation."""
    M, q, G, F, h, x, z, s = (np.asarray(v, dtype=float) for v in (M, q, G, F, h, x, z, s))
    terms = [M @ x, G.T @ z, q]
    if A is not None and A.size:
        terms.append(A.T @ np.asarray(y, dtype=float))
    worst = 0.0

    def relative(parts):
        total = sum(parts)
        size = _worst(1e-300, *(np.abs(p).max(initial=0.0) for p in parts))
        return float(np.abs(total).max(initial=0.0)) / size

    worst = _worst(worst, relative(terms))
    if A is not None and A.size:
        worst = _worst(worst, float(np.abs(A @ x).max()) / max(float(np.abs(A).max() * np.abs(x).max()), 1e-300))
    if h.size:
        worst = _worst(worst, relative([G @ x, F @ z, s, -h]))
        scale_s = max(float(np.abs(s).max()), float(np.abs(h).max()), float(np.abs(G @ x).max()), 1e-300)
        # z in the units that balance the first equation's other terms through Gᵀ.
        scale_z = max(float(np.abs(M @ x).max(initial=0.0)), float(np.abs(q).max(initial=0.0)), 1e-300)
        scale_z /= max(float(np.abs(G).max()), 1e-300)
        zn, sn = z / scale_z, s / scale_s
        # Products rather than min(z, s): an interior point ends with both of a degenerate pair (z = s = 0
        # at the solution) at the square root of its tolerance.
        worst = _worst(worst, -zn.min(), -sn.min(), np.abs(zn * sn).max())
    return worst


def ncp_violation(G, g, mu, impulses) -> float:
    """Violation of the contact NCP of dcol.solvers.ncp, per contact [t1, t2, n]: λ in ‖λ_t‖ ≤ μ λ_n,
    y = v + [0, 0, μ‖v_t‖] (v = G λ + g) in the dual cone μ‖y_t‖ ≤ y_n, and λ·y = 0; λ against the
    impulse scale, y against the velocity scale (the size of g and of G λ)."""
    G, g, lam = (np.asarray(x, dtype=float) for x in (G, g, impulses))
    mu = np.broadcast_to(np.asarray(mu, dtype=float), (g.size // 3,))
    g_scale = max(float(np.abs(G).max()), 1e-300)
    v = G @ lam + g
    v_scale = max(float(np.abs(G).max() * np.abs(lam).max(initial=0.0)), float(np.abs(g).max(initial=0.0)), 1e-300)
    lam_scale = v_scale / g_scale
    L, V = (lam / lam_scale).reshape(-1, 3), (v / v_scale).reshape(-1, 3)
    worst = 0.0
    for i in range(len(L)):
        t, n = L[i, :2], L[i, 2]
        worst = _worst(worst, np.linalg.norm(t) - mu[i] * n, -n)
        y = V[i] + np.array([0.0, 0.0, mu[i] * np.linalg.norm(V[i, :2])])
        worst = _worst(worst, mu[i] * np.linalg.norm(y[:2]) - y[2], abs(L[i] @ y))
    return worst


# --- shapes -------------------------------------------------------------------------------------------------


SQUARE = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
DEGENERATE = [
    "needle capsule",
    "stub capsule",
    "needle cylinder",
    "disc",
    "needle cone",
    "flat cone",
    "sheet box",
    "needle box",
    "flat ellipsoid",
    "needle ellipsoid",
    "plate polygon",
    "sliver polygon",
    "many-faced polytope",
    "redundant polytope",
]


def degenerate_shape(kind: str, t: float, rng: np.random.Generator):
    """A valid shape of unit size with one aspect ratio t ≤ 1 (thin, flat, sharp), or a polytope with
    as many faces as allowed or with repeated faces."""
    from dcol.geom import MAX_FACES, Box, Capsule, Cone, Cylinder, Ellipsoid, Polygon, Polytope

    if kind == "needle capsule":
        return Capsule(t, 1.0)
    if kind == "stub capsule":
        return Capsule(1.0, t)
    if kind == "needle cylinder":
        return Cylinder(t, 1.0)
    if kind == "disc":
        return Cylinder(1.0, t)
    if kind == "needle cone":
        return Cone(1.0, np.arctan(t))
    if kind == "flat cone":
        return Cone(1.0, np.arctan(1.0 / t))
    if kind == "sheet box":
        return Box([1.0, t, 1.0])
    if kind == "needle box":
        return Box([1.0, t, t])
    if kind == "flat ellipsoid":
        return Ellipsoid(np.diag([1.0, 1.0, 1.0 / t**2]))
    if kind == "needle ellipsoid":
        return Ellipsoid(np.diag([1.0, 1.0 / t**2, 1.0 / t**2]))
    if kind == "plate polygon":
        return Polygon(SQUARE, np.ones(4), t)
    if kind == "sliver polygon":
        return Polygon(SQUARE, np.array([1.0, t, 1.0, t]), t)
    if kind == "many-faced polytope":
        normals = rng.normal(size=(MAX_FACES, 3))
        return Polytope(normals / np.linalg.norm(normals, axis=1, keepdims=True), np.ones(MAX_FACES))
    # Every face of a box three times, the copies tilted by t: nearly parallel, nearly redundant rows.
    normals = np.vstack([np.eye(3), -np.eye(3)])
    tilted = [normals + t * rng.normal(size=normals.shape) for _ in range(2)]
    A = np.vstack([normals, *tilted])
    return Polytope(A / np.linalg.norm(A, axis=1, keepdims=True), np.ones(len(A)))
