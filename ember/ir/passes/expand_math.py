"""expand-math: replace each op that declares `expanded_by="expand-math"` (the accurate
math functions: `math.sin`, `math.exp2`, ...) by Ember's implementation of it
(ember.ir.mathlib), inline, in plain IR ops. Runs in every pipeline, since the NVPTX back
end has no accurate versions of these functions."""

from __future__ import annotations

from ..core import Module, Op, clone_op
from ..rewrite import rewrite
from . import register


def _visit(op: Op):
    if op.opdef.expanded_by != "expand-math":
        return None
    from .. import mathlib
    # Each (op, type) is built once per process (mathlib.expansion_module) and copied
    # here: copying is cheaper than building it again.
    _, template = mathlib.expansion_module(op.name, op.operands[0].type)
    values = {template.body.args[0]: op.operands[0]}
    copies = [clone_op(inner, values, op.loc) for inner in template.body.ops[:-1]]
    return copies, [values.get(v, v) for v in template.body.ops[-1].operands]


@register("expand-math", "Replace accurate math ops by Ember's own implementations (needed by lowering).")
def expand_math(module: Module) -> set:
    from .. import mathlib
    changed = {f for f in module.functions if rewrite(f.body, _visit)}
    if not changed:
        return changed
    called = {op.attrs["callee"] for f in module.functions for op in f.walk() if op.name == "func.call"}
    for helper in mathlib.support_functions(c for c in called if module.get(c) is None):
        module.functions.append(helper)
        changed.add(helper)
    used = {op.attrs["name"] for f in module.functions for op in f.walk() if op.name == "mem.global"}
    for name, g in mathlib.globals_needed().items():
        if name in used and module.get_global(name) is None:
            module.globals.append(g)
    return changed
