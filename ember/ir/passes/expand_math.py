"""expand-math: replace each op that declares `expanded_by="expand-math"` (the accurate
math functions: `math.sin`, `math.exp2`, ...) by Ember's implementation of it
(ember.ir.mathlib), inline, in plain IR ops. Runs in every pipeline, since the NVPTX back
end has no accurate versions of these functions.

What it copies in is mathlib's expansion (and out-of-line helper) folded, merged and swept
once per process: the expansions are written plainly (`0 + x`, repeated shifts), and this
pass runs after the pipeline's own canonicalize and cse, so each copy would otherwise carry
that to the lowering and LLVM (the f64 Payne-Hanek helper: 301 ops as written, 207 here).
The passes are exact: the bits are those of the expansion as written, which the simulator
and the constant folder run.

The f64 expansions of the long functions (mathlib.out_of_line) become a call of a library
function instead (`__ember_sincos_f64`), added to the module once, like the helpers the
expansions call: functions marked `library`, which the lowering does not compile with the
module but links in compiled once per process and target (ember.lowering.library)."""

from __future__ import annotations

from functools import cache

from ..core import Function, Module, Op, clone_function, clone_op
from ..ops import OPS
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


_canonical: dict[str, Function] = {}     # library function name -> the canonical object


def is_library_function(f: Function) -> bool:
    """Whether f is the canonical library function of its name (never changed: verified once)."""
    return _canonical.get(f.name) is f


def library_function(name: str) -> Function | None:
    """The library function `name` (an out-of-line expansion or a helper), simplified; None:
    no such function. Modules hold this object itself (run_passes keeps it from the passes);
    the lowering compiles it, whatever a module holds under the name."""
    f = _canonical.get(name)
    if f is None:
        f = _make_library_function(name)
        if f is not None:
            f = _canonical.setdefault(name, f)
    return f


def _make_library_function(name: str) -> Function | None:
    from .. import mathlib
    from ..types import FLOAT_TYPES
    for op_name in sorted(mathlib.OUT_OF_LINE):
        for t in FLOAT_TYPES:
            if mathlib.out_of_line(op_name, t) and mathlib.function_name(op_name, t) == name:
                f = clone_function(template(op_name, t), name)
                f.attrs.update(noinline=True, library=True)
                return f
    return helper(name)


def _visit(op: Op):
    if op.opdef.expanded_by != "expand-math":
        return None
    from .. import mathlib
    t = op.operands[0].type
    if mathlib.out_of_line(op.name, t):
        call = Op(OPS["func.call"], op.operands, [r.type for r in op.results],
                  {"callee": mathlib.function_name(op.name, t)}, loc=op.loc)
        return [call], call.results
    # Each (op, type) is built and simplified once per process and copied here: copying is
    # cheaper than building it again.
    f = template(op.name, t)
    values = {f.body.args[0]: op.operands[0]}
    copies = [clone_op(inner, values, op.loc) for inner in f.body.ops[:-1]]
    return copies, [values.get(v, v) for v in f.body.ops[-1].operands]


@register("expand-math", "Replace accurate math ops by Ember's own implementations (needed by lowering).")
def expand_math(module: Module) -> set:
    from .. import mathlib
    changed = {f for f in module.functions if rewrite(f.body, _visit)}
    if not changed:
        return changed
    # the library functions called, and those they call: the canonical objects themselves,
    # which run_passes keeps from every pass (copying them cost 10% of a RoPE compile)
    pending = list(module.functions)
    while pending:
        called = {op.attrs["callee"] for f in pending for op in f.walk() if op.name == "func.call"}
        pending = []
        for name in sorted(c for c in called if module.get(c) is None):
            f = library_function(name)
            if f is not None:
                module.functions.append(f)
                changed.add(f)
                pending.append(f)
    used = {op.attrs["name"] for f in module.functions for op in f.walk() if op.name == "mem.global"}
    for name, g in mathlib.globals_needed().items():
        if name in used and module.get_global(name) is None:
            module.globals.append(g)
    return changed
