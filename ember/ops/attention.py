"""ember.ops.decode_attention: the M newest queries of each sequence against its KV cache,
grouped-query, split over the sequence and merged (kernels_src/decode_attention.ember)."""

from __future__ import annotations

import math

from . import args as A
from .kernels import kernel
from .plan import run

DTYPES = ("bf16", "f16", "f32")


class _Keep:
    """A plan's own buffer (the split results): kept alive with the plan, launches nothing."""

    def __init__(self, obj):
        self.obj = obj

    def __call__(self, stream) -> None:
        pass


def decode_attention(q, k_cache, v_cache, lengths, *, out=None, max_length: int | None = None):
    """softmax(q k^T / sqrt(D)) v for q [B, M, HQ, D] (M = 1..8 newest tokens per sequence)
    against k_cache, v_cache [B, S, HKV, D] (HKV dividing HQ), sequence b holding keys
    0 .. lengths[b] - 1 (int32 [B] on the GPU, each >= M) and its query m seeing keys
    0 .. lengths[b] - M + m. All of one dtype (bf16, f16, f32); D a multiple of 64. The
    sequence is split into chunks over max_length (default S, the cache's length: pass the
    longest length in use to launch fewer empty blocks), the chunk chosen so that the splits
    fill the GPU (choose_chunk). Returns out, like q."""
    op = "decode_attention"
    if out is None:
        vq, t = _inputs(q, k_cache, v_cache, lengths, max_length)[:2]
        out = A.empty_like(vq, vq.shape, t)
    run(op, (q, k_cache, v_cache, lengths, out, max_length),
        lambda: _plan(q, k_cache, v_cache, lengths, out, max_length))
    return out


