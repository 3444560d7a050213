"""Reading a decoder's weights from GGUF files that the `gguf` package's own writer made:
the hyperparameters, each layer tensor's type, shape and bytes, the f64 values (ggml's
Q4_K and Q6_K layouts, checked against the gguf package's own dequantization), and a clear
GGUFError for every way a file can be unusable."""

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

from ember.model.gguf_weights import GGUFError, load  # noqa: E402
from ember.reference.q4k import model_like_q4k, random_q4k  # noqa: E402
from ember.reference.q6k import model_like_q6k, random_q6k  # noqa: E402

Q = gguf.GGMLQuantizationType
HIDDEN, HEADS, KV, FFN, LAYERS = 512, 4, 2, 1024, 2


def write(path, *, arch="llama", skip=(), override=None, model_like=False, q6k=("ffn_down",)):
    """A small Llama-shaped model: Q4_K projections, Q6_K for those named in `q6k` (the
    down projection), f32 norms; with `model_like` weights of a trained model's statistics
    (zero mean, 1 / sqrt(cols)) and norms around 1, else every byte random."""
    rng = np.random.default_rng(7)
    w = gguf.GGUFWriter(str(path), arch)
    w.add_block_count(LAYERS)
    w.add_embedding_length(HIDDEN)
    w.add_feed_forward_length(FFN)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(500000.0)
    w.add_context_length(8192)
    d = HIDDEN // HEADS
    shapes = {"attn_q": (HEADS * d, HIDDEN), "attn_k": (KV * d, HIDDEN), "attn_v": (KV * d, HIDDEN),
              "attn_output": (HIDDEN, HEADS * d), "ffn_gate": (FFN, HIDDEN), "ffn_up": (FFN, HIDDEN),
              "ffn_down": (HIDDEN, FFN)}
    tensors = {}
    for i in range(LAYERS):
        for name, (rows, cols) in shapes.items():
            if name in q6k:
                data = model_like_q6k(rng, rows, cols, cols ** -0.5) if model_like else random_q6k(rng, rows, cols)
                tensors[f"blk.{i}.{name}.weight"] = (data, Q.Q6_K)
            else:
                data = model_like_q4k(rng, rows, cols, cols ** -0.5) if model_like else random_q4k(rng, rows, cols)
                tensors[f"blk.{i}.{name}.weight"] = (data, Q.Q4_K)
        for name in ("attn_norm", "ffn_norm"):
            norm = rng.uniform(0.5, 1.5, HIDDEN) if model_like else rng.standard_normal(HIDDEN)
            tensors[f"blk.{i}.{name}.weight"] = (norm.astype(np.float32), None)
    tensors.update(override or {})
    for name, (data, qtype) in tensors.items():
        if name not in skip:
            w.add_tensor(name, data, raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return tensors


def test_hyperparameters_and_a_layer(tmp_path):
    written = write(tmp_path / "m.gguf")
    model = load(tmp_path / "m.gguf")
    hp = model.hparams
    assert (hp.layers, hp.hidden, hp.heads, hp.kv_heads, hp.ffn, hp.head_dim) == (2, 512, 4, 2, 1024, 128)
    assert hp.eps == pytest.approx(1e-5) and hp.rope_base == 500000.0 and hp.context == 8192
    layer = model.layer(1)
    assert (layer.wq.kind, layer.wq.shape) == ("Q4_K", (512, 512))
    assert (layer.wk.kind, layer.wk.shape) == ("Q4_K", (256, 512))
    assert (layer.w_down.kind, layer.w_down.shape) == ("Q6_K", (512, 1024))
    assert (layer.attn_norm.kind, layer.attn_norm.shape) == ("F32", (512,))
    np.testing.assert_array_equal(layer.wq.data, written["blk.1.attn_q.weight"][0])
    np.testing.assert_array_equal(layer.w_down.data, written["blk.1.ffn_down.weight"][0])
    np.testing.assert_array_equal(layer.ffn_norm.data, written["blk.1.ffn_norm.weight"][0])


@pytest.mark.parametrize("which", ["wq", "w_down"])
def test_dequantized_values_are_ggmls(tmp_path, which):
    """Ember's f64 references of Q4_K and Q6_K against the gguf package's dequantization
    (which computes in f32: equal to within f32 rounding of the largest value)."""
    write(tmp_path / "m.gguf")
    t = getattr(load(tmp_path / "m.gguf").layer(0), which)
    ours = t.dequantize()
    theirs = gguf.quants.dequantize(np.asarray(t.data), getattr(Q, t.kind)).astype(np.float64)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=2 ** -23 * np.abs(ours).max())
    assert np.abs(ours).max() > 0.1          # real values, not zeros


