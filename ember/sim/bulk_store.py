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
            if smem.proxy_dirty is not None and smem.proxy_dirty[srow, sstart:sstart + n].any():
                byte = sstart + int(np.argmax(smem.proxy_dirty[srow, sstart:sstart + n]))
                size = max(smem.elem.nbytes, 1) if smem.elem is not None else 1
                raise SimError("S0012", f"{m.who(lane)} starts a bulk store of {smem.describe()} whose element "
                               f"{byte // size} was written by an ordinary store that the copy engine need not see "
                               "yet: its writer must fence_proxy_async() (then barrier() when another thread "
                               "starts the store)", op)
            pieces = []
            for k in range(n // 16):      # bounds, alignment (16) and the race checks, as reads and writes
                pieces.append(m.access(op, src.offset(zero + 4 * k, 4), zero, one, _CHUNK, "r")[lane])
            data = np.concatenate(pieces) if pieces else np.zeros(0, np.uint8)
            for k in range(n // 16):
                values = np.zeros((m.lanes, 16), dtype=np.uint8)
                values[lane] = data[16 * k:16 * k + 16]
                m.access(op, dst.offset(zero + 4 * k, 4), zero, one, _CHUNK, "w", values)
            gmem = dst.mems[dst.mid[lane]]
            grow, gstart = int(m.row_of(gmem)[lane]), int(dst.off[lane])
            _count(gmem, "in_flight", grow, gstart, n, 1)
            _count(smem, "async_reading", srow, sstart, n, 1)
            self.pending.append((lane, int(self.committed[lane]), gmem, grow, gstart, n, smem, srow, sstart))

    def commit(self, mask) -> None:
        self.committed[mask] += 1

    def wait(self, pending: int, reads_only: bool, mask) -> None:
        """The waiting lanes' stores older than their newest `pending` groups: their source
        is free (reads_only) or also their destination written (the full wait)."""
        keep = []
        for p in self.pending:
            lane, group, gmem, grow, gstart, n, smem, srow, sstart = p
            if mask[lane] and group < self.committed[lane] - pending:
                if smem is not None:
                    _count(smem, "async_reading", srow, sstart, n, -1)
                if not reads_only:
                    _count(gmem, "in_flight", grow, gstart, n, -1)
                    continue
                p = (lane, group, gmem, grow, gstart, n, None, srow, sstart)
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


def _count(mem, field: str, row: int, start: int, n: int, delta: int) -> None:
    arr = getattr(mem, field)
    if arr is None:
        arr = np.zeros(mem.data.shape, dtype=np.int16)
        setattr(mem, field, arr)
    arr[row, start:start + n] += delta
