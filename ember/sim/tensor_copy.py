"""TMA in the simulator (the ops are in ember/ir/ops/tma.py): a tensor map is the array the
launch was given for a `tensormap<..>` parameter, with its shape and byte strides; a box
is gathered from it (zeros outside the tensor) into the bytes its shared tile holds, in
the map's swizzle order, and a stored tile is scattered back (elements outside are not
written). The mbarrier machinery (ember.sim.mbarrier) delivers a loaded box as a bulk
copy's bytes; the bulk-store machinery (ember.sim.bulk_store) holds a stored one."""

from __future__ import annotations

import numpy as np

from ..ir.ops.tma import swizzled_byte
from .errors import SimError


class SimTensorMap:
    """The simulator's CUtensorMap: global memory (a Memory of the whole tensor, row 0),
    the tensor's shape (outermost first) and byte strides, and the map's type."""

    def __init__(self, mem, shape: tuple, strides: tuple, ty):
        self.mem, self.shape, self.strides, self.ty = mem, tuple(shape), tuple(strides), ty

    def box_offsets(self, coords: list) -> tuple:
        """(byte offset in the tensor of each box element, row-major; whether it is inside)."""
        idx = np.indices(self.ty.box).reshape(len(self.ty.box), -1)
        inside = np.ones(idx.shape[1], dtype=bool)
        off = np.zeros(idx.shape[1], dtype=np.int64)
        for d, (c, n, s) in enumerate(zip(coords, self.shape, self.strides)):
            g = idx[d] + c
            inside &= (g >= 0) & (g < n)
            off += g * s
        return np.where(inside, off, 0), inside

    def physical(self) -> np.ndarray:
        """For each byte of the box in row-major order, where it lies in its shared tile."""
        return swizzled_byte(np.arange(self.ty.box_bytes), self.ty.swizzle)

    def gather(self, coords: list) -> np.ndarray:
        """The box's bytes as its tile holds them."""
        es = self.ty.elem.nbytes
        off, inside = self.box_offsets(coords)
        raw = self.mem.data[0][(off[:, None] + np.arange(es)).reshape(-1)].reshape(-1, es)
        raw[~inside] = 0
        out = np.empty(self.ty.box_bytes, dtype=np.uint8)
        out[self.physical()] = raw.reshape(-1)
        return out

    def scatter(self, coords: list, data: np.ndarray) -> tuple:
        """Write a tile's bytes to the box; (the byte offsets written, for in-flight marks)."""
        es = self.ty.elem.nbytes
        off, inside = self.box_offsets(coords)
        logical = data[self.physical()].reshape(-1, es)
        cols = (off[inside][:, None] + np.arange(es)).reshape(-1)
        self.mem.data[0][cols] = logical[inside].reshape(-1)
        return cols


def check_coords(m, op, lane: int, coords: list, ty, what: str) -> list:
    """A box's coordinates, as an H100 takes them (measured, docs/language.md; otherwise it
    stops with an illegal instruction): the innermost one starts on 16 bytes of the
    tensor's rows, and a store's are not negative (a load's may be: zeros come in)."""
    out = [int(c[lane]) for c in coords]
    if out[-1] * ty.elem.nbytes % 16:
        raise SimError("S0002", f"{m.who(lane)}'s TMA {what} the box at {tuple(out)}: its innermost coordinate "
                       f"{out[-1]} is {out[-1] * ty.elem.nbytes} bytes into a row, not a multiple of 16", op)
    if what.startswith("store") and min(out) < 0:
        raise SimError("S0001", f"{m.who(lane)}'s TMA {what} the box at {tuple(out)}: a store's box starts inside "
                       "the tensor or past its end, never at a negative coordinate", op)
    return out


def check_tile_start(m, op, ptr, lane: int, ty, what: str) -> tuple:
    """(memory, row, byte offset) of a TMA tile: 128-byte aligned, a swizzled one aligned to
    its 8-row atom (as the compiler places swizzled tiles), the box inside the array."""
    mem = ptr.mems[ptr.mid[lane]]
    start = int(ptr.off[lane])
    align = max(128, 8 * ty.swizzle)
    if mem.align % align:
        raise SimError("S0002", f"{m.who(lane)}'s TMA {what} a tile of {mem.describe()}, whose start is only known "
                       f"to be {mem.align}-byte aligned: a TMA tile starts {align}-byte aligned", op)
    if (mem.base + start) % align:
        raise SimError("S0002", f"{m.who(lane)}'s TMA {what} a tile at byte {start} of {mem.describe()}: a TMA tile "
                       f"starts {align}-byte aligned", op)
    if start < 0 or start + ty.box_bytes > mem.nbytes:
        raise SimError("S0001", f"{m.who(lane)}'s TMA {what} {ty.box_bytes} bytes at byte {start} of "
                       f"{mem.describe()}, past its end ({mem.nbytes} bytes)", op)
    return mem, int(m.row_of(mem)[lane]), start
