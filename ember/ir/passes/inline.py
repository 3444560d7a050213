"""inline: replace calls of device functions by a copy of the callee's body.

Every function ends in its single `return` (early returns are structured flags), so the
copy is spliced before the call and the call's results become the returned values.
Functions marked `noinline` (Ember's own out-of-line helpers) stay calls."""

from __future__ import annotations

from ..core import Module, Op, Region, clone_op, replace_uses
from . import register


@register("inline", "Inline calls of device functions (all but `noinline` helpers).")
def inline(module: Module) -> bool:
    functions = {f.name: f for f in module.functions}
    changed = False
    for f in module.functions:
        for _ in range(64):        # nested calls: repeat (recursion is rejected by the checker)
            if not _inline_region(f.body, functions):
                break
            changed = True
    return changed


def _inline_region(region: Region, functions: dict) -> bool:
    changed = False
    out: list[Op] = []
    mapping = {}
    for op in region.ops:
        for r in op.regions:
            changed |= _inline_region(r, functions)
        callee = functions.get(op.attrs.get("callee")) if op.name == "func.call" else None
        if callee is None or callee.attrs.get("noinline"):
            out.append(op)
            continue
        values = dict(zip(callee.args, op.operands))
        for inner in callee.body.ops[:-1]:
            copy = clone_op(inner, values)
            copy.parent = region
            out.append(copy)
        ret = callee.body.ops[-1]
        for res, v in zip(op.results, ret.operands):
            mapping[res] = values.get(v, v)
        changed = True
    region.ops = out
    if mapping:
        replace_uses(region, mapping)
    return changed
