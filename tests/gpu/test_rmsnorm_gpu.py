"""RMSNorm on the GPU: the same bits as the simulator (the reduction order is fixed by
the kernel, and every operation is exactly specified), and within tolerance of f64."""

from pathlib import Path

import numpy as np
import pytest

import ember
from ember.reference.rmsnorm import rmsnorm as reference
from ember.runtime import load
from tests.kernels.test_kernels_in_sim import _io, _values

pytestmark = pytest.mark.gpu
SRC = Path(__file__).resolve().parents[2] / "kernels_src" / "rmsnorm.ember"


@pytest.mark.parametrize("t", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("block", [128, 256])
def test_rmsnorm_gpu_equals_sim(t, block):
    from ember.runtime import cuda
    rng = np.random.default_rng(block)
    rows, cols, eps = 24, 4096 + 96, 1e-6
    x = _io(t, rng.standard_normal((rows, cols)) * rng.uniform(0.01, 30, (rows, 1)))
    gamma = _io(t, rng.uniform(0.5, 1.5, cols))
    prog = ember.compile(SRC, arch=cuda.context().arch, defines={"BLOCK": block, "T": t})
    outs = {}
    for device in ("cuda", "sim"):
        y = np.zeros_like(x)
        load(prog, device=device).rmsnorm(x, gamma, y, cols, eps, grid=rows)
        outs[device] = y
    assert np.array_equal(outs["cuda"].view(np.uint8), outs["sim"].view(np.uint8))
    ref = reference(_values(t, x), _values(t, gamma), eps)
    err = np.abs(_values(t, outs["cuda"]) - ref) / np.maximum(np.abs(ref), 1.0)
    assert err.max() <= {"f32": 2e-6, "f16": 2 ** -10, "bf16": 2 ** -7}[t]
