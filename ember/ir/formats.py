"""Op text forms. Each op in the table names one of these families; the same object both
prints and parses the op, so the two cannot drift apart.

`print(p, op)` returns the text after `%results = name`, as a list of pieces: strings,
and regions, which the printer lays out as `{`, the region's ops one level deeper, `}`
(iteratively: nesting depth costs no recursion). `parse(ps, opdef, nresults, loc)`
returns the op; a format with regions is a generator that yields `ps.region(...)` for
each region and receives it (run by `ember.trampoline`).

    %r = arith.add %a, %b : u32                   Operands
    %c = arith.cmp lt %a, %b : u32                Keyword("pred", types_of="operands")
    %t = gpu.thread_idx x : u32                   Keyword("dim")
    %f = arith.cast %a : u32 to f32               Cast
    %k = arith.const 1.5 : f32                    Const
    %v = mem.load %p[%i] : f32                    Load
    mem.store %v, %p[%i] : f32                    Store
    %r = func.call @f(%a, %b) : f32               Call
    %r = scf.if %c -> (f32) {...} else {...}      If
    %r = scf.for %i = %lo to %hi step %s iter_args(%a = %x) -> (f32) {...}   For
    %r = scf.while iter_args(%a = %x) -> (f32) {...} do (%b: f32) {...}       While
"""

from __future__ import annotations

from .. import floats
from .core import Op, Region
from .types import ScalarType, Type


def format_scalar(value, t: Type) -> str:
    """An int, a bool, or a float given as its bit pattern."""
    if isinstance(t, ScalarType):
        if t.is_float:
            return floats.format_bits(value, t.name)
        if t.is_bool:
            return "true" if value else "false"
    return str(value)


def parse_scalar(text: str, t: Type):
    if isinstance(t, ScalarType):
        if t.is_float:
            return floats.parse_bits(text, t.name)
        if t.is_bool:
            if text not in ("true", "false"):
                raise ValueError(f"expected true or false, found {text}")
            return text == "true"
    return int(text, 0)


def _infer(opdef, operands, attrs, ps) -> list:
    types = opdef.infer_types([v.type for v in operands], attrs)
    if types is None:
        ps.error(f"`{opdef.name}`: the result types cannot be inferred from these operands")
    return types


class Operands:
    """`%a, %b {attrs} : T, U` - the types of the results, or of the operands."""

    def __init__(self, types_of: str = "results"):
        self.types_of = types_of

    def print(self, p, op: Op) -> list:
        s = p.vs(op.operands) + p.attr_dict(op)
        types = op.results if self.types_of == "results" else op.operands
        if types:
            s += " : " + p.ts(v.type for v in types)
        return [s.strip()]

    def parse(self, ps, opdef, nresults, loc) -> Op:
        operands = ps.values()
        attrs = ps.optional_attr_dict()
        types = ps.types() if ps.accept(":") else []
        if self.types_of == "results":
            result_types = types
        else:
            if [v.type for v in operands] != types:
                ps.error(f"`{opdef.name}`: the listed types do not match the operands")
            result_types = _infer(opdef, operands, attrs, ps) if opdef.results else []
        return Op(opdef, operands, result_types, attrs, loc=loc)


class Keyword:
    """`WORD %a, ... : T` - one bare-word attribute right after the op name."""

    def __init__(self, attr: str, types_of: str = "results"):
        self.attr = attr
        self.types_of = types_of

    def print(self, p, op: Op) -> list:
        s = str(op.attrs[self.attr])
        if op.operands:
            s += " " + p.vs(op.operands)
        s += p.attr_dict(op, skip=(self.attr,))
        types = op.results if self.types_of == "results" else op.operands[:1]
        if types:
            s += " : " + p.ts(v.type for v in types)
        return [s]

    def parse(self, ps, opdef, nresults, loc) -> Op:
        attrs = {self.attr: ps.word()}
        operands = ps.values()
        attrs.update(ps.optional_attr_dict())
        types = ps.types() if ps.accept(":") else []
        if self.types_of == "results":
            result_types = types
        else:
            if operands and types and types[0] != operands[0].type:
                ps.error(f"`{opdef.name}`: the listed type does not match the operands")
            result_types = _infer(opdef, operands, attrs, ps)
        return Op(opdef, operands, result_types, attrs, loc=loc)


