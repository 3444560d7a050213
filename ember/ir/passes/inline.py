"""inline: replace calls of device functions by a copy of the callee's body.

Every function ends in its single `return` (early returns are structured flags), so the
copy is spliced before the call and the call's results become the returned values.
Functions marked `noinline` (Ember's own out-of-line helpers) stay calls.

Callees are inlined bottom-up (a callee's own calls first), so each function's body is
copied once per call site. The inlined size of every function is computed first: a
program whose inlining would exceed MAX_INLINED_OPS ops (a chain of functions each
calling the next twice doubles per level) is refused, as the type checker reports it
with the call chain (E0407) before any IR is built."""

from __future__ import annotations

from ..core import Function, Module, Op, clone_op
from ..rewrite import rewrite
from . import register

MAX_INLINED_OPS = 200_000


class InlineTooLarge(Exception):
    pass


@register("inline", "Inline calls of device functions (all but `noinline` helpers).")
def inline(module: Module) -> set:
    functions = {f.name: f for f in module.functions}
    sizes = inlined_sizes(module)
    for f in module.kernels:
        if sizes[f.name] > MAX_INLINED_OPS:
            raise InlineTooLarge(f"inlining into @{f.name} would make {sizes[f.name]} ops "
                                 f"(more than {MAX_INLINED_OPS})")
    return {f for f in _bottom_up(module) if rewrite(f.body, lambda op: _visit(op, functions))}


def _inlinable(op: Op, functions: dict) -> Function | None:
    if op.name != "func.call":
        return None
    callee = functions.get(op.attrs.get("callee"))
    if callee is None or callee.attrs.get("noinline"):
        return None
    return callee


def _visit(op: Op, functions: dict):
    callee = _inlinable(op, functions)
    if callee is None:
        return None
    values = dict(zip(callee.args, op.operands))
    copies = [clone_op(inner, values) for inner in callee.body.ops[:-1]]
    ret = callee.body.ops[-1]
    return copies, [values.get(v, v) for v in ret.operands]


def _calls(f: Function) -> list:
    return [op.attrs["callee"] for op in f.walk() if op.name == "func.call"]


def _bottom_up(module: Module) -> list[Function]:
    """Functions with every callee before its callers (the call graph is acyclic)."""
    functions = {f.name: f for f in module.functions}
    order, state = [], {}
    for f in module.functions:
        if f.name in state:
            continue
        stack = [(f, iter(_calls(f)))]
        state[f.name] = 1
        while stack:
            g, it = stack[-1]
            callee = next(it, None)
            if callee is None:
                stack.pop()
                state[g.name] = 2
                order.append(g)
                continue
            h = functions.get(callee)
            if h is not None and callee not in state:
                state[callee] = 1
                stack.append((h, iter(_calls(h))))
    return order


def inlined_sizes(module: Module) -> dict:
    """Each function's op count once every inlinable call in it is inlined."""
    functions = {f.name: f for f in module.functions}
    sizes: dict = {}
    for f in _bottom_up(module):
        n = 0
        for op in f.walk():
            callee = _inlinable(op, functions)
            n += sizes.get(callee.name, 0) if callee is not None else 1
        sizes[f.name] = n
    return sizes
