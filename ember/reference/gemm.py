"""GEMM references in float64, and bf16 buffers, for kernels_src/gemm_bf16.ember:

    forward:   y  = x w^T    (x [M, K] activations, w [N, K] the layer's weight)
    backward:  dx = dy w     dw = dy^T x
"""

from __future__ import annotations

import numpy as np

from ..ir import semantics as S
from ..ir.types import BF16


def bf16_values(x) -> np.ndarray:
    """x rounded to bf16 (ties to even), as float64 values."""
    return S.round_to(np.asarray(x, dtype=np.float64), BF16).astype(np.float64)


def bf16_bits(values) -> np.ndarray:
    """bf16 values -> the uint16 buffer a kernel reads."""
    return S.to_bits(np.asarray(values, dtype=np.float32), BF16).astype(np.uint16)


def linear(a, w) -> np.ndarray:
    """a [M, K] times w [N, K] transposed, in float64."""
    return np.asarray(a, dtype=np.float64) @ np.asarray(w, dtype=np.float64).T


def linear_backward(x, w, dy) -> tuple:
    """(dx, dw) of y = x w^T, in float64."""
    x, w, dy = (np.asarray(v, dtype=np.float64) for v in (x, w, dy))
    return dy @ w, dy.T @ x
