"""dce: remove ops whose results are unused and which have no effect (pure ops,
allocations, and scf ops whose regions have none), and device functions nothing calls.

A worklist over the use lists: an op found dead is erased, which may leave the ops that
defined its operands unused in turn; each region's op list is filtered once at the end."""

from __future__ import annotations

from ..core import Module, Op
from . import register
from .util import has_effects


@register("dce", "Remove unused ops without side effects, and functions nothing calls.")
def dce(module: Module) -> set:
    changed = {f for f in module.functions if sweep(f)}
    called = set()
    for f in module.functions:
        for op in f.walk():
            if op.name == "func.call":
                called.add(op.attrs["callee"])
    module.functions = [f for f in module.functions if f.kind == "kernel" or f.name in called]
    return {f for f in changed if f in module.functions} or (len(changed) > 0)


def _dead(op: Op, memo: dict) -> bool:
    return (not op.erased and not op.opdef.terminator and not any(r.uses for r in op.results)
            and not has_effects(op, memo))


def sweep(f) -> bool:
    """Remove the dead ops of one function (not the function itself); whether any were."""
    memo: dict = {}
    ops = list(f.walk())
    work = list(ops)          # popped from the end: later ops first, so chains die in one pass
    removed = False
    while work:
        op = work.pop()
        if not _dead(op, memo):
            continue
        inputs = [v.op for inner in op.walk() for v in inner.operands]
        op.erase()
        removed = True
        for d in inputs:
            if d is not None and not d.erased:
                work.append(d)
    if removed:
        for region in [f.body] + [r for op in ops if not op.erased for r in op.regions]:
            region.ops = [o for o in region.ops if not o.erased]
    return removed
