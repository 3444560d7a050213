"""licm: hoist loop-invariant computations out of scf.for and scf.while.

Only ops free to move are hoisted (pure, cannot fault, no memory read, no other thread
involved), so running them when the loop runs zero times is harmless; collective ops
(shuffles, votes, barriers) never move, since which threads take part would change.
Inner loops are processed first, so an invariant can climb out of several loops."""

from __future__ import annotations

from ..core import Module, Op
from ..rewrite import rewrite
from . import register
from .util import is_movable


@register("licm", "Hoist loop-invariant pure computations out of loops.")
def licm(module: Module) -> set:
    return {f for f in module.functions if rewrite(f.body, _visit)}


def _visit(op: Op):
    if op.name not in ("scf.for", "scf.while"):
        return None
    hoisted = _hoist(op)
    if not hoisted:
        return None
    return hoisted + [op], list(op.results)


def _hoist(loop: Op) -> list[Op]:
    inside = set()
    for r in loop.regions:
        for inner in r.walk():
            inside.update(id(v) for v in inner.results)
        inside.update(id(a) for a in r.args)
    hoisted: list[Op] = []
    for r in loop.regions:
        kept = []
        for op in r.ops:
            if is_movable(op) and not any(id(v) in inside for v in op.operands):
                hoisted.append(op)
                inside.difference_update(id(v) for v in op.results)
            else:
                kept.append(op)
        r.ops = kept
    return hoisted
