"""ember.ops.q4k_qkv_rope_append: a decode step's Q, K and V projections (the three Q4_K
weights as one, their rows concatenated; or q's and k's so, and v's Q6_K, as a Q4_K_M file
keeps them in many layers) with RoPE and the KV-cache append. One launch of
kernels_src/q4k_digits.ember's q4k_digits_qkv where it applies - digit activations, adjacent
pairs, and the DP4A GEMV the tuned tables of this GPU choose for the shape (not the tensor
cores', which they measured faster from batch 4 on, unless the caller asks for one launch; the
GEMV's configuration, its rows a warp rounded up to whole pairs; v's loop in the configuration
q6k_gemv's table gives v's shape) - else q4k_gemv (and q6k_gemv) and rope_append through
buffers of the call's own. The bits are
the same either way: the fused kernel's sums and rotations are the separate kernels'
(tests/ops)."""

from __future__ import annotations

from . import args as A
from .gemv import QK_K, Q8Activations, _q8_words, _tensor_cores, _weights, plan_q6k_q8, plan_q8, tuned_as
from .kernels import kernel, tuned_config
from .plan import Keep, run
from .rope import caches, check_head_dim, token_positions

FUSED = [True]          # [False]: always the launches apart (an A/B measurement: bench/layer_ab.py)
# With a Q6_K v: two rows a warp where the Q4_K GEMV's table chose more (four at M = 2), so
# that v's loop can be staged. H200, 2026-11-28, a layer of Q6_K V and down projections, us
# (two rows / the table's four / three launches): batch 2 at 4096 keys 102.7 / 106.5 / 104.6
# (bench/results/q4km_qkv_ab_h200.md). [False]: the table's rows (an A/B measurement).
V_ROWS = [True]


def q4k_qkv_rope_append(w, x: Q8Activations, k_cache, v_cache, positions, base: float = 10000.0, *, q_out,
                        neox: bool = False, wv=None, one_launch: bool = False):
    """q, k, v = x W^T, then rope_append(q, k, v, k_cache, v_cache, positions, base, q_out=q_out):
    w the Q4_K bytes [(HQ + 2 HKV) D, K / 256 * 144] whose rows are q's HQ heads, then k's and
    v's HKV heads of D values (the projections' weights concatenated); x the Q8_1 or digit
    activations (quantize_q8_1 / quantize_digits) of the B x M new tokens; q_out f32
    [B, M, HQ, D], which receives q rotated; k rotated into k_cache [B, S, HKV, D] and v into
    v_cache at each token's position (positions int32 [B, M]; outside [0, S) nothing is
    written: keep them within the cache). With `wv`, the Q6_K bytes of v's weights
    [HKV D, K / 256 * 210], w holds q's and k's rows only [(HQ + HKV) D, K / 256 * 144].
    With `one_launch`, the one launch wherever it applies (digit activations, adjacent pairs),
    also where this GPU's tables measured the tensor cores' GEMVs faster: for a decode step
    that keeps within a launch budget (ember.model.layer). Returns (q_out, k_cache, v_cache)."""
    run("q4k_qkv_rope_append", (w, x, k_cache, v_cache, positions, base, neox, q_out, wv, one_launch, FUSED[0]),
        lambda: _plan(w, x, k_cache, v_cache, positions, base, neox, q_out, wv, one_launch))
    return q_out, k_cache, v_cache