class Cast:
    """`%a : S to T`."""

    def print(self, p, op: Op) -> list:
        return [f"{p.v(op.operands[0])}{p.attr_dict(op)} : {op.operands[0].type} to {op.results[0].type}"]

    def parse(self, ps, opdef, nresults, loc) -> Op:
        x = ps.value()
        attrs = ps.optional_attr_dict()
        ps.expect(":")
        src = ps.type()
        if src != x.type:
            ps.error(f"`{opdef.name}`: operand has type {x.type}, not {src}")
        ps.expect("to")
        return Op(opdef, [x], [ps.type()], attrs, loc=loc)


class Const:
    """`VALUE : T` (floats as shortest exact decimal, NaNs as raw hex bits)."""

    def print(self, p, op: Op) -> list:
        t = op.results[0].type
        return [f"{format_scalar(op.attrs['value'], t)} : {t}"]

    def parse(self, ps, opdef, nresults, loc) -> Op:
        text = ps.number_text()
        ps.expect(":")
        t = ps.type()
        try:
            value = parse_scalar(text, t)
        except (ValueError, ZeroDivisionError):
            ps.error(f"`{text}` is not a valid {t} constant")
        return Op(opdef, [], [t], {"value": value}, loc=loc)


class Load:
    """`%p[%i] {attrs} : T`."""

    def print(self, p, op: Op) -> list:
        ptr, idx = op.operands
        return [f"{p.v(ptr)}[{p.v(idx)}]{p.attr_dict(op)} : {op.results[0].type}"]

    def parse(self, ps, opdef, nresults, loc) -> Op:
        ptr = ps.value()
        ps.expect("[")
        idx = ps.value()
        ps.expect("]")
        attrs = ps.optional_attr_dict()
        ps.expect(":")
        return Op(opdef, [ptr, idx], [ps.type()], attrs, loc=loc)


class Store:
    """`%v, %p[%i] {attrs} : T` (T is the stored value's type)."""

    def print(self, p, op: Op) -> list:
        val, ptr, idx = op.operands
        return [f"{p.v(val)}, {p.v(ptr)}[{p.v(idx)}]{p.attr_dict(op)} : {val.type}"]

    def parse(self, ps, opdef, nresults, loc) -> Op:
        val = ps.value()
        ps.expect(",")
        ptr = ps.value()
        ps.expect("[")
        idx = ps.value()
        ps.expect("]")
        attrs = ps.optional_attr_dict()
        ps.expect(":")
        t = ps.type()
        if t != val.type:
            ps.error(f"`{opdef.name}`: stored value has type {val.type}, not {t}")
        return Op(opdef, [val, ptr, idx], [], attrs, loc=loc)


class Atomic:
    """`WORD %p[%i], %v... {attrs} : T` (atomics: the operation, the address, the operands,
    and the order and scope when not the defaults; T is the result's type, or the last
    operand's for an op without a result, the atomic store)."""

    def __init__(self, keyword: str | None, nvalues: int):
        self.keyword = keyword
        self.nvalues = nvalues

    def print(self, p, op: Op) -> list:
        ptr, idx, *vals = op.operands
        head = f"{op.attrs[self.keyword]} " if self.keyword else ""
        rest = p.attr_dict(op, skip=(self.keyword,))
        t = op.results[0].type if op.results else vals[-1].type
        return [f"{head}{p.v(ptr)}[{p.v(idx)}], {p.vs(vals)}{rest} : {t}"]

    def parse(self, ps, opdef, nresults, loc) -> Op:
        attrs = {self.keyword: ps.word()} if self.keyword else {}
        ptr = ps.value()
        ps.expect("[")
        idx = ps.value()
        ps.expect("]")
        vals = []
        for _ in range(self.nvalues):
            ps.expect(",")
            vals.append(ps.value())
        attrs.update(ps.optional_attr_dict())
        ps.expect(":")
        t = ps.type()
        if not opdef.results and t != vals[-1].type:
            ps.error(f"`{opdef.name}`: stored value has type {vals[-1].type}, not {t}")
        return Op(opdef, [ptr, idx] + vals, [t] if opdef.results else [], attrs, loc=loc)


class Symbol:
    """`@name : T` (the address of a module-level global)."""

    def print(self, p, op: Op) -> list:
        return [f"@{op.attrs['name']} : {op.results[0].type}"]

    def parse(self, ps, opdef, nresults, loc) -> Op:
        name = ps.symbol()
        ps.expect(":")
        return Op(opdef, [], [ps.type()], {"name": name}, loc=loc)


