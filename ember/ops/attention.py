"""ember.ops.decode_attention: the M newest queries of each sequence against its KV cache,
grouped-query, split over the sequence and merged - in one launch where a KV head's splits
fit a thread-block cluster (kernels_src/decode_attention_mma.ember), else by a merge kernel
(kernels_src/decode_attention.ember)."""

from __future__ import annotations

import math

from . import args as A
from .gemv import QK_K, Q8Activations
from .kernels import fits, kernel, tuned_us
from .plan import Keep, launch_count, planned, run

DTYPES = ("bf16", "f16", "f32")


def decode_attention(q, k_cache, v_cache, lengths, *, out=None, max_length: int | None = None):
    """softmax(q k^T / sqrt(D)) v for q [B, M, HQ, D] (M = 1..8 newest tokens per sequence)
    against k_cache, v_cache [B, S, HKV, D] (HKV dividing HQ), sequence b holding keys
    0 .. lengths[b] - 1 (int32 [B] on the GPU, each >= M) and its query m seeing keys
    0 .. lengths[b] - M + m. The caches bf16, f16 or f32; q and out of their dtype or f32;
    D a multiple of 64. `out` may be a Q8Activations (Q8Activations.empty(q, B * M, HQ * D)):
    the result then comes as the Q8_1 activations of the output projection's DP4A GEMV
    (HQ * D a multiple of 256, B * M <= 8), made by the merge itself. The
    sequence is split into chunks over max_length (default S, the cache's length: pass the
    longest length in use to launch fewer empty blocks), the chunk chosen so that the splits
    fill the GPU (choose_chunk), or on sm_90 so that a KV head's splits are one cluster's
    blocks, merged there in the same launch (cluster_chunk). Returns out, like q."""
    op = "decode_attention"
    if out is None:
        vq = _inputs(q, k_cache, v_cache, lengths, max_length)[0]
        out = A.empty_like(vq, vq.shape, vq.dtype)
    run(op, (q, k_cache, v_cache, lengths, out, max_length),
        lambda: _plan(q, k_cache, v_cache, lengths, out, max_length))
    return out


def decode_attention_launches(q, k_cache, v_cache, lengths, *, out, max_length: int | None = None) -> int:
    """The kernel launches decode_attention(q, k_cache, v_cache, lengths, out=out,
    max_length=max_length) makes: 1 where a KV head's splits are one cluster's blocks, 2 for
    the split pass and the merge. Its arguments are checked and its plan made (and kept, for
    the call), nothing is launched - so that a decode step can keep within a launch budget
    (ember.model.layer)."""
    return launch_count(planned("decode_attention", (q, k_cache, v_cache, lengths, out, max_length),
                                lambda: _plan(q, k_cache, v_cache, lengths, out, max_length)))


def _inputs(q, k_cache, v_cache, lengths, max_length) -> tuple:
    op = "decode_attention"
    vq = A.view(op, "q", q)
    tq = A.dtype(op, "q", vq, DTYPES)
    A.rank(op, "q", vq, (4,), "[batch, queries, heads, head_dim]")
    batch, m, hq, d = vq.shape
    A.int_range(op, "q", m, 1, 8, "queries per sequence")
    A.int_range(op, "q", batch, 1, 65535, "batch: the grid's z dimension")
    if d % 64 or not 64 <= d <= 256:
        raise A.ArgumentError(op, "q", f"has head_dim {d}: 64, 128, 192 or 256 (a multiple of 64) is needed")
    views = {"q": vq}
    t = None
    for name, c in (("k_cache", k_cache), ("v_cache", v_cache)):
        vc = A.view(op, name, c)
        if t is None:
            t = A.dtype(op, name, vc, DTYPES)
            if tq not in (t, "f32"):
                raise A.ArgumentError(op, name, f"has dtype {t}, but `q` is {tq}: q is the cache's dtype or f32")
        A.same_dtype(op, name, vc, "k_cache", t)
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
WARPS = 4                    # attention_split's default warps, whose step sizes the chunk
SPLIT_DEFAULT_U = 2          # attention_split's default U
MAX_SPLITS = 4096            # attention_merge's MAX_SPLITS
KEYS_PER_STEP = {"KG": (4, 2, 1), "U": (2, 1, 2)}     # by rows: <= 4, <= 8, more (an H100 sweep)


