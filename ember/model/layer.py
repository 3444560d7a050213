"""A Llama-style decoder run from Ember's kernels through ember.ops: the weights of each
layer on the GPU (Q4_K, and Q6_K where a Q4_K_M file has them), the KV caches and every
buffer of one batch size made once, and a decode step that is a fixed list of launches -
so that it can be captured as one CUDA graph and replayed per token.

    dec = Decoder([LayerWeights.from_gguf(model.layer(i), model.hparams) for i in ...],
                  model.hparams, batch=1, context=4096)
    dec.h.copy_(embeddings)                      # the residual stream [batch, hidden], f32
    dec.positions.fill_(p)                       # each sequence's new token position
    graph = dec.capture()                        # or dec.step() eagerly
    graph.replay()                               # dec.h (after dec.finish()) holds the output

The same Decoder runs on numpy arrays in Ember's simulator (weights made with
device="sim", the step inside `with ember.ops.on_simulator():`): a whole decode step at
tiny sizes checked without a GPU.

A layer with Q4_K weights is 8 launches with digit activations at batch 1 and 2 (9 otherwise),
one more where decode attention's splits of a KV head do not fit one thread-block cluster
(the residual add of one layer fused into the next one's
RMSNorm, as the add of the last layer into `finish`):
    add_rms_norm_q8   h_alt = h + delta; digits (or Q8_1) of rms_norm(h_alt) * attn_norm
    q4k_qkv_rope_append  qkv = x Wqkv^T (q, k and v weights concatenated: one GEMV), q rotated
                      (f32), k rotated and v copied into the bf16 caches: one launch with digit
                      activations and adjacent pairs where the DP4A GEMV runs (batch 1 and 2 on
                      an H100 or H200), else the GEMV and rope_append
    decode_attention  the Q8_1 of its output: one launch on sm_90 where a KV head's splits fit
                      a cluster (up to 8: attention_cluster_mma_q8) and the GPU's tables do not
                      measure split + merge faster, else split + merge
    q4k_gemv          delta = o Wo^T
    add_rms_norm_q8   h = h_alt + delta; digits (or Q8_1) of rms_norm(h) * ffn_norm
    swiglu_q4k        g = silu(x Wgate^T) * (x Wup^T)
    quantize_q8_1     g as digits (or Q8_1)
    q4k_gemv          delta = g Wdown^T
The Q4_K GEMVs read the normalised rows and the SwiGLU output as digits by default
(activations="digits": three 8-bit digits a value, f32-accurate products, the kernels of
q4k_digits.ember), as the first two of those digits (activations="digits2": each value
within 2^-16 of its block's largest, a third less integer work for the GEMVs) or as Q8_1
(activations="q8_1": llama.cpp's quantisation, off by up to half a step of max|x| / 127);
the output projection reads the attention's Q8_1 (its share of the error is small:
bench/results/layer_ab.md).
A Q6_K projection reads the same activations (kernels_src/q6k_dp4a.ember: ember.ops.q6k_gemv
on Q8Activations): none more where w_down or wo is Q6_K; where v is (and q and k are Q4_K:
a Q4_K_M file's layers), none more where the QKV launch is one (v's Q6_K rows in the same
kernel), else a GEMV of q's and k's weights together, v's GEMV and rope_append (one more) -
but where the attention is two launches too, the QKV launch is one (q4k_qkv_rope_append's
one_launch, with digit activations) even where the tables measured the tensor cores' GEMVs
faster, so that the layer keeps within 10 launches (LAUNCH_BUDGET); where q or k is, three
GEMVs and rope_append (three more).
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..records import record
from .gguf_weights import GGUFError, HParams

QUANTIZED = {"Q4_K": 144, "Q6_K": 210}           # bytes per super-block of 256
ACTIVATIONS = {"digits": 3, "digits2": 2, "q8_1": 3}   # the GEMVs' activations: digits read (Q8_1: its one plane)
PROJECTIONS = ("wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down")
# Launches a layer keeps within where it can: a Q4_K_M layer whose QKV projection would be
# three launches (q's and k's GEMV, v's Q6_K GEMV, rope_append) beside an attention of two
# (the split pass and the merge) would take 11. Its QKV projection is then the one launch of
# q4k_digits_qkv (DP4A) where the tables chose the tensor cores'. Measured (H200, 2026-11-28,
# 4 layers with Q6_K v and down, one graph, digits, three interleaved rounds, us a layer,
# tables' choice / one launch): batch 4 at 4096 keys (11 -> 9 launches) 126.4 / 125.3, at
# 32768 228.9 / 226.7; batch 8 at 32768 (11 -> 9) 350.1 / 357.5 (2.1% slower). Where the
# attention is one launch (10 in all) the tables' choice stays: batch 8 at 4096 keys one
# launch took 149.6 against 142.2, at 512 120.6 against 113.2.
LAUNCH_BUDGET = 10


def _to_device(a: np.ndarray, device):
    """A host array where the decoder runs: a torch tensor on `device`, or itself for the
    simulator (device "sim")."""
    if device == "sim":
        return np.ascontiguousarray(a)
    import torch
    return torch.from_numpy(np.ascontiguousarray(a)).to(device)


def _host(x) -> np.ndarray:
    return x if isinstance(x, np.ndarray) else x.detach().cpu().numpy()


_DTYPES = {"f32": ("float32", np.float32), "i32": ("int32", np.int32), "f16": ("float16", np.float16),
           "bf16": ("bfloat16", None)}


def _zeros(like, shape: tuple, dtype: str):
    """Zeros of `dtype` beside `like` (a numpy array, or a torch tensor on its device)."""
    torch_name, np_dtype = _DTYPES[dtype]
    if isinstance(like, np.ndarray):
        if np_dtype is None:
            import ml_dtypes
            np_dtype = ml_dtypes.bfloat16
        return np.zeros(shape, np_dtype)
    import torch
    return torch.zeros(shape, dtype=getattr(torch, torch_name), device=like.device)


def _cat(parts: list):
    if isinstance(parts[0], np.ndarray):
        return np.concatenate(parts)
    import torch
    return torch.cat(parts)


@record
class Weight:
    """One projection's weight on the GPU: kind (Q4_K or Q6_K), its raw ggml blocks as a
    torch uint8 tensor [rows, cols / 256 * bytes], and its logical (rows, cols)."""

    kind: str
    data: object
    shape: tuple


@record
class LayerWeights:
    attn_norm: object        # f32 [hidden]
    wq: Weight
    wk: Weight
    wv: Weight
    wo: Weight
    ffn_norm: object
    w_gate: Weight
    w_up: Weight
    w_down: Weight

    @classmethod
    def from_gguf(cls, layer, hp: HParams, device="cuda") -> "LayerWeights":
        """The weights of an ember.model.gguf_weights Layer, copied to the GPU (or kept on
        the host for the simulator: device "sim")."""
        def weight(t) -> Weight:
            if t.kind not in QUANTIZED:
                raise GGUFError(f"tensor `{t.name}` is {t.kind}; the decoder's projections are Q4_K or Q6_K")
            return Weight(t.kind, _to_device(t.data, device), t.shape)

        def norm(t):
            return _to_device(t.dequantize().astype(np.float32), device)
        return cls(norm(layer.attn_norm), *(weight(getattr(layer, n)) for n in ("wq", "wk", "wv", "wo")),
                   norm(layer.ffn_norm), *(weight(getattr(layer, n)) for n in ("w_gate", "w_up", "w_down")))

    @classmethod
    def random(cls, hp: HParams, seed: int, device="cuda", kinds: dict | None = None) -> "LayerWeights":
        """Random weights of the layer's shapes that look like a trained model's (zero mean,
        standard deviation 1 / sqrt(cols): ember.reference.q4k.model_like_q4k / q6k's), so
        that activations keep their size through the layers; `kinds` maps projections to
        Q6_K (default all Q4_K). The norms' weights random in [0.5, 1.5). device "sim": numpy
        arrays, for the simulator."""
        from ..reference.q4k import model_like_q4k
        from ..reference.q6k import model_like_q6k
        rng = np.random.default_rng(seed)
        q, kv = hp.heads * hp.head_dim, hp.kv_heads * hp.head_dim
        shapes = {"wq": (q, hp.hidden), "wk": (kv, hp.hidden), "wv": (kv, hp.hidden), "wo": (hp.hidden, q),
                  "w_gate": (hp.ffn, hp.hidden), "w_up": (hp.ffn, hp.hidden), "w_down": (hp.hidden, hp.ffn)}
        kinds = kinds or {}

        def weight(name) -> Weight:
            kind = kinds.get(name, "Q4_K")
            rows, cols = shapes[name]
            make = model_like_q4k if kind == "Q4_K" else model_like_q6k
            return Weight(kind, _to_device(make(rng, rows, cols, cols ** -0.5), device), (rows, cols))

        def norm():
            return _to_device(rng.uniform(0.5, 1.5, hp.hidden).astype(np.float32), device)
        return cls(norm(), *(weight(n) for n in ("wq", "wk", "wv", "wo")), norm(),
                   *(weight(n) for n in ("w_gate", "w_up", "w_down")))


def dequantized(w: LayerWeights) -> dict:
    """The layer's weights in f64 on the host (ember.reference.q4k / q6k), by name: what
    ember.reference.layer.layer_step takes."""
    from ..reference.q4k import dequantize_q4k
    from ..reference.q6k import dequantize_q6k
    out = {}
    for name in ("attn_norm", "ffn_norm"):
        out[name] = _host(getattr(w, name)).astype(np.float64)
    for name in PROJECTIONS:
        x: Weight = getattr(w, name)
        blocks = _host(x.data)
        out[name] = dequantize_q4k(blocks) if x.kind == "Q4_K" else dequantize_q6k(blocks)
    return out


def q8_inputs(w: LayerWeights, activations: str = "q8_1") -> tuple:
    """The projections whose input the Decoder quantises to Q8_1: all of them (Q4_K and
    Q6_K read the same activations), or with digit activations only the output projection
    (the attention's merge writes Q8_1) - the `q8` of ember.reference.layer.layer_step."""
    return PROJECTIONS if activations == "q8_1" else ("wo",)


def _gemv(w: Weight, x_q8, out):
    """out = x W^T on the Q8_1 or digit activations x_q8, through the kernel of W's kind."""
    (ops.q4k_gemv if w.kind == "Q4_K" else ops.q6k_gemv)(w.data, x_q8, out=out)


class _Layer:
    """One layer's weights as the step launches them, with its KV caches."""

    def __init__(self, w: LayerWeights, hp: HParams, batch: int, context: int, cache_dtype: str):
        for name in ("w_gate", "w_up"):
            if getattr(w, name).kind != "Q4_K":
                raise GGUFError(f"`{name}` is {getattr(w, name).kind}: the SwiGLU kernel takes Q4_K gate and up "
                                "weights")
        self.w = w
        qkv = (w.wq, w.wk, w.wv)
        self.fused_qkv = all(x.kind == "Q4_K" for x in qkv)
        self.wqkv = _cat([x.data for x in qkv]) if self.fused_qkv else None
        # q's and k's weights as one where only v is Q6_K (a Q4_K_M file's layers), v's rows
        # beside them in the QKV launch (q4k_qkv_rope_append's wv). Two GEMVs of them, before
        # that launch took v: H100, 2026-11-27, 4 layers with Q6_K v and down, us a layer
        # (together / apart): batch 1 at 512 keys 81.89 / 84.92 (Q8_1 79.2 / 81.24), at 4096
        # 89.22 / 92.85, batch 8 at 512 152.46 / 160.19 - one small GEMV's ramp and tail fewer
        together = not self.fused_qkv and w.wq.kind == w.wk.kind == "Q4_K" and w.wv.kind == "Q6_K"
        self.wqk = _cat([w.wq.data, w.wk.data]) if together else None
        shape = (batch, context, hp.kv_heads, hp.head_dim)
        self.k_cache = _zeros(w.attn_norm, shape, cache_dtype)
        self.v_cache = _zeros(w.attn_norm, shape, cache_dtype)


class Decoder:
    """Layers of one model with the KV caches and buffers of `batch` sequences of up to
    `context` tokens. Set `h` (the residual stream, f32 [batch, hidden]), `positions`
    (int32 [batch]: the position of each sequence's new token) and `lengths` (int32
    [batch]: positions + 1) on the GPU, then step() - or replay the graph of capture()."""

    def __init__(self, layers: list, hp: HParams, batch: int, context: int, cache_dtype: str = "bf16",
                 neox: bool = False, activations: str = "digits"):
        if not 1 <= batch <= 8:
            raise ValueError(f"batch is {batch}: the GEMVs take 1..8 rows")
        if cache_dtype not in ("bf16", "f16", "f32"):
            raise ValueError(f"cache_dtype is {cache_dtype!r}: bf16, f16 or f32")
        if activations not in ACTIVATIONS:
            raise ValueError(f"activations is {activations!r}: digits (f32-accurate), digits2 (two digits a value) "
                             "or q8_1")
        self.activations = activations
        digits, planes = activations != "q8_1", ACTIVATIONS[activations]
        like = layers[0].attn_norm
        self.hp, self.batch, self.context, self.neox = hp, batch, context, neox
        self.layers = [_Layer(w, hp, batch, context, cache_dtype) for w in layers]
        q, kv = hp.heads * hp.head_dim, hp.kv_heads * hp.head_dim

        def f32(*shape):
            return _zeros(like, shape, "f32")
        self.h, self.delta = f32(batch, hp.hidden), f32(batch, hp.hidden)
        self.h_alt = f32(batch, hp.hidden)                 # the residual stream between a layer's norms
        # separate GEMVs (a Q6_K q or k) write dense buffers of their own: a column slice of
        # qkv is not an output a GEMV takes
        self.qkv_parts = (f32(batch, q), f32(batch, kv), f32(batch, kv))
        self.q_rot = f32(batch, 1, hp.heads, hp.head_dim)
        self.g = f32(batch, hp.ffn)
        self.x_q8 = ops.Q8Activations.empty(self.h, batch, hp.hidden, digits=digits, planes=planes)
        self.o_q8 = ops.Q8Activations.empty(self.h, batch, q)
        self.g_q8 = ops.Q8Activations.empty(self.h, batch, hp.ffn, digits=digits, planes=planes)
        self.positions = _zeros(like, (batch,), "i32")
        self.lengths = _zeros(like, (batch,), "i32")
        self.lengths += 1
        self.max_length = context            # the attention's split covers the whole cache

    def _norm(self, weight, into) -> None:
        """The residual stream plus delta into `into` (h or h_alt: the other buffer than the
        one holding the stream - add_rmsnorm_q8_parts, several blocks a row), and its
        normalised row as the projections read it: Q8_1 or digits."""
        src = self.h_alt if into is self.h else self.h
        ops.add_rms_norm_q8(self.delta, src, weight, self.hp.eps, out=self.x_q8, residual_out=into)

    def _layer(self, layer: _Layer) -> None:
        hp, b = self.hp, self.batch
        d = hp.head_dim
        w = layer.w
        # a layer's two norms move the residual stream to h_alt and back (an even number of
        # moves a step: a graph replays with h holding the stream)
        self._norm(w.attn_norm, self.h_alt)
        if layer.fused_qkv or layer.wqk is not None:
            # 6 launches besides the QKV projection and the attention; apart, a Q4_K_M layer's
            # projection is 3 (LAUNCH_BUDGET)
            one = layer.wqk is not None and 6 + 3 + ops.decode_attention_launches(
                self.q_rot, layer.k_cache, layer.v_cache, self.lengths, out=self.o_q8,
                max_length=self.max_length) > LAUNCH_BUDGET
            ops.q4k_qkv_rope_append(layer.wqkv if layer.fused_qkv else layer.wqk, self.x_q8, layer.k_cache,
                                    layer.v_cache, self.positions.reshape(b, 1), hp.rope_base, q_out=self.q_rot,
                                    neox=self.neox, wv=None if layer.fused_qkv else w.wv.data, one_launch=one)
        else:
            for x, out in zip((w.wq, w.wk, w.wv), self.qkv_parts):
                _gemv(x, self.x_q8, out)
            qs, ks, vs = (x.reshape(b, 1, -1, d) for x in self.qkv_parts)
            ops.rope_append(qs, ks, vs, layer.k_cache, layer.v_cache, self.positions.reshape(b, 1), hp.rope_base,
                            neox=self.neox, q_out=self.q_rot)
        ops.decode_attention(self.q_rot, layer.k_cache, layer.v_cache, self.lengths, out=self.o_q8,
                             max_length=self.max_length)
        _gemv(w.wo, self.o_q8, self.delta)
        self._norm(w.ffn_norm, self.h)                               # gate and up are Q4_K
        ops.swiglu_q4k(w.w_gate.data, w.w_up.data, self.x_q8, out=self.g)
        ops.quantize_q8_1(self.g, out=self.g_q8)
        _gemv(w.w_down, self.g_q8, self.delta)

    def step(self) -> None:
        """Every layer once on torch's current stream (the last layer's delta not yet added:
        finish() adds it)."""
        for layer in self.layers:
            self._layer(layer)

    def finish(self) -> None:
        """h += delta: the last layer's output into the residual stream."""
        self.h += self.delta

    def capture(self):
        """One CUDA graph of step() (after one eager warm-up step on a side stream, which
        compiles and loads every kernel and makes the ops' plans); replaying it runs a
        decode step with the positions and lengths the buffers hold then. The warm-up
        changes the caches at the current positions and h: set them after capture."""
        import torch
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            self.step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.step()
        return graph
