"""The whole arrays the warpgroup tensor-core builtins take (`wgmma`, `wgmma_rs`): the
accumulator array, whose length gives N, and the swizzled shared tiles, whose types give
the matrix descriptors (ember.ir.ops.wgmma). What the types say becomes the op's
attributes; an operand known at compile time to leave its tile, or to start where the
hardware cannot, is reported at its argument."""

from __future__ import annotations

from ..ir.types import F32, ArrayType, array_scalar

_WHOLE = ("the accumulators are a per-thread `[f32; N / 2]` array, N = 8..256 a multiple of 8 "
          "(`var acc: [f32; 64];` for m64n128k16)")


def _tile(args: list, name: str, at: int, rows: int, major: str) -> dict | tuple:
    """Attributes of the operand whose tile is args[at], rows args[at + 1], columns args[at + 2]
    (`rows` M or N indices of the operand)."""
    t = args[at].ty
    if isinstance(t, ArrayType) and not t.swizzle and t.space == "shared":
        return _interleaved(args, name, at, rows, major)
    if major == "mn_major":
        return _transposed(args, name, at, rows)
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


def _transposed(args: list, name: str, at: int, count: int) -> dict | tuple:
    """An MN-major operand: a tile of blocks `[[[T; W]; R]; B] swizzle(S)`, each R rows of K
    by W columns of M or N; (row, col) = (the first K row, the first M or N column)."""
    t = args[at].ty
    if not (isinstance(t, ArrayType) and t.swizzle and isinstance(t.elem, ArrayType)
            and isinstance(t.elem.elem, ArrayType) and not isinstance(t.elem.elem.elem, ArrayType)):
        return at, (f"a transposed (mn_major) {name.upper()} is a swizzled shared tile of blocks "
                    f"`[[[T; W]; K rows]; blocks] swizzle(S)`, not `{t}`")
    width, krows = t.elem.elem.length, t.elem.length
    row, col = args[at + 1].const, args[at + 2].const
    if row is not None and (row % 8 or row + 16 > krows):
        return at + 1, (f"{name.upper()}'s K rows {row}..{row + 15} must start at a multiple of 8 and lie in a "
                        f"block's {krows} rows")
    if col is not None and (col % width or col + count > t.length * width):
        return at + 2, (f"{name.upper()}'s columns {col}..{col + count - 1} must start a block of {width} and lie "
                        f"in the tile's {t.length * width}")
    return {f"{name}_swizzle": t.swizzle, f"{name}_width": width, f"{name}_major": "mn_major", f"{name}_rows": krows}


def _interleaved(args: list, name: str, at: int, count: int, major: str) -> dict | tuple:
    """An operand in a tile without a swizzle: the ISA's core matrices of 8 rows of 16 bytes,
    a tile of blocks `[[[T; 16 bytes]; R]; blocks]` - K-major: rows of M or N, a block per 8
    of K, (row, col) = (first M or N row, first K column); MN-major: rows of K, a block per 8
    of M or N, (row, col) = (first K row, first M or N column)."""
    t = args[at].ty
    if not (isinstance(t.elem, ArrayType) and isinstance(t.elem.elem, ArrayType)
            and not isinstance(t.elem.elem.elem, ArrayType) and t.elem.elem.length * array_scalar(t).nbytes == 16):
        return at, (f"{name.upper()} is a swizzled shared tile, or one of blocks of 16-byte rows "
                    f"`[[[T; {16 // array_scalar(t).nbytes}]; R]; blocks]` (no swizzle: the ISA's core matrices), "
                    f"not `{t}`")
    width, nrows = t.elem.elem.length, t.elem.length
    row, col = args[at + 1].const, args[at + 2].const
    extent = (16, count) if major == "mn_major" else (count, 16)      # (rows, columns) the operand covers
    if row is not None and (row % 8 or row + extent[0] > nrows):
        return at + 1, (f"{name.upper()}'s rows {row}..{row + extent[0] - 1} must start at a multiple of 8 and lie in "
                        f"a block's {nrows} rows")
    if col is not None and (col % width or col + extent[1] > t.length * width):
        return at + 2, (f"{name.upper()}'s columns {col}..{col + extent[1] - 1} must start a block of {width} and lie "
                        f"in the tile's {t.length * width}")
    return {f"{name}_swizzle": 0, f"{name}_width": width, f"{name}_major": major, f"{name}_rows": nrows}


def wgmma_tiles(name: str, args: list, words: dict) -> dict | tuple:
    """The attributes of a `wgmma` (or `wgmma_rs`) call from its arguments' types and its
    layout words (`mn_major`: that operand transposed)."""
    acc = args[0].ty
    if not (isinstance(acc, ArrayType) and acc.elem == F32 and acc.space in (None, "local")):
        return 0, _WHOLE
    n = 2 * acc.length
    if not (8 <= n <= 256 and n % 8 == 0):
        return 0, f"`{acc}` gives N = {n}; " + _WHOLE
    attrs = {"n": n}
    b_at = 3 if name == "wgmma_rs" else 4
    if name != "wgmma_rs":
        got = _tile(args, "a", 1, 64, words.get("a_major", "k_major"))
        if isinstance(got, tuple):
            return got
        attrs.update(got)
    got = _tile(args, "b", b_at, n, words.get("b_major", "k_major"))
    if isinstance(got, tuple):
        return got
    attrs.update(got)
    return attrs


def _dims(t) -> list:
    """An array type's dimensions, outermost first."""
    out = []
    while isinstance(t, ArrayType):
        out.append(t.length)
        t = t.elem
    return out


def tma_tiles(name: str, args: list, words: dict) -> dict | tuple:
    """A TMA copy's tile must be its map's box: the same element type and dimensions, laid
    out in the map's swizzle; one coordinate per dimension."""
    from ..ir.types import TensorMapType
    m_at, t_at, first = {"tma_load": (1, 0, 4), "tma_load_multicast": (1, 0, 5), "tma_store": (0, 1, 2)}[name]
    m, t = args[m_at].ty, args[t_at].ty
    if not isinstance(m, TensorMapType):
        return m_at, f"the map is a `tensormap<T, [..]>` kernel parameter, not `{m}`"
    coords = len(args) - first
    if coords != m.rank:
        return len(args) - 1, f"`{m}` takes {m.rank} coordinates (outermost first), not {coords}"
    if not (isinstance(t, ArrayType) and t.space == "shared"):
        return t_at, f"the tile is a shared array of the box's shape `{_box_type(m)}`, not `{t}`"
    if array_scalar(t) != m.elem or _dims(t) != list(m.box):
        return t_at, f"the tile `{t}` is not the box of `{m}`: `{_box_type(m)}`"
    if (t.swizzle or 0) != m.swizzle:
        how = f"in a {m.swizzle}-byte swizzle" if m.swizzle else "plainly"
        want = f"declared `swizzle({m.swizzle})`" if m.swizzle else "not swizzled"
        return t_at, f"the map lays its box out {how}: the tile must be {want}"
    return {}


def _box_type(m) -> str:
    text = str(m.elem)
    for d in reversed(m.box):
        text = f"[{text}; {d}]"
    return text + (f" swizzle({m.swizzle})" if m.swizzle else "")
