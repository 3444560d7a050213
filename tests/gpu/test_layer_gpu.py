"""ember.model.layer on the GPU: a Llama-3-8B-shaped decoder layer (Q4_K weights, and Q6_K
where a Q4_K_M file has them) against the f64 reference layer on the same dequantised
weights, fresh random inputs and a bf16 cache already holding a context; eager and as one
CUDA graph (the same bits), at most 10 launches a Q4_K layer.

Two references: the exact one (every product in f64), which the Q8_1 activations of the
DP4A GEMVs keep at a cosine of about 0.99998 (the FFN's two quantised inputs most of it:
bench/results/layer_ab.md), and one whose Q4_K projections read their input quantised to
Q8_1 as the kernels do, against which only the kernels' own f32 and bf16 rounding is left."""

import numpy as np
import pytest

from ember.model.gguf_weights import HParams
from ember.reference.layer import cosine, layer_step

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

LLAMA3_8B = HParams("llama", 1, 4096, 32, 8, 14336, 1e-5, 500000.0, 8192)


def run_layer(kinds, batch, context, positions, seed, activations="digits"):
    from ember import ops
    from ember.model.layer import Decoder, LayerWeights, dequantized, q8_inputs
    hp = LLAMA3_8B
    w = LayerWeights.random(hp, seed, kinds=kinds)
    dec = Decoder([w], hp, batch, context, activations=activations)
    g = torch.Generator(device="cuda").manual_seed(seed + 1)
    layer = dec.layers[0]
    for c in (layer.k_cache, layer.v_cache):              # a context already there
        c.copy_(torch.randn(c.shape, device="cuda", generator=g).to(c.dtype))
    h0 = torch.randn(batch, hp.hidden, device="cuda", generator=g) * 2
    k0, v0 = layer.k_cache.clone(), layer.v_cache.clone()

    def reset():
        dec.h.copy_(h0)
        dec.delta.zero_()
        layer.k_cache.copy_(k0)
        layer.v_cache.copy_(v0)
        dec.positions.copy_(torch.tensor(positions, dtype=torch.int32))
        dec.lengths.copy_(dec.positions + 1)
    reset()
    before = ops.plan.launched()
    dec.step()
    launches = ops.plan.launched() - before
    dec.finish()
    torch.cuda.synchronize()
    eager = (dec.h.clone(), layer.k_cache.clone(), layer.v_cache.clone())
    graph = dec.capture()
    reset()
    graph.replay()
    dec.finish()
    torch.cuda.synchronize()
    replayed = (dec.h.clone(), layer.k_cache.clone(), layer.v_cache.clone())
    args = (dequantized(w), h0.cpu().double().numpy(), k0.cpu().double().numpy(), v0.cpu().double().numpy(),
            np.array(positions), hp.heads, hp.kv_heads, hp.eps, hp.rope_base)
    ref, ref_q8 = layer_step(*args), layer_step(*args, q8=q8_inputs(w, activations), kv_bf16=True)
    return eager, replayed, (ref, ref_q8), launches, h0.cpu().double().numpy()


def new_rows(cache, positions):
    return np.stack([cache[b, p] for b, p in enumerate(positions)])


def check_against_the_references(eager, refs, h0, positions, exact: float, kernels: float):
    h, kc, vc = (x.cpu().double().numpy() for x in eager)
    for ref, floor in zip(refs, (exact, kernels)):
        assert cosine(h, ref[0]) >= 1 - floor                          # the layer's output
        assert cosine(h - h0, ref[0] - h0) >= 1 - 10 * floor           # what the layer added to it
        for got, want in ((kc, ref[1]), (vc, ref[2])):                 # the cache rows written
            assert cosine(new_rows(got, positions), new_rows(want, positions)) >= 1 - floor
    for got, want in ((kc, refs[0][1]), (vc, refs[0][2])):             # and no other row
        written = [b * got.shape[1] + p for b, p in enumerate(positions)]
        assert np.array_equal(np.delete(got.reshape(-1, *got.shape[2:]), written, 0),
                              np.delete(want.reshape(-1, *want.shape[2:]), written, 0))


@pytest.mark.parametrize("batch, positions", [(1, [4000]), (4, [0, 17, 511, 4095])])
@pytest.mark.parametrize("activations, exact", [("digits", 1e-5), ("digits2", 1e-5), ("q8_1", 3e-5)])
def test_q4k_layer_against_the_f64_reference(batch, positions, activations, exact):
    """Digit activations (the default, and two digits a value) keep the layer's output and
    the k and v rows it writes within a cosine of 0.99999 of the exact layer; Q8_1 ones
    within 0.99997."""
    eager, replayed, refs, launches, h0 = run_layer({}, batch, 4096, positions, seed=batch, activations=activations)
    assert launches <= 10
    for a, b in zip(eager, replayed):
        assert torch.equal(a, b)                          # the graph replays the same launches
    check_against_the_references(eager, refs, h0, positions, exact, 1e-6)


