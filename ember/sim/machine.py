"""The simulated GPU: the machine (`ember.ir.interp.Machine`) that op semantics run
against, for a batch of blocks whose threads run as lanes of one interpreter: thread
coordinates and warps, barriers, memory with its checks, and atomics. What each op does
is in its definition (ember/ir/ops); this is where it happens.

Lanes are block-major: lane = block_in_batch * threads_per_block + linear thread index,
and a warp is 32 consecutive linear thread indices of one block.
"""

from __future__ import annotations

import numpy as np

from ..ir import semantics as S
from ..ir.analysis.grid_dependency import OWN_SPACES
from ..ir.core import Op
from ..ir.interp import Machine
from ..ir.ops.ordering import order_of, scope_of
from ..ir.types import ScalarType, VectorType
from .async_copy import AsyncCopies, check_in_flight
from .errors import SimError, thread_text
from .memory import Memory, Ptr, Window, element_bytes, from_array, huge, to_array
from .bulk_store import BulkStores, check_overwrite
from .mbarrier import MBarriers
from .wgmma import Wgmmas
from . import cluster, races
from .races import element_text
from .ordering import Location, Ordering, reach_text, reaches


class SimMachine(Machine):
    def __init__(self, grid: tuple, block: tuple, block_ids: np.ndarray, tables: dict, check_races: bool = True,
                 cluster: tuple | None = None):
        super().__init__({})
        self.grid, self.block = grid, block
        self.cluster = tuple(cluster) if cluster else (1, 1, 1)
        self.T = block[0] * block[1] * block[2]
        self.nb = len(block_ids)
        self.lanes = self.nb * self.T
        self.block_lin = np.repeat(block_ids.astype(np.int64), self.T)
        self.block_in_batch = np.arange(self.lanes, dtype=np.int64) // max(self.T, 1)
        self.thread_lin = np.tile(np.arange(self.T, dtype=np.int64), self.nb)
        self.gtid = self.block_lin * self.T + self.thread_lin
        self.epoch = np.zeros(self.nb, dtype=np.int64)
        self.warp_syncs = np.zeros(self.lanes, dtype=np.int32)   # warp barriers each thread has passed
        self.exited = np.zeros(self.lanes, dtype=bool)
        self.cluster_barriers = np.zeros(self.nb, dtype=np.int64)    # cluster barriers each block passed
        self.remote_touches: dict = {}     # block -> the latest access into its shared memory from another
        self.tables = tables
        self.check_races = check_races
        self.allocations: dict[Op, Memory] = {}
        self.async_copies = AsyncCopies(self)
        self.ordering = Ordering(self)
        self.mbarriers = MBarriers(self)
        self.bulk_stores = BulkStores(self)
        self.wgmma = Wgmmas(self)
        self.proxy = False          # track ordinary shared writes for the copy engine (a kernel with bulk stores)
        # a kernel the compiler proved waits (griddep_wait) before it touches global memory
        # (KernelInfo.programmatic): which threads have waited, to check the proof (S0014)
        self.programmatic = False
        self.waited = np.zeros(self.lanes, dtype=bool)
        self.derived: dict = {}     # tables that follow from the lanes' layout alone, made once a launch

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

    def fail(self, code: str, message: str, op: Op, notes=()):
        raise SimError(code, message, op, notes=list(notes))

    # -- programmatic dependent launch
    def grid_dependency_wait(self, mask: np.ndarray) -> None:
        """griddep_wait: returns at once (a simulated kernel runs alone); noted per thread."""
        self.waited |= mask

    def before_grid_wait(self, op: Op, lanes: np.ndarray, what: str) -> None:
        """S0014 when a thread of a programmatic kernel touches global memory (`what`) before
        it has waited at griddep_wait: the kernel could read the previous kernel's data before
        that one wrote it - the compiler's proof that allowed the launch is wrong."""
        if not self.programmatic:
            return
        early = lanes[~self.waited[lanes]]
        if early.size:
            self.fail("S0014", f"{self.who(int(early[0]))} {what} before griddep_wait, in a kernel compiled as a "
                      "programmatic dependent launch (KernelInfo.programmatic): on the GPU it may run while the "
                      "kernel before it still writes", op,
                      notes=["the compiler proved this kernel waits first (ember.ir.analysis.grid_dependency): "
                             "this is a bug in that proof or in a pass that moved the access; please report it"])

    # -- threads and warps
    def coordinate(self, which: str, dim: int) -> np.ndarray:
        if which == "thread":
            return self.coords(self.thread_lin, self.block)[dim]
        if which == "block":
            return self.coords(self.block_lin, self.grid)[dim]
        return np.full(self.lanes, (self.block if which == "block_dim" else self.grid)[dim], dtype=np.int64)

    def lane_in_warp(self) -> np.ndarray:
        return self.thread_lin % 32

    def warp_in_block(self) -> np.ndarray:
        return self.thread_lin // 32

    def warp_lane(self, src: np.ndarray) -> tuple:
        """The interpreter lane of each lane's warp-mate with lane index `src`, and
        whether that thread exists (a partial last warp has fewer than 32). `src` may have
        axes after the lanes' (several warp-mates a lane: a tensor-core op's operands in one
        step); where a thread does not exist, the lane itself."""
        tail = (1,) * max(np.ndim(src) - 1, 0)
        tid = self.thread_lin.reshape(-1, *tail)
        lane = tid % 32
        own = np.arange(self.lanes).reshape(-1, *tail)
        exists = (tid - lane + src) < self.T
        at = np.where(exists, own - lane + src, own)
        return at, exists

    def warps(self) -> tuple:
        per_block = (self.T + 31) // 32
        warp = (np.arange(self.lanes) // max(self.T, 1)) * per_block + self.thread_lin // 32
        return warp, int(warp.max()) + 1 if self.lanes else 0

    def warp_of(self, gtid: np.ndarray) -> np.ndarray:
        """The warp (numbered across the grid) of threads by global id."""
        return (gtid // self.T) * ((self.T + 31) // 32) + (gtid % self.T) // 32

    def independent(self, mask: np.ndarray) -> list:
        """The lanes of `mask` by block and warpgroup (128 threads, the unit of wgmma and
        setmaxnreg): what the interpreter may run apart (ember.ir.interp.concurrently)."""
        group = self.block_in_batch * ((self.T + 127) // 128) + self.thread_lin // 128
        return [mask & (group == g) for g in np.unique(group[mask]).tolist()]

    def exit(self, mask: np.ndarray) -> None:
        self.exited |= mask

    def barrier(self, op: Op, mask: np.ndarray) -> None:
        active = mask.reshape(self.nb, self.T)
        live = ~self.exited.reshape(self.nb, self.T)
        arrived = active.any(axis=1)
        missing = arrived[:, None] & live & ~active
        if missing.any():
            b, t = np.argwhere(missing)[0]
            waiting = np.argwhere(active[b])[0][0]
            raise SimError("S0005", f"divergent barrier: {self.who(b * self.T + waiting)} waits here, but "
                           f"{self.who(b * self.T + t)} (not finished) does not reach this barrier", op)
        self.epoch[arrived] += 1
        self.ordering.barrier(arrived)

    # -- memory
    def allocate(self, op: Op, space: str, elem: ScalarType, length: int, name: str | None):
        rows = self.lanes if space == "local" else self.nb
        mem = Memory(name or str(op.results[0].name or space), space, rows, length * elem.nbytes,
                     track=(space == "shared"), track_init=(space == "shared"), elem=elem)
        mem.align = max(16, op.attrs.get("align") or 0)      # where the GPU may place its start
        self.allocations[op] = mem
        return Ptr.to(mem, self.lanes, elem)

    def wild_pointer(self, t):
        """A pointer that points nowhere (any access through it is out of bounds)."""
        mem = Memory("(no buffer)", "global", 1, 0, track=False, elem=t.pointee)
        p = Ptr.to(mem, self.lanes, t.pointee)
        p.wild[:] = True
        return p

    def table(self, name: str, elem: ScalarType):
        return Ptr.to(self.tables[name], self.lanes, elem)

    def load(self, op: Op, ptr: Ptr, index: np.ndarray, t, mask: np.ndarray):
        return to_array(self.access(op, ptr, index, mask, t, "r"), t)

    def load_run(self, op: Op, ptr: Ptr, index: np.ndarray, t, count: int, mask: np.ndarray) -> np.ndarray:
        """ptr[index + k] for k = 0..count - 1 a lane (lanes x count values of t), as `count`
        loads in that order would give them - checked in one access (a tensor-core op's
        fragment reads), and on an error again one load at a time, so that the error names
        the element and the check a single load's would."""
        try:
            raw = self.access(op, ptr, index, mask, t, "r", count=count)
        except SimError:                  # the first load that fails raises its own error
            base = index.astype(np.int64)
            return np.stack([np.asarray(self.load(op, ptr, base + k, t, mask)) for k in range(count)], axis=1)
        return np.asarray(to_array(raw.reshape(-1, element_bytes(t)), t)).reshape(self.lanes, count)

    def store(self, op: Op, ptr: Ptr, index: np.ndarray, t, values, mask: np.ndarray) -> None:
        self.access(op, ptr, index, mask, t, "w", from_array(values, t, self.lanes))

    def atomic(self, op: Op, ptr: Ptr, index: np.ndarray, t: ScalarType, mask: np.ndarray, update,
               wrote=None):
        """Read-modify-write lane by lane, in lane order (the GPU's order is unspecified):
        `update(old, lane)` gives the new value from the old one (1-element arrays);
        `wrote(old, lane)` whether it counts as a write (a failed compare-and-swap does not)."""
        old = np.zeros(self.lanes, dtype=S.dtype(t))
        lanes = np.nonzero(mask)[0]
        if lanes.size == 0:
            return old
        # bounds/alignment checks and the bytes, through a read (atomics are not race-tracked)
        saved = self.check_races
        self.check_races = False
        try:
            current = to_array(self.access(op, ptr, index, mask, t, "r"), t)
            key = self._atomic_key(ptr, index)
            order = lanes[np.argsort(key[lanes], kind="stable")]
            new_vals = np.array(current, copy=True)
            k = 0
            with np.errstate(all="ignore"):
                while k < len(order):
                    j = k
                    while j + 1 < len(order) and key[order[j + 1]] == key[order[k]]:
                        j += 1
                    group = order[k:j + 1]
                    acc = current[group[0]:group[0] + 1]
                    for lane in group:
                        old[lane] = acc[0]
                        self._synchronize(op, ptr, index, lane, reads=True,
                                          writes=wrote is None or bool(wrote(acc, lane)), rmw=True)
                        acc = np.asarray(update(acc, lane), dtype=old.dtype).reshape(1)
                    new_vals[group] = acc[0]
                    k = j + 1
            self.access(op, ptr, index, mask, t, "w", from_array(new_vals, t, self.lanes))
        finally:
            self.check_races = saved
        return old

    def atomic_load(self, op: Op, ptr: Ptr, index: np.ndarray, t: ScalarType, mask: np.ndarray):
        saved, self.check_races = self.check_races, False
        try:
            values = to_array(self.access(op, ptr, index, mask, t, "r"), t)
        finally:
            self.check_races = saved
        for lane in np.nonzero(mask)[0].tolist():
            self._synchronize(op, ptr, index, lane, reads=True, writes=False, rmw=False)
        return values

    def atomic_store(self, op: Op, ptr: Ptr, index: np.ndarray, t: ScalarType, values, mask: np.ndarray) -> None:
        """Lanes storing to one element: the last in lane order stays (as the releases it carries)."""
        saved, self.check_races = self.check_races, False
        try:
            self.access(op, ptr, index, mask, t, "w", from_array(values, t, self.lanes))
        finally:
            self.check_races = saved
        for lane in np.nonzero(mask)[0].tolist():
            self._synchronize(op, ptr, index, lane, reads=False, writes=True, rmw=False)

    def fence(self, op: Op, order: str, scope: str, mask: np.ndarray) -> None:
        self.ordering.fence(np.nonzero(mask)[0], order, scope, op)

    def _atomic_key(self, ptr: Ptr, index: np.ndarray) -> np.ndarray:
        addr = ptr.off + index.astype(np.int64) * ptr.elem.nbytes
        return ptr.mid.astype(np.int64) * (1 << 40) + self.row_of(ptr.mems[0]) * (1 << 32) + addr

    def _synchronize(self, op: Op, ptr: Ptr, index: np.ndarray, lane: int, reads: bool, writes: bool,
                     rmw: bool) -> None:
        """One lane's atomic access to its element, for the memory model: the scope check
        against the element's last atomic, then its acquire and release (ember.sim.ordering)."""
        mem = ptr.mems[ptr.mid[lane]]
        byte = int(ptr.off[lane]) + int(index[lane]) * ptr.elem.nbytes
        row = int(self.row_of(mem)[lane])
        loc = mem.locations.get((row, mem.base + byte))
        if loc is None:
            loc = mem.locations[(row, mem.base + byte)] = Location()
        scope, block, gtid = scope_of(op), int(self.block_lin[lane]), int(self.gtid[lane])
        last = loc.last
        if last is not None and last[1] != block and not (reaches(last[2], last[1], block, self)
                                                          and reaches(scope, block, last[1], self)):
            narrow = last[2] if not reaches(last[2], last[1], block, self) else scope
            raise SimError("S0004", f"data race on {mem.describe()}: {self.who(lane)} and {self.who_gtid(last[0])} "
                           f"both access {element_text(mem, byte)} atomically, but at `{narrow}` scope, which is "
                           f"atomic only among {reach_text(narrow)}", op,
                           notes=["use `gpu` scope for an atomic that threads of different blocks share"])
        loc.last = (gtid, block, scope, op)
        self.ordering.atomic(lane, loc, order_of(op), scope, op, reads, writes, rmw)

    def cp_async(self, op: Op, dst: Ptr, src: Ptr, size: int, src_bytes: np.ndarray, mask: np.ndarray) -> None:
        self.async_copies.start(op, dst, src, size, src_bytes, mask)

    def cp_async_commit(self, mask: np.ndarray) -> None:
        self.async_copies.commit(mask)

    def cp_async_wait(self, op: Op, pending: int, mask: np.ndarray) -> None:
        self.async_copies.wait(pending, mask)

    def row_of(self, mem: Memory) -> np.ndarray:
        if mem.space == "shared":
            return self.block_in_batch
        if mem.space == "local":
            return np.arange(self.lanes, dtype=np.int64)
        return np.zeros(self.lanes, dtype=np.int64)

    # -- memory access with checks
    def access(self, op: Op, ptr: Ptr, idx: np.ndarray, mask: np.ndarray, t, kind: str,
               values: np.ndarray | None = None, rows: np.ndarray | None = None, count: int = 1) -> np.ndarray | None:
        """Read ("r"), write ("w"), only check bounds and alignment ("c"), or check them and
        races as for a write that may happen from now on without writing ("cw": a cp.async
        copy's destination when it starts); `rows`: the memory rows (blocks) to use instead
        of each lane's own (a cluster's other blocks); `count`: a run of that many
        consecutive elements of t a lane (load_run)."""
        size = element_bytes(t) * count
        esize = element_bytes(t)
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
            if ptr.window is not None:      # a row's own bounds first: the flat array may go on
                past = ~wild[sel] & ptr.window.outside(sel, a, size)
                if past.any():
                    k = sel[np.argmax(past)]
                    raise SimError("S0001", self.out_of_row(mem, ptr, addr, k, kind), op)
            bad = wild[sel] | (a < 0) | (a > mem.nbytes - size)
            if bad.any():
                k = sel[np.argmax(bad)]
                raise SimError("S0001", self.out_of_bounds(mem, ptr, idx, k, t, kind), op)
            align = t.elem.nbytes * t.length if isinstance(t, VectorType) else esize   # each element of a run
            mis = ((mem.base + a) % align) != 0
            if mis.any():
                k = sel[np.argmax(mis)]
                raise SimError("S0002", f"misaligned {size}-byte access to {mem.describe()} at byte offset "
                               f"{int(addr[k])} by {self.who(k)}"
                               + (f" (the buffer starts at byte {mem.base} of its allocation)" if mem.base else ""),
                               op)
            if kind == "c":
                continue
            if self.programmatic and mem.space not in OWN_SPACES:
                self.before_grid_wait(op, sel, f"{'reads' if kind == 'r' else 'writes'} {mem.describe()}")
            if kind == "cw":
                if mem.track and self.check_races:
                    self.track(op, mem, sel, (rows if rows is not None else self.row_of(mem))[sel],
                               a[:, None] + np.arange(size), "w", record=False)
                continue
            if mem.wgmma_regs:
                self.wgmma.touched(sel)
            rows_sel = (rows if rows is not None else self.row_of(mem))[sel]
            cols = a[:, None] + np.arange(size)
            if mem.in_flight is not None:
                check_in_flight(self, op, mem, sel, rows_sel, cols, kind)
            if mem.bulk_phase is not None:
                if kind == "r":
                    self.mbarriers.check_read(op, mem, sel, rows_sel, cols)
                else:
                    mem.bulk_phase[rows_sel[:, None], cols, 0] = -1     # a thread's own write now
            if kind == "r":
                if mem.init is not None:
                    ok = mem.init[rows_sel[:, None], cols].all(axis=1)
                    if not ok.all():
                        k = sel[np.argmin(ok)]
                        raise SimError("S0003", f"{self.who(k)} reads element {int(addr[k]) // ptr.elem.nbytes} of "
                                       f"{mem.describe()}, which no thread of its block has written", op)
                if mem.track and self.check_races:
                    self.track(op, mem, sel, rows_sel, cols, "r")
                out[sel] = mem.data[rows_sel[:, None], cols]
            else:
                if mem.async_reading is not None:
                    check_overwrite(self, op, mem, sel, rows_sel, cols)
                if mem.track and self.check_races:
                    self.track(op, mem, sel, rows_sel, cols, "w")
                mem.data[rows_sel[:, None], cols] = values[sel]
                if mem.init is not None:
                    mem.init[rows_sel[:, None], cols] = True
                if self.proxy and mem.space == "shared":   # the copy engine sees it after a fence_proxy_async
                    if mem.proxy_dirty is None:
                        mem.proxy_dirty = np.zeros(mem.data.shape, dtype=bool)
                    mem.proxy_dirty[rows_sel[:, None], cols] = True
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

    def out_of_row(self, mem: Memory, ptr: Ptr, addr: np.ndarray, lane: int, kind: str) -> str:
        w = ptr.window
        esize = max(ptr.elem.nbytes, 1)
        col = (int(addr[lane]) - int(w.lo[lane])) // esize
        length = (int(w.hi[lane]) - int(w.lo[lane])) // esize
        return (f"out-of-bounds {'read' if kind == 'r' else 'write'} of {mem.describe()} by {self.who(lane)}: "
                f"index {col} of row {int(w.row[lane])}, which has {length} elements (`{w.text}`)")

    def row(self, op: Op, ptr: Ptr, index: np.ndarray, length: int, rows: int, text: str, mask: np.ndarray) -> Ptr:
        """A pointer to row `index` of a multi-dimensional array (`rows` rows of `length`
        elements) that may not leave that row (its window)."""
        i = index.astype(np.int64) if index.dtype != np.uint64 else np.minimum(index, np.uint64(1 << 62)).astype(np.int64)
        bad = mask & ((i < 0) | (i >= rows) | huge(index))
        if bad.any():
            k = int(np.argmax(bad))
            mem = ptr.mems[ptr.mid[k]]
            raise SimError("S0001", f"out-of-bounds row of {mem.describe()} by {self.who(k)}: row {int(index[k])} "
                           f"of `{text}`, which has {rows} rows", op)
        out = ptr.offset(np.where(mask, i, 0) * length)
        lo = out.off.copy()
        out.window = Window(lo, lo + length * ptr.elem.nbytes, np.where(mask, i, 0), text)
        return out

    # -- clusters (ember.sim.cluster)
    def cluster_rank(self) -> np.ndarray:
        return cluster.rank(self)

    def cluster_blocks(self) -> int:
        return self.cluster[0] * self.cluster[1] * self.cluster[2]

    def cluster_barrier(self, op: Op, mask: np.ndarray) -> None:
        cluster.barrier(self, op, mask)

    def remote(self, op: Op, ptr: Ptr, index: np.ndarray, rank: np.ndarray, t, mask: np.ndarray, values=None):
        return cluster.remote(self, op, ptr, index, rank, t, mask, values)

    def track(self, op: Op, mem: Memory, sel: np.ndarray, rows: np.ndarray, cols: np.ndarray, kind: str,
              record: bool = True) -> None:
        races.track(self, op, mem, sel, rows, cols, kind, record)
