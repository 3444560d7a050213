"""Hopper's asynchronous warpgroup tensor-core ops (PTX wgmma, sm_90a): the 128 threads of
a warpgroup (4 consecutive warps from a warp index divisible by 4) compute D = A B^T + D
for a 64 x 16 A and an N x 16 B (N = 8..256 in steps of 8), bf16 or f16 in f32
accumulators, reading A and B from shared-memory tiles (or A from registers) while the
threads go on. `wgmma_fence` orders the threads' own register writes before the next
wgmma reads them, `wgmma_commit` closes the wgmmas issued since the last commit into a
group, and `wgmma_wait(N)` waits until at most N groups are in flight: only then may the
accumulators be read or the shared tiles overwritten.

The shared operands are K-major tiles declared `swizzle(S)` (S = 32, 64, 128 bytes: each
row one swizzle span, 8-row atoms; ember.frontend.check_stmts): the operand is rows
row..row+63 (A) or row..row+N-1 (B), columns col..col+15 of the tile, and the compiler
builds the shared-memory matrix descriptor from the tile's type (`descriptor` below). The
simulator reads the operands through the same descriptor as the PTX ISA decodes it
(`element_offset`), so a tile filled in another order gives wrong results there as on
the GPU. The accumulators are a per-thread array of N / 2 f32 in the ISA's fragment
layout (`acc_layout`): thread q of the warpgroup (warp w = q / 32, lane l, g = l / 4,
t = l % 4) holds acc[j] = D[16 w + g + 8 ((j % 4) / 2)][8 (j / 4) + 2 t + j % 2].

Arithmetic, as mma.sync's (ember.ir.ops.tensor): products of f16/bf16 values are exact;
the simulator adds each output's 16 products and the accumulator exactly (f64) and rounds
once to f32; the hardware's order and intermediate rounding are not specified.
"""

from __future__ import annotations

from ...lazy_numpy import np
from ..formats import Operands
from ..opdef import CONVERGENT, READS_MEMORY, SIDE_EFFECT, WRITES_MEMORY, Attr, defop

SWIZZLE_MODES = {128: 1, 64: 2, 32: 3, 0: 0}   # swizzle bytes -> the descriptor's layout type (bits 62-63)
_SM90A = dict(min_sm=90, arch_specific=True, min_ptx=(8, 0))
_EFFECTS = (READS_MEMORY, WRITES_MEMORY, CONVERGENT, SIDE_EFFECT)


def strides(swizzle: int, major: str = "k_major", rows: int = 0) -> tuple:
    """(leading, stride) byte offsets (LBO, SBO) of an operand in a `swizzle(S)` tile. K-major
    (`[[T; S bytes]; R]`, a row per M or N index): the 8-row groups lie 8 S bytes apart
    (SBO); a row's two 16-byte K chunks are adjacent, so LBO is unused (1, as CUTLASS sets
    it). MN-major (`[[[T; S bytes]; rows]; blocks]`, a row per K index, each block S bytes of
    M or N): the 8-row groups of K lie 8 S bytes apart (SBO), the blocks rows x S (LBO).
    Without a swizzle (S = 0: the ISA's interleaved core matrices of 8 rows of 16 bytes), a
    tile `[[[T; 16 bytes]; rows]; blocks]`: K-major, rows of M or N, a block per 8 of K - the
    8-row groups 128 bytes apart (SBO), the blocks rows x 16 (LBO); MN-major, rows of K, a
    block per 8 of M or N - the blocks rows x 16 apart (SBO), the 8-row groups of K 128 (LBO)."""
    if swizzle == 0:
        return (128, rows * 16) if major == "mn_major" else (rows * 16, 128)
    return (rows * swizzle if major == "mn_major" else 16), 8 * swizzle


def descriptor_bits(swizzle: int, major: str = "k_major", rows: int = 0) -> int:
    """The descriptor's constant part (LBO, SBO, layout type); the start address, bits
    0-13, is (address mod 2^18) / 16."""
    lbo, sbo = strides(swizzle, major, rows)
    return ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (SWIZZLE_MODES[swizzle] << 62)


