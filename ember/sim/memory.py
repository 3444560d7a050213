"""Memory for the simulator: global buffers (shared by the grid), shared arrays (one row
per block) and per-thread arrays (one row per lane), with the checks a GPU does not do:

- bounds and alignment of every access;
- reads of shared memory no thread of the block has written;
- data races: two different threads touching one byte, at least one writing, in the same
  block with no barrier in between, or in different blocks at all (atomics excepted).

Race tracking keeps, per byte, the last writer (global thread id, its block's barrier
epoch and the thread's release count) and the last reader (the same, with a flag once
several threads have read); accesses of different threads are ordered by a barrier of
their block or by release and acquire (ember.sim.ordering), whose state per atomic
location lives here too (`locations`, shared by every view of the memory).
"""

from __future__ import annotations

import numpy as np

from ..ir import semantics as S
from ..ir.types import ScalarType


class Memory:
    def __init__(self, name: str, space: str, rows: int, nbytes: int, data: np.ndarray | None = None,
                 track: bool = True, track_init: bool = False, elem: ScalarType | None = None):
        self.name = name
        self.space = space
        self.nbytes = nbytes
        self.data = data if data is not None else np.zeros((rows, nbytes), dtype=np.uint8)
        self.track = track
        self.elem = elem
        self.init = np.zeros((rows, nbytes), dtype=bool) if track_init else None
        self.in_flight = None    # per byte, the cp.async copies not yet landed (ember.sim.async_copy)
        self._race = None
        self._rc = None
        self._lost = None
        self.base = 0            # byte offset of this memory in its allocation (alignment)
        self.align = 256         # what its start is known to be aligned to (shared arrays: 16, or declared)
        self.aliases: list[str] = []
        self.locations: dict = {}    # (row, byte of the allocation) -> ember.sim.ordering.Location
        self.bulk_phase = None       # per byte: (barrier, phase) of the bulk copy that wrote it, or -1
        self.bulk_keys: list = []    # (ember.sim.mbarrier)
        self.proxy_dirty = None      # per byte: written by an ordinary store, not yet fenced for the copy engine
        self.async_reading = None    # per byte: bulk stores and wgmmas that may still read it (ember.sim.bulk_store)
        self.wgmma_regs = False      # per-thread registers a wgmma reads: touching them needs a wgmma_fence
        self._extra = None           # see extra_readers
        self._root, self._root_offset = None, 0

    def race_state(self):
        """Per byte: writer, its epoch, reader, its epoch, more readers than recorded
        (ember.sim.races)."""
        if self._race is None:
            shape = self.data.shape
            self._race = (np.full(shape, -1, dtype=np.int64), np.zeros(shape, dtype=np.int64),
                          np.full(shape, -1, dtype=np.int64), np.zeros(shape, dtype=np.int64),
                          np.zeros(shape, dtype=bool))
        return self._race

    def lost_readers(self):
        """Per byte whose readers outnumber those recorded (`multi`): the warp they all belong
        to (-1: none yet, -2: several warps) and the most warp barriers any of them had passed
        when it read (ember.sim.races: a warp barrier orders its warp's reads before a write)."""
        if self._lost is None:
            shape = self.data.shape
            self._lost = (np.full(shape, -1, dtype=np.int32), np.zeros(shape, dtype=np.int32))
        return self._lost

    def release_counts(self):
        """Per byte: the writer's and the reader's release counts (ember.sim.ordering), made
        when a thread first releases: until then every count is 0."""
        if self._rc is None:
            shape = self.data.shape
            self._rc = (np.zeros(shape, dtype=np.int64), np.zeros(shape, dtype=np.int64))
        return self._rc

    @property
    def extra_readers(self):
        """(threads, epochs, release counts) of the readers of a byte beyond the first, per
        byte and slot (ember.sim.races), or None before any byte had a second reader; made
        on the memory its views share, and sliced for each."""
        root, off = self._root or self, self._root_offset
        if root._extra is None:
            return None
        return tuple(a[:, off:off + self.nbytes] for a in root._extra) if root is not self else root._extra

    def make_extra_readers(self, slots: int):
        root = self._root or self
        if root._extra is None:
            shape = root.data.shape + (slots,)
            root._extra = (np.full(shape, -1, np.int64), np.zeros(shape, np.int64), np.zeros(shape, np.int64))
        return self.extra_readers

    def view(self, name: str, offset: int, nbytes: int, elem: ScalarType) -> "Memory":
        """Bytes [offset, offset + nbytes) of this memory as a memory of its own (for a
        buffer passed for one parameter): bounds are its own, while data, initialization
        and race state are shared with every other view, as aliased buffers are."""
        v = Memory(name, self.space, self.data.shape[0], nbytes, self.data[:, offset:offset + nbytes],
                   self.track, False, elem)
        if self.init is not None:
            v.init = self.init[:, offset:offset + nbytes]
        if self.track:
            v._race = tuple(a[:, offset:offset + nbytes] for a in self.race_state())
            v._rc = tuple(a[:, offset:offset + nbytes] for a in self.release_counts())
            v._lost = tuple(a[:, offset:offset + nbytes] for a in self.lost_readers())
        v.base = self.base + offset
        v._root, v._root_offset = self._root or self, self._root_offset + offset
        v.locations = self.locations
        return v

    def describe(self) -> str:
        text = {"global": f"buffer `{self.name}`", "shared": f"shared array `{self.name}`",
                "local": f"array `{self.name}`"}[self.space]
        if self.aliases:
            text += f" (the same memory as {', '.join(f'`{a}`' for a in self.aliases)})"
        return text


