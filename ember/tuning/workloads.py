"""What `ember tune` runs a kernel on: for each tunable kernel of `kernels_src/`, its inputs
at a shape (fresh random data from a seed, never zeros), the launch, and the f64 reference
the output is checked against before a configuration is timed. A workload names the bytes
it moves, so that a time reads as a bandwidth.

A kernel without a workload here cannot be tuned by `ember tune` (it says so); adding one
is a function of a shape returning a Workload (ember.tuning.workload), registered in
WORKLOADS (the Q4_K GEMVs' in ember.tuning.q4k_workloads)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..records import replace
from ..shipped import KERNELS_SRC
from .q4k_workloads import (q4k_digits_gemv, q4k_digits_imma, q4k_digits_swiglu, q4k_digits_swiglu_imma, q4k_gemv,
                            q4k_q8_gemv, q4k_q8_imma, q4k_q8_swiglu, q4k_q8_swiglu_imma)
from .workload import Workload, imma_grid, seeded_rng, warp_rows_grid


def _norm_rows_inputs(kernel: str, shape: str, dtype: str) -> tuple:
    """rows, cols, the numpy type, the generator (for more draws), x and gamma of a
    ROWSxCOLS RMSNorm of f32 or bf16 rows, fresh from a seed of the kernel and shape."""
    rows, cols = (int(v) for v in shape.split("x"))
    rng = seeded_rng(f"{kernel} {shape} {dtype}")
    np_t = np.float32 if dtype == "f32" else _bf16()
    x = (rng.standard_normal((rows, cols)) * rng.uniform(0.5, 4.0, (rows, 1))).astype(np_t)
    gamma = (rng.random(cols) + 0.5).astype(np_t)
    return rows, cols, np_t, rng, x, gamma


def rmsnorm_rows(shape: str, dtype: str = "f32") -> Workload:
    """kernels_src/rmsnorm.ember rmsnorm_rows: ROWSxCOLS rows of f32 or bf16."""
    from ..reference.rmsnorm import rmsnorm
    rows, cols, np_t, _, x, gamma = _norm_rows_inputs("rmsnorm_rows", shape, dtype)
    eps = 1e-6
    ref = rmsnorm(x.astype(np.float64), gamma.astype(np.float64), eps)
    item = np.dtype(np_t).itemsize
    return Workload(KERNELS_SRC / "rmsnorm.ember", "rmsnorm_rows", f"{shape} {dtype}",
                    {"T": dtype, "COLS": cols}, {"x": x, "gamma": gamma}, "y",
                    {"y": np.zeros((rows, cols), np_t)}, ["x", "gamma", "y", eps], lambda c: (rows,),
                    ref, 1e-5 if dtype == "f32" else 1e-2, 2 * rows * cols * item + cols * item)


def add_rmsnorm_rows(shape: str, dtype: str = "f32") -> Workload:
    """kernels_src/rmsnorm.ember add_rmsnorm_rows: h = x + r (the f32 sum rounded to T)
    written back over r, and y = rmsnorm(h) * gamma, ROWSxCOLS rows of f32 or bf16; y and h
    checked as one array against the f64 norm of the rounded sum and the sum itself."""
    from ..reference.rmsnorm import rmsnorm
    rows, cols, np_t, rng, x, gamma = _norm_rows_inputs("add_rmsnorm_rows", shape, dtype)
    r = (rng.standard_normal((rows, cols)) * 2.0).astype(np_t)
    eps = 1e-6
    h = (x.astype(np.float32) + r.astype(np.float32)).astype(np_t)       # one rounding, as the kernel
    ref = np.concatenate([rmsnorm(h.astype(np.float64), gamma.astype(np.float64), eps).reshape(-1),
                          h.astype(np.float64).reshape(-1)])
    item = np.dtype(np_t).itemsize

    def decode(out: dict) -> np.ndarray:
        return np.concatenate([np.asarray(out[n], np.float64).reshape(-1) for n in ("y", "r")])
    return Workload(KERNELS_SRC / "rmsnorm.ember", "add_rmsnorm_rows", f"{shape} {dtype}",
                    {"T": dtype, "COLS": cols}, {"x": x, "gamma": gamma}, "y",
                    {"y": np.zeros((rows, cols), np_t), "r": r}, ["x", "r", "gamma", "y", eps], lambda c: (rows,),
                    ref, 1e-5 if dtype == "f32" else 1e-2, 4 * rows * cols * item + cols * item, decode=decode)


def rmsnorm(shape: str, dtype: str = "f32") -> Workload:
    """kernels_src/rmsnorm.ember rmsnorm (any row length, `cols` a parameter): ROWSxCOLS rows
    of f32 or bf16."""
    rows_wl = rmsnorm_rows(shape, dtype)
    cols = int(shape.split("x")[1])
    return replace(rows_wl, kernel="rmsnorm", defines={"T": dtype}, args=["x", "gamma", "y", cols, rows_wl.args[-1]])


def _norm_rows(kernel: str, shape: str) -> tuple:
    """x, r (f32 [rows, cols], a residual stream's scale), gamma and the f64 sum h = x + r and
    rms_norm(h) * gamma of a decoder layer's add + RMSNorm."""
    from ..reference.rmsnorm import rmsnorm as reference
    rows, cols = (int(v) for v in shape.split("x"))
    if rows < 1 or cols < 256 or cols % 256:
        raise ValueError(shape)
    rng = seeded_rng(f"{kernel} {shape}")
    x = (rng.standard_normal((rows, cols)) * rng.uniform(0.5, 4.0, (rows, 1))).astype(np.float32)
    r = (rng.standard_normal((rows, cols)) * 2.0).astype(np.float32)
    gamma = (rng.random(cols) + 0.5).astype(np.float32)
    h = x.astype(np.float64) + r
    return rows, cols, x, r, gamma, h, reference(h, gamma.astype(np.float64), 1e-5)


def _activations_back(rows: int, cols: int, digits: bool, h_name: str):
    """decode for the add + RMSNorm kernels: their quantised rows read back as the values
    they stand for, then the sum they wrote (checked as one array against (y, h))."""
    from ..reference import q4k as R

    def decode(out: dict) -> np.ndarray:
        if digits:
            planes = np.asarray(out["aq"]).reshape(3, -1)
            d = np.stack([R.unsplit_words(plane, rows, cols) for plane in planes])
            s = np.asarray(out["ads"]).view(np.float32).reshape(rows, cols // 32, 2)[..., 0]
            y = R.dequantize_digits(d, s)
        else:
            q, d, _ = R.unsplit_q8_1(out["aq"], out["ads"], rows, cols)
            y = (q.reshape(rows, -1, 32) * d[..., None]).reshape(rows, cols)
        return np.concatenate([y.reshape(-1), np.asarray(out[h_name], np.float64).reshape(-1)])
    return decode


def add_rmsnorm_q8_parts(shape: str, activations: str = "q8_1") -> Workload:
    """kernels_src/rmsnorm_q8.ember add_rmsnorm_q8_parts: ROWSxCOLS, the sum into another
    buffer and the normalised rows as Q8_1 (`q8_1`) or digits (`digits`), as a decoder layer
    runs it (ember.ops.add_rms_norm_q8 with residual_out). Checked: the activations read back
    (Q8_1 within half a step, 5e-3 of the largest value; digits within 1e-5) and the sum."""
    if activations not in ("q8_1", "digits"):
        raise ValueError(activations)
    digits = activations == "digits"
    rows, cols, x, r, gamma, h, y = _norm_rows("add_rmsnorm_q8_parts", shape)
    planes = 3 if digits else 1
    outputs = {"h_out": np.zeros((rows, cols), np.float32), "aq": np.zeros(planes * rows * cols // 4, np.uint32),
               "ads": np.zeros(rows * cols // 32 * (2 if digits else 1), np.uint32)}
    return Workload(KERNELS_SRC / "rmsnorm_q8.ember", "add_rmsnorm_q8_parts", f"{shape} {activations}",
                    {"COLS": cols, **({"DIGITS": "true"} if digits else {})}, {"x": x, "r": r, "gamma": gamma},
                    "aq", outputs, ["x", "r", "h_out", "gamma", "aq", "ads", 1e-5, rows],
                    lambda c: (cols // c["PART"], rows), np.concatenate([y.reshape(-1), h.reshape(-1)]),
                    1e-5 if digits else 5e-3, 3 * x.nbytes + gamma.nbytes + sum(a.nbytes for a in outputs.values()),
                    decode=_activations_back(rows, cols, digits, "h_out"))


def add_rmsnorm_q8(shape: str) -> Workload:
    """kernels_src/rmsnorm_q8.ember add_rmsnorm_q8: ROWSxCOLS, the sum written back into the
    residual (in place: the residual is an output, reset before the check; the timed launches
    keep adding into it) and the normalised rows as Q8_1. Checked as add_rmsnorm_q8_parts."""
    rows, cols, x, r, gamma, h, y = _norm_rows("add_rmsnorm_q8", shape)
    outputs = {"r": r, "aq": np.zeros(rows * cols // 4, np.uint32), "ads": np.zeros(rows * cols // 32, np.uint32)}
    return Workload(KERNELS_SRC / "rmsnorm_q8.ember", "add_rmsnorm_q8", shape, {"COLS": cols},
                    {"x": x, "gamma": gamma}, "aq", outputs, ["x", "r", "gamma", "aq", "ads", 1e-5],
                    lambda c: (rows,), np.concatenate([y.reshape(-1), h.reshape(-1)]), 5e-3,
                    3 * x.nbytes + gamma.nbytes + outputs["aq"].nbytes + outputs["ads"].nbytes,
                    decode=_activations_back(rows, cols, False, "r"))


def _attention(kernel: str, shape: str, chunk: str, dtype: str) -> tuple:
    """The inputs and f64 partial results of decode attention's split pass at `BATCHxCONTEXTxM[xHKV]
    cCHUNK`: 4 query heads a KV head (8 KV heads unless given), head_dim 128, caches and
    queries of `dtype`; the partials (sum of p v, sum of p, max score in base 2, per split
    and query row) as part [B, SPLITS, HQ, M, D + 2] holds them."""
    dims = [int(v) for v in shape.split("x")]
    if len(dims) not in (3, 4) or not chunk.startswith("c"):
        raise ValueError(shape)
    batch, ctx, m = dims[:3]
    hkv = dims[3] if len(dims) == 4 else 8
    chunk_keys, g, d = int(chunk[1:]), 4, 128
    if not (batch >= 1 and 1 <= m <= 4 and m <= ctx and hkv >= 1 and chunk_keys >= 16):
        raise ValueError(shape)
    splits = -(-ctx // chunk_keys)
    rng = seeded_rng(f"{kernel} {shape}")
    np_t = _bf16() if dtype == "bf16" else np.float32
    q = rng.standard_normal((batch, m, hkv * g, d)).astype(np_t)
    k = rng.standard_normal((batch, ctx, hkv, d)).astype(np_t)
    v = rng.standard_normal((batch, ctx, hkv, d)).astype(np_t)
    lengths = np.full(batch, ctx, np.int32)
    scale = np.float32(1.0 / np.sqrt(d) * np.log2(np.e))
    ref = np.zeros((batch, splits, hkv * g, m, d + 2))
    for b in range(batch):
        for h in range(hkv):
            kk, vv = k[b, :, h].astype(np.float64), v[b, :, h].astype(np.float64)
            for r in range(g * m):
                qm, hq = r // g, h * g + r % g
                seen = ctx - m + qm + 1                 # the keys query qm of the sequence sees
                s2 = kk[:seen] @ (q[b, qm, hq].astype(np.float64) * np.float64(scale))
                for sp in range(splits):
                    part = s2[sp * chunk_keys:min(sp * chunk_keys + chunk_keys, seen)]
                    p = np.exp2(part - part.max())
                    ref[b, sp, hq, qm, :d] = p @ vv[sp * chunk_keys:sp * chunk_keys + len(part)]
                    ref[b, sp, hq, qm, d], ref[b, sp, hq, qm, d + 1] = p.sum(), part.max()
    inputs = {"q": q, "k": k, "v": v, "lengths": lengths}
    return (inputs, ref, {"T": dtype, "D": d, "G": g, "M": m, "CHUNK": chunk_keys},
            ["q", "k", "v", "lengths", "part", hkv, ctx, splits, scale], lambda c: (splits, hkv, batch),
            k.nbytes + v.nbytes + q.nbytes + ref.size * 4)


def attention_split_mma(shape: str, chunk: str = "") -> Workload:
    """kernels_src/decode_attention_mma.ember attention_split_mma at `BATCHxCONTEXTxM[xHKV]
    cCHUNK [f32]` (_attention), bf16 cache and queries (f32 ones with `f32`: TQ, the decoder
    layer's, whose values are the bf16 ones widened). The shipped buckets take the chunk
    ember.ops chooses on a GPU of 132 SMs (the H100's and the H200's:
    tests/tuning/test_workloads.py checks it), so that ember.ops finds their entries (an
    entry's CHUNK is one of its const values). Checked: the partial results against their
    f64 values."""
    chunk, _, queries = chunk.partition(" ")
    if queries not in ("", "f32"):
        raise ValueError(queries)
    inputs, ref, defines, args, grid, moved = _attention("attention_split_mma", shape, chunk, "bf16")
    if queries:                                 # the decoder layer's f32 queries (TQ): the same partials
        inputs["q"] = inputs["q"].astype(np.float32)
        defines = {**defines, "TQ": "f32"}
        moved += inputs["q"].nbytes // 2
    return Workload(KERNELS_SRC / "decode_attention_mma.ember", "attention_split_mma",
                    f"{shape} {chunk}" + (" f32" if queries else ""), defines, inputs, "part",
                    {"part": np.zeros(ref.shape, np.float32)}, args, grid, ref, 1e-4, moved)


def attention_cluster_mma(shape: str, chunk: str = "") -> Workload:
    """kernels_src/decode_attention_mma.ember attention_cluster_mma at `BATCHxCONTEXTxM[xHKV]
    cCHUNK [f32]`: decode attention in one launch, the CONTEXT / CHUNK splits of a KV head (up
    to 16; ember.ops takes past 8 only for chunks of 512 keys at most) merged in their cluster; bf16 cache and output, bf16
    queries or f32 ones (TQ: the decoder layer's rotated queries, ember.model.layer - an
    entry serves only calls of its own const values). The shipped buckets take the chunk ember.ops chooses on a GPU of
    132 SMs (ember.ops.attention.cluster_chunk). Checked: the output against the f64
    attention."""
    from ..reference.attention import decode_attention
    chunk, _, queries = chunk.partition(" ")
    if queries not in ("", "f32"):
        raise ValueError(queries)
    inputs, _, defines, args, grid, _ = _attention("attention_cluster_mma", shape, chunk, "bf16")
    splits, hkv, batch = grid(None)
    if queries == "f32":
        inputs["q"] = inputs["q"].astype(np.float32)
        defines = {**defines, "TQ": "f32"}
    q, k, v = (inputs[n] for n in ("q", "k", "v"))
    ref = decode_attention(*(a.astype(np.float64) for a in (q, k, v)), inputs["lengths"])
    out = np.zeros(q.shape, k.dtype)
    moved = k.nbytes + v.nbytes + q.nbytes + out.nbytes
    bucket = f"{shape} {chunk}" + (" f32" if queries == "f32" else "")
    return Workload(KERNELS_SRC / "decode_attention_mma.ember", "attention_cluster_mma", bucket,
                    {**defines, "SPLITS": splits}, inputs, "out", {"out": out},
                    ["q", "k", "v", "lengths", "out", hkv, args[6], args[8]], grid, ref, 4e-3, moved)


def attention_split(shape: str, chunk: str = "") -> Workload:
    """kernels_src/decode_attention.ember attention_split - decode attention where the tensor
    cores do not apply (ember.ops: f32 caches, or more than 16 query rows a KV head) - at
    `BATCHxCONTEXTxM[xHKV] cCHUNK` (_attention), f32 cache and queries, KG (keys side by
    side across a warp's lanes) as ember.ops gives it for 4 rows. The shipped buckets take
    the chunk ember.ops chooses on a GPU of 132 SMs with its default step (WARPS 4 x KG 4 x
    U 2 keys). Checked: the partial results against their f64 values."""
    inputs, ref, defines, args, grid, moved = _attention("attention_split", shape, chunk, "f32")
    return Workload(KERNELS_SRC / "decode_attention.ember", "attention_split", f"{shape} {chunk}",
                    {**defines, "KG": 4}, inputs, "part", {"part": np.zeros(ref.shape, np.float32)}, args, grid,
                    ref, 1e-5, moved)


def rope_out(shape: str, dtype: str = "f32") -> Workload:
    """kernels_src/rope.ember rope_out (out of place, so that every launch reads the same
    input): TOKENSxHEADSxHEAD_DIM of f32 or bf16, positions 0..TOKENS-1 shuffled, base 10000."""
    from ..reference.rope import rope
    tokens, heads, head_dim = (int(v) for v in shape.split("x"))
    rng = seeded_rng(f"rope_out {shape} {dtype}")
    np_t = np.float32 if dtype == "f32" else _bf16()
    x = rng.standard_normal((tokens, heads, head_dim)).astype(np_t)
    positions = rng.permutation(tokens).astype(np.int32)
    item = np.dtype(np_t).itemsize
    return Workload(KERNELS_SRC / "rope.ember", "rope_out", f"{shape} {dtype}", {"HEAD_DIM": head_dim, "T": dtype},
                    {"x": x, "positions": positions}, "y", {"y": np.zeros_like(x)},
                    ["x", "y", "positions", heads, 10000.0],
                    lambda c: (-(-heads // c["HEADS_PER_THREAD"]), tokens),
                    rope(x.astype(np.float64), positions, 10000.0), 1e-5 if dtype == "f32" else 1e-2,
                    2 * x.size * item + positions.nbytes)


def q6k_gemv(shape: str) -> Workload:
    """kernels_src/q6k_gemv.ember q6k_gemv: MxNxK, Q6_K weights times M rows of f32."""
    from ..reference import q6k as R6
    m, n, k = (int(v) for v in shape.split("x"))
    rng = seeded_rng(f"q6k_gemv {shape}")
    w = R6.random_q6k(rng, n, k)
    x = (rng.standard_normal((m, k)) * rng.uniform(0.1, 10.0, (m, 1))).astype(np.float32)
    return Workload(KERNELS_SRC / "q6k_gemv.ember", "q6k_gemv", shape, {"M": m},
                    {"w": w.view(np.uint16), "x": x}, "y", {"y": np.zeros((m, n), np.float32)},
                    ["w", "x", "y", n, k], warp_rows_grid(n),
                    np.asarray(x, np.float64) @ R6.dequantize_q6k(w).T, 1e-5, w.nbytes + x.nbytes + m * n * 4)


def _q6k_inputs(kernel: str, shape: str):
    from ..reference import q6k as R6
    from .q4k_workloads import gemv_inputs
    return (R6, *gemv_inputs(kernel, shape, R6.random_q6k))


def q6k_q8_gemv(shape: str, kernel: str = "q6k_q8_gemv") -> Workload:
    """kernels_src/q6k_dp4a.ember q6k_q8_gemv: MxNxK, Q6_K weights times M rows of Q8_1
    activations (split on the host as quantize_q8_1 splits them); the reference is the f64
    product with the values the quants stand for. `kernel` q6k_q8_imma: the same product on
    int8 tensor cores (q6k_imma.ember)."""
    from ..reference import q4k as R4
    R6, m, n, k, w, x = _q6k_inputs(kernel, shape)
    q8 = R4.quantize_q8_1(x)
    aq, ads = R4.split_q8_1(q8)
    source, grid = _Q6K_SOURCES[kernel]
    return Workload(KERNELS_SRC / source, kernel, shape, {"M": m},
                    {"w": w.view(np.uint16), "aq": aq, "ads": ads}, "y", {"y": np.zeros((m, n), np.float32)},
                    ["w", "aq", "ads", "y", n, k], grid(n), R6.gemv_q8_1(w, q8), 1e-5,
                    w.nbytes + aq.nbytes + ads.nbytes + m * n * 4)


def q6k_digits_gemv(shape: str, variant: str = "", kernel: str = "q6k_digits_gemv") -> Workload:
    """kernels_src/q6k_dp4a.ember q6k_digits_gemv: MxNxK, Q6_K weights times M rows of f32
    activations as int8 digits (split on the host as quantize_digits splits them); `p2`
    after the shape: PLANES 2. The reference: the f64 product with the values the digits
    read stand for. `kernel` q6k_digits_imma: the same on int8 tensor cores (q6k_imma.ember,
    the (s, sum) pairs passed as words)."""
    from ..reference import q4k as R4
    from .q4k_workloads import _planes, _planes_define
    planes = _planes(variant)
    R6, m, n, k, w, x = _q6k_inputs(kernel, shape)
    aq, ds = R4.split_digits(*R4.quantize_digits(x))
    source, grid = _Q6K_SOURCES[kernel]
    ds = ds.view(np.uint32) if kernel == "q6k_digits_imma" else ds
    return Workload(KERNELS_SRC / source, kernel, f"{shape} {variant}".strip(),
                    {"M": m, **_planes_define(planes)}, {"w": w.view(np.uint16), "aq": aq, "ds": ds}, "y",
                    {"y": np.zeros((m, n), np.float32)}, ["w", "aq", "ds", "y", n, k], grid(n),
                    R6.gemv_digits(w, x, planes), 1e-5, w.nbytes + aq.nbytes * planes // 3 + ds.nbytes + m * n * 4)


def q6k_q8_imma(shape: str) -> Workload:
    """kernels_src/q6k_imma.ember q6k_q8_imma: q6k_q8_gemv's product on int8 tensor cores."""
    return q6k_q8_gemv(shape, "q6k_q8_imma")


def q6k_digits_imma(shape: str, variant: str = "") -> Workload:
    """kernels_src/q6k_imma.ember q6k_digits_imma: q6k_digits_gemv's on int8 tensor cores."""
    return q6k_digits_gemv(shape, variant, "q6k_digits_imma")


# the Q6_K GEMVs on Q8_1 or digits: (source, launch over n rows)
_Q6K_SOURCES = {"q6k_q8_gemv": ("q6k_dp4a.ember", warp_rows_grid),
                "q6k_digits_gemv": ("q6k_dp4a.ember", warp_rows_grid), "q6k_q8_imma": ("q6k_imma.ember", imma_grid),
                "q6k_digits_imma": ("q6k_imma.ember", imma_grid)}


def gemm_bf16(shape: str) -> Workload:
    """kernels_src/gemm_bf16.ember gemm_bf16 forward: MxNxK, y = a w^T with bf16 a [M, K]
    and w [N, K], f32 out; the reference the f64 product of the same bf16 values."""
    from ..reference.gemm import bf16_bits, bf16_values
    m, n, k = (int(v) for v in shape.split("x"))
    rng = seeded_rng(f"gemm_bf16 {shape}")
    a, w = bf16_values(rng.standard_normal((m, k))), bf16_values(rng.standard_normal((n, k)))
    return Workload(KERNELS_SRC / "gemm_bf16.ember", "gemm_bf16", shape, {},
                    {"a": bf16_bits(a), "b": bf16_bits(w)}, "c", {"c": np.zeros((m, n), np.float32)},
                    ["a", "b", "c", m, n, k], lambda c: (-(-n // c["BN"]), -(-m // c["BM"])),
                    np.asarray(a, np.float64) @ np.asarray(w, np.float64).T, 1e-5, 2 * (m + n) * k + 4 * m * n)


def gemm_wgmma(shape: str) -> Workload:
    """kernels_src/gemm_wgmma.ember gemm_wgmma forward (sm_90a): MxNxK, y = a w^T with bf16 a
    [M, K] and w [N, K] through tensor maps, f32 out, on the persistent grid its launcher
    uses (a block an SM, at most one a tile); the reference the f64 product of the same bf16
    values. Every configuration gives the same bits (tests/gpu/test_gemm_wgmma_gpu.py)."""
    from ..reference.gemm import bf16_bits, bf16_values
    m, n, k = (int(v) for v in shape.split("x"))
    rng = seeded_rng(f"gemm_wgmma {shape}")
    a, w = bf16_values(rng.standard_normal((m, k))), bf16_values(rng.standard_normal((n, k)))

    def grid(c):            # persistent: a block an SM (of the first GPU; the simulator: a block a tile)
        from ..runtime import cuda
        rm, rn = (n, m) if c.get("SWAP") else (m, n)          # SWAP tiles c^T
        tiles = -(-rm // (64 * c["CONSUMERS"])) * -(-rn // c["BN"])
        return (min(cuda.sm_count(), tiles) if cuda.available() else tiles,)
    return Workload(KERNELS_SRC / "gemm_wgmma.ember", "gemm_wgmma", shape, {},
                    {"a": bf16_bits(a), "b": bf16_bits(w)}, "c", {"c": np.zeros((m, n), np.float32)},
                    ["a", "b", "c", m, n, k], grid,
                    np.asarray(a, np.float64) @ np.asarray(w, np.float64).T, _depth_tolerance(k),
                    2 * (m + n) * k + 4 * m * n, arch=TARGETS["gemm_wgmma"])


def _depth_tolerance(k: int) -> float:
    """The normwise error a correct f32-accumulating product of depth k may show: 1e-5 up to
    4096, then growing with k as the sums' rounding does (gemm_wgmma, every configuration the
    same bits: 4.7e-6 at 4096, 1.96e-5 at 14336 on the tuner's random inputs). A wrong
    configuration is off by O(1)."""
    return max(1e-5, 2.5e-9 * k)


def _bf16():
    import ml_dtypes
    return ml_dtypes.bfloat16


# the GEMVs of the decoder layer (ember.model.layer): QKV, O and down, at batches 1 to 8
_LAYER_GEMVS = [f"{m}x{n}x{k}" for m in (1, 2, 4, 8) for n, k in ((6144, 4096), (4096, 4096), (4096, 14336))]

# the same with two digit planes (ember.model.layer with activations="digits2"): the QKV and
# down projections' digits GEMVs and the SwiGLU pair
_LAYER_DIGITS_P2 = [f"{m}x{n}x{k} p2" for m in (1, 2, 4, 8) for n, k in ((6144, 4096), (4096, 14336))]
_LAYER_SWIGLU_P2 = [f"{m}x14336x4096 p2" for m in (1, 2, 4, 8)]

# kernel -> (workload factory, its source, the shape buckets tuned by default: the decoder
# layer's shapes of bench/, e.g. Llama-3-8B's 4096 and 14336)
_Q6K_LAYER = [f"{m}x{n}x{k}" for m in (1, 2, 4, 8) for n, k in ((4096, 14336), (1024, 4096))]

WORKLOADS = {
    "rmsnorm_rows": (rmsnorm_rows, "rmsnorm.ember", ["16384x4096 f32", "4096x8192 bf16", "1x4096 f32"]),
    "add_rmsnorm_rows": (add_rmsnorm_rows, "rmsnorm.ember", ["16384x4096 f32", "4096x8192 bf16", "1x4096 f32"]),
    "rmsnorm": (rmsnorm, "rmsnorm.ember", ["16384x4096 f32", "4096x8192 bf16"]),
    # the decoder layer's two norms a layer (ember.model.layer), at batches 1 to 8
    "add_rmsnorm_q8_parts": (add_rmsnorm_q8_parts, "rmsnorm_q8.ember",
                             [f"{m}x4096 {a}" for a in ("digits", "q8_1") for m in (1, 2, 4, 8)]),
    "add_rmsnorm_q8": (add_rmsnorm_q8, "rmsnorm_q8.ember", [f"{m}x4096" for m in (1, 2, 4, 8)]),
    # and the decoder layer's other projections (ember.model.layer: QKV 6144x4096, O 4096x4096)
    "q4k_q8_gemv": (q4k_q8_gemv, "q4k_dp4a.ember", ["1x14336x4096", "1x4096x14336", "8x14336x4096", "1x6144x4096",
                                                    "1x4096x4096", "8x6144x4096", "8x4096x4096", "8x4096x14336"]
                    + [f"{m}x{n}x{k}" for m in (2, 4) for n, k in ((6144, 4096), (4096, 4096), (4096, 14336))]),
    "q4k_gemv": (q4k_gemv, "q4k_gemv.ember", ["1x14336x4096", "1x4096x14336", "8x14336x4096"]),
    "q4k_q8_swiglu": (q4k_q8_swiglu, "q4k_dp4a.ember", ["1x14336x4096", "8x14336x4096", "2x14336x4096",
                                                        "4x14336x4096"]),
    # and the decoder layer's shapes (ember.model.layer with digit activations)
    "q4k_digits_gemv": (q4k_digits_gemv, "q4k_digits.ember", ["1x14336x4096", "1x4096x14336", "8x14336x4096"]
                        + [f"{m}x{n}x{k}" for m in (1, 2, 4, 8) for n, k in ((6144, 4096), (4096, 14336))
                           if (m, n) != (1, 4096)] + _LAYER_DIGITS_P2),
    "q4k_digits_swiglu": (q4k_digits_swiglu, "q4k_digits_swiglu.ember",
                          [f"{m}x14336x4096" for m in (1, 2, 4, 8)] + _LAYER_SWIGLU_P2),
    # on int8 tensor cores: the decoder layer's shapes at every batch (ember.ops picks them from M = 2 on)
    "q4k_q8_imma": (q4k_q8_imma, "q4k_imma.ember", _LAYER_GEMVS),
    # (no p2 buckets: the two-plane entries `ember tune` chose alone - 8 x 4096 x 14336 in 2
    # stages, two blocks an SM - made the digits2 layer 8-9 us slower at batch 8 than the three
    # planes' entries (3 stages, one block an SM): under programmatic launch the blocks are
    # dispatched while the kernel before still runs and stack two to an SM; H100, 2026-11-27,
    # bench/results/layer_ab.md. ember.ops takes the three planes' entries for them.)
    "q4k_digits_imma": (q4k_digits_imma, "q4k_imma.ember", _LAYER_GEMVS),
    "q4k_q8_swiglu_imma": (q4k_q8_swiglu_imma, "q4k_imma.ember", [f"{m}x14336x4096" for m in (1, 2, 4, 8)]),
    "q4k_digits_swiglu_imma": (q4k_digits_swiglu_imma, "q4k_imma.ember",
                               [f"{m}x14336x4096" for m in (1, 2, 4, 8)] + _LAYER_SWIGLU_P2),
    "rope_out": (rope_out, "rope.ember", ["4096x32x128 f32", "4096x32x128 bf16", "1x32x128 f32"]),
    "q6k_gemv": (q6k_gemv, "q6k_gemv.ember", ["1x4096x14336", "1x14336x4096", "8x4096x14336"]),
    # on the activations a decoder layer makes: the Q6_K tensors of a Q4_K_M file (the down
    # projection 4096x14336, V 1024x4096) at every batch
    "q6k_q8_gemv": (q6k_q8_gemv, "q6k_dp4a.ember", _Q6K_LAYER),
    "q6k_digits_gemv": (q6k_digits_gemv, "q6k_dp4a.ember", _Q6K_LAYER + [f"{b} p2" for b in _Q6K_LAYER]),
    # the same on int8 tensor cores at batch 8 (ember.ops picks the faster of the pair there;
    # with no bucket of its M it takes the DP4A kernels). Alone they were faster from M = 4 on
    # (H100, 2026-11-27, `ember tune`, us, tensor cores / dp4a: digits 4 x 4096 x 14336 37.8 /
    # 44.4, Q8_1 25.8 / 28.8), but in a Q4_K_M decoder layer at batch 4 (after the SwiGLU pair
    # and quantize_digits) the digits kernel took 55.9 us (torch profiler; 46.7 the DP4A one)
    # and the layer 135-136 us against 120-123 with the DP4A kernel; Q8_1 gained nothing there.
    # At batch 8 the layer gained 14-17 us (digits) and 9-10 (Q8_1). Launched plainly it was
    # the same; not understood (bench/results/q6k_ab.md). Again with a super-block a stage
    # (2026-11-28, H100, one run, two interleaved rounds): alone at M = 4 digits 30.6 / 44.4 us,
    # Q8_1 24.9 / 28.8, in the layer at batch 4 with 4x entries / without them: digits
    # 121.4-122.3 / 120.7-120.9 us a layer at 512 keys, 146.6-147.4 / 145.1-145.9 at 4096; Q8_1
    # 102.9-103.9 / 97.7-98.6, 123.5-125.4 / 121.2-121.5 - so still the batch-8 buckets only.
    "q6k_q8_imma": (q6k_q8_imma, "q6k_imma.ember", [b for b in _Q6K_LAYER if b.startswith("8x")]),
    "q6k_digits_imma": (q6k_digits_imma, "q6k_imma.ember",
                        [f"{b}{v}" for b in _Q6K_LAYER if b.startswith("8x") for v in ("", " p2")]),
    # the decoder layer's attention (ember.ops.decode_attention): batch x context x queries
    "attention_split_mma": (attention_split_mma, "decode_attention_mma.ember",
                            [f"{b} {q}".strip() for q in ("", "f32") for b in
                             ("1x512x1 c64", "2x512x1 c64", "4x512x1 c64", "8x512x1 c128", "1x4096x1 c128",
                              "2x4096x1 c256", "4x4096x1 c512", "8x4096x1 c1024", "1x32768x1 c1024",
                              "2x32768x1 c2048", "1x8192x1 c256")]),
    # the same in one launch where a KV head's splits fit a cluster (ember.ops on sm_90)
    "attention_cluster_mma": (attention_cluster_mma, "decode_attention_mma.ember",
                              [f"{b} {q}".strip() for q in ("", "f32") for b in
                               ("1x512x1 c64", "2x512x1 c64", "4x512x1 c128", "8x512x1 c256", "1x4096x1 c512",
                                "2x4096x1 c512", "4x4096x1 c1024", "8x4096x1 c2048", "1x8192x1 c512")]),
    # the same at f32 caches (ember.ops's chunks for them: about one block an SM)
    "attention_split": (attention_split, "decode_attention.ember",
                        ["1x512x1 c32", "4x512x1 c64", "1x4096x1 c128", "4x4096x1 c512", "1x32768x1 c512"]),
    "gemm_bf16": (gemm_bf16, "gemm_bf16.ember", ["4096x4096x4096", "2048x14336x4096"]),
    # sm_90a: the large shapes, and decode ones (where the table chooses SWAP, the swapped
    # operands: bench/results/gemm_wgmma_decode.md), both orientations of the layer's big
    # matrix (the same size: a call picks its bucket by the shape where it is one)
    "gemm_wgmma": (gemm_wgmma, "gemm_wgmma.ember", ["4096x4096x4096", "2048x14336x4096", "16x4096x4096",
                                                    "1x14336x4096", "1x4096x4096", "1x4096x14336"]),
}


# kernels tuned for a target other than the device's own (wgmma needs sm_90a's features)
TARGETS = {"gemm_wgmma": "sm_90a"}


def tuning_arch(kernel: str, device_arch: str) -> str:
    """The target `ember tune` compiles `kernel` for on a GPU of `device_arch`."""
    return TARGETS.get(kernel, device_arch)


def source_of(kernel: str) -> Path:
    _known(kernel)
    return KERNELS_SRC / WORKLOADS[kernel][1]


def buckets_of(kernel: str) -> list:
    _known(kernel)
    return list(WORKLOADS[kernel][2])


def _known(kernel: str) -> None:
    from ..cli_support import UsageError
    if kernel not in WORKLOADS:
        raise UsageError(f"`ember tune` has no workload for `{kernel}`; it tunes {', '.join(WORKLOADS)} "
                         f"(ember/tuning/workloads.py)")


def workload(kernel: str, shape: str) -> Workload:
    from ..cli_support import UsageError
    _known(kernel)
    factory = WORKLOADS[kernel][0]
    name, _, dtype = shape.partition(" ")
    try:
        return factory(name, dtype) if dtype else factory(name)
    except (ValueError, TypeError, KeyError):
        raise UsageError(f"`{shape}` is not a shape of {kernel} (like `{WORKLOADS[kernel][2][0]}`)") from None
