"""Race detection for the simulator's memory accesses (ember.sim.machine.access calls it).

Per byte the memory keeps its last writer (global thread id, the barrier epoch of its
block then, and its release count: ember.sim.ordering) and the readers of the current
epoch of one block: the first in the main arrays, up to EXTRA_READERS more in arrays made
when a byte first gets a second reader, each with its epoch and release count; a byte
read by still more is marked `multi`, and any later write in that epoch by another thread
is reported (the readers it lost are unknown) - unless they were all of the writer's warp
and a warp_barrier() of that warp came between (the warp and the barrier count are kept). An access conflicts with another thread's
earlier one when neither a barrier of their block nor a release-acquire chain orders
them. Several readers matter where release-acquire orders them rather than a barrier:
two consumer warpgroups reading one TMA stage before the producer refills it
(ember.sim.wgmma).
"""

from __future__ import annotations

import numpy as np

from .errors import SimError

EXTRA_READERS = 3      # readers of a byte in one epoch recorded exactly, beyond the first


def track(m, op, mem, sel: np.ndarray, rows: np.ndarray, cols: np.ndarray, kind: str, record: bool = True) -> None:
    """Record lanes `sel` reading ("r") or writing ("w") bytes cols of rows, after checking
    them against the earlier accesses (S0004 on a race); with `record` false only check (a
    write that may happen from now on: a cp.async copy's, recorded when it lands)."""
    writer, wep, reader, rep, multi = mem.race_state()
    counted = m.ordering.released         # release counts matter once a thread released
    wrc, rrc = mem.release_counts() if counted else (None, None)
    size = cols.shape[1]
    r = np.repeat(rows, size)
    c = cols.reshape(-1)
    th = np.repeat(m.gtid[sel], size)
    ln = np.repeat(sel, size)
    blk = th // m.T
    ep = np.repeat(m.epoch[m.block_in_batch[sel]], size)
    rc = np.repeat(m.ordering.rc[sel], size) if counted else np.zeros(len(r), np.int64)
    zeros = np.zeros(len(r), np.int64)

    def conflict(at, other_thread, other_epoch, other_rc):
        """Accesses (at: indices into this access) of another thread that neither a
        barrier of their block nor a release-acquire chain orders before this one."""
        bad = (other_thread >= 0) & (other_thread != th[at]) & \
            ((other_thread // m.T != blk[at]) | (other_epoch == ep[at]))
        if bad.any() and m.ordering.any:
            i = np.nonzero(bad)[0]
            bad[i] = ~m.ordering.ordered(sel[at[i] // size], other_thread[i], other_epoch[i], other_rc[i])
        return bad

    every = np.arange(len(r))
    w_prev = writer[r, c]
    bad = conflict(every, w_prev, wep[r, c], wrc[r, c] if counted else zeros)
    if bad.any():
        i = int(np.argmax(bad))
        what = "reads" if kind == "r" else "writes"
        _race(m, op, mem, sel[i // size], f"{what} {element_text(mem, c[i])}, which {m.who_gtid(w_prev[i])} wrote")
    if kind == "w":
        _check_write(m, op, mem, sel, size, r, c, th, ep, conflict, counted)
        if not record:
            return
        writer[r, c], wep[r, c] = th, ep
        if counted:
            wrc[r, c] = rc
        reader[r, c] = -1
        multi[r, c] = False
        extra = mem.extra_readers
        if extra is not None:
            extra[0][r, c] = -1
        return
    if not _lanes_overlap(r, c, size, mem.data.shape[1]):       # (the common case: no sort of every byte)
        _record_read(m, mem, every, r, c, th, ln, blk, ep, rc, counted)
        return
    # several lanes of one access may read one byte: each round records one read of it
    flat = r * mem.data.shape[1] + c
    order = np.argsort(flat, kind="stable")
    first = np.r_[True, flat[order][1:] != flat[order][:-1]] if len(order) else np.zeros(0, bool)
    if first.all():
        _record_read(m, mem, every, r, c, th, ln, blk, ep, rc, counted)
        return
    start = np.maximum.accumulate(np.where(first, np.arange(len(order)), 0))
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order)) - start
    for k in range(min(int(rank.max()), EXTRA_READERS) + 1):
        _record_read(m, mem, np.nonzero(rank == k)[0], r, c, th, ln, blk, ep, rc, counted)
    crowd = rank > EXTRA_READERS              # more readers at once than recorded (a broadcast)
    if crowd.any():
        _lose(m, mem, r[crowd], c[crowd], ln[crowd])


def _lanes_overlap(r, c, size: int, width: int) -> bool:
    """Whether two of an access's bytes (rows r, columns c: `size` a lane, lane by lane) may
    be one byte. Where each lane's bytes run on from its first, two lanes share one only if
    their first bytes are less than `size` apart: a sort of the lanes' first bytes, not of
    every byte (a lane's run across a row's end can answer yes where none is shared - the
    callers then look byte by byte; it never answers no where one is)."""
    n = len(c) // size if size else 0
    if n and n * size == len(c):
        cs = c.reshape(n, size)
        if size == 1 or (cs[:, 1:] - cs[:, :-1] == 1).all():
            starts = np.sort(r.reshape(n, size)[:, 0] * width + cs[:, 0])
            return bool((starts[1:] - starts[:-1] < size).any())
    flat = r * width + c
    return len(np.unique(flat)) < len(flat)


def _race(m, op, mem, lane, what: str):
    raise SimError("S0004", f"data race on {mem.describe()}: {m.who(lane)} {what} with nothing in between that "
                   "orders them", op, notes=m.ordering.notes(lane))


def _check_write(m, op, mem, sel, size, r, c, th, ep, conflict, counted) -> None:
    writer, wep, reader, rep, multi = mem.race_state()
    rrc = mem.release_counts()[1] if counted else None
    every = np.arange(len(r))
    prev = reader[r, c]
    bad = conflict(every, prev, rep[r, c], rrc[r, c] if rrc is not None else np.zeros(len(r), np.int64))
    if bad.any():
        i = int(np.argmax(bad))
        _race(m, op, mem, sel[i // size], f"writes {element_text(mem, c[i])}, which {m.who_gtid(prev[i])} read")
    extra = mem.extra_readers
    if extra is not None:
        ex_th, ex_ep, ex_rc = (a[r, c] for a in extra)
        for k in range(EXTRA_READERS):
            at = np.nonzero(ex_th[:, k] >= 0)[0]
            if at.size == 0:
                continue
            bad = conflict(at, ex_th[at, k], ex_ep[at, k], ex_rc[at, k])
            if bad.any():
                i = int(at[np.argmax(bad)])
                _race(m, op, mem, sel[i // size],
                      f"writes {element_text(mem, c[i])}, which {m.who_gtid(ex_th[i, k])} read")
    lost = multi[r, c] & (rep[r, c] == ep) & (prev >= 0)
    if lost.any():                  # unless all were of the writer's warp, before a warp barrier it passed
        warp, syncs = mem.lost_readers()
        lanes = sel[np.arange(len(r)) // size]
        lost &= ~((warp[r, c] == m.warp_of(m.gtid[lanes])) & (m.warp_syncs[lanes] > syncs[r, c]))
    if lost.any():
        i = int(np.argmax(lost))
        _race(m, op, mem, sel[i // size], f"writes {element_text(mem, c[i])}, which more than "
              f"{EXTRA_READERS + 1} other threads read")
    if not _lanes_overlap(r, c, size, mem.data.shape[1]):
        return
    flat = r * mem.data.shape[1] + c
    uniq, counts = np.unique(flat, return_counts=True)
    if (counts > 1).any():
        who = np.nonzero(flat == uniq[counts > 1][0])[0]
        lanes = sel[who // size]
        if len(set(m.gtid[lanes].tolist())) > 1:
            raise SimError("S0004", f"data race on {mem.describe()}: {m.who(lanes[0])} and "
                           f"{m.who(lanes[1])} write {element_text(mem, c[who[0]])} at the same time", op)


def _record_read(m, mem, at, r, c, th, ln, blk, ep, rc, counted) -> None:
    """One read of each byte (r[at], c[at]): its first reader of the epoch, the same one
    again (its latest release count), or another (an extra slot, else `multi`)."""
    writer, wep, reader, rep, multi = mem.race_state()
    rrc = mem.release_counts()[1] if counted else None
    r, c, th, ln, ep, rc = r[at], c[at], th[at], ln[at], ep[at], rc[at]
    prev = reader[r, c]
    fresh = (prev < 0) | (rep[r, c] != ep) | (prev // m.T != blk[at])
    if fresh.any():                 # a new epoch (or block) of readers: start over
        rf, cf = r[fresh], c[fresh]
        reader[rf, cf], rep[rf, cf] = th[fresh], ep[fresh]
        if counted:
            rrc[rf, cf] = rc[fresh]
        multi[rf, cf] = False
        extra = mem.extra_readers
        if extra is not None:
            extra[0][rf, cf] = -1
    again = ~fresh & (prev == th)
    if counted and again.any():
        rrc[r[again], c[again]] = rc[again]
    other = ~fresh & ~again
    if other.any():
        _record_extra(m, mem, r[other], c[other], th[other], ln[other], ep[other], rc[other])


def _record_extra(m, mem, r, c, th, ln, ep, rc) -> None:
    ex_th, ex_ep, ex_rc = mem.make_extra_readers(EXTRA_READERS)
    cur = ex_th[r, c]
    mine = cur == th[:, None]
    again = mine.any(axis=1)
    if again.any():
        ex_rc[r[again], c[again], np.argmax(mine[again], axis=1)] = rc[again]
    free = cur < 0
    slot = ~again & free.any(axis=1)
    if slot.any():
        k = np.argmax(free[slot], axis=1)
        ex_th[r[slot], c[slot], k], ex_ep[r[slot], c[slot], k], ex_rc[r[slot], c[slot], k] = \
            th[slot], ep[slot], rc[slot]
    full = ~again & ~slot
    if full.any():
        _lose(m, mem, r[full], c[full], ln[full])


def _lose(m, mem, r, c, lanes) -> None:
    """Reads of bytes (r, c) by the lanes' threads past the readers recorded: the bytes' `multi`
    mark, with whether every such reader was of one warp and the warp barriers it had passed
    (a write after that warp's next barrier is ordered after them all)."""
    multi = mem.race_state()[4]
    warp, syncs = mem.lost_readers()
    w = m.warp_of(m.gtid[lanes]).astype(np.int32)
    s = m.warp_syncs[lanes]
    flat = r * mem.data.shape[1] + c
    uniq, first, inverse = np.unique(flat, return_index=True, return_inverse=True)
    lo, hi = np.full(len(uniq), np.iinfo(np.int32).max, np.int32), np.full(len(uniq), -1, np.int32)
    np.minimum.at(lo, inverse, w)
    np.maximum.at(hi, inverse, w)
    most = np.zeros(len(uniq), np.int32)
    np.maximum.at(most, inverse, s)
    ur, uc = r[first], c[first]
    was = multi[ur, uc]
    before = np.where(was, warp[ur, uc], lo)
    one = (lo == hi) & (before == lo)
    warp[ur, uc] = np.where(one, lo, -2)
    syncs[ur, uc] = np.where(was, np.maximum(syncs[ur, uc], most), most)
    multi[ur, uc] = True


def element_text(mem, byte) -> str:
    """`element 3` (of a typed memory) or `byte 12`."""
    size = mem.elem.nbytes if mem.elem is not None else 1
    return f"element {int(byte) // size}" if size > 1 else f"byte {int(byte)}"