class Call:
    """`@f(%a, %b) : T, U`."""

    def print(self, p, op: Op) -> list:
        s = f"@{op.attrs['callee']}({p.vs(op.operands)})"
        if op.results:
            s += " : " + p.ts(v.type for v in op.results)
        return [s]

    def parse(self, ps, opdef, nresults, loc) -> Op:
        callee = ps.symbol()
        ps.expect("(")
        args = ps.values()
        ps.expect(")")
        types = ps.types() if ps.accept(":") else []
        return Op(opdef, args, types, {"callee": callee}, loc=loc)


def _is_trivial(region: Region) -> bool:
    """An else region holding only an empty `scf.yield`."""
    return len(region.ops) == 1 and region.ops[0].name == "scf.yield" and not region.ops[0].operands


class If:
    def print(self, p, op: Op) -> list:
        s = p.v(op.operands[0])
        if op.results:
            s += " -> (" + p.ts(v.type for v in op.results) + ")"
        pieces = [s + " ", op.regions[0]]
        if op.results or not _is_trivial(op.regions[1]):
            pieces += [" else ", op.regions[1]]
        return pieces

    def parse(self, ps, opdef, nresults, loc):
        cond = ps.value()
        types = []
        if ps.accept("->"):
            types = ps.paren_types()
        then = yield ps.region([])
        if ps.accept("else"):
            els = yield ps.region([])
        else:
            els = Region()
            els.append(Op(ps.ops["scf.yield"], [], [], loc=loc))
        return Op(opdef, [cond], types, {}, regions=[then, els], loc=loc)


def _iter_args_text(p, region_args, inits) -> str:
    return "iter_args(" + ", ".join(f"{p.v(a)} = {p.v(x)}" for a, x in zip(region_args, inits)) + ")"


def _parse_iter_args(ps):
    toks, inits = [], []
    if ps.accept("iter_args"):
        ps.expect("(")
        while True:
            tok = ps.tok
            if tok.kind != "value":
                ps.error("expected `%name = %init`")
            ps.i += 1
            ps.expect("=")
            toks.append(tok)
            inits.append(ps.value())
            if not ps.accept(","):
                break
        ps.expect(")")
    return toks, inits


class For:
    def print(self, p, op: Op) -> list:
        lo, hi, step, *inits = op.operands
        body = op.regions[0]
        s = f"{p.v(body.args[0])} = {p.v(lo)} to {p.v(hi)} step {p.v(step)}"
        if inits:
            s += " " + _iter_args_text(p, body.args[1:], inits)
            s += " -> (" + p.ts(v.type for v in op.results) + ")"
        s += p.attr_dict(op)
        return [s + " ", body]

    def parse(self, ps, opdef, nresults, loc):
        iv = ps.tok
        if iv.kind != "value":
            ps.error("expected the induction variable (`%i = ...`)")
        ps.i += 1
        ps.expect("=")
        lo = ps.value()
        ps.expect("to")
        hi = ps.value()
        ps.expect("step")
        step = ps.value()
        toks, inits = _parse_iter_args(ps)
        types = [v.type for v in inits]
        if inits:
            ps.expect("->")
            declared = ps.paren_types()
            if declared != types:
                ps.error("`scf.for` result types do not match its iter_args")
        attrs = ps.optional_attr_dict()
        body = yield ps.region([(iv, lo.type)] + list(zip(toks, types)))
        return Op(opdef, [lo, hi, step] + inits, types, attrs, regions=[body], loc=loc)


class While:
    def print(self, p, op: Op) -> list:
        before, after = op.regions
        s = ""
        if op.operands:
            s = _iter_args_text(p, before.args, op.operands)
            s += " -> (" + p.ts(v.type for v in op.results) + ") "
        pieces = [s, before, " do "]
        if after.args:
            pieces[-1] += "(" + ", ".join(f"{p.v(a)}: {a.type}" for a in after.args) + ") "
        return pieces + [after]

    def parse(self, ps, opdef, nresults, loc):
        toks, inits = _parse_iter_args(ps)
        types = [v.type for v in inits]
        if inits:
            ps.expect("->")
            if ps.paren_types() != types:
                ps.error("`scf.while` result types do not match its iter_args")
        before = yield ps.region(list(zip(toks, types)))
        ps.expect("do")
        after_args = []
        if ps.accept("("):
            while not ps.peek(")"):
                tok = ps.tok
                ps.i += 1
                ps.expect(":")
                after_args.append((tok, ps.type()))
                if not ps.accept(","):
                    break
            ps.expect(")")
        after = yield ps.region(after_args)
        return Op(opdef, inits, types, {}, regions=[before, after], loc=loc)
