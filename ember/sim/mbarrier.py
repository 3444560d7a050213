"""mbarriers and bulk copies in the simulator (the ops are in ember/ir/ops/mbarrier.py).

Each initialized mbarrier (by its shared-memory element) keeps: the arrivals a phase needs,
the arrivals and transaction bytes still missing in the current phase, and how many
phases have completed. Lanes arrive in lane order. A bulk copy reads its source when it
starts (bounds and alignment checked there), counts its bytes as delivered, and holds
them, the destination bytes marked in flight (S0009 for any access), until its phase
completes; they are then written, tagged with that phase. A thread may read tagged bytes
only once it has seen the phase complete (a try_wait of its parity that returned true):
reading them earlier is S0009 too, as on the GPU it may see old bytes.

A wait that nothing can end - its phase lacks arrivals or bytes, and the barrier has not
changed while the waiting threads spun - is S0011, with what the phase lacks and every
other wait stuck with it. A failed wait suspends its thread group (`machine.suspend`), and
the two branches of an `if` that waits on mbarriers run concurrently, each in lockstep
(ember.ir.interp), so a warp-specialised producer and its consumers take turns as on the
GPU. Arrivals release and successful waits acquire (ember.sim.ordering), so what a thread
wrote before arriving is ordered before what a waiter reads after; a bulk copy overwriting
bytes that other threads read without such an order is a race (S0004), checked when it
starts.
"""

from __future__ import annotations

import numpy as np

from ..ir.types import U32, U64, VectorType
from .errors import SimError
from .ordering import Location
from .bulk_store import check_overwrite
from .cluster import block_of_rank
from .tensor_copy import check_coords, check_tile_start

# failed waits on one barrier with no change in between before it is called a deadlock
SPIN_LIMIT = 1000


class _Barrier:
    __slots__ = ("expected", "arrivals", "tx", "done", "copies", "version", "spins", "name", "loc")

    def __init__(self, expected: int, name: str):
        self.expected = expected       # arrivals per phase
        self.arrivals = expected       # still missing in the current phase
        self.tx = 0                    # transaction bytes announced and not yet delivered
        self.done = 0                  # phases completed
        self.copies: list = []         # bulk copies waiting for the current phase
        self.version = 0               # changes with every arrival, delivery and completion
        self.spins = (0, 0)            # (version, failed waits at that version)
        self.name = name
        self.loc = Location()          # arrivals release, successful waits acquire (ember.sim.ordering)


