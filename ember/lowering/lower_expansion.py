"""Lowering of the accurate math ops (`expanded_by="expand-math"`: math.sin, math.exp2, ...):
each becomes Ember's implementation of it - the template that the expand-math pass would
copy into the IR (ember.ir.passes.expand_math.template), lowered in the op's place. The
default pipelines leave these ops to the lowering: copying each template into the IR and
verifying the copies was a fifth of a RoPE compile and changed nothing (the pass runs last;
every kernel's and fuzz program's PTX is the same bytes either way).

A template is lowered once per process, op, type and target, and recorded as text with
fields for what differs between its uses - its operand, the values it defines (numbered on
from the function's count, as lowering them there would) and the blocks it adds (made by
`FunctionLowering.block`, so named the same). Replaying the record writes the lines that
lowering the template in place writes: tests/lowering/test_lower_expansion.py compares the
two for every op and type. A template whose lowering touches anything else of the module
(metadata, globals, allocas) is not recorded: it is lowered in place every time."""

from __future__ import annotations

import re
import threading

from . import llvm_ir as ll
from .registry import lowers
from ..records import record
from ..trampoline import run


def _expanded_ops() -> list:
    from ..ir.ops import OPS
    return sorted(n for n, d in OPS.items() if d.expanded_by == "expand-math")


@record(frozen=True)
class Recording:
    intrinsics: tuple      # the (name, overload, arg types, return type) it asks for, in order
    blocks: tuple          # the name of each block it adds, in order of creation
    lines: tuple           # per block (first: the one it starts in) its lines, as one format string
    values: int            # how many values it names
    results: tuple         # (LLVM type, format string of the reference) per result
    end: int               # the block it ends in (an index into the current one + `blocks`)


_lock = threading.Lock()
_recordings: dict = {}     # (op name, type, arch, PTX version) -> Recording, or None: not recordable


@lowers(*_expanded_ops())
def _expansion(L, op, args):
    t = op.operands[0].type
    key = (op.name, t, L.L.target.arch, L.L.target.ptx)
    with _lock:
        rec = _recordings.get(key, False)
    if rec is False:
        rec = record_expansion(op.name, t, L.L)
        with _lock:
            rec = _recordings.setdefault(key, rec)
    if rec is None or L.b._at is not None:
        return lower_in_place(L, op.name, t, args)
    return replay(L, rec, args)


def lower_in_place(L, name: str, t, args) -> list:
    """Lower the template of op `name` on type `t` at the builder's position."""
    from ..ir.passes.expand_math import template
    f = template(name, t)
    L.bind_args(f.body, args)
    return run(L.region(f.body))


def replay(L, rec: Recording, args) -> list:
    """Write a recorded expansion at the end of the builder's block."""
    for request in rec.intrinsics:
        L.L.intrinsic(*request)
    start = L.b.block
    blocks = [start] + [L.block(name) for name in rec.blocks]
    fn = start.function
    base = fn._values
    fn._values += rec.values
    fields = ([a.ref for a in args] + [f'%".{base + i}"' for i in range(1, rec.values + 1)]
              + [b.label for b in blocks])
    for b, text in zip(blocks, rec.lines):
        if text:
            b.lines.extend(text.format(*fields).split("\n"))
    L.b.position_at_end(blocks[rec.end])
    return [ll.Value(t, ref.format(*fields)) for t, ref in rec.results]


_REF = re.compile(r'%"(\.\d+|[^"]*)"')


def record_expansion(name: str, t, module_lowering) -> Recording | None:
    """Lower the template in a scratch function of a scratch module like `module_lowering`'s
    and turn its text into a Recording (None: it touched more than its own lines)."""
    from ..ir.passes.expand_math import library_needed_by, template
    from .llvm_lower import FunctionLowering, ModuleLowering, lltype
    f = template(name, t)
    ml = ModuleLowering(None, module_lowering.target, module_lowering.ll.data_layout)
    for lib in library_needed_by([f]):
        ml.declare(lib)
    asked = []
    plain_intrinsic = ml.intrinsic

    def intrinsic(iname, overload, arg_types, ret=None):
        asked.append((iname, tuple(overload), tuple(arg_types), ret))
        return plain_intrinsic(iname, overload, arg_types, ret)
    ml.intrinsic = intrinsic
    fnty = ll.FunctionType(ll.VoidType(), [lltype(a.type) for a in f.body.args])
    llf = ll.Function(ml.ll, fnty, "ember.expansion")
    fl = FunctionLowering(ml, f, llf)
    made = []
    plain_block = fl.block

    def block(bname):
        made.append(bname)
        return plain_block(bname)
    fl.block = block
    fl.b = ll.IRBuilder(llf.append_basic_block("entry"))
    results = lower_in_place(fl, name, t, llf.args)
    if ml.ll._metadata or ml.globals or any(not isinstance(x, str) and not isinstance(x, ll.Phi)
                                            for b in llf.blocks for x in b.lines):
        return None
    nargs = len(llf.args)
    values = llf._values - nargs
    labels = {b.label: nargs + values + i for i, b in enumerate(llf.blocks)}

    def field(m) -> str:
        ref = m.group(0)
        if ref in labels:
            return "{%d}" % labels[ref]
        body = m.group(1)
        if body.startswith(".") and body[1:].isdigit():
            return "{%d}" % (int(body[1:]) - 1)       # %".1".. are the arguments, then the values
        raise LookupError(ref)

    def fmt(text: str) -> str:
        return _REF.sub(field, text.replace("{", "{{").replace("}", "}}"))
    try:
        lines = tuple(fmt("\n".join(str(x) for x in b.lines)) for b in llf.blocks)
        refs = tuple((r.type, fmt(r.ref)) for r in results)
    except LookupError:     # a name that is neither one of its values nor one of its blocks
        return None
    end = llf.blocks.index(fl.b.block)
    return Recording(tuple(asked), tuple(made), lines, values, refs, end)