# Offsets and indices beyond these cannot address any simulated buffer; past them a lane's
# pointer is `wild` (every access through it is out of bounds), so 64-bit byte offsets
# never wrap around into a buffer (x[2^62 + 2] is not x[2]).
MAX_INDEX = 1 << 40
MAX_OFFSET = 1 << 50


def huge(index: np.ndarray) -> np.ndarray:
    """Lanes whose integer index is beyond +-MAX_INDEX (exactly, for any integer type)."""
    if index.dtype == np.uint64:
        return index > np.uint64(MAX_INDEX)
    i = index.astype(np.int64)
    return (i > MAX_INDEX) | (i < -MAX_INDEX)


class Ptr:
    """A pointer value: for each lane, a memory (by index into `mems`), a byte offset, and
    whether the offset left the representable range (`wild`). A pointer to one row of a
    multi-dimensional array (`mem.row`) also has a `window`: per lane, the byte range
    [lo, hi) of that row, and a description of it, so that an access past the row's end
    is out of bounds even where the flat array goes on."""

    __slots__ = ("mems", "mid", "off", "elem", "wild", "window")

    def __init__(self, mems: tuple, mid: np.ndarray, off: np.ndarray, elem: ScalarType,
                 wild: np.ndarray | None = None, window: "Window | None" = None):
        self.mems = mems
        self.mid = mid
        self.off = off
        self.elem = elem
        self.wild = wild if wild is not None else np.zeros(len(off), dtype=bool)
        self.window = window

    @classmethod
    def to(cls, mem: Memory, lanes: int, elem: ScalarType) -> "Ptr":
        return cls((mem,), np.zeros(lanes, dtype=np.int64), np.zeros(lanes, dtype=np.int64), elem)

    def offset(self, index: np.ndarray, elem_size: int | None = None) -> "Ptr":
        step = elem_size or self.elem.nbytes
        with np.errstate(over="ignore"):
            off = self.off + index.astype(np.int64) * step
        wild = self.wild | huge(index) | (np.abs(off) > MAX_OFFSET)
        return Ptr(self.mems, self.mid, np.where(wild, 0, off), self.elem, wild, self.window)

    def reinterpret(self, t) -> "Ptr":
        return Ptr(self.mems, self.mid, self.off, t.pointee, self.wild, self.window)

    @staticmethod
    def where(cond: np.ndarray, a: "Ptr", b: "Ptr") -> "Ptr":
        wild = np.where(cond, a.wild, b.wild)
        window = Window.where(cond, a.window, b.window, len(a.off))
        if a.mems == b.mems:
            return Ptr(a.mems, np.where(cond, a.mid, b.mid), np.where(cond, a.off, b.off), a.elem, wild, window)
        mems = a.mems + tuple(m for m in b.mems if m not in a.mems)
        remap = np.array([mems.index(m) for m in b.mems], dtype=np.int64)
        return Ptr(mems, np.where(cond, a.mid, remap[b.mid]), np.where(cond, a.off, b.off), a.elem, wild, window)


class Window:
    """Per lane, the byte range [lo, hi) a row pointer may access (no bound: lo > hi),
    the row's index and what the array is, for the message."""

    __slots__ = ("lo", "hi", "row", "text")

    def __init__(self, lo: np.ndarray, hi: np.ndarray, row: np.ndarray, text: str):
        self.lo, self.hi, self.row, self.text = lo, hi, row, text

    @staticmethod
    def where(cond: np.ndarray, a: "Window | None", b: "Window | None", lanes: int) -> "Window | None":
        if a is None and b is None:
            return None
        none = Window(np.ones(lanes, dtype=np.int64), np.zeros(lanes, dtype=np.int64),
                      np.zeros(lanes, dtype=np.int64), "")
        a, b = a or none, b or none
        return Window(np.where(cond, a.lo, b.lo), np.where(cond, a.hi, b.hi), np.where(cond, a.row, b.row),
                      a.text or b.text)

    def outside(self, lanes: np.ndarray, addr: np.ndarray, size: int) -> np.ndarray:
        """For the given lanes, at their byte addresses: whether `size` bytes leave the row."""
        lo, hi = self.lo[lanes], self.hi[lanes]
        return (lo <= hi) & ((addr < lo) | (addr + size > hi))


def element_bytes(t) -> int:
    from ..ir.types import VectorType
    if isinstance(t, VectorType):
        return t.elem.nbytes * t.length
    return t.nbytes


def to_array(raw: np.ndarray, t) -> np.ndarray:
    """Bytes (lanes x size) -> values of type t."""
    from ..ir.types import VectorType
    if isinstance(t, VectorType):
        e = t.elem
        vals = raw.reshape(-1).view(S.bits_dtype(e) if e.name == "bf16" else S.dtype(e))
        vals = vals.reshape(raw.shape[0], t.length)
        return S.from_bits(vals.astype(np.uint64), e) if e.name == "bf16" else vals
    if t.name == "bf16":
        return S.from_bits(raw.reshape(-1).view(np.uint16).astype(np.uint64), t)
    return raw.reshape(-1).view(S.dtype(t)).copy()


def from_array(values: np.ndarray, t, lanes: int) -> np.ndarray:
    """Values of type t -> bytes (lanes x size)."""
    from ..ir.types import VectorType
    if isinstance(t, VectorType):
        e = t.elem
        v = np.asarray(values)
        bits = S.to_bits(v.reshape(-1), e).astype(S.bits_dtype(e)) if e.name == "bf16" else \
            v.astype(S.dtype(e)).reshape(-1)
        return bits.view(np.uint8).reshape(lanes, -1)
    if t.name == "bf16":
        return S.to_bits(values, t).astype(np.uint16).view(np.uint8).reshape(lanes, -1)
    return np.ascontiguousarray(np.asarray(values, dtype=S.dtype(t))).view(np.uint8).reshape(lanes, -1)
