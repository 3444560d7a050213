"""Bulk stores (shared to global through the copy engine, PTX cp.async.bulk.global.shared)
and the async-proxy fence in the simulator (the ops are in ember/ir/ops/mbarrier.py).

The copy engine reads shared memory through the async proxy: bytes a thread wrote with
ordinary stores are visible to it only after that thread's `fence_proxy_async()` (and, for
another thread's copy, a barrier): a store reading bytes whose writer has not fenced them is
S0012. A store reads its source when it starts and writes its destination then, but
until its thread waits for its bulk group the destination bytes are in flight (any access
is S0009) and, until a `cp_async_bulk_wait_read` covers it, so is its source for writes
(overwriting it is S0009): the copy engine may still be reading it.
"""

from __future__ import annotations

import numpy as np

from ..ir.types import U32, VectorType
from .errors import SimError
from .tensor_copy import check_coords, check_tile_start

_CHUNK = VectorType(U32, 4)


class BulkStores:
    def __init__(self, machine):
        self.m = machine
        self.committed = np.zeros(machine.lanes, dtype=np.int64)   # also the number of the open group
        self.pending: list = []        # (lane, group, dst memory, row, start, n, src memory, row, start)

    def fence(self, mask) -> None:
        """fence.proxy.async: the lanes' own ordinary writes become visible to the copy engine."""
        m = self.m
        for mem in list(m.allocations.values()):
            if mem.proxy_dirty is None:
                continue
            # each lane's own writes (the race state knows who wrote; without it, all of its block's)
            writer = mem.race_state()[0] if mem.track and m.check_races else None
            for lane in np.nonzero(mask)[0].tolist():
                row = int(m.row_of(mem)[lane])
                if writer is not None:
                    mem.proxy_dirty[row] &= writer[row] != int(m.gtid[lane])
                else:
                    mem.proxy_dirty[row] = False

    def start(self, op, dst, src, nbytes, mask) -> None:
        m = self.m
        zero = np.zeros(m.lanes, dtype=np.int64)
        for lane in np.nonzero(mask)[0].tolist():
            n = int(nbytes[lane])
            one = np.zeros(m.lanes, dtype=bool)
            one[lane] = True
            smem = src.mems[src.mid[lane]]
            srow, sstart = int(m.row_of(smem)[lane]), int(src.off[lane])
            _check_fenced(m, op, lane, smem, srow, sstart, n)
            data = self._read(op, src, lane, n)
            for k in range(n // 16):
                values = np.zeros((m.lanes, 16), dtype=np.uint8)
                values[lane] = data[16 * k:16 * k + 16]
                m.access(op, dst.offset(zero + 4 * k, 4), zero, one, _CHUNK, "w", values)
            gmem = dst.mems[dst.mid[lane]]
            gstart = int(dst.off[lane])
            self._hold(lane, gmem, int(m.row_of(gmem)[lane]), np.arange(gstart, gstart + n), smem, srow,
                       np.arange(sstart, sstart + n))

    def tensor_store(self, op, maps, src, coords, mask) -> None:
        """TMA: each lane's tile scattered into the box of its tensor map (ember.sim.tensor_copy)."""
        m = self.m
        m.before_grid_wait(op, np.nonzero(mask)[0], "writes a tensor map's tensor")
        for lane in np.nonzero(mask)[0].tolist():
            tmap = maps[lane]
            smem, srow, sstart = check_tile_start(m, op, src, lane, tmap.ty, "store reads")
            n = tmap.ty.box_bytes
            _check_fenced(m, op, lane, smem, srow, sstart, n)
            at = check_coords(m, op, lane, coords, tmap.ty, "store writes")
            cols = tmap.scatter(at, self._read(op, src, lane, n))
            self._hold(lane, tmap.mem, 0, cols, smem, srow,
                       np.arange(sstart, sstart + n))

    def _read(self, op, src, lane: int, n: int) -> np.ndarray:
        """n shared bytes from src in lane's name: bounds, alignment (16) and races checked."""
        m = self.m
        zero = np.zeros(m.lanes, dtype=np.int64)
        one = np.zeros(m.lanes, dtype=bool)
        one[lane] = True
        pieces = [m.access(op, src.offset(zero + 4 * k, 4), zero, one, _CHUNK, "r")[lane] for k in range(n // 16)]
        return np.concatenate(pieces) if pieces else np.zeros(0, np.uint8)

    def _hold(self, lane: int, gmem, grow: int, gcols, smem, srow: int, scols) -> None:
        """The store's destination is in flight and its source being read until its waits."""
        _count(gmem, "in_flight", grow, gcols, 1)
        _count(smem, "async_reading", srow, scols, 1)
        self.pending.append((lane, int(self.committed[lane]), gmem, grow, gcols, smem, srow, scols))

    def commit(self, mask) -> None:
        self.committed[mask] += 1

    def wait(self, pending: int, reads_only: bool, mask) -> None:
        """The waiting lanes' stores older than their newest `pending` groups: their source
        is free (reads_only) or also their destination written (the full wait)."""
        keep = []
        for p in self.pending:
            lane, group, gmem, grow, gcols, smem, srow, scols = p
            if mask[lane] and group < self.committed[lane] - pending:
                if smem is not None:
                    _count(smem, "async_reading", srow, scols, -1)
                if not reads_only:
                    _count(gmem, "in_flight", grow, gcols, -1)
                    continue
                p = (lane, group, gmem, grow, gcols, None, srow, scols)
            keep.append(p)
        self.pending = keep


def check_overwrite(m, op, mem, sel, rows, cols) -> None:
    """S0009 when a write touches shared bytes a bulk store may still be reading."""
    hit = mem.async_reading[rows[:, None], cols] > 0
    if hit.any():
        lane = sel[int(np.argmax(hit.any(axis=1)))]
        byte = int(cols.reshape(-1)[int(np.argmax(hit.reshape(-1)))])
        size = mem.elem.nbytes if mem.elem is not None else 1
        raise SimError("S0009", f"{m.who(lane)} writes element {byte // size} of {mem.describe()}, which a bulk "
                       "store or a wgmma may still be reading: its thread must wait for it first "
                       "(cp_async_bulk_wait_read; wgmma_wait, then barrier() when another thread issued it)", op)


def _check_fenced(m, op, lane: int, smem, srow: int, sstart: int, n: int) -> None:
    """S0012 when the copy engine would read shared bytes an ordinary store wrote unfenced."""
    if smem.proxy_dirty is not None and smem.proxy_dirty[srow, sstart:sstart + n].any():
        byte = sstart + int(np.argmax(smem.proxy_dirty[srow, sstart:sstart + n]))
        size = max(smem.elem.nbytes, 1) if smem.elem is not None else 1
        raise SimError("S0012", f"{m.who(lane)} starts a bulk store of {smem.describe()} whose element "
                       f"{byte // size} was written by an ordinary store that the copy engine need not see "
                       "yet: its writer must fence_proxy_async() (then barrier() when another thread "
                       "starts the store)", op)


def _count(mem, field: str, row: int, cols: np.ndarray, delta: int) -> None:
    arr = getattr(mem, field)
    if arr is None:
        arr = np.zeros(mem.data.shape, dtype=np.int16)
        setattr(mem, field, arr)
    arr[row, cols] += delta
