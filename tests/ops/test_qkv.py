"""ember.ops.q4k_qkv_rope_append: the QKV projection with RoPE and the KV append, in one
launch where it applies and in two otherwise (three where v's weights are Q6_K) - the same
bits either way (in the simulator, on fresh random data), and every bad argument named
before anything launches."""

import ml_dtypes
import numpy as np
import pytest

import ember.ops as ops
from ember.ops import qkv
from ember.reference import q4k as Q
from ember.reference import q6k as Q6
from ember.reference.rope import rope_append

from .test_args import CudaArray, raises

BF16 = ml_dtypes.bfloat16
HQ, HKV, D, K = 4, 2, 16, 256


def _step(batch, per_seq, digits, neox, fused, q6k_v=False, one_launch=False):
    """One call on fresh data of seed `batch`: (q_out, k_cache, v_cache) after it, the
    launches it took, the f32 projection it rotates (q4k_gemv's, and q6k_gemv's of v's
    weights with `q6k_v`), the positions and the caches before it."""
    rng = np.random.default_rng(40 + batch)
    n = (HQ + 2 * HKV) * D
    w = Q.model_like_q4k(rng, n - HKV * D if q6k_v else n, K, K ** -0.5)
    wv = Q6.model_like_q6k(rng, HKV * D, K, K ** -0.5) if q6k_v else None
    x = rng.standard_normal((batch * per_seq, K)).astype(np.float32)
    kc, vc = (rng.standard_normal((batch, 6, HKV, D)).astype(BF16) for _ in range(2))
    before = (kc.copy(), vc.copy())
    pos = np.stack([rng.permutation(6)[:per_seq] for _ in range(batch)]).astype(np.int32)   # each sequence's own
    q_out = np.full((batch, per_seq, HQ, D), np.nan, np.float32)
    qkv.FUSED[0] = fused
    try:
        with ops.on_simulator():
            xq = ops.quantize_digits(x) if digits else ops.quantize_q8_1(x)
            start = ops.plan.launched()
            ops.q4k_qkv_rope_append(w, xq, kc, vc, pos, 5e5, q_out=q_out, neox=neox, wv=wv, one_launch=one_launch)
            launches = ops.plan.launched() - start
            y = ops.q4k_gemv(w, xq)
            if q6k_v:
                y = np.concatenate([y, ops.q6k_gemv(wv, xq)], axis=1)
    finally:
        qkv.FUSED[0] = True
    return (q_out, kc, vc), launches, y, pos, before


def _parts(y, batch, per_seq):
    """q, k and v of the projection y, as rope_append takes them."""
    cuts = ((0, HQ * D), (HQ * D, (HQ + HKV) * D), ((HQ + HKV) * D, (HQ + 2 * HKV) * D))
    return [np.ascontiguousarray(y[:, a:b]).reshape(batch, per_seq, -1, D) for a, b in cuts]


@pytest.mark.parametrize("batch, per_seq, q6k_v", [(1, 1, False), (2, 2, False), (2, 1, True)])
def test_one_launch_gives_the_bits_of_the_gemv_and_rope_append(batch, per_seq, q6k_v):
    """q rotated into q_out, k rotated and v copied into the caches: the fused kernel's bits
    are the two launches' - three where v's weights are Q6_K (both checked against the f64
    rope of the projection)."""
    one, n1, y, pos, (kc0, vc0) = _step(batch, per_seq, True, False, True, q6k_v)
    two, n2, _, _, _ = _step(batch, per_seq, True, False, False, q6k_v)
    assert (n1, n2) == (1, 3 if q6k_v else 2)
    for a, b in zip(one, two):
        assert np.array_equal(a.view(np.uint8), b.view(np.uint8))
    _rotated_as_the_reference(one, y, pos, kc0, vc0, batch, per_seq)


@pytest.mark.parametrize("q6k_v", [False, True])
def test_one_launch_where_the_tensor_cores_would_run(q6k_v):
    """At 8 rows the tensor cores' GEMVs run (ember.ops' rule without tables) and the
    projection is apart; with one_launch it is the fused kernel's one launch (a decode step's
    launch budget: ember.model.layer), which rotates the projection as rope_append rotates
    the GEMVs' (f64 reference; the sums are the DP4A kernel's, not the tensor cores')."""
    one, n1, y, pos, (kc0, vc0) = _step(4, 2, True, False, True, q6k_v, one_launch=True)
    _, n2, _, _, _ = _step(4, 2, True, False, True, q6k_v)
    assert (n1, n2) == (1, 3 if q6k_v else 2)
    _rotated_as_the_reference(one, y, pos, kc0, vc0, 4, 2)


def _rotated_as_the_reference(one, y, pos, kc0, vc0, batch, per_seq):
    m = batch * per_seq
    q, k, v = (p.reshape(m, -1, D).astype(np.float64) for p in _parts(y, batch, per_seq))
    want = rope_append(q, k, v, kc0.astype(np.float64), vc0.astype(np.float64), pos.reshape(-1), per_seq, 5e5)
    assert np.abs(one[0].reshape(m, HQ, D) - want[0]).max() <= 1e-5 * np.abs(want[0]).max()
    for got, ref in zip(one[1:], want[1:]):
        assert np.abs(got.astype(np.float64) - ref).max() <= 2 ** -8 * np.abs(ref).max()
    assert not np.array_equal(one[1].view(np.uint16), kc0.view(np.uint16))


