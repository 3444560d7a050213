"""Thread-block clusters in the simulator (the ops are in ember/ir/ops/cluster.py): a
batch holds whole clusters; a block's rank is its place in its cluster (x fastest); a
cluster barrier is a barrier of each of its blocks that also orders the accesses of every
block of the cluster before it against those after it (ember.sim.ordering: each block
then knows the others' accesses of the epochs that ended, and what they had acquired from
other clusters - as the PTX memory model's causality order is transitive); an access to another block's
shared array is to that block's copy of it (its row of the array's memory), race-checked
as an access by the thread that makes it. A block's shared memory lives only as long as the
block: an access from another block must be ordered before the block exits by a cluster
barrier that both pass after it (S0015 otherwise, checked when the batch ends: `exits`)."""

from __future__ import annotations

import numpy as np

from .errors import SimError
from .ordering import merge


def rank(m) -> np.ndarray:
    cx, cy, cz = m.cluster
    bx, by, bz = m.coords(m.block_lin, m.grid)
    return bx % cx + cx * (by % cy + cy * (bz % cz))


def block_of_rank(m, op, r: np.ndarray, mask) -> np.ndarray:
    """The batch index of the block of rank r in each lane's cluster (S0001 for a rank past
    the cluster)."""
    cx, cy, cz = m.cluster
    bad = mask & (r.astype(np.int64) >= cx * cy * cz)
    if bad.any():
        k = int(np.argmax(bad))
        raise SimError("S0001", f"{m.who(k)} addresses the block of rank {int(r[k])} of its cluster, which has "
                       f"{cx * cy * cz} blocks", op)
    r = r.astype(np.int64)
    bx, by, bz = m.coords(m.block_lin, m.grid)
    tx = bx - bx % cx + r % cx
    ty = by - by % cy + (r // cx) % cy
    tz = bz - bz % cz + r // (cx * cy)
    lin = tx + m.grid[0] * (ty + m.grid[1] * tz)
    return lin - int(m.block_lin[0])


def barrier(m, op, mask) -> None:
    m.barrier(op, mask)                  # each block's threads (S0005 for a divergent one)
    arrived = mask.reshape(m.nb, m.T).any(axis=1)
    key = block_of_rank(m, op, np.zeros(m.lanes, dtype=np.int64), np.zeros(m.lanes, dtype=bool))
    leader = key.reshape(m.nb, m.T)[:, 0]          # the batch index of each block's rank-0 block
    for first in np.unique(leader[arrived]).tolist():
        blocks = np.nonzero(leader == first)[0]
        if not arrived[blocks].all():
            missing = int(blocks[np.argmin(arrived[blocks])])
            waiting = int(blocks[np.argmax(arrived[blocks])])
            raise SimError("S0005", f"divergent cluster barrier: {m.who(waiting * m.T)}'s block waits here, but "
                           f"{_block(m, missing)} of its cluster does not reach it", op)
        # each block's writes of the epochs that ended, and what each block had learned
        # (acquired from other clusters): the barrier's release and acquire are cumulative
        facts = {("b", int(m.block_lin[b * m.T])): int(m.epoch[b]) for b in blocks.tolist()}
        for b in blocks.tolist():
            merge(facts, m.ordering.block_facts.get(b, {}))
        for b in blocks.tolist():
            merge(m.ordering.block_facts.setdefault(b, {}), facts)
        m.cluster_barriers[blocks] += 1
    m.ordering.any = True


def remote(m, op, ptr, index, r, t, mask, values=None):
    """Read (values None) or write element `index` of the shared array at ptr in the block of
    rank r of each lane's cluster."""
    from .memory import from_array, to_array
    rows = block_of_rank(m, op, r, mask)
    touched(m, op, rows, mask, values is None)
    if values is None:
        return to_array(m.access(op, ptr, index, mask, t, "r", rows=rows), t)
    m.access(op, ptr, index, mask, t, "w", from_array(values, t, m.lanes), rows=rows)
    return None


def touched(m, op, rows: np.ndarray, mask, read: bool) -> None:
    """Note each lane's access into the shared memory of block `rows` (batch indices) where
    that is another block: the latest such access into each block, by the cluster barriers
    its maker had passed (`exits` checks them)."""
    sel = np.nonzero(mask & (rows != m.block_in_batch))[0]
    if sel.size == 0:
        return
    passed = m.cluster_barriers[m.block_in_batch[sel]]
    for target in np.unique(rows[sel]).tolist():
        mine = rows[sel] == target
        k = int(sel[mine][np.argmax(passed[mine])])
        latest = int(passed[mine].max())
        if latest >= m.remote_touches.get(target, (-1,))[0]:
            m.remote_touches[target] = (latest, k, op, read)


def exits(m) -> None:
    """S0015 for a dsmem_load or dsmem_store into another block of the cluster that no cluster
    barrier after it orders before that block's exit, and for an arrival on another block's
    mbarrier that neither a wait of that block (for the arrival's phase) nor a cluster barrier
    orders before it (a multicast copy's bytes are not checked: the target's wait for them
    does that). Called when the batch has run to its end, every block past all the cluster
    barriers it will pass."""
    late = m.mbarriers.unobserved_remote_arrival()
    if late is not None:
        target, key, lane, op = late
        block = _block(m, target)
        name = m.mbarriers.state[key].name
        raise SimError("S0015", f"{m.who(lane)} arrives on {name} of {block} of its cluster, and neither a wait of "
                       f"that block for the phase it completes nor a cluster barrier after it orders the arrival "
                       f"before that block exits: the block may be gone, and its barrier with it", op,
                       notes=["a cluster_barrier() before the kernel ends (after the last remote arrival) keeps "
                              "every block until all are done with each other's barriers"])
    for target, (passed, k, op, read) in sorted(m.remote_touches.items()):
        if passed >= int(m.cluster_barriers[target]):
            block = _block(m, target)
            raise SimError("S0015", f"{m.who(k)} {'reads' if read else 'writes'} the shared memory of {block} of "
                           f"its cluster after that block's last cluster barrier: the block may have exited "
                           f"and its shared memory be gone", op,
                           notes=["a cluster_barrier() after the access, before any block of the cluster exits, "
                                  "keeps every block's shared memory until all are done with it"])


def _block(m, b: int) -> str:
    """`block (x, y, z)`: the block of batch index b."""
    x, y, z = (int(v[b * m.T]) for v in m.coords(m.block_lin, m.grid))
    return f"block ({x}, {y}, {z})"
