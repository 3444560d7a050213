"""ember.ops on a GPU before Hopper, in the simulator standing in for it (on_simulator(arch)):
each op chooses the kernels that compile and fit there (on an sm_86 99 KB of shared memory a
block and no clusters; an sm_75, without sm_80's cp.async and mma.sync, and an sm_120 are in
tests/model/test_layer.py and tests/ops/test_simulated.py) and gives what it gives on an
sm_90 within f32 rounding - never a compile error from inside an op (a sweep of this kind
found four: decode attention before Hopper and at head_dim 256, the tensor-core GEMVs at
M = 8 on 99 KB, Q6_K on Q8_1 on sm_75)."""

import ml_dtypes
import numpy as np
import pytest

import ember.ops as ops
from ember.reference import q4k as Q
from ember.reference import q6k as Q6

BF16 = ml_dtypes.bfloat16


def every_op(arch: str) -> dict:
    """Every op of a decode step at M = 8, where the kernels differ most by GPU (GEMVs on f32,
    Q8_1 and digits, the SwiGLU pair, Q6_K, the norm) and RoPE with the KV append and attention
    over bf16 and f16 caches (head_dim 128 and 256), on the same fresh random data for every
    arch."""
    rng = np.random.default_rng(31)
    k = 512
    w4, w4b = (Q.model_like_q4k(rng, 24, k, k ** -0.5) for _ in range(2))
    w6 = Q6.model_like_q6k(rng, 24, k, k ** -0.5)
    out = {}
    with ops.on_simulator(arch):
        for m in (8,):
            x = rng.standard_normal((m, k)).astype(np.float32)
            xq, xd = ops.quantize_q8_1(x), ops.quantize_digits(x)
            out[f"q4k f32 {m}"] = ops.q4k_gemv(w4, x)
            out[f"q4k q8_1 {m}"] = ops.q4k_gemv(w4, xq)
            out[f"q4k digits {m}"] = ops.q4k_gemv(w4, xd)
            out[f"swiglu q8_1 {m}"] = ops.swiglu_q4k(w4, w4b, xq)
            out[f"swiglu digits {m}"] = ops.swiglu_q4k(w4, w4b, xd)
            out[f"q6k q8_1 {m}"] = ops.q6k_gemv(w6, xq)
            out[f"q6k digits {m}"] = ops.q6k_gemv(w6, xd)
            res, g = rng.standard_normal((m, k)).astype(np.float32), rng.uniform(0.5, 1.5, k).astype(np.float32)
            y = ops.add_rms_norm_q8(x, res, g, 1e-5)
            out[f"add_rms_norm_q8 {m}"] = ops.q4k_gemv(w4, y)
        for dt, d in ((BF16, 128), (np.float16, 128), (BF16, 256)):
            q, kk, vv = (rng.standard_normal((2, 1, h, d)).astype(dt) for h in (4, 2, 2))
            kc, vc = (rng.standard_normal((2, 24, 2, d)).astype(dt) for _ in range(2))
            ops.rope_append(q, kk, vv, kc, vc, np.array([[5], [19]], np.int32), 10000.0)
            out[f"attention {np.dtype(dt).name} {d}"] = ops.decode_attention(q, kc, vc, np.array([6, 20], np.int32))
    return {name: np.asarray(v, np.float64) for name, v in out.items()}


@pytest.fixture(scope="module")
def on_sm_90():
    return every_op("sm_90")


@pytest.mark.parametrize("arch", ["sm_86"])           # sm_75: tests/model/test_layer.py (CI's time)
def test_every_op_runs_on_every_target_and_agrees_with_sm_90(arch, on_sm_90):
    got = every_op(arch)
    for name, want in on_sm_90.items():
        tol = (2 ** -7 if "bfloat16" in name else 2 ** -10 if "float16" in name else 1e-5) * np.abs(want).max()
        assert np.abs(got[name] - want).max() <= tol, name