@pytest.mark.parametrize("digits, neox, q6k_v", [(False, False, False), (True, True, False), (False, False, True)])
def test_q8_1_activations_and_neox_pairs_take_the_two_launches(digits, neox, q6k_v):
    """The fused kernel reads digits and rotates adjacent pairs; otherwise the GEMV (GEMVs)
    and rope_append run, with the results of the ops called one by one."""
    got, launches, y, pos, (kc, vc) = _step(2, 1, digits, neox, True, q6k_v)
    assert launches == (3 if q6k_v else 2)
    q = np.zeros_like(got[0])
    with ops.on_simulator():
        ops.rope_append(*_parts(y, 2, 1), kc, vc, pos, 5e5, neox=neox, q_out=q)
    for a, b in zip(got, (q, kc, vc)):
        assert np.array_equal(a.view(np.uint8), b.view(np.uint8))


def test_q4k_qkv_rope_append_names_each_bad_argument():
    n = (32 + 2 * 8) * 128
    w = CudaArray((n, 16 * 144), "|u1")
    like = ops.args.view("test", "x", CudaArray((2, 4096), ptr=0x7f6000000000))
    x = ops.Q8Activations(CudaArray((3 * 2 * 1024,), "<u4", ptr=0x7f1000000000),
                          CudaArray((2 * 2 * 128,), "<u4", ptr=0x7f1800000000), 2, 4096, like, True, True)
    kc = CudaArray((2, 4096, 8, 128), "<f2", ptr=0x7f3000000000)
    vc = CudaArray((2, 4096, 8, 128), "<f2", ptr=0x7f4000000000)
    pos = CudaArray((2, 1), "<i4", ptr=0x7f5000000000)
    q_out = CudaArray((2, 1, 32, 128), "<f4", ptr=0x7f2000000000)
    f = ops.q4k_qkv_rope_append
    raises("x", "is a CudaArray", f, w, CudaArray((2, 4096)), kc, vc, pos, q_out=q_out)
    raises("q_out", "has dtype f16", f, w, x, kc, vc, pos, q_out=CudaArray((2, 1, 32, 128), "<f2", ptr=0x7f2000000000))
    raises("q_out", "head_dim 127", f, w, x, kc, vc, pos, q_out=CudaArray((2, 1, 32, 127), ptr=0x7f2000000000))
    raises("x", "q_out's batch x tokens is 4", f, w, x, kc, vc, pos,
           q_out=CudaArray((2, 2, 32, 128), ptr=0x7f2000000000))
    raises("k_cache", "does not divide q_out's 32", f, w, x, CudaArray((2, 4096, 5, 128), "<f2", ptr=0x7f3000000000),
           vc, pos, q_out=q_out)
    raises("v_cache", "has shape [2, 100, 8, 128]", f, w, x, kc, CudaArray((2, 100, 8, 128), "<f2", ptr=0x7f4000000000),
           pos, q_out=q_out)
    raises("w", "6144 are needed", f, CudaArray((n + 128, 16 * 144), "|u1"), x, kc, vc, pos, q_out=q_out)
    raises("w", "super-blocks", f, CudaArray((n, 15 * 144), "|u1"), x, kc, vc, pos, q_out=q_out)
    wqk, wv = CudaArray((n - 1024, 16 * 144), "|u1"), CudaArray((1024, 16 * 210), "|u1", ptr=0x7f0800000000)
    raises("w", "then k's 8, of 128: 5120 are needed", f, w, x, kc, vc, pos, q_out=q_out, wv=wv)
    raises("w", "6144 are needed (v's weights in Q6_K go in `wv`)", f, wqk, x, kc, vc, pos, q_out=q_out)
    raises("wv", "v's 8 heads of 128: 1024 are needed", f, wqk, x, kc, vc, pos, q_out=q_out,
           wv=CudaArray((1023, 16 * 210), "|u1", ptr=0x7f0800000000))
    raises("wv", "super-blocks", f, wqk, x, kc, vc, pos, q_out=q_out,
           wv=CudaArray((1024, 15 * 210), "|u1", ptr=0x7f0800000000))
    raises("q_out", "overlaps `wv`", f, wqk, x, kc, vc, pos, wv=wv,
           q_out=CudaArray((2, 1, 32, 128), ptr=0x7f0800000000))
    raises("positions", "has shape [2]", f, w, x, kc, vc, CudaArray((2,), "<i4", ptr=0x7f5000000000), q_out=q_out)
    raises("base", "finite and positive", f, w, x, kc, vc, pos, -1.0, q_out=q_out)
    raises("k_cache", "overlaps `q_out` in memory: q4k_qkv_rope_append writes both", f, w, x,
           CudaArray((2, 4096, 8, 128), "<f2", ptr=0x7f2000000100), vc, pos,
           q_out=q_out)
    raises("q_out", "overlaps `w`", f, w, x, kc, vc, pos, q_out=CudaArray((2, 1, 32, 128), ptr=0x7f0000000000))
    raises("v_cache", "not a multiple of 8 bytes", f, w, x, kc, CudaArray((2, 4096, 8, 128), "<f2", ptr=0x7f4000000004), pos,
           q_out=q_out)         # as rope_append (the two-launch path) takes it: not a LaunchError
    with pytest.raises(TypeError):
        f(w, x, kc, vc, pos)                      # q_out is required: it gives q's heads
