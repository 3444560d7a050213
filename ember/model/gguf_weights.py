"""A Llama-style decoder's weights and hyperparameters from a GGUF file, read with the
`gguf` package (the format's own reader: no parser of Ember's), checked before anything
uses them.

    model = ember.model.gguf_weights.load("llama-3-8b.Q4_K_M.gguf")
    model.hparams                  # HParams(layers=32, hidden=4096, heads=32, kv_heads=8, ...)
    layer = model.layer(0)         # Layer: attn_norm, wq, wk, wv, wo, ffn_norm, w_gate, w_up, w_down
    layer.wq.kind, layer.wq.shape  # "Q4_K", (4096, 4096): rows are output features
    layer.wq.data                  # uint8 [rows, cols / 256 * 144]: ggml's blocks as the kernels read them
    layer.wq.dequantize()          # f64 [rows, cols] (ember.reference.q4k / q6k)

The tensors are memory-mapped: nothing is read until it is used. Q4_K, Q6_K, F16, BF16
and F32 tensors are supported; a model whose layer holds another type, lacks a tensor or
a hyperparameter, or whose shapes disagree with its hyperparameters is refused with a
GGUFError that names the file, the tensor or key, and what was expected.
"""

from __future__ import annotations

import os

import numpy as np

from ..records import record

# Per-layer tensors: our name -> the GGUF name after `blk.N.` (llama.cpp's convention).
LAYER_TENSORS = {
    "attn_norm": "attn_norm.weight", "wq": "attn_q.weight", "wk": "attn_k.weight", "wv": "attn_v.weight",
    "wo": "attn_output.weight", "ffn_norm": "ffn_norm.weight", "w_gate": "ffn_gate.weight",
    "w_up": "ffn_up.weight", "w_down": "ffn_down.weight",
}
KINDS = ("Q4_K", "Q6_K", "F16", "BF16", "F32")


class GGUFError(ValueError):
    """A GGUF file Ember cannot use, with what is wrong and where."""


@record(frozen=True)
class HParams:
    arch: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn: int
    eps: float
    rope_base: float
    context: int

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


