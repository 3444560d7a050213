"""ember.ops.rms_norm: RMSNorm over the last axis, optionally fused with the residual add
of a decoder layer (kernels_src/rmsnorm.ember rmsnorm_rows / add_rmsnorm_rows); and
add_rms_norm_q8, the residual add and RMSNorm whose output is the Q8_1 activations of the
DP4A GEMVs (kernels_src/rmsnorm_q8.ember)."""

from __future__ import annotations

from . import args as A
from .kernels import kernel
from .gemv import QK_K, Q8Activations
from .plan import run

DTYPES = ("f32", "bf16", "f16")


def rms_norm(x, weight, eps: float = 1e-5, *, residual=None, out=None):
    """y = x / sqrt(mean(x^2) + eps) * weight over the last axis of x [rows, cols] (or
    [cols]), f32, bf16 or f16, math in f32. With `residual` (the same shape and dtype):
    h = x + residual is written back into `residual` and y = rms_norm(h). Returns `out`
    (allocated like x when not given). Runs on the caller's current stream (torch's)."""
    if out is None:             # every input checked before anything is allocated
        views, t, _, _, _ = _inputs(x, weight, eps, residual)
        out = A.empty_like(views["x"], views["x"].shape, t)
    run("rms_norm", (x, weight, eps, residual, out), lambda: _plan(x, weight, eps, residual, out))
    return out


def _inputs(x, weight, eps, residual, op: str = "rms_norm") -> tuple:
    """The checked inputs: (views, dtype, rows, cols, eps)."""
    vx = A.view(op, "x", x)
    t = A.dtype(op, "x", vx, DTYPES)
    A.rank(op, "x", vx, (1, 2), "[rows, cols] or [cols]")
    cols = vx.shape[-1]
    rows = vx.shape[0] if len(vx.shape) == 2 else 1
    A.int_range(op, "x", cols, 1, 1 << 20, "the number of columns a row holds")
    A.int_range(op, "x", rows, 1, 2 ** 31 - 1, "one block per row")
    A.contiguous(op, "x", vx)
    A.aligned(op, "x", vx, 16)
    vw = A.view(op, "weight", weight)
    A.same_dtype(op, "weight", vw, "x", t)
    A.shape(op, "weight", vw, (cols,), "one weight per column of x")
    A.contiguous(op, "weight", vw)
    A.aligned(op, "weight", vw, 16)
    eps = A.positive_float(op, "eps", eps)
    views = {"x": vx, "weight": vw}
    if residual is not None:
        vr = A.view(op, "residual", residual, written=True)
        A.same_dtype(op, "residual", vr, "x", t)
        A.shape(op, "residual", vr, vx.shape, "the shape of x")
        A.contiguous(op, "residual", vr)
        A.aligned(op, "residual", vr, 16)
        A.no_overlap(op, "x", vx, "residual", vr)
        views["residual"] = vr
    return views, t, rows, cols, eps


def _plan(x, weight, eps, residual, out) -> list:
    op = "rms_norm"
    views, t, rows, cols, eps = _inputs(x, weight, eps, residual)
    vx = views["x"]
    vo = A.view(op, "out", out, written=True)
    A.same_dtype(op, "out", vo, "x", t)
    A.shape(op, "out", vo, vx.shape, "the shape of x")
    A.contiguous(op, "out", vo)
    A.aligned(op, "out", vo, 16)
    for name in ("x", "weight") + (("residual",) if residual is not None else ()):
        A.no_overlap(op, name, views[name], "out", vo)
    views["out"] = vo
    device = A.same_device(op, views) or 0
    defines = {"T": t, "COLS": cols}
    vec = next(v for v in (4, 2, 1) if cols % v == 0)
    if vec != 4:                                  # the default VEC must divide the row
        defines["VEC"] = vec
    k, _ = rows_kernel(defines, rows, cols, device, residual is not None)
    if residual is None:
        return [k.prepare(x, weight, out, eps, grid=(rows,))]
    return [k.prepare(x, residual, weight, out, eps, grid=(rows,))]


def rows_kernel(defines: dict, rows: int, cols: int, device: int, add: bool):
    """rms_norm's kernel for `rows` rows of `cols` and its const values: rmsnorm_rows, or
    with the residual add add_rmsnorm_rows - by its own table, or on a GPU that table has no
    entry for, rmsnorm_rows's (the same loop without the add: its configuration was the
    add's until the add had a table of its own)."""
    if not add:
        return kernel("rmsnorm.ember", "rmsnorm_rows", defines, rows * cols, device)
    return kernel("rmsnorm.ember", "add_rmsnorm_rows", defines, rows * cols, device,
                  table_of=("add_rmsnorm_rows", "rmsnorm_rows"))


