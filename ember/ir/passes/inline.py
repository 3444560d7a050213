"""inline: replace calls of device functions by a copy of the callee's body.

Every function ends in its single `return` (early returns are structured flags), so the
copy is spliced before the call and the call's results become the returned values.
Functions marked `noinline` (Ember's own out-of-line helpers) stay calls. A function whose
every call was inlined is removed from the module here.

Callees are inlined bottom-up (a callee's own calls first), so each function's body is
copied once per call site. A kernel whose inlining would exceed MAX_INLINED_OPS ops (a
chain of functions each calling the next twice doubles per level: 18 levels are 2^18
copies) is refused before any pass runs: the driver reports it as error E0502 with the
call chain (`too_large`), and this pass refuses it too."""

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
    inlined: set = set()
    changed = {f for f in _bottom_up(module) if rewrite(f.body, lambda op: _visit(op, functions, inlined))}
    if inlined:
        # A function every call of which was inlined is dead: dropped now rather than carried
        # through every pass until dce (a third of RoPE's IR until then).
        called = {op.attrs["callee"] for f in module.functions for op in f.walk() if op.name == "func.call"}
        module.functions = [f for f in module.functions if f.name not in inlined or f.name in called]
        changed &= set(module.functions)
        return changed or True
    return changed


def _inlinable(op: Op, functions: dict) -> Function | None:
    if op.name != "func.call":
        return None
    callee = functions.get(op.attrs.get("callee"))
    if callee is None or callee.attrs.get("noinline"):
        return None
    return callee


def _visit(op: Op, functions: dict, inlined: set):
    callee = _inlinable(op, functions)
    if callee is None:
        return None
    inlined.add(callee.name)
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


def too_large(module: Module) -> list:
    """Kernels whose inlined size would exceed MAX_INLINED_OPS: (kernel, size, chain),
    the chain being the heaviest path of calls as (caller, callee, calls, callee's size)."""
    functions = {f.name: f for f in module.functions}
    sizes = inlined_sizes(module)
    out = []
    for k in module.kernels:
        if sizes[k.name] <= MAX_INLINED_OPS:
            continue
        chain, f, seen = [], k, set()
        while f is not None and f.name not in seen:
            seen.add(f.name)
            counts: dict = {}
            for op in f.walk():
                callee = _inlinable(op, functions)
                if callee is not None:
                    counts[callee.name] = counts.get(callee.name, 0) + 1
            if not counts:
                break
            heaviest = max(counts, key=lambda c: counts[c] * sizes[c])
            chain.append((f, functions[heaviest], counts[heaviest], sizes[heaviest]))
            f = functions[heaviest]
        out.append((k, sizes[k.name], chain))
    return out


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
