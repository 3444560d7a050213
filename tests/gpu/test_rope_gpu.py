"""RoPE on the GPU: every variant of kernels_src/rope.ember against the f64 reference,
and the runtime's launch checks on a real device."""

from pathlib import Path

import numpy as np
import pytest

import ember
from ember.reference.rope import parity, rope as reference

pytestmark = pytest.mark.gpu
ROPE = Path(__file__).resolve().parents[2] / "kernels_src" / "rope.ember"


def _module(**defines):
    from ember.runtime import cuda
    return cuda.load(ember.compile(ROPE, arch=cuda.context().arch, defines=defines))


@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("neox", [False, True])
@pytest.mark.parametrize("backward", [False, True])
@pytest.mark.parametrize("fast", [False, True])
@pytest.mark.parametrize("hpt, pairs", [(1, 1), (4, 1), (8, 1), (8, 2), (16, 4)])
def test_rope_variants_match_reference(head_dim, neox, backward, fast, hpt, pairs):
    from ember.runtime.cuda import DeviceArray
    mod = _module(HEAD_DIM=head_dim, NEOX=neox, BACKWARD=backward, FAST=fast, HEADS_PER_THREAD=hpt, PAIRS=pairs)
    rng = np.random.default_rng(head_dim + 2 * neox + 4 * backward + 8 * fast + 16 * hpt + 512 * pairs)
    tokens, heads, base = 37, 6, 1e6            # 6 heads: the last head block is partial
    x = rng.standard_normal((tokens, heads, head_dim)).astype(np.float32)
    pos = rng.integers(0, 32768, tokens).astype(np.int32)
    ref = reference(x, pos, base, neox=neox, backward=backward)
    grid = ((heads + hpt - 1) // hpt, tokens)
    # in place
    dx = DeviceArray.from_host(x)
    mod.rope(dx, DeviceArray.from_host(pos), heads, base, grid=grid)
    got_in = dx.to_host()
    # out of place (numpy arguments: copied in and, for y, back out)
    y = np.zeros_like(x)
    mod.rope_out(x, y, pos, heads, base, grid=grid)
    for got in (got_in, y):
        p = parity(got, ref)
        assert p["cosine"] >= 0.99999
        if fast:
            assert p["max_abs_diff"] < 5e-2      # f32 angle + approximations: ~1e-3 at 32k
        else:
            assert p["max_abs_diff"] <= 1e-5


def test_launch_checks_on_device():
    from ember.runtime import LaunchError
    from ember.runtime.cuda import DeviceArray
    mod = _module(HEAD_DIM=128)
    x = DeviceArray((2, 4, 128), np.float32)
    pos = DeviceArray((2,), np.int32)
    with pytest.raises(LaunchError, match="points to `f32`"):
        mod.rope(DeviceArray((2, 4, 128), np.float64), pos, 4, 1e6, grid=(1, 2))
    with pytest.raises(LaunchError, match="block"):
        mod.rope(x, pos, 4, 1e6, grid=(1, 2), block=(32, 1, 1))
    with pytest.raises(LaunchError, match="out of range"):
        mod.rope(x, pos, -1, 1e6, grid=(1, 2))
    with pytest.raises(LaunchError, match="takes 4 arguments"):
        mod.rope(x, pos, 4, grid=(1, 2))
    with pytest.raises(LaunchError, match="overlaps"):
        mod.rope_out(x, x, pos, 4, 1e6, grid=(1, 2))


def test_misaligned_buffer_is_rejected():
    from ember.runtime import LaunchError
    cupy = pytest.importorskip("cupy")
    mod = _module(HEAD_DIM=128)
    base = cupy.zeros(2 * 4 * 128 + 1, dtype=cupy.float32)
    x = base[1:]                                  # 4-byte aligned, the kernel declares align(8)
    pos = cupy.zeros(2, dtype=cupy.int32)
    with pytest.raises(LaunchError, match="aligned"):
        mod.rope(x, pos, 4, 1e6, grid=(1, 2))


def test_cuda_array_interface_buffers_are_borrowed():
    cupy = pytest.importorskip("cupy")
    mod = _module(HEAD_DIM=128)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 4, 128)).astype(np.float32)
    pos = np.array([5, 600, 32000], dtype=np.int32)
    dx = cupy.asarray(x)
    mod.rope(dx, cupy.asarray(pos), 4, 1e4, grid=(1, 3))
    assert parity(cupy.asnumpy(dx), reference(x, pos, 1e4))["max_abs_diff"] <= 1e-5


@pytest.mark.parametrize("t", ["f16", "bf16"])
@pytest.mark.parametrize("neox", [False, True])
def test_rope_half_precision_io_gpu_equals_sim(t, neox):
    """f16/bf16 data (-D T=...): the GPU gives the simulator's bits, within one rounding to T
    of the f64 reference."""
    from ember.runtime import cuda, load
    from tests.kernels.test_kernels_in_sim import _io, _values
    rng = np.random.default_rng(21 + neox)
    tokens, heads = 9, 8
    x = _io(t, rng.standard_normal((tokens, heads, 128)))
    pos = rng.integers(0, 32768, tokens).astype(np.int32)
    prog = ember.compile(ROPE, arch=cuda.context().arch, defines={"HEAD_DIM": 128, "NEOX": neox, "T": t})
    outs = {}
    for device in ("cuda", "sim"):
        y = np.zeros_like(x)
        load(prog, device=device).rope_out(x, y, pos, heads, 1e6, grid=(2, tokens))
        outs[device] = y
    assert np.array_equal(outs["cuda"], outs["sim"])
    ref = reference(_values(t, x), pos, 1e6, neox=neox)
    err = np.abs(_values(t, outs["cuda"]) - ref) / np.maximum(np.abs(ref), 1.0)
    assert err.max() <= {"f16": 2 ** -10, "bf16": 2 ** -7}[t]
