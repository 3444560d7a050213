"""RMSNorm in float64, as defined in kernels_src/rmsnorm.ember:

    y[r, i] = x[r, i] / sqrt(mean_i(x[r, i]^2) + eps) * gamma[i]
"""

from __future__ import annotations

import numpy as np


def rmsnorm(x, gamma, eps: float) -> np.ndarray:
    """x: [rows, cols]; gamma: [cols]. Returns float64."""
    x = np.asarray(x, dtype=np.float64)
    ms = np.mean(x * x, axis=-1, keepdims=True)
    return x / np.sqrt(ms + np.float64(eps)) * np.asarray(gamma, dtype=np.float64)
