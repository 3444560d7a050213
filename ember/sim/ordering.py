"""Happens-before across threads for the simulator: what the PTX memory model's release
and acquire patterns (ember.ir.ops.ordering) let one thread rely on about another's
writes, so that the race checks (ember.sim.machine) accept exactly the accesses a
correct synchronization orders, and report the rest, whatever the timing.

Knowledge is a dict of facts, each "writes before this point are visible":
- ("b", block): the writes of that block made before its barrier epoch E (the value);
- ("t", thread): the writes of that thread (global id) made before its release count R.

A thread's knowledge is its block's (merged at every barrier) plus its own since the
last barrier. A release takes a snapshot of it, with the releasing thread's own writes
and its block's before the current epoch; the snapshot travels with the atomic write to
its location (a read-modify-write keeps the location's earlier releases: the release
sequence), and an acquire that reads the location adds the snapshots to its knowledge.
A relaxed atomic read acquires only at a later acquire fence; a release fence's snapshot
travels with every later atomic write of its thread. Each release and acquire has a
scope, and they synchronize only when each scope includes the other thread
(`cluster` is the block itself until clusters exist: a block is a cluster of one).
"""

from __future__ import annotations

import numpy as np

from ..ir.ops.ordering import ACQUIRES, RELEASES


def merge(into: dict, facts: dict) -> None:
    for k, v in facts.items():
        if v > into.get(k, -1):
            into[k] = v


