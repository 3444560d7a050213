"""Warp-wide tensor-core ops: ldmatrix (sm_75+), mma.m16n8k16 with f16/bf16 inputs and f32
accumulators and mma.m16n8k32 / m16n8k16 with 8-bit integer inputs and i32 accumulators (sm_80+).
Every lane of a warp executes them together.

A thread's part of a matrix (its fragment) lives in a per-thread array: `mma` reads 8 A
elements and 4 B elements from the thread's arrays and updates 4 f32 accumulators;
`ldmatrix` writes 2 elements per 8x8 matrix into one. Which elements a lane holds is the
PTX ISA's layout (below, also what the simulator computes with), so a kernel that builds
its fragments in another layout gets wrong results in the simulator as on the GPU.

mma's arithmetic: products of f16/bf16 values are exact; the simulator adds the 16
products and the accumulator exactly (f64) and rounds once to f32. The hardware's
accumulation order and intermediate rounding are not specified; the difference measured
on GPUs is in docs/simulator.md (tests/gpu/test_tensor_gpu.py bounds it). The integer
mma is exact: 32-bit sums that wrap as the hardware's do (no `.satfinite`).
"""

from __future__ import annotations

import functools

from ...lazy_numpy import np
from ..formats import Operands
from ..opdef import CONVERGENT, MAY_FAULT, READS_MEMORY, WRITES_MEMORY, Attr, defop
from ..types import F32, VectorType


