"""wgmma in the simulator (the ops and their layouts are in ember/ir/ops/wgmma.py).

A wgmma runs when it is issued, warpgroup by warpgroup: its 128 threads must all issue it
with the same operands (S0010 / S0013). It reads its shared tiles through the descriptor
the compiler builds, decoded as the hardware decodes it, and through the async proxy:
bytes written by ordinary stores need their writer's `fence_proxy_async()` first (S0012).
Until the thread's `wgmma_wait` covers its group, the wgmma is in flight: its
accumulators (and A fragments) are the tensor cores' (any access is S0009), and its tiles
may still be read (overwriting them is S0009). Before a wgmma reads registers that the
thread's own instructions touched, a `wgmma_fence()` must order them (S0013); accumulating
into the same registers from one wgmma to the next needs none, as the PTX ISA says.
"""

from __future__ import annotations

import numpy as np

from ..ir.ops.wgmma import a_fragment_layout, acc_layout, descriptor_bits, element_offset, tile_index
from ..ir.types import F32, VectorType
from .errors import SimError
from .memory import to_array


class Wgmmas:
    def __init__(self, machine):
        self.m = machine
        self.committed = np.zeros(machine.lanes, dtype=np.int64)     # also the number of the open group
        self.fenced = np.zeros(machine.lanes, dtype=bool)            # a wgmma_fence since the last touch
        # per wgmma: (its lanes, each lane's group, [(memory, field, lanes, rows, byte columns)])
        self.pending: list = []

    # -- the ops
    def fence(self, op, mask) -> None:
        self._warpgroups(op, mask)
        self.fenced |= mask

    def commit(self, op, mask) -> None:
        self._warpgroups(op, mask)
        self.committed[mask] += 1

    def wait(self, op, pending: int, mask) -> None:
        self._warpgroups(op, mask)
        keep = []
        for lanes, groups, marks in self.pending:
            done = mask[lanes] & (groups < self.committed[lanes] - pending)
            if done.any():
                finished = lanes[done]
                for mem, field, sel, rows, cols in marks:
                    hit = np.isin(sel, finished)
                    if hit.any():
                        np.subtract.at(getattr(mem, field), (rows[hit][:, None], cols[hit]), 1)
            if not done.all():                 # the lanes still waiting keep their marks
                keep.append((lanes[~done], groups[~done], marks))
        self.pending = keep

    def touched(self, lanes: np.ndarray) -> None:
        """The lanes' own instructions accessed registers a wgmma may read: fence again."""
        self.fenced[lanes] = False

    def mma(self, op, args, mask, a_in_registers: bool) -> None:
        m = self.m
        if a_in_registers:
            acc, a, a_index, b, b_row, b_col, accumulate = args
        else:
            acc, a, a_row, a_col, b, b_row, b_col, accumulate = args
        groups = self._warpgroups(op, mask)
        if not groups:
            return
        unfenced = mask & ~self.fenced
        if unfenced.any():
            k = int(np.argmax(unfenced))
            m.fail("S0013", f"{m.who(k)} issues a wgmma without a wgmma_fence() since its own instructions last "
                   "touched the registers a wgmma reads (or before its first wgmma)", op,
                   notes=["call wgmma_fence() before the first wgmma and after writing or reading the "
                          "accumulators or A fragments"])
        n = op.attrs["n"]
        t = op.b.type.pointee
        self._uniform(op, groups, [("accumulate", accumulate), ("B's row", b_row), ("B's column", b_col)]
                      + ([] if a_in_registers else [("A's row", a_row), ("A's column", a_col)]), [b] +
                      ([] if a_in_registers else [a]))
        fenced = self.fenced.copy()         # the wgmma's own reads below touch nothing
        marks: list = []
        bv = self._tile(op, b, b_row, b_col, "b", n, t, mask, marks)
        zero = np.zeros(m.lanes, dtype=np.int64)
        if a_in_registers:
            first = a_index.astype(np.int64)
            av = to_array(self._registers(op, a, first, 8, t, mask), VectorType(t, 8))
            self._in_flight(op, a, first, 8, t.nbytes, mask, marks)
        else:
            av = self._tile(op, a, a_row, a_col, "a", 64, t, mask, marks)
        cv = self._registers(op, acc, zero, n // 2, F32, mask).view(np.float32).astype(np.float64)
        rows, cols = acc_layout(n)
        out = np.zeros((m.lanes, n // 2), dtype=np.float32)
        for g in groups:
            if a_in_registers:
                A = np.zeros((64, 16))
                fr, fc = a_fragment_layout()
                A[fr, fc] = np.asarray(av[g], dtype=np.float64)
            else:
                A = np.asarray(av[g], dtype=np.float64).T.reshape(64, 16)
            B = np.asarray(bv[g], dtype=np.float64).T.reshape(n, 16)
            with np.errstate(over="ignore", invalid="ignore"):      # inf x 0 is NaN, as on the GPU
                D = A @ B.T
                if accumulate[g[0]]:
                    D[rows, cols] += cv[g]
                out[g] = D[rows, cols].astype(np.float32)
        self._registers(op, acc, zero, n // 2, F32, mask, out.view(np.uint8))
        self._in_flight(op, acc, zero, n // 2, 4, mask, marks)
        lanes = np.concatenate(groups)
        self.pending.append((lanes, self.committed[lanes].copy(), marks))
        self.fenced = fenced

    # -- helpers
    def _warpgroups(self, op, mask) -> list:
        """The lanes of each warpgroup executing the op, by thread index in the group;
        S0010 unless all 128 threads of each run it."""
        m = self.m
        key = m.block_in_batch * (m.T // 128 + 1) + m.thread_lin // 128
        out = []
        for k in np.unique(key[mask]).tolist():
            members = np.nonzero(key == k)[0]
            if members.size < 128 or not mask[members].all():
                first = int(members[np.argmax(mask[members])])
                missing = members[~mask[members]]
                who = f"thread {int(m.thread_lin[missing[0]])}" if missing.size else "threads past the block's end"
                m.fail("S0010", f"`{op.name}` is executed by {m.who(first)} but not by {who} of its warpgroup", op,
                       notes=["wgmma ops are warpgroup-wide: the 128 threads of 4 consecutive warps (from a warp "
                              "index divisible by 4) run them together, outside divergent branches"])
            out.append(members)
        return out

    def _uniform(self, op, groups, values, ptrs) -> None:
        m = self.m
        for g in groups:
            for what, v in values:
                if (v[g] != v[g[0]]).any():
                    k = int(g[np.argmax(v[g] != v[g[0]])])
                    m.fail("S0013", f"{m.who(k)} gives the warpgroup's wgmma another {what} ({v[k]}) than "
                           f"{m.who(int(g[0]))} ({v[g[0]]}): a wgmma's operands are the warpgroup's", op)
            for p in ptrs:
                if (p.mid[g] != p.mid[g[0]]).any() or (p.off[g] != p.off[g[0]]).any():
                    m.fail("S0013", f"the threads of {m.who(int(g[0]))}'s warpgroup give a wgmma different tiles", op)

    def _tile(self, op, ptr, row, col, name: str, rows: int, t, mask, marks) -> np.ndarray:
        """The operand's rows x 16 elements as the hardware reads them: lane q of each
        warpgroup reads elements e = 128 j + q (row e / 16, column e % 16), j < rows / 8."""
        m = self.m
        swizzle, width = op.attrs[f"{name}_swizzle"], op.attrs[f"{name}_width"]
        major, block_rows = op.attrs.get(f"{name}_major", "k_major"), op.attrs.get(f"{name}_rows") or 0
        es = t.nbytes
        r, c = row.astype(np.int64), col.astype(np.int64)
        if swizzle == 0 and major == "k_major":     # (M or N, K): 16 columns across blocks of 8
            bad = mask & ((r % 8 != 0) | (c % width != 0))
            rule = f"an operand starts at a row that is a multiple of 8 and the first column of a block of {width}"
        elif major == "mn_major":     # (row, col) = (K, M or N): 16 K rows of a block from one starting a block
            bad = mask & ((r % 8 != 0) | (r + 16 > block_rows) | (c % width != 0))
            rule = (f"a transposed operand starts at a K row that is a multiple of 8, its 16 rows in a block of "
                    f"{block_rows}, and at the first column of a block of {width}")
        else:
            bad = mask & ((r % 8 != 0) | (c * es % 16 != 0) | (c + 16 > width))
            rule = (f"an operand starts at a row that is a multiple of 8 and a column of a 16-byte chunk, its 16 "
                    f"columns in one row of {width}")
        if bad.any():
            k = int(np.argmax(bad))
            m.fail("S0013", f"{m.who(k)}'s wgmma reads {name.upper()} from row {int(r[k])}, column {int(c[k])} of its "
                   f"tile: {rule}", op)
        base = np.array([ptr.mems[i].base for i in ptr.mid]) + ptr.off
        start = base + tile_index(major, width, block_rows, r, c, swizzle) * es
        desc = ((start & 0x3FFFF) >> 4).astype(np.uint64) | np.uint64(descriptor_bits(swizzle, major, block_rows))
        q = m.thread_lin % 128
        values = []
        for j in range(rows // 8):
            e = 128 * j + q
            phys = element_offset(desc, e // 16, e % 16, es, major) + (start & ~0x3FFFF)
            idx = (phys - base) // es
            self._check_proxy(op, ptr, idx, es, mask)
            values.append(m.load(op, ptr, idx, t, mask))
            self._in_flight(op, ptr, idx, 1, es, mask, marks, field="async_reading")
        return np.stack(values, axis=1)

    def _check_proxy(self, op, ptr, idx, es, mask) -> None:
        m = self.m
        lanes = np.nonzero(mask)[0]
        dirty = np.zeros(m.lanes, dtype=bool)
        for mi in np.unique(ptr.mid[lanes]).tolist():
            mem = ptr.mems[mi]
            if mem.proxy_dirty is None:
                continue
            sel = lanes[ptr.mid[lanes] == mi]
            at = ptr.off[sel].astype(np.int64) + idx[sel].astype(np.int64) * es
            inside = (at >= 0) & (at + es <= mem.nbytes)        # the load after this reports the others
            sel, at = sel[inside], at[inside]
            dirty[sel] = mem.proxy_dirty[m.row_of(mem)[sel][:, None], at[:, None] + np.arange(es)].any(axis=1)
        if dirty.any():                          # the first such lane
            lane = int(np.argmax(dirty))
            mem = ptr.mems[ptr.mid[lane]]
            at = int(ptr.off[lane]) + int(idx[lane]) * es
            raise SimError("S0012", f"{m.who(lane)}'s wgmma reads element {at // es} of {mem.describe()}, "
                           "written by an ordinary store that the tensor cores need not see yet: its writer "
                           "must fence_proxy_async() (then barrier() when another thread issues the wgmma)", op)

    def _registers(self, op, ptr, first, count: int, t, mask, values: np.ndarray | None = None) -> np.ndarray:
        """count elements from ptr[first] per lane (accumulators, A fragments), read or
        written as raw bytes after checking their bounds: the wgmma's own access, which the
        in-flight and fence bookkeeping must not count. Marks the array as a wgmma's."""
        m = self.m
        for j in range(count):
            m.access(op, ptr, first + j, mask, t, "c")
        size = count * t.nbytes
        out = np.zeros((m.lanes, size), dtype=np.uint8)
        for lane in np.nonzero(mask)[0].tolist():
            mem = ptr.mems[ptr.mid[lane]]
            mem.wgmma_regs = True
            row, at = int(m.row_of(mem)[lane]), int(ptr.off[lane]) + int(first[lane]) * t.nbytes
            if values is None:
                out[lane] = mem.data[row, at:at + size]
            else:
                mem.data[row, at:at + size] = values[lane]
        return out

    def _in_flight(self, op, ptr, idx, count: int, es: int, mask, marks, field: str = "in_flight") -> None:
        """Count the bytes the lanes' wgmma holds (its registers: in_flight; its tiles:
        async_reading) until their wait."""
        m = self.m
        lanes = np.nonzero(mask)[0]
        for mi in np.unique(ptr.mid[lanes]).tolist():
            mem = ptr.mems[mi]
            arr = getattr(mem, field)
            if arr is None:
                arr = np.zeros(mem.data.shape, dtype=np.int16)
                setattr(mem, field, arr)
            sel = lanes[ptr.mid[lanes] == mi]
            rows = m.row_of(mem)[sel]
            at = ptr.off[sel].astype(np.int64) + idx[sel].astype(np.int64) * es
            cols = at[:, None] + np.arange(count * es)
            np.add.at(arr, (rows[:, None], cols), 1)
            marks.append((mem, field, sel, rows, cols))
