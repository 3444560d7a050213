"""ember.ops.q4k_qkv_rope_append: a decode step's Q, K and V projections (the three Q4_K
weights as one, their rows concatenated) with RoPE and the KV-cache append. One launch of
kernels_src/q4k_digits.ember's q4k_digits_qkv where it applies - digit activations, adjacent
pairs, and the DP4A GEMV the tuned tables of this GPU choose for the shape (not the tensor
cores', which they measured faster from batch 4 on; the GEMV's configuration, its rows a warp
rounded up to whole pairs) - else q4k_gemv and rope_append through a buffer of the call's own. The bits are the same
either way: the fused kernel's sums and rotations are the two kernels' (tests/ops)."""

from __future__ import annotations

from . import args as A
from .gemv import Q8Activations, _q8_words, _tensor_cores, _weights, plan_q8, tuned_as
from .kernels import kernel
from .plan import Keep, run
from .rope import caches, check_head_dim, token_positions

FUSED = [True]          # [False]: always the two launches (an A/B measurement: bench/layer_ab.py)


def q4k_qkv_rope_append(w, x: Q8Activations, k_cache, v_cache, positions, base: float = 10000.0, *, q_out,
                        neox: bool = False):
    """q, k, v = x W^T, then rope_append(q, k, v, k_cache, v_cache, positions, base, q_out=q_out):
    w the Q4_K bytes [(HQ + 2 HKV) D, K / 256 * 144] whose rows are q's HQ heads, then k's and
    v's HKV heads of D values (the projections' weights concatenated); x the Q8_1 or digit
    activations (quantize_q8_1 / quantize_digits) of the B x M new tokens; q_out f32
    [B, M, HQ, D], which receives q rotated; k rotated into k_cache [B, S, HKV, D] and v into
    v_cache at each token's position (positions int32 [B, M]; outside [0, S) nothing is
    written: keep them within the cache). Returns (q_out, k_cache, v_cache)."""
    run("q4k_qkv_rope_append", (w, x, k_cache, v_cache, positions, base, neox, q_out, FUSED[0]),
        lambda: _plan(w, x, k_cache, v_cache, positions, base, neox, q_out))
    return q_out, k_cache, v_cache


def _plan(w, x, k_cache, v_cache, positions, base, neox, q_out) -> list:
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
    if n != (hq + 2 * hkv) * d:
        raise A.ArgumentError(op, "w", f"has {n} rows; q's {hq} heads, then k's and v's {hkv}, of {d}: "
                                       f"{(hq + 2 * hkv) * d} are needed")
    vp = token_positions(op, positions, batch, m)
    base = A.positive_float(op, "base", base)
    neox = A.flag(op, "neox", neox)
    vxq, vxd = x.check(op, x.m, x.k, "x")
    reads = {"w": vw, "x.aq": vxq, "x.ads": vxd, "positions": vp}
    outs = ("q_out", "k_cache", "v_cache")
    for i, out in enumerate(outs):
        for name, v in reads.items():
            A.no_overlap(op, name, v, out, views[out])
        for other in outs[i + 1:]:
            A.no_overlap(op, out, views[out], other, views[other], both_written=True)
    device = A.same_device(op, {**views, **reads}) or 0
    size = x.m * n * x.k
    if FUSED[0] and x.digits and not neox and not _tensor_cores("gemv", x, n, device):
        defines, lookup = tuned_as(x, n)
        kern, cfg = kernel("q4k_digits.ember", "q4k_digits_qkv", defines, size, device,
                           table_of="q4k_digits_gemv", plus={"HEAD_DIM": d, "T": t}, **lookup)
        return [kern.prepare(A.reinterpret(vw, "<u4", 4), *_q8_words(vxq, vxd, x.digits), q_out, k_cache, v_cache,
                             positions, hq, hkv, m, cache_len, base, x.k,
                             grid=(-(-n // (cfg["WARPS"] * cfg["PAIRED"])),))]
    # two launches: the GEMV into a buffer of the plan's own, then rope_append from its rows
    buf = A.empty_like(x.like, (x.m, n), "f32")
    vb = A.view(op, "buffer", buf)
    launches = plan_q8(op, w, x, buf)
    defines = {"HEAD_DIM": d, "T": t, "TI": "f32", "TQ": "f32", **({"NEOX": "true"} if neox else {})}
    rope, _ = kernel("rope_append.ember", "rope_append", defines, x.m * n, device)
    total = x.m * n
    q, k, v = (A.run_of(vb, start, total - start, writable=True) for start in (0, hq * d, (hq + hkv) * d))
    launches.append(rope.prepare(q, k, v, q_out, k_cache, v_cache, positions, hq, hkv, m, cache_len, n, n, n, base,
                                 grid=(hq + hkv, x.m)))
    return launches + [Keep(buf)]