@functools.cache
def mma_layout() -> tuple:
    """The m16n8k16 fragment layouts of the PTX ISA, as index tables (built on first use,
    with numpy): C_ROW, C_COL ([lane, i] -> row, column of accumulator i of a lane) and, for
    A and B, the owner tables (matrix element -> the lane holding it, its fragment index)."""
    # lane l = 4 * group + t (group = l // 4, t = l % 4); element i of the lane's fragment:
    lane = np.arange(32)
    g, t = lane // 4, lane % 4
    a_row = np.stack([g + 8 * ((i // 2) % 2) for i in range(8)], axis=1)        # [lane, i]: 16 x 16, row-major
    a_col = np.stack([2 * t + (i % 2) + 8 * (i // 4) for i in range(8)], axis=1)
    b_row = np.stack([2 * t + (i % 2) + 8 * (i // 2) for i in range(4)], axis=1)  # k of the 16 x 8 B
    b_col = np.stack([g for _ in range(4)], axis=1)
    c_row = np.stack([g + 8 * (i // 2) for i in range(4)], axis=1)               # 16 x 8 accumulators
    c_col = np.stack([2 * t + (i % 2) for i in range(4)], axis=1)
    return c_row, c_col, _owner(a_row, a_col, (16, 16)), _owner(b_row, b_col, (16, 8))


def _owner(rows: np.ndarray, cols: np.ndarray, shape: tuple) -> tuple:
    """For each matrix element, the lane that holds it and its index in that lane's fragment."""
    lane, index = np.zeros(shape, dtype=np.int64), np.zeros(shape, dtype=np.int64)
    for ln in range(32):
        for i in range(rows.shape[1]):
            lane[rows[ln, i], cols[ln, i]] = ln
            index[rows[ln, i], cols[ln, i]] = i
    return lane, index


def _whole_warps(m, op, mask) -> None:
    """Every lane of a warp that executes the op must execute it, and exist."""
    active = np.nonzero(mask)[0]
    at, exists = m.warp_lane(np.broadcast_to(np.arange(32), (m.lanes, 32)))     # every lane's 32 warp-mates
    ok = exists[active] & mask[at[active]]
    if not ok.all():
        src = int(np.argmin(ok.all(axis=0)))          # the first lane missing for some active lane
        k = active[np.argmin(ok[:, src])]
        m.fail("S0010", f"`{op.name}` is executed by {m.who(k)} but not by lane {src} of its warp", op,
               notes=["tensor-core ops are warp-wide: every lane of the warp runs them together, "
                      "outside divergent branches, in warps of 32 threads"])


def _read(m, op, ptr, index, t, count: int, mask) -> np.ndarray:
    """count consecutive elements from ptr[index] per lane, as float64 (lanes x count)."""
    return np.asarray(m.load_run(op, ptr, index, t, count, mask), dtype=np.float64)


def _products(m, cv, av, bv, a_owner, b_owner, ks: int) -> np.ndarray:
    """Each lane's 4 accumulators C + A B from the warp's fragments (lanes x elements of A
    and B, lanes x 4 of C), with the owner tables of A and B (matrix element -> lane and
    element) and K = ks; exact in the dtype of cv (f64 or int64)."""
    key = ("mma operands", a_owner[0].shape, ks)
    if key not in m.derived:
        # for each lane's accumulator i and k: the lanes and elements of A[row, k] and B[k, col]
        lane = m.lane_in_warp()
        C_ROW, C_COL, _, _ = mma_layout()
        row, col, k = C_ROW[lane][:, :, None], C_COL[lane][:, :, None], np.arange(ks)   # lanes x 4 x ks
        m.derived[key] = (m.warp_lane(a_owner[0][row, k])[0], a_owner[1][row, k],
                          m.warp_lane(b_owner[0][k, col])[0], b_owner[1][k, col])
    a_at, a_el, b_at, b_el = m.derived[key]
    products = av[a_at, a_el] * bv[b_at, b_el]
    out = cv.copy()
    for j in range(ks):                  # added in k order, one product at a time
        out += products[:, :, j]
    return out


def _mma_sim(m, op, args, mask):
    acc, ai, a, aj, b, bk = args
    _whole_warps(m, op, mask)
    t = op.a.type.pointee
    av, bv = _read(m, op, a, aj, t, 8, mask), _read(m, op, b, bk, t, 4, mask)
    cv = _read(m, op, acc, ai, F32, 4, mask)
    _, _, A_OWNER, B_OWNER = mma_layout()
    out = _products(m, cv, av, bv, A_OWNER, B_OWNER, 16)
    with np.errstate(over="ignore", invalid="ignore"):
        d = out.astype(np.float32)
    base = ai.astype(np.int64)
    for i in range(4):
        m.store(op, acc, base + i, F32, d[:, i], mask)
    return []


defop("gpu.mma", Operands(types_of="operands"),
      operands="acc: *local F{f32}, acc_index: I, a: *local T{f16,bf16}, a_index: U{i32,u32,i64,u64}, "
               "b: *local T, b_index: V{i32,u32,i64,u64}",
      traits=(READS_MEMORY, WRITES_MEMORY, CONVERGENT), simulate=_mma_sim, min_sm=80,
      accesses=lambda attrs, elem_bytes: [("acc", "acc_index", 4), ("a", "a_index", 8), ("b", "b_index", 4)],
      example="gpu.mma %c, %i, %a, %i, %b, %i : *mut local f32, u32, *mut local bf16, u32, *mut local bf16, u32",
      example_args="%c: *mut local f32, %a: *mut local bf16, %b: *mut local bf16, %i: u32",
      doc="The warp's D = A B + C for a 16x16 A (row-major fragments) and a 16x8 B (column-major), f16 or "
          "bf16, with f32 accumulators: each lane reads a[a_index..+8], b[b_index..+4] and updates "
          "acc[acc_index..+4] (PTX mma.m16n8k16 fragment layouts). Warp-wide.")


@functools.cache
def mma_i8_layout() -> tuple:
    """m16n8k32's layouts for 8-bit elements (PTX ISA, "Matrix Fragments for mma.m16n8k32"),
    as owner tables: for each element of the 16 x 32 A and the 32 x 8 B, the lane holding it
    and its byte in the lane's fragment (byte 4r + e is byte e of fragment word r). With
    g = lane / 4, t = lane % 4: A word r is row g + 8 (r % 2), k = 4t + 16 (r / 2) + e; B word
    r is column g, k = 4t + 16 r + e. The accumulators are m16n8k16's (mma_layout's C).
    m16n8k16's 8-bit layouts ("Matrix Fragments for mma.m16n8k16 with integer type") are
    these tables' k < 16: A words 0 and 1 (rows g and g + 8), B word 0."""
    row, k = np.meshgrid(np.arange(16), np.arange(32), indexing="ij")
    a = (4 * (row % 8) + (k % 16) // 4, 4 * (row // 8 + 2 * (k // 16)) + k % 4)
    k, col = np.meshgrid(np.arange(32), np.arange(8), indexing="ij")
    b = (4 * col + (k % 16) // 4, 4 * (k // 16) + k % 4)
    return a, b


def _bytes(m, op, ptr, index, t, words: int, mask) -> np.ndarray:
    """`words` consecutive 32-bit words from ptr[index] per lane, as their bytes (lanes x
    4 words, byte e of word r at 4r + e), signed when the words are i32 (as dp4a reads them)."""
    w = m.load_run(op, ptr, index, t, words, mask).astype(np.int64) & 0xFFFFFFFF
    b = np.stack([(w >> (8 * e)) & 0xFF for e in range(4)], axis=2).reshape(m.lanes, 4 * words)
    return np.where(b >= 128, b - 256, b) if t.name == "i32" else b


def mma_i8_k(attrs) -> int:
    """gpu.mma_i8's K: 32 (m16n8k32) unless its attribute `k` says 16 (m16n8k16)."""
    return attrs.get("k", 32)


def _mma_i8_words(attrs) -> tuple:
    """The 32-bit words a lane's A and B fragments take: (4, 2) for K = 32, (2, 1) for 16."""
    k = mma_i8_k(attrs)
    return k // 8, k // 16


def _mma_i8_verify(op):
    if mma_i8_k(op.attrs) not in (16, 32):
        return f"k must be 16 or 32, not {op.attrs['k']}"
    return None


def _mma_i8_sim(m, op, args, mask):
    acc, ai, a, aj, b, bk = args
    _whole_warps(m, op, mask)
    wa, wb = _mma_i8_words(op.attrs)
    av = _bytes(m, op, a, aj, op.a.type.pointee, wa, mask)
    bv = _bytes(m, op, b, bk, op.b.type.pointee, wb, mask)
    I32 = op.acc.type.pointee
    cv = m.load_run(op, acc, ai, I32, 4, mask).astype(np.int64)
    a_owner, b_owner = mma_i8_layout()
    out = (_products(m, cv, av, bv, a_owner, b_owner, mma_i8_k(op.attrs)) + 2 ** 31) % 2 ** 32 - 2 ** 31   # wraps
    base = ai.astype(np.int64)
    for i in range(4):
        m.store(op, acc, base + i, I32, out[:, i].astype(np.int32), mask)
    return []


defop("gpu.mma_i8", Operands(types_of="operands"),
      operands="acc: *local N{i32}, acc_index: I, a: *local T{i32,u32}, a_index: U{i32,u32,i64,u64}, "
               "b: *local B{i32,u32}, b_index: V{i32,u32,i64,u64}",
      attrs={"k": Attr("int", required=False, lo=16, hi=32, multiple_of=16,
                       doc="the shape's K: 32 (m16n8k32, when absent) or 16 (m16n8k16)")},
      traits=(READS_MEMORY, WRITES_MEMORY, CONVERGENT), simulate=_mma_i8_sim, min_sm=80, verify=_mma_i8_verify,
      accesses=lambda attrs, elem_bytes: [("acc", "acc_index", 4), ("a", "a_index", _mma_i8_words(attrs)[0]),
                                          ("b", "b_index", _mma_i8_words(attrs)[1])],
      example="gpu.mma_i8 %c, %i, %a, %i, %b, %i : *mut local i32, u32, *mut local u32, u32, *mut local i32, u32",
      example_args="%c: *mut local i32, %a: *mut local u32, %b: *mut local i32, %i: u32",
      doc="The warp's D = A B + C for a 16x32 A (row-major) and a 32x8 B (column-major) of 8-bit integers "
          "with i32 accumulators: each lane reads the words a[a_index..+4] and b[b_index..+2], four "
          "elements a word (unsigned in u32 words, signed in i32 ones, as dp4a reads them), and updates "
          "acc[acc_index..+4] (PTX mma.m16n8k32 fragment layouts); the sums wrap to 32 bits. With {k = 16}: "
          "a 16x16 A and a 16x8 B, a[a_index..+2] and b[b_index] (mma.m16n8k16's). Warp-wide.")


def _ldmatrix_verify(op):
    if op.attrs["count"] not in (1, 2, 4):
        return f"count must be 1, 2 or 4, not {op.attrs['count']}"
    return None


def _ldmatrix_sim(m, op, args, mask):
    dst, di, src, sj = args
    n, trans = op.attrs["count"], op.attrs["trans"]
    _whole_warps(m, op, mask)
    t = op.src.type.pointee
    lane = m.lane_in_warp()
    supplies = mask & (lane < 8 * n)             # the lanes whose row address is used
    raw = m.load(op, src, sj.astype(np.int64), VectorType(t, 8), supplies)   # 16-byte aligned rows
    rows = np.asarray(raw).reshape(m.lanes, 8)
    base = di.astype(np.int64)
    for j in range(n):
        for e in range(2):
            if trans:
                at, _ = m.warp_lane(8 * j + 2 * (lane % 4) + e)
                value = rows[at, lane // 4]
            else:
                at, _ = m.warp_lane(8 * j + lane // 4)
                value = rows[at, 2 * (lane % 4) + e]
            m.store(op, dst, base + 2 * j + e, t, value, mask)
    return []


defop("gpu.ldmatrix", Operands(types_of="operands"),
      operands="dst: *local T{f16,bf16,i16,u16}, dst_index: I, src: *shared T, src_index: U{i32,u32,i64,u64}",
      attrs={"count": Attr("int"), "trans": Attr("bool")},
      traits=(READS_MEMORY, WRITES_MEMORY, CONVERGENT, MAY_FAULT), verify=_ldmatrix_verify,
      accesses=lambda attrs, elem_bytes: [("dst", "dst_index", 2 * attrs["count"]), ("src", "src_index", 8)],
      simulate=_ldmatrix_sim, min_sm=75,
      example="gpu.ldmatrix %d, %i, %s, %i {count = 4, trans = false} : *mut local bf16, u32, *mut shared bf16, u32",
      example_args="%d: *mut local bf16, %s: *mut shared bf16, %i: u32",
      doc="Load `count` (1, 2, 4) 8x8 matrices of 16-bit elements from shared memory: lane 8j+r gives the "
          "address of row r of matrix j (16-byte aligned: 8 consecutive elements); each lane receives 2 "
          "elements per matrix, dst[dst_index + 2j], dst[dst_index + 2j + 1]: row lane/4, columns "
          "2(lane%4) and +1 (with `trans`, the transposed matrix's). Warp-wide.")


def _stmatrix_sim(m, op, args, mask):
    """ldmatrix backwards: lane 8j + r names the row address of row r of matrix j, whose 8
    elements the 4 lanes 4r..4r+3 hold, 2 each (with `trans`, column r's: lane 4c + r / 2
    holds element c of it, as its element r % 2)."""
    dst, di, src, sj = args
    n, trans = op.attrs["count"], op.attrs["trans"]
    _whole_warps(m, op, mask)
    t = op.src.type.pointee
    lane = m.lane_in_warp()
    base = sj.astype(np.int64)
    frag = [[m.load(op, src, base + 2 * j + e, t, mask) for e in range(2)] for j in range(n)]
    supplies = mask & (lane < 8 * n)
    j, r = lane // 8, lane % 8
    rows = np.zeros((m.lanes, 8), dtype=np.asarray(frag[0][0]).dtype)
    for c in range(8):
        holder = 4 * c + r // 2 if trans else 4 * r + c // 2
        second = (r % 2 if trans else np.full(m.lanes, c % 2)) == 1      # the holder's element 1
        at, _ = m.warp_lane(holder)
        for jj in range(n):
            pick = supplies & (j == jj)
            values = np.where(second, np.asarray(frag[jj][1])[at], np.asarray(frag[jj][0])[at])
            rows[pick, c] = values[pick]
    m.store(op, dst, di.astype(np.int64), VectorType(t, 8), rows, supplies)
    return []


defop("gpu.stmatrix", Operands(types_of="operands"),
      operands="dst: *shared T{f16,bf16,i16,u16}, dst_index: U{i32,u32,i64,u64}, src: *local T, src_index: I",
      attrs={"count": Attr("int"), "trans": Attr("bool")},
      traits=(READS_MEMORY, WRITES_MEMORY, CONVERGENT, MAY_FAULT), verify=_ldmatrix_verify,
      accesses=lambda attrs, elem_bytes: [("src", "src_index", 2 * attrs["count"]), ("dst", "dst_index", 8)],
      simulate=_stmatrix_sim, min_sm=90,
      example="gpu.stmatrix %s, %i, %d, %i {count = 4, trans = false} : *mut shared bf16, u32, *mut local bf16, u32",
      example_args="%d: *mut local bf16, %s: *mut shared bf16, %i: u32",
      doc="Store `count` (1, 2, 4) 8x8 matrices of 16-bit elements to shared memory, ldmatrix's inverse "
          "(sm_90): lane 8j+r gives the address of row r of matrix j (16-byte aligned); each lane gives "
          "2 elements per matrix, src[src_index + 2j], src[src_index + 2j + 1]: row lane/4, columns "
          "2(lane%4) and +1 (with `trans`, stored transposed). Warp-wide.")
