"""ember.model.layer's Decoder in the simulator at tiny sizes (no GPU): one decode step of
two layers through ember.ops - every check, plan and launch a GPU step makes - against the
f64 reference with the kernels' Q8_1 inputs and bf16 cache rows (ember.reference.layer),
and against the exact reference within what Q8_1 activations allow."""

import numpy as np
import pytest

import ember.ops as ops
from ember.model.gguf_weights import HParams
from ember.model.layer import Decoder, LayerWeights, dequantized, q8_inputs
from ember.reference.layer import cosine, layer_step

TINY = HParams("llama", 2, 256, 2, 1, 256, 1e-5, 10000.0, 16)


@pytest.mark.parametrize("activations", ["digits", "digits2", "q8_1"])
@pytest.mark.parametrize("kinds, launches", [({}, 9), ({"wv": "Q6_K", "w_down": "Q6_K"}, 10),
                                             ({"wq": "Q6_K"}, 11), ({"wo": "Q6_K", "w_down": "Q6_K"}, 9)])
def test_a_decode_step_in_the_simulator(kinds, launches, activations):
    """Q6_K projections read the activations the Q4_K ones do (ember.ops.q6k_gemv on them):
    a Q6_K v makes the QKV projection a GEMV of q and k together and v's (1 launch more), a
    Q6_K q three GEMVs (2 more), a Q6_K o or down projection none. With digits and Q4_K q
    and k, the projection (v's Q6_K rows too), RoPE and the KV append are one launch
    (q4k_qkv_rope_append: 1 less, 2 less with a Q6_K v). Two digits a value (digits2)
    launch as three."""
    if activations.startswith("digits") and "wq" not in kinds:
        launches -= 2 if "wv" in kinds else 1
    decode_step(kinds, launches, activations, np.array([0, 3], np.int32))


@pytest.mark.parametrize("activations", ["digits", "digits2", "q8_1"])
def test_a_batch_of_eight_on_the_tensor_core_gemvs(activations):
    """At 8 sequences the GEMVs and the SwiGLU pair run on int8 tensor cores (ember.ops'
    rule without tuned tables: IMMA_FROM_M), from the same activations."""
    assert ops.gemv.IMMA_FROM_M["gemv"] <= 8 and ops.gemv.IMMA_FROM_M["swiglu"] <= 8
    decode_step({}, 9, activations, np.array([0, 3, 1, 2, 3, 0, 2, 1], np.int32))


def test_a_decode_step_on_a_gpu_before_hopper():
    """On an sm_86 (an RTX 30 or A10: no clusters, 99 KB of shared memory a block) the same
    step runs: attention as the split pass and the merge kernel (the cluster kernels' file
    compiles for it - their sm_90 merge is not checked for the split pass), the GEMVs and the
    digits SwiGLU pair on DP4A at batch 8 (the tensor cores' rings do not fit), the QKV
    projection, RoPE and the KV append fused as on batch 1 and 2 of an H100: 9 launches."""
    decode_step({}, 9, "digits", np.array([0, 3, 1, 2, 3, 0, 2, 1], np.int32), arch="sm_86")


def test_a_q4_k_m_decode_step_on_a_turing_gpu():
    """On an sm_75 (a T4: no cp.async, no mma.sync of sm_80) a Q4_K_M layer's step runs too:
    the Q6_K GEMVs' staged copies (cp.async) are compiled only where a configuration takes
    them, the attention is attention_split and its merge, and the QKV projection with v's
    Q6_K rows, RoPE and the KV append are one launch: 9."""
    decode_step({"wv": "Q6_K", "w_down": "Q6_K"}, 9, "digits", np.array([0, 3], np.int32), arch="sm_75")


def test_a_q4_k_m_layer_keeps_within_ten_launches(monkeypatch):
    """Where the attention takes two launches (the split pass and the merge: here without
    clusters) and the tensor cores' GEMVs run (batch 8), a Q4_K_M layer's QKV projection apart
    (q's and k's GEMV, v's, rope_append) would make 11: it is the one launch of
    q4k_qkv_rope_append's one_launch instead (ember.model.layer's LAUNCH_BUDGET) - 9."""
    from ember.ops import attention
    monkeypatch.setattr(attention, "MAX_CLUSTER", 0)
    decode_step({"wv": "Q6_K", "w_down": "Q6_K"}, 9, "digits", np.array([0, 3, 1, 2, 3, 0, 2, 1], np.int32))


def decode_step(kinds, launches, activations, positions, arch="sm_90"):
    hp = TINY
    layers = [LayerWeights.random(hp, seed, device="sim", kinds=kinds) for seed in range(hp.layers)]
    batch, context = len(positions), 4
    with ops.on_simulator(arch):               # the buffers are made by the ops' own allocators
        dec = Decoder(layers, hp, batch, context, activations=activations)
    rng = np.random.default_rng(11)
    for layer in dec.layers:
        for c in (layer.k_cache, layer.v_cache):
            c[...] = rng.standard_normal(c.shape).astype(c.dtype)
    caches = [(layer.k_cache.astype(np.float64), layer.v_cache.astype(np.float64)) for layer in dec.layers]
    h0 = (rng.standard_normal((batch, hp.hidden)) * 2).astype(np.float32)
    dec.h[...] = h0
    dec.positions[...] = positions
    dec.lengths[...] = positions + 1
    with ops.on_simulator(arch):
        before = ops.plan.launched()
        dec.step()
        assert ops.plan.launched() - before == launches * hp.layers
    dec.finish()
    want, exact = h0.astype(np.float64), h0.astype(np.float64)
    for i, (w, (k, v)) in enumerate(zip(layers, caches)):
        args = (dequantized(w), None, k, v, positions, hp.heads, hp.kv_heads, hp.eps, hp.rope_base)
        want, kc, vc = layer_step(args[0], want, *args[2:], q8=q8_inputs(w, activations), kv_bf16=True)
        exact, _, _ = layer_step(args[0], exact, *args[2:])
        got_k, got_v = (c.astype(np.float64) for c in (dec.layers[i].k_cache, dec.layers[i].v_cache))
        assert cosine(got_k, kc) >= 1 - 1e-6 and cosine(got_v, vc) >= 1 - 1e-6
    # Agreement is about 1e-14, but where a value the reference quantises to Q8_1 on the host
    # (the attention's output for wo, and with q8_1 the normalised rows) lies on a rounding
    # boundary that the device's f32 value, an ulp away, falls on the other side of, one
    # quant a step off moves the output by about 2.4e-6: batch [0, 3] with a Q6_K q (other
    # positions: 1e-14). And the reference reads two digits a value (digits2) as the values
    # themselves: each is within 2^-16 of its block's largest, 0.8-1.2e-6 of the output here.
    bound = 1e-5 if "wq" in kinds else 3e-6 if activations == "digits2" else 1e-6
    assert cosine(dec.h, want) >= 1 - bound
    assert cosine(dec.h - h0, want - h0) >= 1 - 1e-5
    assert cosine(dec.h, exact) >= 1 - 1e-4       # two layers of 256 over 4 keys: the bf16 k, v rows weigh


def test_the_simulator_mode_ends_with_its_block():
    x = np.zeros((1, 256), np.float32)
    with ops.on_simulator():
        ops.quantize_q8_1(x)
    with pytest.raises(ops.ArgumentError, match="numpy array in host memory"):
        ops.quantize_q8_1(x)
