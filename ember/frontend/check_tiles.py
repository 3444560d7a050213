"""The whole arrays the warpgroup tensor-core builtins take (`wgmma`, `wgmma_rs`): the
accumulator array, whose length gives N, and the swizzled shared tiles, whose types give
the matrix descriptors (ember.ir.ops.wgmma). What the types say becomes the op's
attributes; an operand known at compile time to leave its tile, or to start where the
hardware cannot, is reported at its argument."""

from __future__ import annotations

from ..ir.types import F32, ArrayType, array_scalar

_WHOLE = ("the accumulators are a per-thread `[f32; N / 2]` array, N = 8..256 a multiple of 8 "
          "(`var acc: [f32; 64];` for m64n128k16)")


def _tile(args: list, name: str, at: int, rows: int) -> dict | tuple:
    """Attributes of the operand whose tile is args[at], rows args[at + 1], columns args[at + 2]."""
    t = args[at].ty
    if not (isinstance(t, ArrayType) and t.swizzle and isinstance(t.elem, ArrayType)
            and not isinstance(t.elem.elem, ArrayType)):
        return at, (f"{name.upper()} is a swizzled shared tile `[[T; W]; R] swizzle(S)` (or one block of such "
                    f"tiles, `tiles[s]`), not `{t}`")
    width = t.elem.length
    es = array_scalar(t).nbytes
    row, col = args[at + 1].const, args[at + 2].const
    if row is not None and (row % 8 or row + rows > t.length):
        return at + 1, (f"{name.upper()}'s rows {row}..{row + rows - 1} must start at a multiple of 8 and lie in "
                        f"the tile's {t.length} rows")
    if col is not None and (col * es % 16 or col + 16 > width):
        return at + 2, (f"{name.upper()}'s columns {col}..{col + 15} must start on a 16-byte chunk and lie in a "
                        f"row of {width}")
    return {f"{name}_swizzle": t.swizzle, f"{name}_width": width}


def wgmma_tiles(name: str, args: list) -> dict | tuple:
    """The attributes of a `wgmma` (or `wgmma_rs`) call from its arguments' types."""
    acc = args[0].ty
    if not (isinstance(acc, ArrayType) and acc.elem == F32 and acc.space in (None, "local")):
        return 0, _WHOLE
    n = 2 * acc.length
    if not (8 <= n <= 256 and n % 8 == 0):
        return 0, f"`{acc}` gives N = {n}; " + _WHOLE
    attrs = {"n": n}
    b_at = 3 if name == "wgmma_rs" else 4
    if name != "wgmma_rs":
        got = _tile(args, "a", 1, 64)
        if isinstance(got, tuple):
            return got
        attrs.update(got)
    got = _tile(args, "b", b_at, n)
    if isinstance(got, tuple):
        return got
    attrs.update(got)
    return attrs
