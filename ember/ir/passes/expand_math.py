"""expand-math: replace each accurate math op (`math.sin`, `math.exp2`, ...) by Ember's
implementation of it (ember.ir.mathlib), inline, in plain IR ops. Runs in every pipeline,
since the NVPTX back end has no accurate versions of these functions."""

from __future__ import annotations

from ..core import Module, Region, replace_uses
from ..builder import Builder
from . import register


def _expand_region(region: Region) -> None:
    from .. import mathlib
    new_ops = []
    mapping = {}
    for op in region.ops:
        for r in op.regions:
            _expand_region(r)
        if mathlib.expands(op.name):
            scratch = Region()
            b = Builder(scratch, op.loc)
            results = mathlib.emit(b, op.name, [mapping.get(v, v) for v in op.operands])
            for old, new in zip(op.results, results):
                mapping[old] = new
            for o in scratch.ops:
                o.parent = region
            new_ops.extend(scratch.ops)
        else:
            new_ops.append(op)
    region.ops = new_ops
    if mapping:
        replace_uses(region, mapping)


@register("expand-math", "Replace accurate math ops by Ember's own implementations (needed by lowering).")
def expand_math(module: Module) -> None:
    from .. import mathlib
    for f in module.functions:
        _expand_region(f.body)
    called = {op.attrs["callee"] for f in module.functions for op in f.walk() if op.name == "func.call"}
    for helper in mathlib.support_functions(c for c in called if module.get(c) is None):
        module.functions.append(helper)
    used = {op.attrs["name"] for f in module.functions for op in f.walk() if op.name == "mem.global"}
    for name, g in mathlib.globals_needed().items():
        if name in used and module.get_global(name) is None:
            module.globals.append(g)
