"""expand-math: replace each op that declares `expanded_by="expand-math"` (the accurate
math functions: `math.sin`, `math.exp2`, ...) by Ember's implementation of it
(ember.ir.mathlib), inline, in plain IR ops - the *template* of the op, which the lowering
also emits in place of each such op it meets (ember.lowering.lower_expansion). The -O
pipelines leave the ops to the lowering: nothing runs after this pass, so copying the
templates into the IR only cost time (a fifth of a RoPE compile) and gave the same PTX,
byte for byte. The pass is there to see, simulate and test the expansion in the IR
(`-p ...,expand-math`, the differential fuzzer).

A template is mathlib's expansion (and out-of-line helper) folded, merged and swept once
per process: the expansions are written plainly (`0 + x`, repeated shifts), and they go in
after the pipeline's own canonicalize and cse, so each copy would otherwise carry that to
the lowering and LLVM (the f64 Payne-Hanek helper: 301 ops as written, 207 here). The
passes are exact: the bits are those of the expansion as written, which the simulator and
the constant folder run.

The expansions go in inline: a call in their place (one shared copy, compiled once) made
rope.ember's compile 40% cheaper but the RoPE kernel 1.17x slower on an H100 (ptxas does not
overlap the pending loads with the call). Only the helpers they call - the Payne-Hanek
reductions, a rare path - are functions: *library functions*, which this pass adds to the
module (the canonical objects, which run_passes keeps from every pass), the lowering
declares for the templates it emits (library_needed), and the PTX gets linked in, compiled
once per process and target (ember.lowering.library)."""

from __future__ import annotations

from functools import cache

from .. import library
from ..core import Function, Module, Op, clone_function, clone_op
from ..rewrite import rewrite
from . import register


def _simplify(module: Module, functions: list) -> None:
    from ..verifier import verify_module
    from .canonicalize import canonicalize
    from .cse import cse
    from .dce import sweep
    part = Module(functions, module.globals)
    canonicalize(part)
    cse(part)
    for f in functions:
        sweep(f)
    verify_module(module)


@cache
def template(name: str, t) -> Function:
    """The expansion of op `name` on type t, simplified: a function of one argument whose
    ops (but its return) are copied in place of the op."""
    from .. import mathlib
    module, f = mathlib.expansion_module(name, t)
    copy = clone_function(f)
    _simplify(Module([copy] + module.functions[1:], module.globals), [copy])
    return copy


@cache
def helper(name: str) -> Function | None:
    """The out-of-line helper `name` the expansions call, simplified (None: not a helper)."""
    from .. import mathlib
    found = mathlib.support_functions([name])
    if found:
        _simplify(Module(found, list(mathlib.globals_needed().values())), found)
    return found[0] if found else None


def library_function(name: str) -> Function | None:
    """The library function `name` (a helper the expansions call), simplified; None:
    no such function. Modules hold this object itself (run_passes keeps it from the passes);
    the lowering compiles it, whatever a module holds under the name."""
    f = library.registered(name)
    if f is None:
        f = helper(name)
        if f is not None:
            f = library.register(f)
    return f


def _visit(op: Op):
    if op.opdef.expanded_by != "expand-math":
        return None
    t = op.operands[0].type
    # Each (op, type) is built and simplified once per process and copied here: copying is
    # cheaper than building it again.
    f = template(op.name, t)
    values = {f.body.args[0]: op.operands[0]}
    copies = [clone_op(inner, values, op.loc) for inner in f.body.ops[:-1]]
    return copies, [values.get(v, v) for v in f.body.ops[-1].operands]


@register("expand-math", "Replace accurate math ops by Ember's own implementations in the IR (as the lowering does).")
def expand_math(module: Module) -> set:
    from .. import mathlib
    changed = {f for f in module.functions if rewrite(f.body, _visit)}
    if not changed:
        return changed
    # the library functions called, and those they call: the canonical objects themselves,
    # which run_passes keeps from every pass (copying them cost 10% of a RoPE compile)
    for f in library_needed_by(module.functions):
        if module.get(f.name) is None:
            module.functions.append(f)
            changed.add(f)
    used = {op.attrs["name"] for f in module.functions for op in f.walk() if op.name == "mem.global"}
    for name, g in mathlib.globals_needed().items():
        if name in used and module.get_global(name) is None:
            module.globals.append(g)
    return changed


def library_needed(kinds) -> list:
    """The library functions that the expansions of accurate math ops of these kinds (op
    name, operand type) call, and those they call, by name."""
    return library_needed_by([template(n, t) for n, t in kinds])


def library_needed_by(functions: list) -> list:
    """The library functions that `functions` call, and those they call, by name."""
    found: dict = {}
    pending = list(functions)
    while pending:
        called = {op.attrs["callee"] for f in pending for op in f.walk() if op.name == "func.call"}
        pending = []
        for name in sorted(called - found.keys()):
            f = library_function(name)
            if f is not None:
                found[name] = f
                pending.append(f)
    return [found[n] for n in sorted(found)]