def reaches(scope: str, a_block: int, b_block: int, m) -> bool:
    """Whether an operation of scope `scope` by a thread of a_block includes b_block's threads
    (blocks by their linear index in machine m's grid; `cluster` reaches the blocks of a_block's
    cluster)."""
    if scope in ("gpu", "sys") or a_block == b_block:
        return True
    if scope != "cluster":
        return False
    a = m.coords(np.array([a_block, b_block]), m.grid)
    return all(int(v[0]) // n == int(v[1]) // n for v, n in zip(a, m.cluster))


def reach_text(scope: str) -> str:
    """Whom an operation of the scope reaches, for messages."""
    return "the threads of one cluster" if scope == "cluster" else "the threads of one block"


class Release:
    """A snapshot of a thread's knowledge published at a release: who, at which scope, where."""

    __slots__ = ("facts", "block", "scope", "op")

    def __init__(self, facts: dict, block: int, scope: str, op):
        self.facts, self.block, self.scope, self.op = facts, block, scope, op


class Location:
    """What an atomic location carries: the releases an acquirer of its value gets, and
    the last atomic on it (the scope check of two atomics from different blocks)."""

    __slots__ = ("releases", "last")

    def __init__(self):
        self.releases: list[Release] = []
        self.last = None             # (global thread id, block, scope, op)


class Ordering:
    """The happens-before state of one batch of blocks (per thread and per block), over
    location states that live with the memory (they outlast the batch)."""

    def __init__(self, machine):
        self.m = machine
        self.rc = np.zeros(machine.lanes, dtype=np.int64)   # per lane: releases made
        self.block_facts: dict[int, dict] = {}             # block in batch -> facts
        self.lane_facts: dict[int, dict] = {}              # lane -> facts since its last barrier
        self.pending: dict[int, list] = {}                 # lane -> releases read by relaxed atomics
        self.fenced: dict[int, Release] = {}               # lane -> its last release fence's snapshot
        self.narrow: dict[int, tuple] = {}                 # lane -> (scope, op): the too narrow side of a
                                                           # release it could not acquire
        self.any = False                                   # any knowledge at all (the fast path)
        self.released = False                              # any release yet (release counts kept)

    # -- knowledge
    def knows(self, lane: int, key) -> int:
        b = self.m.block_in_batch[lane]
        return max(self.block_facts.get(b, {}).get(key, -1), self.lane_facts.get(lane, {}).get(key, -1))

    def ordered(self, lanes: np.ndarray, threads: np.ndarray, epochs: np.ndarray, rcs: np.ndarray) -> np.ndarray:
        """For each entry: whether the earlier access (by global thread id, in its block's
        barrier epoch, before its thread's release count) happens before the lane's."""
        if not self.any or len(lanes) == 0:
            return np.zeros(len(lanes), dtype=bool)
        T = self.m.T
        # the entries are bytes: each distinct (lane, thread, epoch, release count) asked once
        entries = np.stack([np.asarray(a, dtype=np.int64) for a in (lanes, threads, epochs, rcs)], axis=1)
        distinct, inverse = np.unique(entries, axis=0, return_inverse=True)
        answer = np.array([self.knows(lane, ("t", th)) > rc or self.knows(lane, ("b", th // T)) > ep
                           for lane, th, ep, rc in distinct.tolist()], dtype=bool)
        return answer[inverse.reshape(-1)]

    def _snapshot(self, lane: int, scope: str, op) -> Release:
        m = self.m
        b = int(m.block_in_batch[lane])
        facts = dict(self.block_facts.get(b, {}))
        merge(facts, self.lane_facts.get(lane, {}))
        block = int(m.block_lin[lane])
        merge(facts, {("b", block): int(m.epoch[b]), ("t", int(m.gtid[lane])): int(self.rc[lane]) + 1})
        self.rc[lane] += 1
        self.released = True
        return Release(facts, block, scope, op)

    def _acquire(self, lane: int, releases, scope: str, op=None) -> None:
        block = int(self.m.block_lin[lane])
        facts = self.lane_facts.setdefault(lane, {})
        for r in releases:
            if reaches(r.scope, r.block, block, self.m) and reaches(scope, block, r.block, self.m):
                merge(facts, r.facts)
                self.any = True
            elif r.block != block:
                # the release's scope, or else the acquire's, does not reach the other block
                self.narrow[lane] = (r.scope, r.op) if not reaches(r.scope, r.block, block, self.m) else (scope, op)

    # -- operations
    def barrier(self, blocks: np.ndarray) -> None:
        """Blocks (in batch) whose threads passed a barrier: each thread's knowledge is the block's."""
        if not self.lane_facts:
            return
        for lane in list(self.lane_facts):
            b = int(self.m.block_in_batch[lane])
            if blocks[b]:
                merge(self.block_facts.setdefault(b, {}), self.lane_facts.pop(lane))

    def share(self, lanes: np.ndarray) -> None:
        """Threads of one block that synchronized with each other (a warp barrier): each
        knows what every other did before it, as a release by each acquired by all."""
        facts: dict = {}
        for lane in lanes.tolist():
            merge(facts, self.lane_facts.get(lane, {}))
            facts[("t", int(self.m.gtid[lane]))] = int(self.rc[lane]) + 1
        self.rc[lanes] += 1
        for lane in lanes.tolist():
            merge(self.lane_facts.setdefault(lane, {}), facts)
        self.any = self.released = True

    def fence(self, lanes, order: str, scope: str, op) -> None:
        for lane in lanes.tolist():
            if order in ACQUIRES and lane in self.pending:
                self._acquire(lane, self.pending.pop(lane), scope, op)
            if order in RELEASES:
                self.fenced[lane] = self._snapshot(lane, scope, op)

    def atomic(self, lane: int, loc: Location, order: str, scope: str, op, reads: bool, writes: bool,
               rmw: bool) -> None:
        """One lane's atomic on a location, in the order the simulator applies them."""
        if reads:
            if order in ACQUIRES:
                self._acquire(lane, loc.releases, scope, op)
            elif loc.releases:
                self.pending.setdefault(lane, []).extend(loc.releases)
        if writes:
            if order in RELEASES:
                release = self._snapshot(lane, scope, op)
            else:
                release = self.fenced.get(lane)
            kept = loc.releases if rmw else []      # a plain atomic store ends the release sequence
            loc.releases = kept + [release] if release is not None else list(kept)

    def notes(self, lane: int) -> list:
        """What to tell about a race the lane took part in."""
        out = ["threads of different blocks (or of one block between barriers) are ordered only when "
               "one releases (an atomic with `release` or `acq_rel`, or `fence(release, gpu)` before an "
               "atomic write) and the other acquires what it wrote (an atomic with `acquire`, or an atomic "
               "read followed by `fence(acquire, gpu)`); see docs/memory_model.md"]
        narrow = self.narrow.get(lane)
        if narrow is not None:
            scope, op = narrow
            where = f" at {op.loc}" if op is not None and op.loc is not None else ""
            out.append(f"an acquire or release{where} had `{scope}` scope, which reaches only {reach_text(scope)}: "
                       f"use `gpu`" + (" (or `cluster` within a cluster)" if scope == "cta" else ""))
        return out
