"""ember.ops.q4k_gemv: y = x W^T with W in ggml's Q4_K format and M = 1..8 rows of f32
activations (kernels_src/q4k_gemv.ember)."""

from __future__ import annotations

from . import args as A
from .kernels import kernel

QK_K = 256            # values per Q4_K super-block
BLOCK_BYTES = 144     # bytes per super-block


def q4k_gemv(w, x, *, out=None):
    """w: the Q4_K bytes of an [n, k] weight (uint8 [n, k / 256 * 144], rows of super-blocks,
    as GGUF stores it); x: f32 [m, k] (or [k]), m from 1 to 8; k a multiple of 256. Returns
    out: f32 [m, n] (allocated like x when not given)."""
    op = "q4k_gemv"
    vx = A.view(op, "x", x)
    A.dtype(op, "x", vx, ("f32",))
    A.rank(op, "x", vx, (1, 2), "[m, k] or [k]")
    kdim = vx.shape[-1]
    m = vx.shape[0] if len(vx.shape) == 2 else 1
    A.int_range(op, "x", m, 1, 8, "m: the rows of activations one launch takes")
    if kdim % QK_K or kdim == 0:
        raise A.ArgumentError(op, "x", f"has {kdim} columns: Q4_K needs a multiple of {QK_K} (whole super-blocks)")
    A.contiguous(op, "x", vx)
    A.aligned(op, "x", vx, 16)
    vw = A.view(op, "w", w)
    A.dtype(op, "w", vw, ("u8",))
    A.rank(op, "w", vw, (2,), f"[n, k / {QK_K} * {BLOCK_BYTES}] bytes")
    n = vw.shape[0]
    A.shape(op, "w", vw, (n, kdim // QK_K * BLOCK_BYTES), f"{kdim // QK_K} super-blocks of {BLOCK_BYTES} bytes "
                                                          f"per row for x's k = {kdim}")
    A.int_range(op, "w", n, 1, 2 ** 31 - 1, "n: the output columns")
    A.contiguous(op, "w", vw)
    A.aligned(op, "w", vw, 16)
    if out is None:
        out = A.empty_like(vx, (m, n) if len(vx.shape) == 2 else (n,), "f32")
    vo = A.view(op, "out", out)
    A.dtype(op, "out", vo, ("f32",))
    A.shape(op, "out", vo, (m, n) if len(vx.shape) == 2 else (n,), "one value per row of x and row of w")
    A.contiguous(op, "out", vo)
    A.aligned(op, "out", vo, 4)
    A.no_overlap(op, "x", vx, "out", vo)
    A.no_overlap(op, "w", vw, "out", vo)
    device = A.same_device(op, {"x": vx, "w": vw, "out": vo}) or 0
    kern, cfg = kernel("q4k_gemv.ember", "q4k_gemv", {"M": m}, n * kdim, device)
    words = A.Reinterpreted(vw, "<u4", 4)           # the kernel loads the blocks as u32 words
    kern(words, x, out, n, kdim, grid=(-(-n // (cfg["WARPS"] * cfg["ROWS"])),))
    return out