@record(frozen=True)
class Tensor:
    """One weight: its GGUF name, type, logical shape (rows, cols) or (n,) - rows are
    output features, as the kernels take them - and its data (raw ggml blocks, one row per
    row, for quantized types; the values for float types)."""

    name: str
    kind: str
    shape: tuple
    data: np.ndarray

    def dequantize(self) -> np.ndarray:
        """The values in f64."""
        if self.kind == "Q4_K":
            from ..reference.q4k import dequantize_q4k
            return dequantize_q4k(self.data)
        if self.kind == "Q6_K":
            from ..reference.q6k import dequantize_q6k
            return dequantize_q6k(self.data)
        if self.kind == "BF16":
            return (self.data.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        return self.data.astype(np.float64)


@record(frozen=True)
class Layer:
    attn_norm: Tensor
    wq: Tensor
    wk: Tensor
    wv: Tensor
    wo: Tensor
    ffn_norm: Tensor
    w_gate: Tensor
    w_up: Tensor
    w_down: Tensor


class Model:
    def __init__(self, path):
        self.path = os.fspath(path)
        gguf = _gguf()
        try:
            self.reader = gguf.GGUFReader(self.path)
        except Exception as exc:        # noqa: BLE001 - the package's parser of the file's bytes: what it
            # raises on a malformed file is its own (ValueError, an IndexError on a header cut short)
            raise GGUFError(f"{self.path}: not a GGUF file Ember can read "
                            f"({type(exc).__name__}: {str(exc)[:200]})") from None
        self.fields = self.reader.fields
        self.hparams = self._hparams()
        self._tensors = {t.name: t for t in self.reader.tensors}

    def _value(self, key: str, kinds: tuple, what: str):
        f = self.fields.get(key)
        if f is None:
            raise GGUFError(f"{self.path}: the hyperparameter `{key}` is missing")
        v = f.contents()
        if not isinstance(v, kinds) or isinstance(v, bool):
            raise GGUFError(f"{self.path}: `{key}` is {v!r}, not {what}")
        return v

    def _hparams(self) -> HParams:
        arch = self._value("general.architecture", (str,), "a name")
        if arch != "llama":
            raise GGUFError(f"{self.path}: the architecture is `{arch}`; Ember's decoder layer is a Llama one "
                            f"(`general.architecture` = llama)")

        def number(name, kind=int):
            if kind is float:
                return float(self._value(f"{arch}.{name}", (int, float), "a number"))
            return self._value(f"{arch}.{name}", (int,), "an integer")
        heads = number("attention.head_count")
        hp = HParams(arch, number("block_count"), number("embedding_length"), heads,
                     number("attention.head_count_kv") if f"{arch}.attention.head_count_kv" in self.fields else heads,
                     number("feed_forward_length"), number("attention.layer_norm_rms_epsilon", float),
                     number("rope.freq_base", float) if f"{arch}.rope.freq_base" in self.fields else 10000.0,
                     number("context_length"))
        problems = []
        if min(hp.layers, hp.hidden, hp.heads, hp.kv_heads, hp.ffn) <= 0:
            problems.append("every size must be positive")
        elif hp.hidden % hp.heads:
            problems.append(f"embedding_length {hp.hidden} is not a multiple of head_count {hp.heads}")
        elif hp.heads % hp.kv_heads:
            problems.append(f"head_count {hp.heads} is not a multiple of head_count_kv {hp.kv_heads}")
        elif hp.head_dim % 2:
            problems.append(f"the head dimension {hp.head_dim} is odd (RoPE rotates pairs)")
        if not (hp.eps > 0 and np.isfinite(hp.eps)):
            problems.append(f"layer_norm_rms_epsilon is {hp.eps}, not positive")
        if not (hp.rope_base > 0 and np.isfinite(hp.rope_base)):
            problems.append(f"rope.freq_base is {hp.rope_base}, not positive")
        if problems:
            raise GGUFError(f"{self.path}: " + "; ".join(problems))
        return hp

    def tensor(self, name: str, shape: tuple | None = None) -> Tensor:
        """The tensor `name`, checked to be of a supported type (and `shape`, when given)."""
        t = self._tensors.get(name)
        if t is None:
            raise GGUFError(f"{self.path}: no tensor `{name}`")
        kind = t.tensor_type.name
        if kind not in KINDS:
            raise GGUFError(f"{self.path}: tensor `{name}` is {kind}; Ember reads {', '.join(KINDS)}")
        got = tuple(int(n) for n in reversed(t.shape))       # ggml lists the fastest dimension first
        if shape is not None and got != tuple(shape):
            raise GGUFError(f"{self.path}: tensor `{name}` is {got[0]}" + "".join(f"x{n}" for n in got[1:])
                            + ", the hyperparameters say " + "x".join(map(str, shape)))
        if kind in ("Q4_K", "Q6_K") and got[-1] % 256:
            raise GGUFError(f"{self.path}: tensor `{name}` has rows of {got[-1]}, not a multiple of 256 ({kind})")
        data = t.data
        if kind == "BF16":
            data = data.view(np.uint16)
        return Tensor(name, kind, got, data)

    def layer(self, i: int) -> Layer:
        """Layer i's weights, each checked against the hyperparameters' shapes."""
        hp = self.hparams
        if not 0 <= i < hp.layers:
            raise GGUFError(f"{self.path}: layer {i} does not exist (the model has {hp.layers})")
        q, kv = hp.heads * hp.head_dim, hp.kv_heads * hp.head_dim
        shapes = {"attn_norm": (hp.hidden,), "wq": (q, hp.hidden), "wk": (kv, hp.hidden), "wv": (kv, hp.hidden),
                  "wo": (hp.hidden, q), "ffn_norm": (hp.hidden,), "w_gate": (hp.ffn, hp.hidden),
                  "w_up": (hp.ffn, hp.hidden), "w_down": (hp.hidden, hp.ffn)}
        return Layer(**{k: self.tensor(f"blk.{i}.{LAYER_TENSORS[k]}", shapes[k]) for k in LAYER_TENSORS})


def load(path) -> Model:
    return Model(path)


def _gguf():
    try:
        import gguf
    except ImportError:
        raise GGUFError("reading GGUF files needs the `gguf` package: pip install 'ember[model]'") from None
    return gguf
