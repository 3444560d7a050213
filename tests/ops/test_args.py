"""ember.ops checks every argument before it launches: each bad argument gets one
ArgumentError naming it and the rule - tried here without a GPU, on objects that present
device memory through the CUDA Array Interface as CuPy or Numba arrays do (the checks
never read the memory; a call that passed them all would need a GPU)."""

import numpy as np
import pytest

import ember.ops as ops
from ember.ops import ArgumentError


class CudaArray:
    """A device array as any CUDA library presents it (__cuda_array_interface__ v3)."""

    def __init__(self, shape, typestr="<f4", ptr=0x7f0000000000, strides=None, readonly=False):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr, "data": (ptr, readonly),
                                         "strides": strides, "version": 3}


def f32(*shape, **kw):
    return CudaArray(shape, "<f4", **kw)


def raises(argument, text, fn, *args, **kw):
    with pytest.raises(ArgumentError) as e:
        fn(*args, **kw)
    assert e.value.argument == argument and text in str(e.value), str(e.value)
    assert str(e.value).startswith(f"ember.ops.{fn.__name__}: `{argument}` ")


def test_rms_norm_names_each_bad_argument():
    x, w = f32(4, 4096), f32(4096, ptr=0x7f1000000000)
    raises("x", "not a device tensor", ops.rms_norm, np.zeros((4, 4096), np.float32), w)
    raises("x", "is a str", ops.rms_norm, "x", w)
    raises("x", "has dtype i32; rms_norm takes f32 or bf16 or f16", ops.rms_norm, CudaArray((4, 4096), "<i4"), w)
    raises("x", "has rank 3", ops.rms_norm, f32(2, 2, 4096), w)
    raises("x", "not contiguous", ops.rms_norm, f32(4, 4096, strides=(4, 16)), w)
    raises("x", "not a multiple of 16 bytes", ops.rms_norm, f32(4, 4096, ptr=0x7f0000000004), w)
    raises("x", "must be in [1, 1048576]", ops.rms_norm, f32(4, 0), w)
    raises("weight", "has dtype f16, but `x` is f32", ops.rms_norm, x, CudaArray((4096,), "<f2"))
    raises("weight", "has shape [4095]; expected [4096]", ops.rms_norm, x, f32(4095))
    for eps in (0.0, -1e-5, float("nan"), float("inf")):
        raises("eps", "finite and positive", ops.rms_norm, x, w, eps)
    raises("eps", "must be a number", ops.rms_norm, x, w, "small")
    # a string that reads as a number and a bool are not numbers either; an f32 is the
    # kernel's: 1e308 overflows it and 1e-50 becomes 0 in it
    raises("eps", "must be a number, not str", ops.rms_norm, x, w, "1e-5")
    raises("eps", "must be a number, not bool", ops.rms_norm, x, w, True)
    for eps in (1e308, 1e-50):
        raises("eps", "finite and positive as an f32", ops.rms_norm, x, w, eps)
    raises("residual", "has shape [4, 4095]", ops.rms_norm, x, w, residual=f32(4, 4095, ptr=0x7f2000000000))
    raises("residual", "overlaps `x`", ops.rms_norm, x, w, residual=f32(4, 4096, ptr=0x7f0000000010))
    raises("out", "has shape [4, 4]", ops.rms_norm, x, w, out=f32(4, 4, ptr=0x7f3000000000))
    raises("out", "overlaps `x`", ops.rms_norm, x, w, out=f32(4, 4096))


def test_rope_names_each_bad_argument():
    q = CudaArray((8, 32, 128), "<f4")
    k = CudaArray((8, 8, 128), "<f4", ptr=0x7f1000000000)
    pos = CudaArray((8,), "<i4", ptr=0x7f2000000000)
    raises("q", "has head_dim 127: it must be even", ops.rope, CudaArray((8, 32, 127), "<f4"), k, pos)
    raises("k", "has dtype f16, but `q` is f32", ops.rope, q, CudaArray((8, 8, 128), "<f2", ptr=0x7f1000000000), pos)
    raises("k", "does not divide q's 32", ops.rope, q, CudaArray((8, 6, 128), "<f4", ptr=0x7f1000000000), pos)
    raises("k", "expected [8, kv_heads, 128]", ops.rope, q, CudaArray((7, 8, 128), "<f4", ptr=0x7f1000000000), pos)
    raises("k", "overlaps `q`", ops.rope, q, CudaArray((8, 8, 128), "<f4", ptr=0x7f0000000100), pos)
    raises("positions", "has dtype i64", ops.rope, q, k, CudaArray((8,), "<i8", ptr=0x7f2000000000))
    raises("positions", "has shape [9]", ops.rope, q, k, CudaArray((9,), "<i4", ptr=0x7f2000000000))
    raises("positions", "not a device tensor", ops.rope, q, k, np.arange(8, dtype=np.int32))
    raises("q", "has rank 2", ops.rope, CudaArray((8, 4096), "<f4"), k, pos)
    raises("q", "not a multiple of 8 bytes", ops.rope, CudaArray((8, 32, 128), "<f4", ptr=0x7f0000000004), k, pos)
    for base in (0, -10000.0, float("nan")):
        raises("base", "finite and positive", ops.rope, q, k, pos, base)