@pytest.mark.parametrize("case, message", [
    (dict(arch="gpt2"), "the architecture is `gpt2`"),
    (dict(skip={"blk.1.attn_v.weight"}), "no tensor `blk.1.attn_v.weight`"),
    (dict(override={"blk.0.attn_k.weight": (random_q4k(np.random.default_rng(1), 512, 512), Q.Q4_K)}),
     "tensor `blk.0.attn_k.weight` is 512x512, the hyperparameters say 256x512"),
    (dict(override={"blk.0.attn_q.weight": (np.zeros((512, 512 // 32 * 34), np.uint8), Q.Q8_0)}),
     "tensor `blk.0.attn_q.weight` is Q8_0; Ember reads Q4_K, Q6_K, F16, BF16, F32"),
])
def test_unusable_files_are_refused_by_name(tmp_path, case, message):
    write(tmp_path / "m.gguf", **case)
    with pytest.raises(GGUFError, match=message.replace("(", r"\(").replace(")", r"\)")):
        model = load(tmp_path / "m.gguf")
        model.layer(0), model.layer(1)


def test_missing_and_bad_hyperparameters(tmp_path):
    path = tmp_path / "m.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(1)
    w.add_embedding_length(500)
    w.add_head_count(3)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.close()
    with pytest.raises(GGUFError, match="the hyperparameter `llama.feed_forward_length` is missing"):
        load(path)


def test_not_a_gguf_file_and_a_missing_layer(tmp_path):
    (tmp_path / "x.gguf").write_bytes(b"not a gguf file at all" * 10)
    with pytest.raises(GGUFError, match="not a GGUF file Ember can read"):
        load(tmp_path / "x.gguf")
    write(tmp_path / "m.gguf")
    with pytest.raises(GGUFError, match="layer 2 does not exist \\(the model has 2\\)"):
        load(tmp_path / "m.gguf").layer(2)


@pytest.mark.parametrize("keep", [30, 200, 0.5, -5000, -1])
def test_a_file_cut_short_is_refused_by_name(tmp_path, keep):
    """A download cut short, anywhere: the header (the gguf reader raised an IndexError
    there, a traceback until 2026-11-27), the tensor infos, the data."""
    write(tmp_path / "m.gguf")
    whole = (tmp_path / "m.gguf").read_bytes()
    n = int(len(whole) * keep) if isinstance(keep, float) else keep if keep > 0 else len(whole) + keep
    (tmp_path / "cut.gguf").write_bytes(whole[:n])
    with pytest.raises(GGUFError, match="cut.gguf: "):
        model = load(tmp_path / "cut.gguf")
        model.layer(0), model.layer(1)


def test_a_head_count_that_does_not_divide(tmp_path):
    path = tmp_path / "bad.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    for add, v in ((w.add_block_count, 1), (w.add_embedding_length, 512), (w.add_feed_forward_length, 1024),
                   (w.add_head_count, 4), (w.add_head_count_kv, 3), (w.add_context_length, 16)):
        add(v)
    w.add_layer_norm_rms_eps(1e-5)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.close()
    with pytest.raises(GGUFError, match="head_count 4 is not a multiple of head_count_kv 3"):
        load(path)


def test_without_the_gguf_package_the_error_says_how_to_get_it(tmp_path, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "gguf", None)
    with pytest.raises(GGUFError, match=r"needs the `gguf` package: pip install 'ember\[model\]'"):
        load(tmp_path / "m.gguf")