def add_rms_norm_q8(x, residual, weight, eps: float = 1e-5, *, out: Q8Activations | None = None,
                    residual_out=None) -> Q8Activations:
    """A decoder layer's residual add and RMSNorm, its output quantised for the DP4A GEMVs:
    h = x + residual is written back into `residual` (or into `residual_out`, leaving
    `residual` as it was) and the Q8_1 activations of rms_norm(h) * weight returned (into
    `out`, a Q8Activations.empty, when given; digits where it holds digits, which needs
    `residual_out`). f32 x and residual [m, k] (m 1..8, k a
    multiple of 256), weight f32 [k]. One launch: with `residual_out` several blocks share
    a row (add_rmsnorm_q8_parts), in place one block a row (add_rmsnorm_q8)."""
    op = "add_rms_norm_q8"
    views, _, rows, cols, _ = _q8_inputs(x, residual, weight, eps)
    if out is None:
        out = Q8Activations.empty(views["x"].obj, rows, cols, len(views["x"].shape) == 2)

    def plan():
        views, _, rows, cols, e = _q8_inputs(x, residual, weight, eps)
        vq, vd = out.check(op, rows, cols)
        written = {"out.aq": vq, "out.ads": vd}
        if residual_out is not None:
            vr = A.view(op, "residual_out", residual_out, written=True)
            A.same_dtype(op, "residual_out", vr, "x", "f32")
            A.shape(op, "residual_out", vr, views["x"].shape, "the shape of x")
            A.contiguous(op, "residual_out", vr)
            A.aligned(op, "residual_out", vr, 16)
            written["residual_out"] = vr
        for name in views:
            for o, vo in written.items():
                A.no_overlap(op, name, views[name], o, vo)
        if residual_out is not None:
            for o in ("out.aq", "out.ads"):
                A.no_overlap(op, "residual_out", written["residual_out"], o, written[o])
        device = A.same_device(op, {**views, **written}) or 0
        aq, ads = A.reinterpret(vq, "<u4", 4, writable=True), A.reinterpret(vd, "<u4", 4, writable=True)
        if residual_out is not None:     # PART from the tuned table (its default, 256, divides cols)
            defines = {"COLS": cols, **({"DIGITS": "true"} if out.digits else {})}
            k, consts = kernel("rmsnorm_q8.ember", "add_rmsnorm_q8_parts", defines, rows * cols, device)
            return [k.prepare(x, residual, residual_out, weight, aq, ads, e, rows,
                              grid=(cols // int(consts["PART"]), rows))]
        if out.digits:
            raise A.ArgumentError(op, "out", "holds digits, which add_rms_norm_q8 writes with `residual_out` only "
                                             "(add_rmsnorm_q8_parts)")
        # BLOCK from the tuned table where its default (1024) divides cols, else the largest that does
        block = next(b for b in (1024, 512, 256) if cols % b == 0)     # cols is a multiple of 256
        defines = {"COLS": cols, **({} if block == 1024 else {"BLOCK": block})}
        k, _ = kernel("rmsnorm_q8.ember", "add_rmsnorm_q8", defines, rows * cols, device)
        return [k.prepare(x, residual, weight, aq, ads, e, grid=(rows,))]
    run(op, (x, residual, weight, eps, out, residual_out), plan)
    return out


def _q8_inputs(x, residual, weight, eps) -> tuple:
    op = "add_rms_norm_q8"
    if residual is None:
        raise A.ArgumentError(op, "residual", "is None: add_rms_norm_q8 adds x into the residual stream "
                                              "(rms_norm without one, then quantize_q8_1)")
    views, t, rows, cols, eps = _inputs(x, weight, eps, residual, op)
    if t != "f32":
        raise A.ArgumentError(op, "x", f"has dtype {t}; add_rms_norm_q8 takes f32 (the residual stream)")
    A.int_range(op, "x", rows, 1, 8, "m: the rows of activations a GEMV takes")
    if cols % QK_K:
        raise A.ArgumentError(op, "x", f"has {cols} columns: a multiple of {QK_K} is needed (whole super-blocks)")
    return views, t, rows, cols, eps
