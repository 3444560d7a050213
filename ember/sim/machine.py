"""The simulated GPU: thread coordinates, barriers, warp shuffles and votes, memory and
atomics, for a batch of blocks whose threads run as lanes of one interpreter.

Lanes are block-major: lane = block_in_batch * threads_per_block + linear thread index,
and a warp is 32 consecutive linear thread indices of one block.
"""

from __future__ import annotations

import numpy as np

from ..ir import semantics as S
from ..ir.core import Op
from ..ir.types import PtrType, ScalarType, VectorType
from .errors import SimError, thread_text
from .interp import Machine
from .memory import Memory, Ptr, element_bytes, from_array, huge, to_array


class SimMachine(Machine):
    def __init__(self, grid: tuple, block: tuple, block_ids: np.ndarray, tables: dict, check_races: bool = True):
        super().__init__({})
        self.grid, self.block = grid, block
        self.T = block[0] * block[1] * block[2]
        self.nb = len(block_ids)
        self.lanes = self.nb * self.T
        self.block_lin = np.repeat(block_ids.astype(np.int64), self.T)
        self.block_in_batch = np.arange(self.lanes, dtype=np.int64) // max(self.T, 1)
        self.thread_lin = np.tile(np.arange(self.T, dtype=np.int64), self.nb)
        self.gtid = self.block_lin * self.T + self.thread_lin
        self.epoch = np.zeros(self.nb, dtype=np.int64)
        self.exited = np.zeros(self.lanes, dtype=bool)
        self.tables = tables
        self.check_races = check_races
        self.allocations: dict[Op, Memory] = {}

    # -- identities
    def coords(self, lin: np.ndarray, dims: tuple) -> list:
        x = lin % dims[0]
        y = (lin // dims[0]) % dims[1]
        z = lin // (dims[0] * dims[1])
        return [x, y, z]

    def who(self, lane: int) -> str:
        t = [int(v[lane]) for v in self.coords(self.thread_lin, self.block)]
        b = [int(v[lane]) for v in self.coords(self.block_lin, self.grid)]
        return thread_text(tuple(t), tuple(b))

    def who_gtid(self, gtid: int) -> str:
        b, t = divmod(int(gtid), self.T)
        tc = [int(v[0]) for v in self.coords(np.array([t]), self.block)]
        bc = [int(v[0]) for v in self.coords(np.array([b]), self.grid)]
        return thread_text(tuple(tc), tuple(bc))

    # -- dispatch
    def op(self, interp, op: Op, args: list, mask: np.ndarray) -> list:
        name = op.name
        handler = _HANDLERS.get(name)
        if handler is None:
            return super().op(interp, op, args, mask)
        return handler(self, op, args, mask)

    def row_of(self, mem: Memory) -> np.ndarray:
        if mem.space == "shared":
            return self.block_in_batch
        if mem.space == "local":
            return np.arange(self.lanes, dtype=np.int64)
        return np.zeros(self.lanes, dtype=np.int64)

    # -- memory access with checks
    def access(self, op: Op, ptr: Ptr, idx: np.ndarray, mask: np.ndarray, t, kind: str,
               values: np.ndarray | None = None) -> np.ndarray | None:
        size = element_bytes(t)
        lanes = np.nonzero(mask)[0]
        wild = ptr.wild | huge(idx)
        with np.errstate(over="ignore"):
            addr = np.where(wild, -1, ptr.off + idx.astype(np.int64) * ptr.elem.nbytes)
        out = None
        if kind == "r":
            out = np.zeros((self.lanes, size), dtype=np.uint8)
        for m, mem in enumerate(ptr.mems):
            sel = lanes[ptr.mid[lanes] == m]
            if sel.size == 0:
                continue
            a = addr[sel]
            bad = wild[sel] | (a < 0) | (a > mem.nbytes - size)
            if bad.any():
                k = sel[np.argmax(bad)]
                raise SimError("S0001", self.out_of_bounds(mem, ptr, idx, k, t, kind), op)
            align = t.elem.nbytes * t.length if isinstance(t, VectorType) else size
            mis = ((mem.base + a) % align) != 0
            if mis.any():
                k = sel[np.argmax(mis)]
                raise SimError("S0002", f"misaligned {size}-byte access to {mem.describe()} at byte offset "
                               f"{int(addr[k])} by {self.who(k)}"
                               + (f" (the buffer starts at byte {mem.base} of its allocation)" if mem.base else ""),
                               op)
            rows = self.row_of(mem)[sel]
            cols = a[:, None] + np.arange(size)
            if kind == "r":
                if mem.init is not None:
                    ok = mem.init[rows[:, None], cols].all(axis=1)
                    if not ok.all():
                        k = sel[np.argmin(ok)]
                        raise SimError("S0003", f"{self.who(k)} reads element {int(addr[k]) // ptr.elem.nbytes} of "
                                       f"{mem.describe()}, which no thread of its block has written", op)
                if mem.track and self.check_races:
                    self.track(op, mem, sel, rows, cols, "r")
                out[sel] = mem.data[rows[:, None], cols]
            else:
                if mem.track and self.check_races:
                    self.track(op, mem, sel, rows, cols, "w")
                mem.data[rows[:, None], cols] = values[sel]
                if mem.init is not None:
                    mem.init[rows[:, None], cols] = True
        return out

    def out_of_bounds(self, mem: Memory, ptr: Ptr, idx: np.ndarray, lane: int, t, kind: str) -> str:
        """The message for an out-of-bounds access: the exact element index (never a
        wrapped byte offset) and, for a vector access, its first element past the end."""
        esize = max(ptr.elem.nbytes, 1)
        count = element_bytes(t) // esize
        elems = mem.nbytes // esize
        what = f"out-of-bounds {'read' if kind == 'r' else 'write'} of {mem.describe()} by {self.who(lane)}"
        if ptr.wild[lane]:
            return f"{what}: the pointer was offset past any buffer (by more than 2^50 bytes)"
        first = int(ptr.off[lane]) // esize + int(idx[lane])     # exact: Python integers
        bad = first if first < 0 else max(first, elems)
        text = f"{what}: element {bad} of {elems}"
        if count > 1:
            text += f" (a {count}-element vector access of elements {first}..{first + count - 1})"
        return text

    def track(self, op: Op, mem: Memory, sel: np.ndarray, rows: np.ndarray, cols: np.ndarray, kind: str) -> None:
        writer, wep, reader, rep, rmulti = mem.race_state()
        size = cols.shape[1]
        r = np.repeat(rows, size)
        c = cols.reshape(-1)
        th = np.repeat(self.gtid[sel], size)
        blk = th // self.T
        ep = np.repeat(self.epoch[self.block_in_batch[sel]], size)

        def conflict(other_thread, other_epoch):
            other_blk = other_thread // self.T
            return (other_thread >= 0) & (other_thread != th) & ((other_blk != blk) | (other_epoch == ep))

        w_prev, we_prev = writer[r, c], wep[r, c]
        bad = conflict(w_prev, we_prev)
        if bad.any():
            i = int(np.argmax(bad))
            lane = sel[i // size]
            what = "reads" if kind == "r" else "writes"
            raise SimError("S0004", f"data race on {mem.describe()}: {self.who(lane)} {what} {_elem(mem, c[i])}, "
                           f"which {self.who_gtid(w_prev[i])} wrote with no barrier in between", op)
        if kind == "w":
            r_prev, re_prev = reader[r, c], rep[r, c]
            bad = conflict(r_prev, re_prev) | (rmulti[r, c] & (re_prev == ep) & (r_prev >= 0))
            if bad.any():
                i = int(np.argmax(bad))
                lane = sel[i // size]
                other = f"which {self.who_gtid(r_prev[i])} read" if r_prev[i] != th[i] else "which other threads read"
                raise SimError("S0004", f"data race on {mem.describe()}: {self.who(lane)} writes {_elem(mem, c[i])}, "
                               f"{other} with no barrier in between", op)
            flat = r * mem.data.shape[1] + c
            uniq, first, counts = np.unique(flat, return_index=True, return_counts=True)
            if (counts > 1).any():
                dup = uniq[counts > 1][0]
                who = np.nonzero(flat == dup)[0]
                lanes = sel[who // size]
                if len(set(self.gtid[lanes].tolist())) > 1:
                    raise SimError("S0004", f"data race on {mem.describe()}: {self.who(lanes[0])} and "
                                   f"{self.who(lanes[1])} write {_elem(mem, c[who[0]])} at the same time", op)
            writer[r, c], wep[r, c] = th, ep
            reader[r, c] = -1
            rmulti[r, c] = False
        else:
            r_prev, re_prev = reader[r, c], rep[r, c]
            fresh = (r_prev < 0) | (re_prev != ep) | (r_prev // self.T != blk)
            other = ~fresh & (r_prev != th)
            rmulti[r[other], c[other]] = True
            reader[r[fresh], c[fresh]] = th[fresh]
            rep[r[fresh], c[fresh]] = ep[fresh]
            rmulti[r[fresh], c[fresh]] = False
            flat = r * mem.data.shape[1] + c
            uniq, inv, counts = np.unique(flat, return_inverse=True, return_counts=True)
            many = counts[inv] > 1
            if many.any():
                rmulti[r[many], c[many]] = True


def _elem(mem: Memory, byte) -> str:
    size = mem.elem.nbytes if mem.elem is not None else 1
    return f"element {int(byte) // size}" if size > 1 else f"byte {int(byte)}"


def _coord(which: str):
    def handler(m: SimMachine, op, args, mask):
        i = "xyz".index(op.attrs["dim"])
        if which == "thread":
            v = m.coords(m.thread_lin, m.block)[i]
        elif which == "block":
            v = m.coords(m.block_lin, m.grid)[i]
        else:
            v = np.full(m.lanes, (m.block if which == "bdim" else m.grid)[i], dtype=np.int64)
        return [v.astype(np.uint32)]
    return handler


def _lane_id(m: SimMachine, op, args, mask):
    return [(m.thread_lin % 32).astype(np.uint32)]


def _warp_id(m: SimMachine, op, args, mask):
    return [(m.thread_lin // 32).astype(np.uint32)]


def _exited(m: SimMachine, op, args, mask):
    m.exited |= mask
    return []


def _barrier(m: SimMachine, op, args, mask):
    active = mask.reshape(m.nb, m.T)
    live = ~m.exited.reshape(m.nb, m.T)
    arrived = active.any(axis=1)
    missing = arrived[:, None] & live & ~active
    if missing.any():
        b, t = np.argwhere(missing)[0]
        waiting = np.argwhere(active[b])[0][0]
        raise SimError("S0005", f"divergent barrier: {m.who(b * m.T + waiting)} waits here, but "
                       f"{m.who(b * m.T + t)} (not finished) does not reach this barrier", op)
    m.epoch[arrived] += 1
    return []


def _shfl(m: SimMachine, op, args, mask):
    v, n = args
    lane = m.thread_lin % 32
    nn = n.astype(np.int64)
    mode = op.attrs["mode"]
    if mode == "down":
        src = lane + nn
    elif mode == "xor":
        src = lane ^ nn
    else:
        src = nn % 32
    own = (src > 31) | (src < 0)
    src = np.where(own, lane, src)
    src_lane = np.arange(m.lanes) - lane + src          # same block, same warp
    src_thread = m.thread_lin - lane + src
    active = np.nonzero(mask)[0]
    exists = src_thread[active] < m.T
    ok = exists.copy()
    ok[exists] = mask[src_lane[active][exists]]
    if not ok.all():
        k = active[np.argmin(ok)]
        raise SimError("S0006", f"{m.who(k)} shuffles from lane {int(src[k])} of its warp, which is not active here",
                       op, notes=["a shuffle reads another lane's value; that lane must execute the shuffle too"])
    out = np.array(v, copy=True)
    out[active] = v[src_lane[active]]
    return [out]


def _vote(m: SimMachine, op, args, mask):
    pred = args[0] & mask
    warp = (np.arange(m.lanes) // m.T) * ((m.T + 31) // 32) + m.thread_lin // 32
    nwarps = int(warp.max()) + 1 if m.lanes else 0
    mode = op.attrs["mode"]
    if mode == "ballot":
        bits = np.where(pred, np.uint64(1) << (m.thread_lin % 32).astype(np.uint64), np.uint64(0))
        per_warp = np.bincount(warp, weights=bits.astype(np.float64), minlength=nwarps).astype(np.uint64)
        return [per_warp[warp].astype(np.uint32)]
    n_true = np.bincount(warp, weights=pred.astype(np.float64), minlength=nwarps)
    n_active = np.bincount(warp, weights=mask.astype(np.float64), minlength=nwarps)
    res = (n_true == n_active) if mode == "all" else (n_true > 0)
    return [res[warp]]


def _alloc(space: str):
    def handler(m: SimMachine, op, args, mask):
        t = op.results[0].type
        n = op.attrs["length"] * t.pointee.nbytes
        rows = m.lanes if space == "local" else m.nb
        mem = Memory(op.attrs.get("name") or str(op.results[0].name or space), space, rows, n,
                     track=(space == "shared"), track_init=(space == "shared"), elem=t.pointee)
        m.allocations[op] = mem
        return [Ptr.to(mem, m.lanes, t.pointee)]
    return handler


def _global(m: SimMachine, op, args, mask):
    return [Ptr.to(m.tables[op.attrs["name"]], m.lanes, op.results[0].type.pointee)]


def _offset(m: SimMachine, op, args, mask):
    return [args[0].offset(args[1])]


def _bitcast(m: SimMachine, op, args, mask):
    return [args[0].reinterpret(op.results[0].type)]


def _load(m: SimMachine, op, args, mask):
    ptr, idx = args
    t = op.results[0].type
    raw = m.access(op, ptr, idx, mask, t, "r")
    return [to_array(raw, t)]


def _store(m: SimMachine, op, args, mask):
    val, ptr, idx = args
    t = op.operands[0].type
    m.access(op, ptr, idx, mask, t, "w", from_array(val, t, m.lanes))
    return []


def _atomic(m: SimMachine, op, args, mask):
    """Applied lane by lane in lane order (the GPU's order is unspecified)."""
    ptr, idx = args[0], args[1]
    vals = args[2:]
    t: ScalarType = op.results[0].type
    old = np.zeros(m.lanes, dtype=S.dtype(t))
    lanes = np.nonzero(mask)[0]
    if lanes.size == 0:
        return [old]
    # bounds/alignment checks and the bytes, through a read (atomics are not race-tracked)
    saved = m.check_races
    m.check_races = False
    try:
        raw = m.access(op, ptr, idx, mask, t, "r")
        current = to_array(raw, t)
        addr = ptr.off + idx.astype(np.int64) * ptr.elem.nbytes
        key = ptr.mid.astype(np.int64) * (1 << 40) + m.row_of(ptr.mems[0]) * (1 << 32) + addr
        order = lanes[np.argsort(key[lanes], kind="stable")]
        new_vals = np.array(current, copy=True)
        k = 0
        while k < len(order):
            j = k
            while j + 1 < len(order) and key[order[j + 1]] == key[order[k]]:
                j += 1
            group = order[k:j + 1]
            acc = current[group[0]]
            for lane in group:
                old[lane] = acc
                acc = _apply(op, t, acc, *[v[lane] for v in vals])
            new_vals[group] = acc
            k = j + 1
        m.access(op, ptr, idx, mask, t, "w", from_array(new_vals, t, m.lanes))
    finally:
        m.check_races = saved
    return [old]


def _apply(op, t: ScalarType, acc, *v):
    kind = op.name if op.name == "mem.cas" else op.attrs["op"]
    arr = lambda x: np.array([x], dtype=S.dtype(t))  # noqa: E731
    with np.errstate(all="ignore"):
        if kind == "mem.cas":
            return v[1] if acc == v[0] else acc
        a, b = arr(acc), arr(v[0])
        r = {"add": lambda: a + b, "min": lambda: np.minimum(a, b), "max": lambda: np.maximum(a, b),
             "and": lambda: a & b, "or": lambda: a | b, "xor": lambda: a ^ b, "exch": lambda: b}[kind]()
        return r[0]


_HANDLERS = {
    "gpu.thread_idx": _coord("thread"), "gpu.block_idx": _coord("block"),
    "gpu.block_dim": _coord("bdim"), "gpu.grid_dim": _coord("gdim"),
    "gpu.lane_id": _lane_id, "gpu.warp_id": _warp_id, "gpu.exited": _exited,
    "gpu.barrier": _barrier, "gpu.shfl": _shfl, "gpu.vote": _vote,
    "mem.alloca": _alloc("local"), "mem.shared": _alloc("shared"), "mem.global": _global,
    "mem.offset": _offset, "arith.bitcast": _bitcast, "mem.load": _load, "mem.store": _store,
    "mem.atomic": _atomic, "mem.cas": _atomic,
}


def is_pointer(t) -> bool:
    return isinstance(t, PtrType)
