"""cse: common subexpression elimination over the dominance scopes of structured IR.

An op dominates the ops after it in its region and everything nested in them, so one hash
table per region, inheriting its parent's, finds every redundant op. Merged: pure ops
that cannot fault, take no other thread part and read no memory, and loads through
read-only pointers (their memory does not change during a kernel)."""

from __future__ import annotations

from ..core import Module, Op, Region, Value, replace_uses
from ..types import PtrType
from . import register
from .util import is_movable


@register("cse", "Merge identical computations (and read-only loads) within dominance scopes.")
def cse(module: Module) -> bool:
    changed = False
    for f in module.functions:
        mapping: dict[Value, Value] = {}
        _scope(f.body, {}, mapping)
        replace_uses(f.body, mapping)
        changed |= bool(mapping)
    return changed


def _key(op: Op, mapping: dict):
    if op.regions or not op.results:
        return None
    readonly_load = (op.name == "mem.load" and isinstance(op.operands[0].type, PtrType)
                     and not op.operands[0].type.mut and op.operands[0].type.space in ("global", "const"))
    if not (is_movable(op) or readonly_load):
        return None
    operands = [id(_resolve(v, mapping)) for v in op.operands]
    if op.opdef.commutative:
        operands.sort()
    attrs = tuple(sorted((k, repr(v)) for k, v in op.attrs.items()))
    return (op.name, tuple(operands), attrs, tuple(str(r.type) for r in op.results))


def _resolve(v: Value, mapping: dict) -> Value:
    while v in mapping:
        v = mapping[v]
    return v


def _scope(region: Region, parent: dict, mapping: dict) -> None:
    table = dict(parent)
    kept = []
    for op in region.ops:
        op.operands = [_resolve(v, mapping) for v in op.operands]
        for r in op.regions:
            _scope(r, table, mapping)
        key = _key(op, mapping)
        if key is not None:
            prev = table.get(key)
            if prev is not None:
                for old, new in zip(op.results, prev.results):
                    mapping[old] = new
                continue
            table[key] = op
        kept.append(op)
    region.ops = kept