def _inputs(q, k_cache, v_cache, lengths, max_length) -> tuple:
    op = "decode_attention"
    vq = A.view(op, "q", q)
    t = A.dtype(op, "q", vq, DTYPES)
    A.rank(op, "q", vq, (4,), "[batch, queries, heads, head_dim]")
    batch, m, hq, d = vq.shape
    A.int_range(op, "q", m, 1, 8, "queries per sequence")
    A.int_range(op, "q", batch, 1, 65535, "batch: the grid's z dimension")
    if d % 64 or not 64 <= d <= 256:
        raise A.ArgumentError(op, "q", f"has head_dim {d}: 64, 128, 192 or 256 (a multiple of 64) is needed")
    views = {"q": vq}
    for name, c in (("k_cache", k_cache), ("v_cache", v_cache)):
        vc = A.view(op, name, c)
        A.same_dtype(op, name, vc, "q", t)
        A.rank(op, name, vc, (4,), "[batch, cache_len, kv_heads, head_dim]")
        if vc.shape[0] != batch or vc.shape[3] != d:
            raise A.ArgumentError(op, name, f"has shape {list(vc.shape)}; expected [{batch}, cache_len, kv_heads, {d}] "
                                            "(q's batch and head_dim)")
        views[name] = vc
    if views["v_cache"].shape != views["k_cache"].shape:
        raise A.ArgumentError(op, "v_cache", f"has shape {list(views['v_cache'].shape)}; k_cache has "
                                             f"{list(views['k_cache'].shape)}: they must match")
    _, s, hkv, _ = views["k_cache"].shape
    if hkv == 0 or hq % hkv:
        raise A.ArgumentError(op, "k_cache", f"has {hkv} KV heads, which does not divide q's {hq} heads "
                                             "(grouped-query attention shares each KV head among HQ / HKV)")
    A.int_range(op, "k_cache", hq // hkv * m, 1, 32, "query rows per KV head (HQ / HKV x M) a block holds")
    A.int_range(op, "k_cache", s, 1, 2 ** 31 - 1, "cache_len")
    for name, v in views.items():
        A.contiguous(op, name, v)
        A.aligned(op, name, v, 16)
    vl = A.view(op, "lengths", lengths)
    A.dtype(op, "lengths", vl, ("i32",))
    A.shape(op, "lengths", vl, (batch,), "one length per sequence of q")
    A.contiguous(op, "lengths", vl)
    A.aligned(op, "lengths", vl, 4)
    views["lengths"] = vl
    if max_length is not None:
        if isinstance(max_length, bool) or not isinstance(max_length, int):
            raise A.ArgumentError(op, "max_length", f"must be an int, not {type(max_length).__name__}")
        A.int_range(op, "max_length", max_length, m, s, "the longest sequence, at most the cache's length")
    return vq, t, views, (batch, m, hq, d, s, hkv)


CHUNKS = (512, 256, 128, 64, 32)
WARPS = 4
PREFETCH = False
MAX_SPLITS = 4096            # attention_merge's MAX_SPLITS
KEYS_PER_STEP = {"KG": (4, 2, 1), "U": (2, 1, 2)}     # by rows: <= 4, <= 8, more (an H100 sweep)


def lanes_per_key(rows: int) -> dict:
    """How a warp shares out a step's keys (KG keys across its lanes, U steps at once): more
    keys a step where each lane's share of the query rows fits in registers."""
    i = 0 if rows <= 4 else 1 if rows <= 8 else 2
    return {"KG": KEYS_PER_STEP["KG"][i], "U": KEYS_PER_STEP["U"][i]}


def choose_chunk(length: int, blocks_per_split: int, sm_count: int, step: int = 32) -> int:
    """The keys a block takes: the largest chunk that still makes two blocks per SM (a
    short context split finely enough to fill the GPU), else the smallest - never fewer
    than the `step` keys the block's warps take at once (fewer would leave warps idle)."""
    fits = [c for c in CHUNKS if c >= step] or [CHUNKS[0]]
    for c in fits:
        if -(-length // c) * blocks_per_split >= 2 * sm_count:
            return c
    return fits[-1]


def _plan(q, k_cache, v_cache, lengths, out, max_length) -> list:
    op = "decode_attention"
    vq, t, views, (batch, m, hq, d, s, hkv) = _inputs(q, k_cache, v_cache, lengths, max_length)
    vo = A.view(op, "out", out)
    A.same_dtype(op, "out", vo, "q", t)
    A.shape(op, "out", vo, vq.shape, "q's shape")
    A.contiguous(op, "out", vo)
    A.aligned(op, "out", vo, 4)
    for name, v in views.items():
        A.no_overlap(op, name, v, "out", vo)
    device = A.same_device(op, {**views, "out": vo}) or 0
    from ..runtime import cuda
    length = max_length or s
    lanes = lanes_per_key(hq // hkv * m)
    chunk = choose_chunk(length, hkv * batch, cuda.context(device).sm_count, WARPS * lanes["KG"] * lanes["U"])
    defines = {"T": t, "D": d, "G": hq // hkv, "M": m, "CHUNK": chunk, "WARPS": WARPS, **lanes,
               "PREFETCH": str(PREFETCH).lower()}
    split, _ = kernel("decode_attention.ember", "attention_split", defines, batch * length * hkv * d, device)
    merge, _ = kernel("decode_attention.ember", "attention_merge", {"T": t, "D": d, "M": m}, 1, device)
    splits = -(-length // chunk)
    if splits > MAX_SPLITS:
        raise A.ArgumentError(op, "max_length" if max_length else "k_cache",
                              f"makes {splits} splits of {chunk} keys; the merge takes at most {MAX_SPLITS} "
                              f"(contexts up to {MAX_SPLITS * chunk} keys)")
    part = A.empty_like(vq, (batch, splits, hq, m, d + 2), "f32")
    scale = 1.0 / math.sqrt(d) * math.log2(math.e)            # softmax in base 2
    return [_Keep(part),
            split.prepare(q, k_cache, v_cache, lengths, part, hkv, s, splits, scale, grid=(splits, hkv, batch)),
            merge.prepare(part, out, hq, splits, lengths, chunk, grid=(hq, m, batch))]