def test_q4k_gemv_names_each_bad_argument():
    x = CudaArray((1, 4096), "<f4")
    w = CudaArray((14336, 4096 // 256 * 144), "|u1", ptr=0x7f1000000000)
    raises("x", "must be in [1, 8]", ops.q4k_gemv, w, CudaArray((9, 4096), "<f4"))
    raises("x", "a multiple of 256", ops.q4k_gemv, w, CudaArray((1, 4000), "<f4"))
    raises("x", "has dtype f16", ops.q4k_gemv, w, CudaArray((1, 4096), "<f2"))
    raises("w", "has dtype f32; q4k_gemv takes u8", ops.q4k_gemv, CudaArray((14336, 2304), "<f4", ptr=0x7f1000000000), x)
    raises("w", "expected [14336, 2304]", ops.q4k_gemv, CudaArray((14336, 2300), "|u1", ptr=0x7f1000000000), x)
    raises("w", "not a multiple of 16 bytes", ops.q4k_gemv, CudaArray((14336, 2304), "|u1", ptr=0x7f1000000008), x)
    raises("out", "has shape [1, 4096]", ops.q4k_gemv, w, x, out=CudaArray((1, 4096), "<f4", ptr=0x7f2000000000))
    raises("out", "overlaps `w`", ops.q4k_gemv, w, x, out=CudaArray((1, 14336), "<f4", ptr=0x7f1000000000))


def test_the_q8_and_q6k_ops_name_each_bad_argument():
    x = CudaArray((2, 4096), "<f4")
    raises("x", "must be in [1, 8]", ops.quantize_q8_1, CudaArray((9, 4096), "<f4"))
    raises("x", "a multiple of 256", ops.quantize_q8_1, CudaArray((2, 100), "<f4"))
    raises("x", "quantize_q8_1(x)", ops.swiglu_q4k, CudaArray((14336, 2304), "|u1"),
           CudaArray((14336, 2304), "|u1", ptr=0x7f1000000000), x)
    w6 = CudaArray((4096, 4096 // 256 * 210), "|u1", ptr=0x7f1000000000)
    raises("w", "16 Q6_K super-blocks of 210 bytes", ops.q6k_gemv, CudaArray((4096, 2304), "|u1", ptr=0x7f1000000000), x)
    raises("w", "not a multiple of 2 bytes", ops.q6k_gemv, CudaArray(w6.__cuda_array_interface__["shape"], "|u1",
                                                                     ptr=0x7f1000000001), x)
    raises("out", "has shape [2, 5]", ops.q6k_gemv, w6, x, out=CudaArray((2, 5), "<f4", ptr=0x7f2000000000))


def test_decode_attention_names_each_bad_argument():
    q = CudaArray((2, 1, 32, 128), "<f4")
    kc = CudaArray((2, 4096, 8, 128), "<f4", ptr=0x7f1000000000)
    vc = CudaArray((2, 4096, 8, 128), "<f4", ptr=0x7f2000000000)
    lengths = CudaArray((2,), "<i4", ptr=0x7f3000000000)
    f = ops.decode_attention
    raises("q", "has head_dim 100", f, CudaArray((2, 1, 32, 100), "<f4"), kc, vc, lengths)
    raises("q", "must be in [1, 8]", f, CudaArray((2, 9, 32, 128), "<f4"), kc, vc, lengths)
    raises("k_cache", "does not divide q's 32 heads", f, q, CudaArray((2, 4096, 6, 128), "<f4", ptr=0x7f1000000000),
           CudaArray((2, 4096, 6, 128), "<f4", ptr=0x7f2000000000), lengths)
    raises("k_cache", "has dtype f32, but `q` is f16: q is the cache's dtype or f32", f,
           CudaArray((2, 1, 32, 128), "<f2"), kc, vc, lengths)
    raises("v_cache", "has dtype f32, but `k_cache` is f16", f, q,
           CudaArray((2, 4096, 8, 128), "<f2", ptr=0x7f1000000000), vc, lengths)
    raises("out", "has dtype i32", f, q, kc, vc, lengths, out=CudaArray((2, 1, 32, 128), "<i4", ptr=0x7f4000000000))
    q8 = ops.Q8Activations(CudaArray((2 * 4096 // 4,), "<u4", ptr=0x7f5000000000),
                           CudaArray((2 * 4096 // 32,), "<u4", ptr=0x7f6000000000), 2, 4096, None, True)
    raises("out", "holds 2 rows of 4096 values; 4 of 4096 are made", f, CudaArray((4, 1, 32, 128), "<f4"),
           CudaArray((4, 4096, 8, 128), "<f4", ptr=0x7f1000000000),
           CudaArray((4, 4096, 8, 128), "<f4", ptr=0x7f2000000000), CudaArray((4,), "<i4", ptr=0x7f3000000000),
           out=q8)
    raises("out.aq", "overlaps `k_cache`", f, q, kc, vc, lengths,
           out=ops.Q8Activations(CudaArray((2 * 4096 // 4,), "<u4", ptr=0x7f1000000000),
                                 CudaArray((2 * 4096 // 32,), "<u4", ptr=0x7f6000000000), 2, 4096, None, True))
    raises("v_cache", "they must match", f, q, kc, CudaArray((2, 4000, 8, 128), "<f4", ptr=0x7f2000000000), lengths)
    raises("k_cache", "expected [2, cache_len, kv_heads, 128]", f, q,
           CudaArray((1, 4096, 8, 128), "<f4", ptr=0x7f1000000000), vc, lengths)
    raises("lengths", "has dtype i64", f, q, kc, vc, CudaArray((2,), "<i8", ptr=0x7f3000000000))
    raises("lengths", "has shape [3]", f, q, kc, vc, CudaArray((3,), "<i4", ptr=0x7f3000000000))
    raises("max_length", "must be in [1, 4096]", f, q, kc, vc, lengths, max_length=5000)
    raises("max_length", "must be an int", f, q, kc, vc, lengths, max_length=4096.0)
    raises("k_cache", "query rows per KV head", f, CudaArray((2, 8, 64, 128), "<f4"),
           CudaArray((2, 4096, 8, 128), "<f4", ptr=0x7f1000000000), vc, lengths)


def test_rope_append_names_each_bad_argument():
    q = CudaArray((2, 1, 32, 128), "<f4")
    k = CudaArray((2, 1, 8, 128), "<f4", ptr=0x7f1000000000)
    v = CudaArray((2, 1, 8, 128), "<f4", ptr=0x7f2000000000)
    kc = CudaArray((2, 4096, 8, 128), "<f4", ptr=0x7f3000000000)
    vc = CudaArray((2, 4096, 8, 128), "<f4", ptr=0x7f4000000000)
    pos = CudaArray((2, 1), "<i4", ptr=0x7f5000000000)
    f = ops.rope_append
    raises("k", "expected [2, 1, kv_heads, 128]", f, q, CudaArray((2, 2, 8, 128), "<f4", ptr=0x7f1000000000),
           v, kc, vc, pos)
    raises("v", "has shape [2, 1, 4, 128]", f, q, k, CudaArray((2, 1, 4, 128), "<f4", ptr=0x7f2000000000), kc, vc, pos)
    raises("k_cache", "expected [2, cache_len, 8, 128]", f, q, k, v,
           CudaArray((2, 4096, 4, 128), "<f4", ptr=0x7f3000000000), vc, pos)
    raises("v_cache", "has shape [2, 100, 8, 128]", f, q, k, v, kc,
           CudaArray((2, 100, 8, 128), "<f4", ptr=0x7f4000000000), pos)
    raises("k_cache", "overlaps `k`", f, q, k, v, CudaArray((2, 4096, 8, 128), "<f4", ptr=0x7f1000000000), vc, pos)
    raises("positions", "has shape [2]", f, q, k, v, kc, vc, CudaArray((2,), "<i4", ptr=0x7f5000000000))
    raises("base", "finite and positive", f, q, k, v, kc, vc, pos, -1.0)


# Values a careless or hostile caller passes for a float parameter: each is refused naming
# it ("1e-5" and True were taken until 2026-11-27; 1e308 reached the launch, 1e-50 would
# have been 0 as the kernels' f32)
HOSTILE_NUMBERS = ["1e-5", b"1", True, np.True_, None, [1e-5], complex(1, 0), 1e308, -1e308, 1e-50,
                   float("nan"), float("-inf"), np.float64("inf"), 0, -3]


def _rope_arguments() -> tuple:
    """Valid arguments (fake device arrays) of rope (q, k, positions), rope_append (q, k, v,
    caches, positions, as qa .. posa) and q4k_qkv_rope_append (w, digit activations)."""
    q, k, pos = f32(8, 32, 128), f32(8, 8, 128, ptr=0x7f1000000000), CudaArray((8,), "<i4", ptr=0x7f2000000000)
    qa, ka, va = f32(2, 1, 32, 128), f32(2, 1, 8, 128, ptr=0x7f1000000000), f32(2, 1, 8, 128, ptr=0x7f2000000000)
    kc, vc = f32(2, 4096, 8, 128, ptr=0x7f3000000000), f32(2, 4096, 8, 128, ptr=0x7f4000000000)
    posa = CudaArray((2, 1), "<i4", ptr=0x7f5000000000)
    wqkv = CudaArray(((32 + 2 * 8) * 128, 16 * 144), "|u1", ptr=0x7f6000000000)
    xd = ops.Q8Activations(CudaArray((3 * 2 * 1024,), "<u4", ptr=0x7f7000000000),
                           CudaArray((2 * 2 * 128,), "<u4", ptr=0x7f7800000000), 2, 4096,
                           ops.args.view("test", "x", f32(2, 4096, ptr=0x7f8000000000)), True, True)
    return q, k, pos, qa, ka, va, kc, vc, posa, wqkv, xd


@pytest.mark.parametrize("value", HOSTILE_NUMBERS, ids=repr)
def test_every_float_parameter_refuses_hostile_values(value):
    x, w = f32(4, 4096), f32(4096, ptr=0x7f1000000000)
    q, k, pos, qa, ka, va, kc, vc, posa, wqkv, xd = _rope_arguments()
    for argument, fn, args, kw in (("eps", ops.rms_norm, (x, w, value), {}), ("base", ops.rope, (q, k, pos, value), {}),
                                   ("base", ops.rope_append, (qa, ka, va, kc, vc, posa, value), {}),
                                   ("base", ops.q4k_qkv_rope_append, (wqkv, xd, kc, vc, posa, value), {"q_out": qa})):
        with pytest.raises(ArgumentError) as e:
            fn(*args, **kw)
        assert e.value.argument == argument, str(e.value)


def test_rope_append_reads_views_of_one_projection_and_names_bad_strides():
    """q, k and v as the parts of one projection's rows [B, (HQ + 2 HKV) * D]: tokens a
    stride apart, each token's heads dense; q rotated into its own q_out."""
    d, hq, hkv, b = 128, 32, 8, 2
    row = (hq + 2 * hkv) * d
    base = 0x7f0000000000

    def part(first, heads, strides=None, ptr=None):
        return CudaArray((b, 1, heads, d), "<f4", ptr=ptr or base + first * d * 4,
                         strides=strides or (row * 4, row * 4, d * 4, 4))
    q, k, v = part(0, hq), part(hq, hkv), part(hq + hkv, hkv)
    kc = CudaArray((b, 4096, hkv, d), "<f2", ptr=0x7f3000000000)
    vc = CudaArray((b, 4096, hkv, d), "<f2", ptr=0x7f4000000000)
    pos = CudaArray((b, 1), "<i4", ptr=0x7f5000000000)
    q_out = CudaArray((b, 1, hq, d), "<f4", ptr=0x7f6000000000)
    f = ops.rope_append
    raises("q", "each token's [heads, head_dim] must be dense", f, part(0, hq, (row * 4, row * 4, d * 4, 8)), k, v,
           kc, vc, pos, q_out=q_out)
    raises("k", "the batch stride must be tokens x the token stride", f,
           CudaArray((b, 2, hq, d), "<f4", ptr=base, strides=(row * 8, row * 4, d * 4, 4)),
           CudaArray((b, 2, hkv, d), "<f4", ptr=base + hq * d * 4, strides=(row * 4, row * 8, d * 4, 4)),
           CudaArray((b, 2, hkv, d), "<f4", ptr=base + (hq + hkv) * d * 4, strides=(row * 8, row * 4, d * 4, 4)),
           kc, vc, CudaArray((b, 2), "<i4", ptr=0x7f5000000000), q_out=CudaArray((b, 2, hq, d), "<f4", ptr=0x7f6000000000))
    raises("q", "is rotated in place, so it must be contiguous", f, q, k, v, kc, vc, pos)
    raises("q_out", "has dtype f16; rope_append takes f32", f, q, k, v, kc, vc, pos,
           q_out=CudaArray((b, 1, hq, d), "<f2", ptr=0x7f6000000000))
    raises("q_out", "overlaps `k`", f, q, k, v, kc, vc, pos, q_out=CudaArray((b, 1, hq, d), "<f4", ptr=base))
    raises("k_cache", "the new rows are the cache's dtype or f32", f, *(CudaArray(x.__cuda_array_interface__["shape"],
           "<f2", ptr=x.__cuda_array_interface__["data"][0]) for x in (q, k, v)), CudaArray((b, 4096, hkv, d), "<f4",
           ptr=0x7f3000000000), vc, pos)
    raises("k", "token stride of 1000 elements; at least 1024", f, q,
           CudaArray((b, 1, hkv, d), "<f4", ptr=0x7f1000000000, strides=(4000, 4000, d * 4, 4)), v, kc, vc, pos,
           q_out=q_out)


def test_add_rms_norm_q8_names_each_bad_argument():
    x, r = f32(2, 4096), f32(2, 4096, ptr=0x7f1000000000)
    w = f32(4096, ptr=0x7f2000000000)
    f = ops.add_rms_norm_q8
    raises("residual", "is None", f, x, None, w)
    raises("x", "takes f32", f, CudaArray((2, 4096), "<f2"), CudaArray((2, 4096), "<f2", ptr=0x7f1000000000),
           CudaArray((4096,), "<f2", ptr=0x7f2000000000))
    raises("x", "must be in [1, 8]", f, f32(9, 4096), f32(9, 4096, ptr=0x7f1000000000), w)
    raises("x", "a multiple of 256", f, f32(2, 4000), f32(2, 4000, ptr=0x7f1000000000), f32(4000, ptr=0x7f2000000000))
    raises("residual", "overlaps `x`", f, x, f32(2, 4096, ptr=0x7f0000000100), w)
    raises("eps", "finite and positive", f, x, r, w, 0.0)
    q8 = ops.Q8Activations(CudaArray((2 * 4096 // 4,), "<u4", ptr=0x7f5000000000),
                           CudaArray((2 * 4096 // 32,), "<u4", ptr=0x7f6000000000), 2, 4096, None, True)
    raises("out.ads", "has shape [100]", f, x, r, w, out=ops.Q8Activations(q8.aq, CudaArray((100,), "<u4",
           ptr=0x7f6000000000), 2, 4096, None, True))
    raises("out.aq", "overlaps `x`", f, x, r, w, out=ops.Q8Activations(CudaArray((2 * 4096 // 4,), "<u4"), q8.ads,
                                                                       2, 4096, None, True))
    raises("residual_out", "has shape [2, 4095]", f, x, r, w, out=q8,
           residual_out=f32(2, 4095, ptr=0x7f3000000000))
    raises("residual_out", "overlaps `residual`", f, x, r, w, out=q8, residual_out=f32(2, 4096, ptr=0x7f1000000100))


def test_activations_made_by_hand_are_checked_before_a_gemv_reads_them():
    """Q8Activations built from buffers too small for their m and k (by hand, not by
    Q8Activations.empty): refused naming the buffer, before the GEMV would read past it."""
    w = CudaArray((4096, 16 * 144), "|u1", ptr=0x7f6000000000)
    like = ops.args.view("test", "x", f32(1, 4096, ptr=0x7f8000000000))
    small = ops.Q8Activations(CudaArray((512,), "<u4", ptr=0x7f7000000000),
                              CudaArray((128,), "<u4", ptr=0x7f7800000000), 1, 4096, like, True)
    out = f32(1, 4096, ptr=0x7fa000000000)
    raises("x.aq", "has shape [512]; expected [1024]", ops.q4k_gemv, w, small, out=out)
    wrong = ops.Q8Activations(CudaArray((1024,), "<f4", ptr=0x7f7000000000),
                              CudaArray((128,), "<u4", ptr=0x7f7800000000), 1, 4096, like, True)
    raises("x.aq", "has dtype f32", ops.swiglu_q4k, w, CudaArray((4096, 16 * 144), "|u1", ptr=0x7f9000000000), wrong,
           out=out)


class _AnObject:
    def __repr__(self):             # a stable test id (object()'s repr holds its address: xdist's
        return "an object"          # workers would collect different tests)


HOSTILE_FLAGS = ["false", "no", 0, 1, None, [], [False], 1.0, np.int32(1), _AnObject()]


@pytest.mark.parametrize("value", HOSTILE_FLAGS, ids=repr)
def test_every_flag_refuses_what_is_not_a_bool(value):
    """neox="false" is true to Python and chose the NeoX pairing silently (until 2026-11-27,
    found calling the ops with hostile arguments); 0 and 1 are refused too, as numbers are for
    flags of a typed API. np.bool_ passes (test below)."""
    q, k, pos, qa, ka, va, kc, vc, posa, wqkv, xd = _rope_arguments()
    raises("neox", "must be True or False", ops.rope, q, k, pos, neox=value)
    raises("neox", "must be True or False", ops.rope_append, qa, ka, va, kc, vc, posa, neox=value)
    raises("neox", "must be True or False", ops.q4k_qkv_rope_append, wqkv, xd, kc, vc, posa, q_out=qa, neox=value)
    raises("one_launch", "must be True or False", ops.q4k_qkv_rope_append, wqkv, xd, kc, vc, posa, q_out=qa,
           one_launch=value)


def test_a_flag_takes_numpy_bools():
    assert ops.args.flag("op", "neox", np.True_) is True and ops.args.flag("op", "neox", False) is False


def test_every_written_argument_refuses_read_only_memory():
    """An export marked read-only (the CUDA Array Interface's flag, DLPack's, a numpy array's
    in the simulator) is refused where the op writes it, naming the argument -
    until 2026-11-27 add_rms_norm_q8 reached the launch, whose error named the kernel's
    parameter `r`; the arguments an op only reads may be read-only."""
    def ro(*shape, typestr="<f4", ptr):
        return CudaArray(shape, typestr, ptr=ptr, readonly=True)
    x, w = f32(2, 4096), f32(4096, ptr=0x7f1000000000)
    raises("out", "is read-only: rms_norm writes it", ops.rms_norm, x, w, out=ro(2, 4096, ptr=0x7f2000000000))
    raises("residual", "is read-only", ops.rms_norm, x, w, residual=ro(2, 4096, ptr=0x7f2000000000))
    raises("residual", "is read-only", ops.add_rms_norm_q8, x, ro(2, 4096, ptr=0x7f2000000000), w)
    raises("q", "is read-only: rope writes it", ops.rope, ro(8, 32, 128, ptr=0x7f0000000000),
           f32(8, 8, 128, ptr=0x7f1000000000), CudaArray((8,), "<i4", ptr=0x7f2000000000))
    raises("k", "is read-only", ops.rope, f32(8, 32, 128), ro(8, 8, 128, ptr=0x7f1000000000),
           CudaArray((8,), "<i4", ptr=0x7f2000000000))
    q, k, v = f32(2, 1, 32, 128), f32(2, 1, 8, 128, ptr=0x7f1000000000), f32(2, 1, 8, 128, ptr=0x7f2000000000)
    kc, vc = f32(2, 4096, 8, 128, ptr=0x7f3000000000), f32(2, 4096, 8, 128, ptr=0x7f4000000000)
    pos = CudaArray((2, 1), "<i4", ptr=0x7f5000000000)
    raises("k_cache", "is read-only: rope_append writes it", ops.rope_append, q, k, v,
           ro(2, 4096, 8, 128, ptr=0x7f3000000000), vc, pos)
    raises("v_cache", "is read-only", ops.rope_append, q, k, v, kc, ro(2, 4096, 8, 128, ptr=0x7f4000000000), pos)
    raises("q", "is read-only", ops.rope_append, ro(2, 1, 32, 128, ptr=0x7f0000000000), k, v, kc, vc, pos)
    raises("q_out", "is read-only", ops.rope_append, q, k, v, kc, vc, pos, q_out=ro(2, 1, 32, 128, ptr=0x7f6000000000))
    raises("out", "is read-only: decode_attention writes it", ops.decode_attention, q, kc, vc,
           CudaArray((2,), "<i4", ptr=0x7f5000000000), out=ro(2, 1, 32, 128, ptr=0x7f6000000000))
    raises("out", "is read-only: q4k_gemv writes it", ops.q4k_gemv, CudaArray((8, 16 * 144), "|u1"),
           f32(1, 4096, ptr=0x7f1000000000), out=ro(1, 8, ptr=0x7f2000000000))
