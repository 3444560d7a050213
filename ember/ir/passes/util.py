"""Helpers shared by the passes: what may be removed or moved."""

from __future__ import annotations

from ..core import Op


def has_effects(op: Op, memo: dict | None = None) -> bool:
    """Whether removing the op (when its results are unused) could change the program: an
    effectful op, or an op with regions that holds one (computed bottom-up, memoized in
    `memo` so a nest is walked once)."""
    d = op.opdef
    if d.terminator:
        return False
    if not op.regions:
        return not d.pure
    if memo is not None and op in memo:
        return memo[op]
    result = any(not inner.opdef.pure and not inner.opdef.terminator
                 for r in op.regions for inner in r.walk() if not inner.regions)
    if memo is not None:
        memo[op] = result
    return result


def is_movable(op: Op) -> bool:
    """Free to hoist or merge: pure, cannot fault, reads no memory, allocates nothing,
    takes no other thread part, and has no regions."""
    return op.opdef.speculatable and not op.regions


def is_checked_value(op: Op) -> bool:
    """A value that depends only on its operands but may fault (`mem.row`: a row out of
    range): not to be hoisted or speculated, but a later copy may reuse an earlier one
    that dominates it (had that one faulted, the program would not have got here)."""
    d = op.opdef
    return d.pure and not op.regions and not (d.reads_memory or d.allocates or d.convergent)
