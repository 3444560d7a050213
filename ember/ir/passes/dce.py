"""dce: remove ops whose results are unused and which have no effect (pure ops,
allocations, and scf ops whose regions have none), and device functions nothing calls."""

from __future__ import annotations

from ..core import Module, Region, use_counts
from . import register
from .util import has_effects


@register("dce", "Remove unused ops without side effects, and functions nothing calls.")
def dce(module: Module) -> bool:
    changed = False
    for f in module.functions:
        while _sweep(f.body, use_counts(f.body)):
            changed = True
    called = set()
    for f in module.functions:
        for op in f.walk():
            if op.name == "func.call":
                called.add(op.attrs["callee"])
    kept = [f for f in module.functions if f.kind == "kernel" or f.name in called]
    changed |= len(kept) != len(module.functions)
    module.functions = kept
    return changed


def _sweep(region: Region, uses: dict) -> bool:
    changed = False
    kept = []
    for op in reversed(region.ops):
        for r in op.regions:
            changed |= _sweep(r, uses)
        if not op.opdef.terminator and not has_effects(op) and all(uses.get(v, 0) == 0 for v in op.results):
            for inner in op.walk():
                for v in inner.operands:
                    uses[v] = uses.get(v, 0) - 1
            changed = True
            continue
        kept.append(op)
    region.ops = kept[::-1]
    return changed
