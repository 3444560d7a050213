"""expand-math: replace each accurate math op (`math.sin`, `math.exp2`, ...) by Ember's
implementation of it (ember.ir.mathlib), inline, in plain IR ops. Runs in every pipeline,
since the NVPTX back end has no accurate versions of these functions."""

from __future__ import annotations

from ..core import Module, Region, clone_op, replace_uses
from . import register


def _expand_region(region: Region) -> bool:
    from .. import mathlib
    new_ops = []
    mapping = {}
    changed = False
    for op in region.ops:
        for r in op.regions:
            changed |= _expand_region(r)
        if mathlib.expands(op.name):
            # Each (op, type) is built once per process (mathlib.expansion_module) and
            # copied here: copying is cheaper than building it again.
            _, template = mathlib.expansion_module(op.name, op.operands[0].type)
            values = {template.body.args[0]: mapping.get(op.operands[0], op.operands[0])}
            for inner in template.body.ops[:-1]:
                copy = clone_op(inner, values, op.loc)
                copy.parent = region
                new_ops.append(copy)
            for old, v in zip(op.results, template.body.ops[-1].operands):
                mapping[old] = values.get(v, v)
            changed = True
        else:
            new_ops.append(op)
    region.ops = new_ops
    if mapping:
        replace_uses(region, mapping)
    return changed


@register("expand-math", "Replace accurate math ops by Ember's own implementations (needed by lowering).")
def expand_math(module: Module) -> bool:
    from .. import mathlib
    changed = False
    for f in module.functions:
        changed |= _expand_region(f.body)
    if not changed:
        return False
    called = {op.attrs["callee"] for f in module.functions for op in f.walk() if op.name == "func.call"}
    for helper in mathlib.support_functions(c for c in called if module.get(c) is None):
        module.functions.append(helper)
    used = {op.attrs["name"] for f in module.functions for op in f.walk() if op.name == "mem.global"}
    for name, g in mathlib.globals_needed().items():
        if name in used and module.get_global(name) is None:
            module.globals.append(g)
    return True