def _plan(w, x, k_cache, v_cache, positions, base, neox, q_out, wv, one_launch) -> list:
    op = "q4k_qkv_rope_append"
    if not isinstance(x, Q8Activations):
        raise A.ArgumentError(op, "x", f"is a {type(x).__name__}: it takes the activations of "
                                       "ember.ops.quantize_q8_1 or quantize_digits")
    vo = A.view(op, "q_out", q_out, written=True)
    A.dtype(op, "q_out", vo, ("f32",))
    A.rank(op, "q_out", vo, (4,), "[batch, tokens, heads, head_dim]")
    batch, m, hq, d = vo.shape
    check_head_dim(op, "q_out", d)
    A.contiguous(op, "q_out", vo)
    A.aligned(op, "q_out", vo, 8)
    if batch * m != x.m or not x.rows:
        raise A.ArgumentError(op, "x", f"holds {x.m} row(s) of activations; q_out's batch x tokens is {batch * m}"
                                       + ("" if x.rows else " (and x was one vector, not [rows, k])"))
    vk = A.view(op, "k_cache", k_cache)
    A.rank(op, "k_cache", vk, (4,), "[batch, cache_len, kv_heads, head_dim]")
    hkv = vk.shape[2]
    if hkv == 0 or hq % hkv:
        raise A.ArgumentError(op, "k_cache", f"has {hkv} heads, which does not divide q_out's {hq} "
                                             "(grouped-query attention)")
    views = {"q_out": vo}
    t, cache_len = caches(op, k_cache, v_cache, batch, hkv, d, "f32", views)
    for name in ("k_cache", "v_cache"):         # as rope_append takes them (the two-launch path)
        A.aligned(op, name, views[name], 8)
    vw, n = _weights(op, "w", w, "q4k", x.k, 16)
    heads = hq + hkv if wv is not None else hq + 2 * hkv
    if n != heads * d:
        qk_only = wv is None and n == (hq + hkv) * d
        raise A.ArgumentError(op, "w", f"has {n} rows; q's {hq} heads, then k's "
                                       + (f"{hkv}" if wv is not None else f"and v's {hkv}")
                                       + f", of {d}: {heads * d} are needed"
                                       + (" (v's weights in Q6_K go in `wv`)" if qk_only else ""))
    reads = {"w": vw}
    if wv is not None:
        reads["wv"], nv = _weights(op, "wv", wv, "q6k", x.k, 2)
        if nv != hkv * d:
            raise A.ArgumentError(op, "wv", f"has {nv} rows; v's {hkv} heads of {d}: {hkv * d} are needed")
    vp = token_positions(op, positions, batch, m)
    base = A.positive_float(op, "base", base)
    neox = A.flag(op, "neox", neox)
    one_launch = A.flag(op, "one_launch", one_launch)
    vxq, vxd = x.check(op, x.m, x.k, "x")
    reads.update({"x.aq": vxq, "x.ads": vxd, "positions": vp})
    outs = ("q_out", "k_cache", "v_cache")
    for i, out in enumerate(outs):
        for name, v in reads.items():
            A.no_overlap(op, name, v, out, views[out])
        for other in outs[i + 1:]:
            A.no_overlap(op, out, views[out], other, views[other], both_written=True)
    device = A.same_device(op, {**views, **reads}) or 0
    total = (hq + 2 * hkv) * d
    if FUSED[0] and x.digits and not neox and (one_launch or not _tensor_cores("gemv", x, total, device)):
        return [_fused(vw, reads.get("wv"), x, vxq, vxd, q_out, k_cache, v_cache, positions, hq, hkv, m, cache_len,
                       base, d, t, total, device)]
    # apart: the GEMVs into buffers of the plan's own, then rope_append from their rows
    buf = A.empty_like(x.like, (x.m, n), "f32")
    vb = A.view(op, "buffer", buf)
    launches = plan_q8(op, w, x, buf)
    rows = [(vb, 0, n), (vb, hq * d, n)]                    # (buffer, first, row stride) of q, k, v
    keep = [Keep(buf)]
    if wv is None:
        rows.append((vb, (hq + hkv) * d, n))
    else:
        vbuf = A.empty_like(x.like, (x.m, hkv * d), "f32")
        launches += plan_q6k_q8(op, wv, x, vbuf)
        rows.append((A.view(op, "buffer", vbuf), 0, hkv * d))
        keep.append(Keep(vbuf))
    defines = {"HEAD_DIM": d, "T": t, "TI": "f32", "TQ": "f32", **({"NEOX": "true"} if neox else {})}
    rope, _ = kernel("rope_append.ember", "rope_append", defines, x.m * total, device)
    q, k, v = (A.run_of(b, first, x.m * stride - first, writable=True) for b, first, stride in rows)
    launches.append(rope.prepare(q, k, v, q_out, k_cache, v_cache, positions, hq, hkv, m, cache_len,
                                 *(stride for _, _, stride in rows), base, grid=(hq + hkv, x.m)))
    return launches + keep


def _fused(vw, vv, x, vxq, vxd, q_out, k_cache, v_cache, positions, hq, hkv, m, cache_len, base, d, t, total,
           device):
    """The launch of q4k_digits_qkv for this call; vv: v's weights where they are Q6_K, else
    None. v's loop takes the configuration of q6k_digits_gemv's table for v's shape, staged
    where that is and the kernel's warps take two rows (q6k_step_staged holds two rows' words;
    the GEMV's table chose four at M = 2 on the H100 and the H200)."""
    defines, lookup = tuned_as(x, total)
    plus, fixed = {"HEAD_DIM": d, "T": t}, {}
    if vv is not None:
        rows = tuned_config("q4k_digits_gemv", defines, x.m * total * x.k, device, **lookup).get("ROWS", 2)
        if V_ROWS[0] and rows + rows % 2 != 2:
            fixed["ROWS"] = rows = 2
        v_defines, v_lookup = tuned_as(x, hkv * d)
        cfg = tuned_config("q6k_digits_gemv", v_defines, x.m * hkv * d * x.k, device, **v_lookup)
        plus.update({"V6": True, **{f"V_{c}": cfg[c] for c in ("QUARTERS", "BIAS") if c in cfg}})
        # staged as q6k_gemv stages: k a multiple of 1024, wv 8-byte aligned (plan_q6k_q8)
        if cfg.get("STAGED") and rows + rows % 2 == 2 and x.k % (4 * QK_K) == 0 and vv.ptr % 8 == 0:
            plus.update({"V_STAGED": True, "V_STAGES": cfg["STAGES"]})
    kern, cfg = kernel("q4k_digits.ember", "q4k_digits_qkv", defines, x.m * total * x.k, device,
                       table_of="q4k_digits_gemv", plus=plus, fixed=fixed, **lookup)
    wv = A.reinterpret(vv if vv is not None else vw, "<u2", 2)
    grid = (-(-total // (cfg["WARPS"] * cfg["PAIRED"])),)
    return kern.prepare(A.reinterpret(vw, "<u4", 4), wv, *_q8_words(vxq, vxd, x.digits), q_out, k_cache, v_cache,
                        positions, hq, hkv, m, cache_len, base, x.k, grid=grid)