@pytest.mark.parametrize("batch, context, positions", [(2, 1024, [100, 1023]), (1, 4096, [4000])])
def test_layer_with_the_q6k_tensors_of_a_q4k_m_file(batch, context, positions):
    """wv and w_down in Q6_K (as llama.cpp's Q4_K_M keeps them): v's rows in the QKV launch
    (digit activations on the DP4A GEMVs: batch 1 and 2), no launch more than a Q4_K layer."""
    check_a_q4k_m_layer(batch, context, positions, 7, 9)


@pytest.mark.parametrize("batch, context, positions", [(4, 4096, [0, 17, 511, 4095]),
                                                       (8, 8192, [8191, 5, 4000, 17, 8000, 63, 1024, 2])])
def test_a_q4k_m_layer_on_the_tensor_cores_keeps_within_ten_launches(batch, context, positions):
    """From batch 4 the tables take the tensor cores' GEMVs; where the attention is two
    launches as well, v's Q6_K rows would make the layer 11 - its QKV projection is then one
    launch (ember.model.layer's LAUNCH_BUDGET), and the layer is as exact."""
    check_a_q4k_m_layer(batch, context, positions, 9, 10)


def check_a_q4k_m_layer(batch, context, positions, seed, most_launches):
    """A layer with wv and w_down in Q6_K: within `most_launches`, its graph replaying the
    eager step's bits, and against the f64 references."""
    eager, replayed, refs, launches, h0 = run_layer({"wv": "Q6_K", "w_down": "Q6_K"}, batch, context, positions,
                                                    seed=seed)
    assert launches <= most_launches
    for a, b in zip(eager, replayed):
        assert torch.equal(a, b)
    check_against_the_references(eager, refs, h0, positions, 3e-5, 1e-6)


@pytest.mark.parametrize("positions", [[5, 63], [5, 63, 0, 17, 31, 40, 62, 1]])
def test_a_gguf_file_of_q4k_and_q6k_tensors(tmp_path, positions):
    """A 2-layer model written with the gguf package's writer (Q4_K projections, Q6_K value
    and down projections as in a Q4_K_M file, f32 norms) read back, run as one graph step
    and compared with the f64 reference applied layer after layer on the file's values; at
    batch 2 (the Q6_K GEMVs on dp4a) and 8 (on int8 tensor cores where the tables say so,
    q6k_imma.ember: the shipped H100 and H200 ones do)."""
    pytest.importorskip("gguf")
    from ember.model.gguf_weights import load
    from ember.model.layer import Decoder, LayerWeights, dequantized, q8_inputs
    from tests.model.test_gguf_weights import write
    write(tmp_path / "m.gguf", model_like=True, q6k=("attn_v", "ffn_down"))
    model = load(tmp_path / "m.gguf")
    hp = model.hparams
    layers = [LayerWeights.from_gguf(model.layer(i), hp) for i in range(hp.layers)]
    assert (layers[0].wv.kind, layers[0].w_down.kind, layers[0].wq.kind) == ("Q6_K", "Q6_K", "Q4_K")
    batch, context = len(positions), 64
    dec = Decoder(layers, hp, batch, context)
    g = torch.Generator(device="cuda").manual_seed(3)
    for layer in dec.layers:
        for c in (layer.k_cache, layer.v_cache):
            c.copy_(torch.randn(c.shape, device="cuda", generator=g).to(c.dtype))
    caches = [(layer.k_cache.cpu().double().numpy(), layer.v_cache.cpu().double().numpy()) for layer in dec.layers]
    h0 = torch.randn(batch, hp.hidden, device="cuda", generator=g)
    graph = dec.capture()
    dec.h.copy_(h0)
    dec.delta.zero_()
    for layer, (k, v) in zip(dec.layers, caches):
        layer.k_cache.copy_(torch.from_numpy(k).to(layer.k_cache.dtype))
        layer.v_cache.copy_(torch.from_numpy(v).to(layer.v_cache.dtype))
    dec.positions.copy_(torch.tensor(positions, dtype=torch.int32))
    dec.lengths.copy_(dec.positions + 1)
    graph.replay()
    dec.finish()
    h = h0.cpu().double().numpy()
    for w, (k, v) in zip(layers, caches):
        h, _, _ = layer_step(dequantized(w), h, k, v, np.array(positions), hp.heads, hp.kv_heads, hp.eps,
                             hp.rope_base, q8=q8_inputs(w, dec.activations), kv_bf16=True)
    got = dec.h.cpu().double().numpy()
    assert cosine(got, h) >= 1 - 1e-6
    assert cosine(got - h0.cpu().double().numpy(), h - h0.cpu().double().numpy()) >= 1 - 1e-5
