"""cse: common subexpression elimination over the dominance scopes of structured IR.

An op dominates the ops after it in its region and everything nested in them, so one
scoped table (entries made inside a region leave with it) finds every redundant op.
Merged: ops free to move (pure, cannot fault, no other thread involved, no memory read),
pure ops that may fault (`mem.row`: the earlier copy would have faulted first), and loads
of memory that cannot change during the kernel (a read-only kernel parameter
or a constant table: `ember.ir.analysis.pointers.unchanging`)."""

from __future__ import annotations

from ..analysis.pointers import unchanging
from ..core import Module, Op
from ..rewrite import rewrite
from . import register
from .util import is_checked_value, is_movable


@register("cse", "Merge identical computations (and loads of unchanging memory) within dominance scopes.")
def cse(module: Module) -> set:
    changed = set()
    for f in module.functions:
        table: dict = {}
        made: list = [[]]      # per open region: the keys it added

        def enter(region):
            made.append([])

        def leave(region):
            for key in made.pop():
                del table[key]

        def visit(op: Op):
            key = _key(op)
            if key is None:
                return None
            prev = table.get(key)
            if prev is not None:
                return [], prev.results
            table[key] = op
            made[-1].append(key)
            return None

        if rewrite(f.body, visit, enter=enter, leave=leave):
            changed.add(f)
    return changed


def _key(op: Op):
    if op.name == "arith.const":     # most merges after unrolling: each copy made its own
        value = op.attrs["value"]          # an int or bool (floats as bits); repr for anything else
        return ("arith.const", type(value), value if type(value) in (int, bool) else repr(value),
                str(op.results[0].type))
    if op.regions or not op.results:
        return None
    if not (is_movable(op) or is_checked_value(op) or (op.name == "mem.load" and unchanging(op.operands[0]))):
        return None
    operands = [id(v) for v in op.operands]
    if op.opdef.commutative:
        operands.sort()
    attrs = tuple(sorted((k, repr(v)) for k, v in op.attrs.items())) if op.attrs else ()
    return (op.name, tuple(operands), attrs, tuple([str(r.type) for r in op.results]))