class MBarriers:
    def __init__(self, machine):
        self.m = machine
        self.state: dict = {}          # (id of the memory's data, row, byte) -> _Barrier
        self.seen: dict = {}           # (lane, barrier key) -> phases the lane has seen complete
        self.waiting: dict = {}        # barrier key -> (a lane whose last wait on it failed, parity)
        # arrivals on another block's barrier: (target block, key, phase, lane, op, the cluster
        # barriers the lane's block had passed) - ember.sim.cluster.exits checks that the target
        # waited for that phase, or that a cluster barrier came after, before it exited
        self.remote_arrivals: list = []

    # -- addressing
    def _keys(self, op, bar, mask) -> list:
        """(lane, key, description) for each active lane, after checking bounds and alignment."""
        m = self.m
        zero = np.zeros(m.lanes, dtype=np.int64)
        m.access(op, bar, zero, mask, U64, "c")
        out = []
        for lane in np.nonzero(mask)[0].tolist():
            mem = bar.mems[bar.mid[lane]]
            byte = int(bar.off[lane])
            row = int(m.row_of(mem)[lane])
            out.append((lane, (id(mem), row, mem.base + byte), f"mbarrier `{mem.name}`[{byte // 8}]"))
        return out

    def _barrier(self, op, key, what, lane) -> _Barrier:
        b = self.state.get(key)
        if b is None:
            raise SimError("S0003", f"{self.m.who(lane)} uses {what}, which no thread has initialized "
                           "(mbarrier_init)", op)
        return b

    # -- operations
    def init(self, op, bar, count, mask) -> None:
        m = self.m
        m.access(op, bar, np.zeros(m.lanes, dtype=np.int64), mask, U64, "w",
                 np.zeros((m.lanes, 8), dtype=np.uint8))   # the init is a write (race-checked)
        for lane, key, what in self._keys(op, bar, mask):
            self.state[key] = _Barrier(int(count[lane]), what)

    def arrive(self, op, bar, tx_bytes, mask) -> None:
        for lane, key, what in self._keys(op, bar, mask):
            b = self._barrier(op, key, what, lane)
            self.m.ordering.atomic(lane, b.loc, "release", "cta", op, reads=False, writes=True, rmw=True)
            b.tx += int(tx_bytes[lane])
            b.arrivals -= 1
            if b.arrivals < 0:
                raise SimError("S0011", f"{self.m.who(lane)} arrives on {what} in a phase that has had all "
                               f"{b.expected} arrivals it was initialized for", op)
            self._progress(key, b)

    def arrive_remote(self, op, bar, rank, mask) -> None:
        """Each lane arrives on the barrier at the same place in the block of rank `rank` of its
        cluster, releasing at cluster scope (the barrier word's read is race-checked: the other
        block's init must be ordered before it, as a cluster barrier after the init does)."""
        m = self.m
        rows = block_of_rank(m, op, rank.astype(np.int64), mask)
        m.access(op, bar, np.zeros(m.lanes, dtype=np.int64), mask, U64, "r", rows=rows)
        for lane, key, what in self._keys(op, bar, mask):
            target = int(rows[lane])
            key = (key[0], target, key[2])
            b = self._barrier(op, key, f"{what} of the cluster's block of rank {int(rank[lane])}", lane)
            own = int(m.block_in_batch[lane])
            if target != own:
                self.remote_arrivals.append((target, key, b.done, lane, op, int(m.cluster_barriers[own])))
            m.ordering.atomic(lane, b.loc, "release", "cluster", op, reads=False, writes=True, rmw=True)
            b.arrivals -= 1
            if b.arrivals < 0:
                raise SimError("S0011", f"{m.who(lane)} arrives on {b.name} in a phase that has had all "
                               f"{b.expected} arrivals it was initialized for", op)
            self._progress(key, b)

    def bulk_copy(self, op, dst, src, nbytes, bar, mask) -> None:
        m = self.m
        keys = self._keys(op, bar, mask)
        for lane, key, what in keys:
            n = int(nbytes[lane])
            one = np.zeros(m.lanes, dtype=bool)
            one[lane] = True
            zero = np.zeros(m.lanes, dtype=np.int64)
            chunk = VectorType(U32, 4)
            for k in range(n // 16):     # each 16-byte piece: bounds and alignment (16) at this line
                m.access(op, dst.offset(zero + 4 * k, 4), zero, one, chunk, "c")
            data = np.concatenate([m.access(op, src.offset(zero + 4 * k, 4), zero, one, chunk, "r")[lane]
                                   for k in range(n // 16)]) if n else np.zeros(0, np.uint8)
            mem = dst.mems[dst.mid[lane]]
            self._deliver(op, lane, key, what, mem, int(m.row_of(mem)[lane]), int(dst.off[lane]), data)

    def tensor_copy(self, op, dst, maps, coords, bar, mask, cta_mask=None) -> None:
        """TMA: each lane's box of its tensor map, gathered now, delivered as a bulk copy's
        bytes; with `cta_mask`, to the same place in each block of the cluster whose rank's
        bit is set, on that block's mbarrier at the same place (multicast)."""
        m = self.m
        m.before_grid_wait(op, np.nonzero(mask)[0], "reads a tensor map's tensor")
        for lane, key, what in self._keys(op, bar, mask):
            tmap = maps[lane]
            mem, row, start = check_tile_start(m, op, dst, lane, tmap.ty, "load writes")
            data = tmap.gather(check_coords(m, op, lane, coords, tmap.ty, "load reads"))
            if cta_mask is None:
                self._deliver(op, lane, key, what, mem, row, start, data)
                continue
            bits = int(cta_mask[lane]) & 0xFFFF
            for r in [r for r in range(16) if bits >> r & 1]:
                one = np.zeros(m.lanes, dtype=bool)
                one[lane] = True
                rows = block_of_rank(m, op, np.full(m.lanes, r), one)
                target = int(rows[lane])
                # the other block's barrier word, read as this thread's: ordered after its init?
                m.access(op, bar, np.zeros(m.lanes, dtype=np.int64), one, U64, "r", rows=rows)
                self._deliver(op, lane, (key[0], target, key[2]), f"{what} of the cluster's block of rank {r}",
                              mem, target, start, data)

    def _deliver(self, op, lane: int, key, what: str, mem, row: int, start: int, data: np.ndarray) -> None:
        """Bytes of a bulk copy for mem[row, start:]: in flight until their phase completes."""
        m = self.m
        n = len(data)
        b = self._barrier(op, key, what, lane)
        if mem.async_reading is not None and n:     # a wgmma (or bulk store) still reading the stage
            check_overwrite(m, op, mem, np.array([lane]), np.array([row]), np.arange(start, start + n)[None, :])
        if mem.track and m.check_races and n:
            # overwriting bytes other threads read, with nothing ordering their reads before
            # this copy (a stage refilled before its readers released it), is a race
            sel = np.array([lane])
            m.track(op, mem, sel, np.array([row]), np.arange(start, start + n)[None, :], "w")
            mem.race_state()[0][row, start:start + n] = -1     # written by the copy engine, later
        _mark(mem, row, start, n, 1)
        b.copies.append((mem, row, start, data))
        b.tx -= n
        self._progress(key, b)

    def try_wait(self, op, bar, parity, mask, scope: str = "cta") -> np.ndarray:
        out = np.zeros(self.m.lanes, dtype=bool)
        for lane, key, what in self._keys(op, bar, mask):
            b = self._barrier(op, key, what, lane)
            # the phase of this parity has completed when the barrier's current phase has the
            # other one (on a fresh barrier, parity 1 names the phase before the first: done)
            ok = (b.done & 1) != (int(parity[lane]) & 1)
            out[lane] = ok
            if ok:
                self.seen[(lane, key)] = b.done
                self.m.ordering.atomic(lane, b.loc, "acquire", scope, op, reads=True, writes=False, rmw=False)
                continue
            self.m.suspend = True         # let another thread group run (it may end this wait)
            version, spins = b.spins
            b.spins = (b.version, spins + 1 if version == b.version else 1)
            self.waiting[key] = (lane, int(parity[lane]) & 1)
            if b.spins[1] > SPIN_LIMIT:
                others = [f"also stuck: {self.m.who(w)} waits for phase {o.done} of {o.name}, which lacks "
                          f"{_lacks(o)}" for k, (w, _) in self.waiting.items()
                          if k != key and (o := self.state[k]).spins[1] > 0 and o.spins[0] == o.version]
                raise SimError("S0011", f"deadlock: {self.m.who(lane)} waits for phase {b.done} of {what} "
                               f"(parity {int(parity[lane]) & 1}), which lacks {_lacks(b)}, and no running "
                               f"thread will give it", op,
                               notes=others + ["the branches of an `if` that waits on mbarriers run "
                                               "concurrently in the simulator, each in lockstep"])
        return out

    def unobserved_remote_arrival(self):
        """The first arrival on another block's barrier that no wait of that block saw the phase
        of complete, with no cluster barrier after it in that block - (target, key, lane, op) -
        or None. A wait of the target that saw the phase is after the arrival, so the target
        had not exited; without one (the last stages' releases forwarded to producers that
        never wait for them again), only a cluster barrier keeps the target alive."""
        seen: dict = {}
        for (lane, key), done in self.seen.items():
            block = lane // self.m.T
            seen[(block, key)] = max(seen.get((block, key), 0), done)
        for target, key, phase, lane, op, passed in self.remote_arrivals:
            if seen.get((target, key), 0) <= phase and int(self.m.cluster_barriers[target]) <= passed:
                return target, key, lane, op
        return None

    def check_read(self, op, mem, sel, rows, cols) -> None:
        """S0009 when a lane reads bytes a bulk copy delivered in a phase it has not seen complete."""
        tags = mem.bulk_phase
        if tags is None:
            return
        t = tags[rows[:, None], cols]
        hit = t[:, :, 0] >= 0
        if not hit.any():
            return
        reading = np.nonzero(hit.any(axis=1))[0]
        first = np.argmax(hit[reading], axis=1)                 # each lane's first such byte
        for i, j, k, phase in zip(reading.tolist(), first.tolist(), t[reading, first, 0].tolist(),
                                  t[reading, first, 1].tolist()):
            lane = int(sel[i])
            key = mem.bulk_keys[k]
            if self.seen.get((lane, key), 0) < phase:
                b = self.state.get(key)
                what = b.name if b is not None else "its mbarrier"
                raise SimError("S0009", f"{self.m.who(lane)} reads element {int(cols[i, j]) // max(mem.elem.nbytes, 1)} "
                               f"of {mem.describe()}, which a bulk copy delivered in phase {phase - 1} of {what}: "
                               "this thread has not waited for that phase (mbarrier_try_wait of its parity)", op)

    # -- completion
    def _progress(self, key, b: _Barrier) -> None:
        b.version += 1
        if b.arrivals or b.tx:
            return
        b.done += 1
        for mem, row, start, data in b.copies:
            _mark(mem, row, start, len(data), -1)
            mem.data[row, start:start + len(data)] = data
            if mem.init is not None:
                mem.init[row, start:start + len(data)] = True
            if mem.track and mem._race is not None:
                mem._race[0][row, start:start + len(data)] = -1     # no thread's write: the copy engine's
            _tag(mem, row, start, len(data), key, b.done)
        b.copies = []
        b.arrivals = b.expected


def _lacks(b: _Barrier) -> str:
    lacks = []
    if b.arrivals:
        lacks.append(f"{b.arrivals} of its {b.expected} arrival(s)")
    if b.tx > 0:
        lacks.append(f"{b.tx} transaction byte(s) no bulk copy is delivering")
    if b.tx < 0:
        lacks.append(f"an expect_tx for {-b.tx} byte(s) delivered beyond those announced")
    return " and ".join(lacks) or "nothing"


def _mark(mem, row: int, start: int, n: int, delta: int) -> None:
    if mem.in_flight is None:
        mem.in_flight = np.zeros(mem.data.shape, dtype=np.int16)
    mem.in_flight[row, start:start + n] += delta


def _tag(mem, row: int, start: int, n: int, key, phase: int) -> None:
    if mem.bulk_phase is None:
        mem.bulk_phase = np.full(mem.data.shape + (2,), -1, dtype=np.int64)
    if key not in mem.bulk_keys:
        mem.bulk_keys.append(key)
    mem.bulk_phase[row, start:start + n, 0] = mem.bulk_keys.index(key)
    mem.bulk_phase[row, start:start + n, 1] = phase
