"""cp.async in the simulator (the ops are in ember/ir/ops/async_copy.py).

A copy reads its source when it starts (bounds and alignment checked there, at its line)
and is held, with the number of the thread's group it belongs to, until the thread waits
for that group; only then are its bytes written to shared memory, as that thread's write
(so another thread reading them needs a barrier after the wait, as for any store). Since
the GPU may write them at any time after the start, the start is also checked as a write
against the earlier accesses of other threads: a stage refilled while another thread may
still read it (no barrier between its reads and the copy) is a race (S0004) at the copy. Until
then the destination bytes are marked in flight: a read or write of them by any thread is
error S0009, at the access. On the GPU such a read may see old data, new data or a mix.
"""

from __future__ import annotations

import numpy as np

from ..ir.types import U32, VectorType
from .errors import SimError

# a copy's size -> the type its bytes move as (alignment = size)
_AS = {4: U32, 8: VectorType(U32, 2), 16: VectorType(U32, 4)}


class _Copy:
    __slots__ = ("op", "dst", "lanes", "group", "data", "size")

    def __init__(self, op, dst, lanes, group, data, size):
        self.op, self.dst, self.lanes, self.group, self.data, self.size = op, dst, lanes, group, data, size


class AsyncCopies:
    """Each lane's copies in flight and the number of groups it has committed."""

    def __init__(self, machine):
        self.m = machine
        self.committed = np.zeros(machine.lanes, dtype=np.int64)   # also the number of the open group
        self.copies: list = []

    def start(self, op, dst, src, size: int, src_bytes: np.ndarray, mask: np.ndarray) -> None:
        m = self.m
        lanes = np.nonzero(mask)[0]
        if lanes.size == 0:
            return
        over = src_bytes[lanes] > size
        if over.any():
            k = lanes[np.argmax(over)]
            raise SimError("S0001", f"{m.who(k)} copies {int(src_bytes[k])} source bytes with a {size}-byte "
                           "cp.async (at most the copy's size)", op)
        t = _AS[size]
        zero = np.zeros(m.lanes, dtype=np.int64)
        # bounds, alignment, and what came before: the copy may write its bytes at any time
        # from now on, so a read or write of them by another thread must be ordered before it
        m.access(op, dst, zero, mask, t, "cw")
        reading = mask & (src_bytes > 0)
        data = m.access(op, src, zero, reading, t, "r")
        data[np.arange(size)[None, :] >= src_bytes[:, None]] = 0      # zero fill
        self._mark(dst, lanes, size, 1)
        self.copies.append(_Copy(op, dst, lanes, self.committed[lanes].copy(), data[lanes], size))

    def commit(self, mask: np.ndarray) -> None:
        self.committed[mask] += 1

    def wait(self, pending: int, mask: np.ndarray) -> None:
        """Land every copy of the waiting lanes whose group is older than their newest
        `pending` committed groups."""
        m = self.m
        keep = []
        for c in self.copies:
            done = mask[c.lanes] & (c.group < self.committed[c.lanes] - pending)
            if done.any():
                landed = c.lanes[done]
                self._mark(c.dst, landed, c.size, -1)
                which = np.zeros(m.lanes, dtype=bool)
                which[landed] = True
                values = np.zeros((m.lanes, c.size), dtype=np.uint8)
                values[c.lanes] = c.data
                m.access(c.op, c.dst, np.zeros(m.lanes, dtype=np.int64), which, _AS[c.size], "w", values)
            if not done.all():
                rest = ~done
                keep.append(_Copy(c.op, c.dst, c.lanes[rest], c.group[rest], c.data[rest], c.size))
        self.copies = keep

    def _mark(self, dst, lanes: np.ndarray, size: int, delta: int) -> None:
        """Count the copies in flight on each destination byte."""
        m = self.m
        for i, mem in enumerate(dst.mems):
            sel = lanes[dst.mid[lanes] == i]
            if sel.size == 0:
                continue
            if mem.in_flight is None:
                mem.in_flight = np.zeros(mem.data.shape, dtype=np.int16)
            rows = np.repeat(m.row_of(mem)[sel], size)
            cols = (dst.off[sel][:, None] + np.arange(size)).reshape(-1)
            np.add.at(mem.in_flight, (rows, cols), delta)


def check_in_flight(m, op, mem, sel: np.ndarray, rows: np.ndarray, cols: np.ndarray, kind: str) -> None:
    """S0009 when an access touches bytes an asynchronous copy (cp.async, or a bulk copy:
    ember.sim.mbarrier) has not landed yet."""
    hit = mem.in_flight[rows[:, None], cols] > 0
    if hit.any():
        lane = sel[int(np.argmax(hit.any(axis=1)))]
        byte = int(cols.reshape(-1)[int(np.argmax(hit.reshape(-1)))])
        size = mem.elem.nbytes if mem.elem is not None else 1
        what = "reads" if kind == "r" else "writes"
        if mem.space == "local":          # registers only a wgmma holds
            raise SimError("S0009", f"{m.who(lane)} {what} element {byte // size} of {mem.describe()}, which a "
                           "wgmma still in flight holds: wgmma_commit() then wgmma_wait(N) before touching its "
                           "accumulators or A fragments", op)
        raise SimError("S0009", f"{m.who(lane)} {what} element {byte // size} of {mem.describe()}, which an "
                       "asynchronous copy is still writing: wait for it first (a cp.async: its group, with "
                       "cp_async_wait, and barrier() when another thread started it; a bulk copy: the "
                       "phase of its mbarrier)", op)
