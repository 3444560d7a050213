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
    vq, vk = A.view(op, "q", q), A.view(op, "k", k)
    t = A.dtype(op, "q", vq, DTYPES)
    A.same_dtype(op, "k", vk, "q", t)
    A.rank(op, "q", vq, (3,), "[tokens, heads, head_dim]")
    A.rank(op, "k", vk, (3,), "[tokens, kv_heads, head_dim]")
    tokens, q_heads, head_dim = vq.shape
    if head_dim % 2 or head_dim == 0:
        raise A.ArgumentError(op, "q", f"has head_dim {head_dim}: it must be even (the values rotate in pairs)")
    A.int_range(op, "q", head_dim, 2, 2048, "head_dim: one thread per pair, a block of head_dim / 2")
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
    device = A.same_device(op, {"q": vq, "k": vk, "positions": vp}) or 0
    launches = []
    for x, heads in ((q, q_heads), (k, kv_heads)):
        defines = {"HEAD_DIM": head_dim, "T": t, **({"NEOX": "true"} if neox else {})}
        kern, cfg = kernel("rope.ember", "rope", defines, tokens * heads * head_dim, device, table_of="rope_out")
        launches.append(kern.prepare(x, positions, heads, base, grid=(-(-heads // cfg["HEADS_PER_THREAD"]), tokens)))
    return launches
