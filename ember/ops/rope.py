"""ember.ops.rope: rotary position embedding of q and k in place (kernels_src/rope.ember
`rope`, tuned by rope_out's table: the same loads, math and stores)."""

from __future__ import annotations

from . import args as A
from .kernels import kernel
from .plan import run

DTYPES = ("f32", "bf16", "f16")


def rope(q, k, positions, base: float = 10000.0, *, neox: bool = False):
    """Rotate q [tokens, q_heads, head_dim] and k [tokens, kv_heads, head_dim] in place by
    the angles of `positions` (int32 [tokens], on the GPU); pairs adjacent or, with `neox`,
    the two halves of each head. q and k share dtype (f32, bf16, f16) and head_dim (even);
    q_heads is a multiple of kv_heads (grouped-query attention). Returns (q, k)."""
    run("rope", (q, k, positions, base, neox), lambda: _plan(q, k, positions, base, neox))
    return q, k


def _plan(q, k, positions, base, neox) -> list:
    op = "rope"
    vq, vk = A.view(op, "q", q, written=True), A.view(op, "k", k, written=True)
    t = A.dtype(op, "q", vq, DTYPES)
    A.same_dtype(op, "k", vk, "q", t)
    A.rank(op, "q", vq, (3,), "[tokens, heads, head_dim]")
    A.rank(op, "k", vk, (3,), "[tokens, kv_heads, head_dim]")
    tokens, q_heads, head_dim = vq.shape
    check_head_dim(op, "q", head_dim)
    if vk.shape[0] != tokens or vk.shape[2] != head_dim:
        raise A.ArgumentError(op, "k", f"has shape {list(vk.shape)}; expected [{tokens}, kv_heads, {head_dim}] "
                                       "(q's tokens and head_dim)")
    kv_heads = vk.shape[1]
    if kv_heads == 0 or q_heads % kv_heads:
        raise A.ArgumentError(op, "k", f"has {kv_heads} heads, which does not divide q's {q_heads} "
                                       "(grouped-query attention shares each k head among q_heads / kv_heads)")
    A.int_range(op, "q", tokens, 1, 65535, "tokens: the grid's y dimension")
    for name, v in (("q", vq), ("k", vk)):
        A.contiguous(op, name, v)
        A.aligned(op, name, v, 8)
    A.no_overlap(op, "q", vq, "k", vk)
    vp = A.view(op, "positions", positions)
    A.dtype(op, "positions", vp, ("i32",))
    A.shape(op, "positions", vp, (tokens,), "one position per token of q")
    A.contiguous(op, "positions", vp)
    A.aligned(op, "positions", vp, 4)
    base = A.positive_float(op, "base", base)
    neox = A.flag(op, "neox", neox)
    device = A.same_device(op, {"q": vq, "k": vk, "positions": vp}) or 0
    launches = []
    for x, heads in ((q, q_heads), (k, kv_heads)):
        defines = {"HEAD_DIM": head_dim, "T": t, **({"NEOX": "true"} if neox else {})}
        kern, cfg = kernel("rope.ember", "rope", defines, tokens * heads * head_dim, device, table_of="rope_out")
        launches.append(kern.prepare(x, positions, heads, base, grid=(-(-heads // cfg["HEADS_PER_THREAD"]), tokens)))
    return launches


def rope_append(q, k, v, k_cache, v_cache, positions, base: float = 10000.0, *, neox: bool = False, q_out=None):
    """A decode step's RoPE and KV-cache append in one launch: q [B, M, HQ, D] rotated into
    q_out (default: in place); k [B, M, HKV, D] rotated into k_cache [B, S, HKV, D] and v
    [B, M, HKV, D] copied into v_cache at each token's position (positions int32 [B, M], on
    the GPU). q, k and v share a dtype, may be views of one projection's output (each
    token's heads dense, tokens a stride apart: `qkv[:, :HQ * D].view(B, M, HQ, D)`), and
    may be f32 where the caches are bf16 or f16 (rounded as they are stored); q_out has q's
    shape, dense, in q's dtype or f32. A position outside [0, S) writes nothing to the
    caches - the positions are device data, which no check reads before the launch: keep
    them within the cache. Returns (q_out, k_cache, v_cache)."""
    q_out = q if q_out is None else q_out
    run("rope_append", (q, k, v, k_cache, v_cache, positions, base, neox, q_out),
        lambda: _plan_append(q, k, v, k_cache, v_cache, positions, base, neox, q_out))
    return q_out, k_cache, v_cache


def _plan_append(q, k, v, k_cache, v_cache, positions, base, neox, q_out) -> list:
    op = "rope_append"
    vq = A.view(op, "q", q, written=q_out is q)
    ti = A.dtype(op, "q", vq, DTYPES)
    A.rank(op, "q", vq, (4,), "[batch, tokens, heads, head_dim]")
    batch, m, hq, d = vq.shape
    check_head_dim(op, "q", d)
    views = {"q": vq}
    for name, x in (("k", k), ("v", v)):
        vx = A.view(op, name, x)
        A.same_dtype(op, name, vx, "q", ti)
        A.rank(op, name, vx, (4,), "[batch, tokens, kv_heads, head_dim]")
        if vx.shape[:2] != (batch, m) or vx.shape[3] != d:
            raise A.ArgumentError(op, name, f"has shape {list(vx.shape)}; expected [{batch}, {m}, kv_heads, {d}] "
                                            "(q's batch, tokens and head_dim)")
        views[name] = vx
    hkv = views["k"].shape[2]
    A.shape(op, "v", views["v"], views["k"].shape, "k's shape")
    if hkv == 0 or hq % hkv:
        raise A.ArgumentError(op, "k", f"has {hkv} heads, which does not divide q's {hq} (grouped-query attention)")
    strides = [A.token_rows(op, name, views[name]) for name in ("q", "k", "v")]
    t, cache_len = caches(op, k_cache, v_cache, batch, hkv, d, ti, views)
    A.int_range(op, "q", batch * m, 1, 65535, "batch x tokens: the grid's y dimension")
    in_place = q_out is q
    vo = vq if in_place else A.view(op, "q_out", q_out, written=True)
    tq = A.dtype(op, "q_out", vo, tuple(dict.fromkeys((ti, "f32"))))
    A.shape(op, "q_out", vo, vq.shape, "q's shape")
    if in_place:
        if strides[0] != hq * d and batch * m > 1:
            raise A.ArgumentError(op, "q", "is rotated in place, so it must be contiguous; or pass `q_out`")
    else:
        A.contiguous(op, "q_out", vo)
    views["q_out"] = vo
    for name, x in views.items():
        A.aligned(op, name, x, 8)
    for name, stride in zip(("q", "k", "v"), strides):
        if stride * A.ITEMSIZE[ti] % 8:
            raise A.ArgumentError(op, name, f"has a token stride of {stride} elements, not a multiple of 8 bytes")
    written = ("k_cache", "v_cache", "q" if in_place else "q_out")
    for w in written:
        for r in views:
            if r != w and {r, w} != {"q", "q_out"}:
                A.no_overlap(op, r, views[r], w, views[w])
    vp = token_positions(op, positions, batch, m)
    base = A.positive_float(op, "base", base)
    neox = A.flag(op, "neox", neox)
    device = A.same_device(op, {**views, "positions": vp}) or 0
    defines = {"HEAD_DIM": d, "T": t, "TI": ti, "TQ": tq, **({"NEOX": "true"} if neox else {})}
    kern, _ = kernel("rope_append.ember", "rope_append", defines, batch * m * (hq + 2 * hkv) * d, device)
    spans = [A.span(views[n], writable=True) for n in ("q", "k", "v")]   # mut: q_out may be q
    return [kern.prepare(*spans, vo.obj if in_place else q_out, k_cache, v_cache, positions, hq, hkv, m, cache_len,
                         *strides, base, grid=(hq + hkv, batch * m))]


def caches(op: str, k_cache, v_cache, batch: int, hkv: int, d: int, ti: str, views: dict) -> tuple:
    """(dtype, cache_len) of a decode step's KV caches [batch, cache_len, hkv, d], checked
    (the new rows, of dtype `ti`, are the caches' dtype or f32), their views added to `views`."""
    t = None
    for name, c in (("k_cache", k_cache), ("v_cache", v_cache)):
        vc = A.view(op, name, c, written=True)
        if t is None:
            t = A.dtype(op, name, vc, DTYPES)
            if ti != t and ti != "f32":
                raise A.ArgumentError(op, name, f"has dtype {t}, but `q` is {ti}: the new rows are the cache's "
                                                "dtype or f32")
        A.same_dtype(op, name, vc, "k_cache", t)
        A.rank(op, name, vc, (4,), "[batch, cache_len, kv_heads, head_dim]")
        if vc.shape[0] != batch or vc.shape[2:] != (hkv, d):
            raise A.ArgumentError(op, name, f"has shape {list(vc.shape)}; expected [{batch}, cache_len, {hkv}, {d}]")
        A.contiguous(op, name, vc)
        views[name] = vc
    A.shape(op, "v_cache", views["v_cache"], views["k_cache"].shape, "k_cache's shape")
    cache_len = views["k_cache"].shape[1]
    A.int_range(op, "k_cache", cache_len, 1, 2 ** 31 - 1, "cache_len")
    return t, cache_len


def token_positions(op: str, positions, batch: int, m: int):
    """The view of int32 positions [batch, m], one per new token, checked."""
    vp = A.view(op, "positions", positions)
    A.dtype(op, "positions", vp, ("i32",))
    A.shape(op, "positions", vp, (batch, m), "one position per new token")
    A.contiguous(op, "positions", vp)
    A.aligned(op, "positions", vp, 4)
    return vp


def check_head_dim(op: str, name: str, d: int) -> None:
    """head_dim of argument `name`: even (the values rotate in pairs), 2..2048 (rope_append's
    block is one thread per pair)."""
    if d % 2 or d == 0:
        raise A.ArgumentError(op, name, f"has head_dim {d}: it must be even (the values rotate in pairs)")
    A.int_range(op, name, d, 2, 2048, "head_dim: one thread per pair, a block of head_dim / 2")