def lanes_per_key(rows: int) -> dict:
    """How a warp shares out a step's keys (KG keys across its lanes, U steps at once): more
    keys a step where each lane's share of the query rows fits in registers."""
    i = 0 if rows <= 4 else 1 if rows <= 8 else 2
    return {"KG": KEYS_PER_STEP["KG"][i], "U": KEYS_PER_STEP["U"][i]}


def choose_chunk(length: int, blocks_per_split: int, min_blocks: int, step: int = 32, chunks=CHUNKS) -> int:
    """The keys a block takes: the largest of `chunks` that still makes `min_blocks` blocks
    (a short context split finely enough to fill the GPU), else the smallest - never fewer
    than the `step` keys the block's warps take at once (fewer would leave warps idle).
    Fewer, longer blocks pay the per-block cost (the queries' loads, the warps' merge, the
    partial results, the merge's reads) less often. H100, batch 1, 4096 keys: attention_split
    (min_blocks one per SM) took 17.7 us with chunks of 128 (256 blocks), 25.7 with 64.
    attention_split_mma takes chunks up to 4096 keys and min_blocks about two per SM
    (sm_count * 15 / 8: 247 of 132 SMs): batch 4, 32768 keys 179.0 us with 4096 (256 blocks)
    against 191.3 with 1024, batch 2 94.9 with 2048 against 101.0."""
    fits = [c for c in chunks if c >= step] or [max(chunks)]
    for c in fits:
        if -(-length // c) * blocks_per_split >= min_blocks:
            return c
    return fits[-1]


SIMULATED_SMS = 16           # the GPU the simulator stands for: splits as a small GPU makes them
MMA_WARPS = 4                # attention_split_mma's default warps a block (16 keys each a tile): the
                             # chunk is a multiple of their tile; WARPS and STAGES (tiles in flight)
                             # come from its tuned table (ember tune attention_split_mma), whose
                             # buckets are batch x context x M at the chunks chosen here
MMA_CHUNKS = (4096, 2048, 1024) + CHUNKS
TENSOR_CORES = True          # attention_split_mma where it applies (False: always attention_split)
MAX_CLUSTER = 8              # splits a (portable) cluster merges (attention_cluster_mma; 0: always the
                             # merge kernel)
WIDE_CLUSTER = 16            # splits a non-portable cluster merges, for short chunks only (cluster_chunk)
SHORT_CHUNK = 512            # chunks a cluster takes however few its blocks (cluster_chunk)


def use_tensor_cores(t: str, rows: int, d: int, device: int) -> bool:
    """attention_split_mma takes bf16 / f16 caches, up to 16 query rows a KV head (G x M) and
    needs sm_80's mma.sync and cp.async; attention_split does the rest."""
    if not TENSOR_CORES or t not in ("bf16", "f16") or rows > 16 or d % 16:
        return False
    return A.compute_capability(device) >= (8, 0)


MAX_CLUSTER_CHUNK = 2048     # longer chunks keep the split pass (see cluster_chunk)


def cluster_chunk(length: int, heads: int, sm_count: int, device: int, step: int = 16 * MMA_WARPS,
                  rule: bool = True) -> int | None:
    """The chunk of attention_cluster_mma (one launch: a KV head's splits are the blocks of
    one thread-block cluster, sm_90, which merge their results through distributed shared
    memory) for `heads` (KV heads x batch), or None: the split pass and the merge kernel.
    The smallest of MMA_CHUNKS that splits `length` into at most MAX_CLUSTER and makes at most
    one block an SM; with `rule`, only where its chunk is short (SHORT_CHUNK keys at most) or
    its clusters are pairs whose blocks fill at least half the SMs - else, for a short chunk
    only, up to WIDE_CLUSTER splits (a non-portable cluster). Where this GPU's tuned tables
    hold both sides (_measured_faster), they decide instead, between the split pass and the
    rule's cluster (or, where the rule refuses one, the cluster this gives without `rule`).

    Measured (bench attention, 2026-11-27, us; one launch / split + merge, torch SDPA): long
    chunks in clusters of 4 to 8 leave the memory idle - H100, batch 1 at 8192 keys (8 splits of
    1024, 64 blocks) 21.05 / 19.88 and 19.34 in 16 splits of 512 (SDPA 18.93); at 16384 keys
    (8 of 2048) 36.96 / 30.84 (SDPA 29.88); the H200 at 128 blocks too: batch 2 at 8192 keys
    (8 of 1024) 26.1 / 23.91, at 16384 (8 of 2048) 46.42 / 38.91, batch 4 at 8192 (4 of 2048)
    45.61 / 38.87. Short chunks and pairs pay: H100, batch 1 at 512 keys 5.4 / 7.9 (64 blocks of
    64), at 4096 11.2 / 14.0 (64 of 512; 16 splits of 256: 13.1), batch 2 at 4096 18.1 / 19.9;
    batch 8 at 4096 (pairs of 2048) 48.5 / 51.9 and on the H200 34.9 / 38.5. Batch 2 at 32768
    would take chunks of 4096 (MAX_CLUSTER_CHUNK: one block an SM there took 98.2 against
    94.3, the split pass runs two). Tuned as well as the rule's chunks (a later session, H100,
    `ember tune`, the best of WARPS x STAGES x CHAINS each): batch 1 at 4096 keys in 16 splits
    of 256 took 13.4 us against 11.03 in 8 of 512, at 512 keys 16 splits of 32 5.61 against
    5.01 in 8 of 64 - twice the blocks do not pay for the wider merge; and a deeper ring
    (STAGES 6, 192 KB of tiles) was not the best at any of these shapes. One block an SM at
    long contexts (H100, 2026-11-27, each tuned, one process, three interleaved rounds, us;
    the cluster / split + merge / torch SDPA): batch 1 at 16384 keys in 16 splits of 1024
    30.7-31.3 / 30.5-30.7 / 29.5-29.7, at 32768 in 16 of 2048 53.6-54.0 / 51.7-52.6 /
    51.0-51.1, batch 2 at 16384 in 8 of 2048 52.1-52.6 / 51.1-51.9 / 50.6-50.8, batch 4 at
    8192 in 4 of 2048 51.7-52.1 / 52.1-52.2 / 51.3-51.5: the merge it saves is paid back in
    a slower stream (one block an SM keeps fewer bytes in flight than two). Nor is it where
    the clusters land (H200, 2026-11-28, a probe writing each block's %smid, and decode
    attention timed in one process, three interleaved rounds): a cluster's blocks take
    distinct SMs under every cluster scheduling policy (default, spread, load balancing: the
    same places, times within 1%); 8 clusters of 16 blocks take 112 SMs (7 GPCs hold 16 on
    16 SMs: the eighth doubles up), 8 of 8 take 120. Forcing one block an SM (116 KB of shared
    memory) made every cluster shape 1.4-1.6x slower (the last cluster waits for a whole one
    to finish). Batch 1 at 32768 keys, us: 16 splits of 2048 48.3, 8 of 4096 63.9, the split
    pass and the merge 39.6, SDPA 38.0; at 8192: 16 of 512 17.0, 8 of 1024 19.7, 16.8, 15.4."""
    if not MAX_CLUSTER or A.compute_capability(device) < (9, 0):
        return None
    for size in dict.fromkeys((MAX_CLUSTER, max(MAX_CLUSTER, WIDE_CLUSTER) if rule else MAX_CLUSTER)):
        for c in sorted(MMA_CHUNKS):
            splits = -(-length // c)
            if c >= step and splits <= size and splits * heads <= sm_count:
                if not rule:
                    return c if c <= MAX_CLUSTER_CHUNK else None
                pairs = splits <= 2 and c <= MAX_CLUSTER_CHUNK and 2 * splits * heads >= sm_count
                if c <= SHORT_CHUNK or pairs:
                    return c
                break                    # the smallest chunk that fits is refused: a wider cluster, or none
    return None


def _sm_count(device: int) -> int:
    if A.simulating():
        return SIMULATED_SMS
    from ..runtime import cuda
    return cuda.context(device).sm_count


def _plan(q, k_cache, v_cache, lengths, out, max_length) -> list:
    op = "decode_attention"
    vq, t, views, (batch, m, hq, d, s, hkv) = _inputs(q, k_cache, v_cache, lengths, max_length)
    if isinstance(out, Q8Activations):
        if out.digits:
            raise A.ArgumentError(op, "out", "holds digits; decode_attention writes Q8_1 activations (or f32 / "
                                             "its dtype)")
        if (hq * d) % QK_K:
            raise A.ArgumentError(op, "out", f"is Q8_1 activations, which need HQ x D ({hq * d}) a multiple of {QK_K}")
        A.int_range(op, "out", batch * m, 1, 8, "Q8_1 activations hold B x M rows, 1..8")
        vqa, vqd = out.check(op, batch * m, hq * d)
        outs = {"out.aq": vqa, "out.ads": vqd}
    else:
        vo = A.view(op, "out", out, written=True)
        A.dtype(op, "out", vo, tuple(dict.fromkeys((vq.dtype, t, "f32"))))
        A.shape(op, "out", vo, vq.shape, "q's shape")
        A.contiguous(op, "out", vo)
        A.aligned(op, "out", vo, 4)
        outs = {"out": vo}
    for name, v in views.items():
        for o, vo in outs.items():
            A.no_overlap(op, name, v, o, vo)
    device = A.same_device(op, {**views, **outs}) or 0
    length = max_length or s
    tq = {"TQ": vq.dtype} if vq.dtype != t else {}
    mma = use_tensor_cores(t, hq // hkv * m, d, device)
    if mma:
        one = cluster_chunk(length, hkv * batch, _sm_count(device), device)
        chunk = choose_chunk(length, hkv * batch, _sm_count(device) * 15 // 8, 16 * MMA_WARPS, MMA_CHUNKS)
        defines = {"T": t, "D": d, "G": hq // hkv, "M": m, "CHUNK": chunk, **tq}
        # the tables decide between the split pass and the rule's cluster, or, where the rule
        # refuses one, the cluster that fits
        candidate = one if one is not None else cluster_chunk(length, hkv * batch, _sm_count(device), device,
                                                              rule=False)
        measured = None if candidate is None else _measured_faster(defines, candidate, length, batch * length * m,
                                                                   device)
        one = one if measured is None else (candidate if measured == "cluster" else None)
        launches = None if one is None else _clustered(q, k_cache, v_cache, lengths, out, outs,
                                                       {**defines, "CHUNK": one}, -(-length // one), batch,
                                                       length, hkv, s, d, device)
        if launches is not None:
            return launches
    # the tensor cores' kernels where their tiles fit the GPU's shared memory (head_dim 256
    # takes 128 KB: not on an sm_86, sm_89 or sm_120), else attention_split
    if mma and fits("decode_attention_mma.ember", "attention_split_mma", defines, batch * length * m, device):
        split, _ = kernel("decode_attention_mma.ember", "attention_split_mma", defines, batch * length * m, device)
    else:
        lanes = lanes_per_key(hq // hkv * m)
        chunk = choose_chunk(length, hkv * batch, _sm_count(device), WARPS * lanes["KG"] * lanes["U"])
        # WARPS, U and PREFETCH from attention_split's tuned table where the rule's U is the
        # kernel's default (its buckets: 4 rows a KV head), else the rule's
        rule = {"U": lanes["U"]} if lanes["U"] != SPLIT_DEFAULT_U else {}
        defines = {"T": t, "D": d, "G": hq // hkv, "M": m, "CHUNK": chunk, "KG": lanes["KG"], **rule, **tq}
        split, _ = kernel("decode_attention.ember", "attention_split", defines, batch * length * m, device)
    splits = -(-length // chunk)
    if splits > MAX_SPLITS:
        raise A.ArgumentError(op, "max_length" if max_length else "k_cache",
                              f"makes {splits} splits of {chunk} keys; the merge takes at most {MAX_SPLITS} "
                              f"(contexts up to {MAX_SPLITS * chunk} keys)")
    part = A.empty_like(vq, (batch, splits, hq, m, d + 2), "f32")
    scale = _scale(d)
    if isinstance(out, Q8Activations):
        merge, _ = kernel("decode_attention.ember", "attention_merge_q8", {"T": t, "D": d, "M": m}, 1, device)
        merged = merge.prepare(part, A.reinterpret(outs["out.aq"], "<u4", 4, writable=True),
                               A.reinterpret(outs["out.ads"], "<u4", 4, writable=True), hq, splits, lengths, chunk,
                               grid=(hq, m, batch))
    else:
        to = outs["out"].dtype
        merge, _ = kernel("decode_attention.ember", "attention_merge",
                          {"T": t, "D": d, "M": m, **({"TO": to} if to != t else {})}, 1, device)
        merged = merge.prepare(part, out, hq, splits, lengths, chunk, grid=(hq, m, batch))
    return [Keep(part),
            split.prepare(q, k_cache, v_cache, lengths, part, hkv, s, splits, scale, grid=(splits, hkv, batch)),
            merged]


def _scale(d: int) -> float:
    """The scores' scale the kernels take: 1 / sqrt(D), times log2 e (softmax in base 2)."""
    return 1.0 / math.sqrt(d) * math.log2(math.e)


MERGE_US = 2.5               # what the merge kernel adds to the split pass (bench attention, us:
                             # 2.3-3.0 on an H100, 2.6 on an H200 at 512 to 4096 keys)
# Tried and not kept (H100, 2026-11-27, bench attention, one run): the split pass merging
# itself, its last block of each KV head (a ticket per block: atomic_add acq_rel, the
# memory_model.md pattern) merging the head's G x M rows one after another, the merge
# kernel's bits exactly (simulator and GPU, replayed graphs too). Slower at every shape
# that takes the split pass, us, last blocks merge / split + merge kernel / SDPA: batch 1
# at 512 keys 11.33 / 7.08 / 8.1, at 16384 35.07 / 30.76 / 29.84, at 32768 56.55 / 52.72 /
# 51.17; batch 8 at 4096 53.4 / 52.13; the layer at batch 1, 32768 keys 119.2 against 114.6.
# The merge kernel runs a block per query row on every SM, launched before the split pass
# ends (programmatic launch); one block per head merging its rows after its ticket is a
# serial tail of round trips to L2 that nothing overlaps.


def _measured_faster(split_defines: dict, one: int, length: int, size: int, device: int) -> str | None:
    """"split" or "cluster": which this GPU's tuned tables measured faster, the split pass (at
    its own chunk) plus the merge or the one launch (at chunk `one`); None without both
    entries (another GPU, other const values, the simulator), where cluster_chunk's rule
    decides. The GPUs differ where the rule refuses long chunks: batch 4 at 4096 keys (4 splits
    of 1024) took 29.1 us in one launch against 28.2 for the split pass (and 2.5 for the merge:
    MERGE_US) on an H100, 25.6 against 21.6 on an H200; batch 1 at 8192 keys (the rule's 16
    splits of 512) 18.93 against 16.47 on an H100, 16.82 against 13.25 on an H200."""
    split = tuned_us("attention_split_mma", split_defines, size, device)
    clustered = tuned_us("attention_cluster_mma", {**split_defines, "CHUNK": one, "SPLITS": -(-length // one)},
                         size, device)
    if split is None or clustered is None:
        return None
    return "split" if split + MERGE_US < clustered else "cluster"


def _clustered(q, k_cache, v_cache, lengths, out, outs, defines, splits, batch, length, hkv, s, d,
               device) -> list | None:
    """decode_attention as one attention_cluster_mma launch (or its _q8 form): the splits of
    a KV head are the blocks of one cluster, merged there - or None where its tiles do not
    fit the GPU's shared memory, or where the GPU cannot schedule one such cluster (a
    non-portable 16 blocks, which the H100 and H200 take and another sm_90+ GPU may not)."""
    defines = {**defines, "SPLITS": splits}
    size = batch * length * defines["M"]               # the bucket's size, as the split pass's
    scale = _scale(d)
    if isinstance(out, Q8Activations):
        name, lookup = "attention_cluster_mma_q8", {"table_of": "attention_cluster_mma"}
        args = (A.reinterpret(outs["out.aq"], "<u4", 4, writable=True),
                A.reinterpret(outs["out.ads"], "<u4", 4, writable=True))
    else:
        to = outs["out"].dtype
        name, lookup = "attention_cluster_mma", {}
        defines = {**defines, **({"TO": to} if to != defines["T"] else {})}
        args = (out,)
    if not fits("decode_attention_mma.ember", name, defines, size, device, **lookup):
        return None
    kern, _ = kernel("decode_attention_mma.ember", name, defines, size, device, **lookup)
    if kern.max_active_clusters((splits, hkv, batch)) < 1:
        return None
    return [kern.prepare(q, k_cache, v_cache, lengths, *args, hkv, s, scale, grid=(splits, hkv, batch))]