def element_offset(desc, i: np.ndarray, k: np.ndarray, elem_bytes: int, major: str = "k_major") -> np.ndarray:
    """The shared byte address of element (i, k) (i the M or N index) of an operand as the
    hardware reads it from descriptor `desc` (u64s), PTX ISA's canonical layouts, in 16-byte
    chunks (W of them per row of the swizzle): K-major, row i % 8 of W chunks, 8-row groups
    SBO apart, k's chunk in the row; MN-major, row k % 8, 8-row groups of k SBO apart, i's
    chunk in the row and blocks of W chunks LBO apart; then the Swizzle<log2 W, 4, 3> of the
    address."""
    d = np.asarray(desc, dtype=np.uint64)
    field = lambda at: ((d >> np.uint64(at)) & np.uint64(0x3FFF)).astype(np.int64) << 4   # noqa: E731
    start, lbo, sbo = field(0), field(16), field(32)
    width = np.array([1, 8, 4, 2])[(d >> np.uint64(62)).astype(np.int64)]   # 16-byte chunks per row
    interleaved = width == 1               # no swizzle: core matrices of 8 rows of 16 bytes
    if major == "mn_major":
        ib = i * elem_bytes
        chunk = ib // 16
        if interleaved.all():
            addr = start + chunk * sbo + (k % 8) * 16 + (k // 8) * lbo + ib % 16
        else:
            addr = (start + (chunk % width) * 16 + (chunk // width) * lbo + (k % 8) * 16 * width + (k // 8) * sbo
                    + ib % 16)
    else:
        kb = k * elem_bytes
        step = lbo if interleaved.all() else 16      # between a row's 16-byte K chunks
        addr = start + (i % 8) * 16 * width + (i // 8) * sbo + (kb // 16) * step + kb % 16
    return addr ^ (((addr >> 7) & (width - 1)) << 4)


def tile_index(major: str, width: int, rows: int, row, col, swizzle: int = 128):
    """The element index in its tile of an operand's first element: K-major (row, col) of
    `[[T; width]; R]`; MN-major, or without a swizzle, row `row` of the block holding column
    `col` of `[[[T; width]; rows]; blocks]` (col a multiple of width)."""
    if major == "mn_major" or swizzle == 0:
        return (col // width) * (rows * width) + row * width + col % width
    return row * width + col


def acc_layout(n: int) -> tuple:
    """(row, column) of D of accumulator j of warpgroup thread q: arrays [128, n / 2]."""
    q = np.arange(128)[:, None]
    j = np.arange(n // 2)[None, :]
    w, lane = q // 32, q % 32
    g, t = lane // 4, lane % 4
    return 16 * w + g + 8 * ((j % 4) // 2), 8 * (j // 4) + 2 * t + j % 2


def a_fragment_layout() -> tuple:
    """(row, column) of A of register-fragment element i of warpgroup thread q ([128, 8]):
    mma.m16n8k16's A layout, warp w holding rows 16 w..16 w + 15."""
    q = np.arange(128)[:, None]
    i = np.arange(8)[None, :]
    w, lane = q // 32, q % 32
    g, t = lane // 4, lane % 4
    return 16 * w + g + 8 * ((i // 2) % 2), 2 * t + i % 2 + 8 * (i // 4)


def _tile_verify(prefix: str):
    def verify(op):
        s, w = op.attrs[f"{prefix}_swizzle"], op.attrs[f"{prefix}_width"]
        t = getattr(op, prefix).type.pointee
        if s not in SWIZZLE_MODES:
            return f"{prefix}_swizzle must be 0 (none), 32, 64 or 128 bytes, not {s}"
        if w * t.nbytes != (s or 16):
            return f"{prefix}_width ({w} elements of {t}) must make rows of {s or 16} bytes"
        if (op.attrs.get(f"{prefix}_major", "k_major") == "mn_major" or s == 0) and not op.attrs.get(f"{prefix}_rows"):
            return f"{prefix}'s tile of blocks needs {prefix}_rows (the rows of each block)"
        return None
    return verify


def _verify_ss(op):
    return _tile_verify("a")(op) or _tile_verify("b")(op)


MAJORS = ("k_major", "mn_major")


def _operand_attrs(p: str) -> dict:
    return {f"{p}_swizzle": Attr("int", lo=0, hi=128,
                                 doc=f"{p.upper()}'s tile: its swizzle in bytes (32, 64, 128; 0: none)"),
            f"{p}_width": Attr("int", lo=1, doc=f"{p.upper()}'s tile: elements per row"),
            f"{p}_major": Attr("enum", MAJORS, required=False,
                               doc=f"{p.upper()}'s layout: k_major (a row per M or N index; the default) or mn_major "
                                   "(a row per K index, blocks of width along M or N: transposed)"),
            f"{p}_rows": Attr("int", lo=8, required=False,
                              doc=f"{p.upper()}'s tile of blocks (MN-major, or not swizzled): rows per block")}


_TILE = {"n": Attr("int", lo=8, hi=256, multiple_of=8, doc="N of m64nNk16"), **_operand_attrs("b")}


defop("gpu.wgmma", Operands(types_of="operands"),
      operands="acc: *local F{f32}, a: *shared T{bf16,f16}, a_row: u32, a_col: u32, "
               "b: *shared T, b_row: u32, b_col: u32, accumulate: bool",
      attrs={**_TILE, **_operand_attrs("a")},
      traits=_EFFECTS, verify=_verify_ss, **_SM90A,
      simulate=lambda m, op, args, mask: m.wgmma.mma(op, args, mask, a_in_registers=False) or [],
      example="gpu.wgmma %c, %a, %r, %k, %b, %r, %k, %t {n = 64, a_swizzle = 128, a_width = 64, b_swizzle = 128, "
              "b_width = 64} : *mut local f32, *mut shared bf16, u32, u32, *mut shared bf16, u32, u32, bool",
      example_args="%c: *mut local f32, %a: *mut shared bf16, %b: *mut shared bf16, %r: u32, %k: u32, %t: bool",
      doc="Warpgroup-wide, asynchronous: acc = A B^T (+ acc when `accumulate`), A rows a_row..+64 and "
          "columns a_col..+16 of the swizzled K-major tile at `a` (rows of a_width elements), B rows "
          "b_row..+n and columns b_col..+16 of the tile at `b`; acc holds n / 2 f32 per thread in the PTX "
          "wgmma fragment layout (PTX wgmma.mma_async m64nNk16 with shared-memory descriptors, sm_90a). "
          "Rows start at multiples of 8, columns at 16 bytes. An MN-major operand (`a_major = mn_major`) is "
          "transposed: its tile has a_rows K rows per block of a_width M (or N) columns, and (row, col) "
          "is (K, M or N), col starting a block.")

defop("gpu.wgmma_rs", Operands(types_of="operands"),
      operands="acc: *local F{f32}, a: *local T{bf16,f16}, a_index: I, b: *shared T, b_row: u32, b_col: u32, "
               "accumulate: bool",
      attrs=_TILE, traits=_EFFECTS, verify=_tile_verify("b"), **_SM90A,
      accesses=lambda attrs, elem_bytes: [("a", "a_index", 8)],
      simulate=lambda m, op, args, mask: m.wgmma.mma(op, args, mask, a_in_registers=True) or [],
      example="gpu.wgmma_rs %c, %a, %i, %b, %r, %k, %t {n = 64, b_swizzle = 128, b_width = 64} : *mut local f32, "
              "*mut local bf16, u32, *mut shared bf16, u32, u32, bool",
      example_args="%c: *mut local f32, %a: *mut local bf16, %i: u32, %b: *mut shared bf16, %r: u32, %k: u32, "
                   "%t: bool",
      doc="As gpu.wgmma with A from registers: each thread's a[a_index..+8] is its part of the 64 x 16 A "
          "in mma.m16n8k16's A fragment layout, warp w of the warpgroup holding rows 16w..16w+15.")

defop("gpu.wgmma_fence", Operands(), traits=_EFFECTS, **_SM90A,
      simulate=lambda m, op, args, mask: m.wgmma.fence(op, mask) or [],
      example="gpu.wgmma_fence",
      doc="Warpgroup-wide: the thread's register writes (accumulators, A fragments) are ordered before "
          "the wgmmas that follow (PTX wgmma.fence); needed before the first wgmma and after the thread "
          "writes an accumulator or A fragment a wgmma reads.")
defop("gpu.wgmma_commit", Operands(), traits=_EFFECTS, **_SM90A,
      simulate=lambda m, op, args, mask: m.wgmma.commit(op, mask) or [],
      example="gpu.wgmma_commit",
      doc="Warpgroup-wide: close the wgmmas issued since the last commit into a group (PTX "
          "wgmma.commit_group).")
defop("gpu.wgmma_wait", Operands(), attrs={"pending": Attr("int", lo=0, hi=7)}, traits=_EFFECTS, **_SM90A,
      simulate=lambda m, op, args, mask: m.wgmma.wait(op, op.attrs["pending"], mask) or [],
      example="gpu.wgmma_wait {pending = 0}",
      doc="Warpgroup-wide: wait until at most `pending` (0..7) of the thread's committed wgmma groups are "
          "in flight (PTX wgmma.wait_group); then their accumulators may be read and their tiles "
          "overwritten.")
