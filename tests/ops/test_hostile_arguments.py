"""Every ember.ops op called in the simulator with one argument at a time replaced by a
hostile value - wrong types, dtypes, shapes, strides, byte orders, read-only and
misaligned arrays, flags and numbers that are not what they look like: each call either
runs or raises ArgumentError naming that argument, never another error from inside Ember.
(This sweep found rope_append refusing read-only q, k and v with a LaunchError and `neox`
taking any truthy value, 2026-11-27.)"""

import inspect

import ml_dtypes
import numpy as np
import pytest

import ember.ops as ops
from ember.reference import q4k as Q
from ember.reference import q6k as Q6

BF16 = ml_dtypes.bfloat16


def _calls() -> dict:
    """Fresh arguments of a valid call of each op: (function, positional, keyword)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 256)).astype(np.float32)
    w, wu = (Q.model_like_q4k(rng, 16, 256, 256 ** -0.5) for _ in range(2))
    gamma = rng.uniform(0.5, 1.5, 256).astype(np.float32)
    q, k, v = (rng.standard_normal((2, h, 64)).astype(np.float32) for h in (4, 2, 2))
    kc, vc = np.zeros((2, 8, 2, 64), np.float32), np.zeros((2, 8, 2, 64), np.float32)
    pos = np.array([1, 3], np.int32)
    with ops.on_simulator():
        xq, xd = ops.quantize_q8_1(x), ops.quantize_digits(x)
    return {
        "rms_norm": (ops.rms_norm, [x.copy(), gamma, 1e-5], {"residual": x * 3, "out": np.zeros((2, 256), np.float32)}),
        "rope": (ops.rope, [q.copy(), k.copy(), pos, 1e4], {"neox": True}),
        "rope_append": (ops.rope_append, [q[:, None].copy(), k[:, None].copy(), v[:, None].copy(), kc, vc,
                                          pos[:, None].copy(), 1e4], {"neox": False, "q_out": np.zeros((2, 1, 4, 64),
                                                                                                      np.float32)}),
        "q4k_qkv_rope_append": (ops.q4k_qkv_rope_append,
                                [Q.model_like_q4k(rng, 8 * 16, 256, 256 ** -0.5), xd, np.zeros((2, 6, 2, 16), BF16),
                                 np.zeros((2, 6, 2, 16), BF16), np.array([[1], [4]], np.int32), 5e5],
                                {"q_out": np.zeros((2, 1, 4, 16), np.float32), "neox": True, "one_launch": True}),
        "q4k_qkv_rope_append with a Q6_K v": (
            ops.q4k_qkv_rope_append, [Q.model_like_q4k(rng, 6 * 16, 256, 256 ** -0.5), xd,
                                      np.zeros((2, 6, 2, 16), BF16), np.zeros((2, 6, 2, 16), BF16),
                                      np.array([[1], [4]], np.int32), 5e5],
            {"q_out": np.zeros((2, 1, 4, 16), np.float32), "wv": Q6.model_like_q6k(rng, 2 * 16, 256, 256 ** -0.5)}),
        "q4k_gemv": (ops.q4k_gemv, [w, x], {"out": np.zeros((2, 16), np.float32)}),
        "q6k_gemv": (ops.q6k_gemv, [Q6.model_like_q6k(rng, 16, 256, 256 ** -0.5), x],
                     {"out": np.zeros((2, 16), np.float32)}),
        "q6k_gemv on digits": (ops.q6k_gemv, [Q6.model_like_q6k(rng, 16, 256, 256 ** -0.5), xd],
                               {"out": np.zeros((2, 16), np.float32)}),
        "quantize_q8_1": (ops.quantize_q8_1, [x], {}),
        "quantize_digits": (ops.quantize_digits, [x], {}),
        "swiglu_q4k": (ops.swiglu_q4k, [w, wu, xq], {}),
        "decode_attention": (ops.decode_attention,
                             [rng.standard_normal((2, 1, 4, 64)).astype(np.float32),
                              rng.standard_normal((2, 8, 2, 64)).astype(np.float32),
                              rng.standard_normal((2, 8, 2, 64)).astype(np.float32), np.array([8, 3], np.int32)],
                             {"out": np.zeros((2, 1, 4, 64), np.float32), "max_length": 8}),
        "decode_attention_launches": (ops.decode_attention_launches,
                                      [rng.standard_normal((2, 1, 4, 64)).astype(np.float32),
                                       rng.standard_normal((2, 8, 2, 64)).astype(np.float32),
                                       rng.standard_normal((2, 8, 2, 64)).astype(np.float32),
                                       np.array([8, 3], np.int32)],
                                      {"out": np.zeros((2, 1, 4, 64), np.float32), "max_length": 8}),
        "add_rms_norm_q8": (ops.add_rms_norm_q8, [x.copy(), x * 2, gamma, 1e-5],
                            {"residual_out": np.zeros((2, 256), np.float32)}),
    }


def _hostile(a) -> list:
    values = [None, "s", 3, -1, 0, 2.5, float("nan"), float("inf"), True, [1, 2], (), object(), np.float64(1.0)]
    if not isinstance(a, np.ndarray):
        return values
    misaligned = np.empty(a.nbytes + 4, np.uint8)[4:].view(a.dtype).reshape(a.shape)
    misaligned[...] = a
    return values + [
        a[..., ::2], a[::-1], a.astype(np.float64), a.astype(np.float16), a.astype(BF16), a.astype(np.int32),
        a.reshape(-1), a[None], np.asfortranarray(a.T), a[:0], a.astype(a.dtype.newbyteorder(">")),
        a.view(np.uint8), np.array(a, dtype=object), np.broadcast_to(a, a.shape), a.tolist(),
        np.lib.stride_tricks.as_strided(a, a.shape, [0] * a.ndim), misaligned]


@pytest.mark.parametrize("op", sorted(_calls()))
def test_every_argument_either_runs_or_is_named(op):
    fn, args, kw = _calls()[op]
    with ops.on_simulator():
        fn(*args, **kw)                                 # the valid call runs
    names = list(inspect.signature(fn).parameters)
    slots = [(i, names[i]) for i in range(len(args))] + [(key, key) for key in kw]
    for slot, name in slots:
        original = args[slot] if isinstance(slot, int) else kw[slot]
        for value in _hostile(original):
            _, args2, kw2 = _calls()[op]                # fresh outputs each call
            if isinstance(slot, int):
                args2[slot] = value
            else:
                kw2[slot] = value
            try:
                with ops.on_simulator():
                    fn(*args2, **kw2)
            except ops.ArgumentError as e:
                assert e.argument == name or name in str(e), (op, name, str(e))
            except Exception as e:       # noqa: BLE001 - the point: nothing else may come out
                pytest.fail(f"{op}({name}={_describe(value)}): {type(e).__name__}: {e}")


def _describe(v) -> str:
    if isinstance(v, np.ndarray):
        return f"ndarray {v.dtype.str} {v.shape} strides {v.strides} writeable {v.flags.writeable}"
    return repr(v)[:60]
