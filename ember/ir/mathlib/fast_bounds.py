"""The error bounds docs/math.md documents for the fast (hardware) approximations, and a
check of results against them. Used by the GPU tests and the differential fuzzer."""

from __future__ import annotations

import numpy as np

# fn -> ((lo, hi) argument domain, error kind, bound)
FAST_BOUNDS = {
    "fast_sin": ((-np.pi, np.pi), "abs", 2.0 ** -20),
    "fast_cos": ((-np.pi, np.pi), "abs", 2.0 ** -20),
    "fast_exp2": ((-100.0, 100.0), "rel", 2.0 ** -21),
    "fast_log2": ((1e-30, 1e30), "abs_or_rel", 2.0 ** -21),
    "fast_rsqrt": ((1e-30, 1e30), "rel", 2.0 ** -21),
    "fast_sqrt": ((1e-30, 1e30), "rel", 2.0 ** -21),
    "fast_tanh": ((-10.0, 10.0), "abs", 2.0 ** -10),
    "fast_exp": ((-80.0, 80.0), "rel", 2.0 ** -16),
    "fast_log": ((1e-30, 1e30), "abs_or_rel", 2.0 ** -20),
    "fast_rcp": ((1e-30, 1e30), "rel", 2.0 ** -22),
}

EXACT = {"fast_sin": np.sin, "fast_cos": np.cos, "fast_exp2": np.exp2, "fast_log2": np.log2,
         "fast_rsqrt": lambda v: 1 / np.sqrt(v), "fast_sqrt": np.sqrt, "fast_tanh": np.tanh,
         "fast_exp": np.exp, "fast_log": np.log, "fast_rcp": lambda v: 1 / v}


def errors(fn: str, x: np.ndarray, got: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(in-domain mask, error of each result in the bound's kind, the bound)."""
    (lo, hi), kind, bound = FAST_BOUNDS[fn]
    x64 = x.astype(np.float64)
    inside = (x64 >= lo) & (x64 <= hi)
    with np.errstate(all="ignore"):
        ref = EXACT[fn](x64)
        err = np.abs(got.astype(np.float64) - ref)
        rel = err / np.maximum(np.abs(ref), 1e-300)
    measured = {"abs": err, "rel": rel, "abs_or_rel": np.minimum(err, rel)}[kind]
    return inside, np.where(inside, measured, 0.0), bound
