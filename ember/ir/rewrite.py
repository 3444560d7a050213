"""The walk-and-rewrite loop every pass shares.

    def visit(op):                      # after op's regions were visited
        if <op folds to a constant c>:
            return [c], [c.result]      # c takes op's place; c.result replaces its result
        return None                     # keep op

    changed = rewrite(function.body, visit)

`rewrite` walks regions depth-first without recursion; `visit(op)` sees each op after
the ops nested in it and returns None (keep) or `(new_ops, values)`: `new_ops` take the
op's place (the op itself may be among them, e.g. after ops hoisted out of it), and each
result of the op is replaced everywhere by the matching value through the use lists
(no sweep of the region). An op that is not among `new_ops` is erased. Each region's op
list is rebuilt once, when the walk leaves it; `enter(region)`/`leave(region)` bracket
each region (a scoped table for CSE, say).
"""

from __future__ import annotations

from typing import Callable

from .core import Op, Region


class _Frame:
    __slots__ = ("region", "ops", "i", "out", "pending")

    def __init__(self, region: Region):
        self.region = region
        self.ops = list(region.ops)
        self.i = 0
        self.out: list[Op] = []
        self.pending: Op | None = None     # the op whose regions are being walked


def rewrite(root: Region, visit: Callable, *, enter: Callable | None = None,
            leave: Callable | None = None) -> bool:
    """Walk `root` and the regions nested in it, rewriting with `visit`; returns whether
    any op was replaced or erased."""
    changed = False
    if enter:
        enter(root)
    stack = [_Frame(root)]
    while stack:
        fr = stack[-1]
        op = fr.pending
        if op is None:
            if fr.i == len(fr.ops):
                fr.region.set_ops(fr.out)
                if leave:
                    leave(fr.region)
                stack.pop()
                continue
            op = fr.ops[fr.i]
            fr.i += 1
            if op.regions:
                fr.pending = op
                for r in reversed(op.regions):
                    if enter:
                        enter(r)
                    stack.append(_Frame(r))
                continue
        fr.pending = None
        result = visit(op)
        if result is None:
            fr.out.append(op)
            continue
        new_ops, values = result
        changed = True
        keep = False
        for n in new_ops:
            keep |= n is op
            fr.out.append(n)
        for old, new in zip(op.results, values):
            old.replace_all_uses_with(new)
        if not keep:
            op.erase()
    return changed
