"""IR -> text. The text form round-trips exactly through `ember.ir.parser`.

Values print as `%name` when they carry a name hint (the source variable), deduplicated
with a `.N` suffix, and as `%N` otherwise, numbered in program order; so printing,
parsing and printing again gives the same bytes. Each op's text after `%results = name`
comes from its format family in the op table.
"""

from __future__ import annotations

from .core import Function, Global, Module, Op, Region, Value
from .types import Type


class Printer:
    def __init__(self) -> None:
        self.names: dict[Value, str] = {}
        self.used: set[str] = set()
        self.counter = 0

    # -- names
    def v(self, value: Value) -> str:
        name = self.names.get(value)
        if name is None:
            name = self._fresh(value.name)
            self.names[value] = name
        return "%" + name

    def _fresh(self, hint: str | None) -> str:
        if hint:
            name, n = hint, 0
            while name in self.used:
                n += 1
                name = f"{hint}.{n}"
        else:
            name = str(self.counter)
            self.counter += 1
            while name in self.used:
                name = str(self.counter)
                self.counter += 1
        self.used.add(name)
        return name

    def vs(self, values) -> str:
        return ", ".join(self.v(x) for x in values)

    @staticmethod
    def t(type: Type) -> str:
        return str(type)

    @staticmethod
    def ts(types) -> str:
        return ", ".join(str(t) for t in types)

    def attr_dict(self, op: Op, skip: tuple = ()) -> str:
        items = [(k, v) for k, v in op.attrs.items() if k not in skip]
        if not items:
            return ""
        return " {" + ", ".join(f"{k} = {format_attr(v)}" for k, v in items) + "}"

    # -- structure
    def region_lines(self, region: Region, indent: int, skip_empty_yield: bool = False) -> list[str]:
        """The lines of a region's ops at `indent`, iteratively: a region op's text is its
        format's pieces, where each region piece opens with `{`, lists the region's ops one
        level deeper and closes with `}` (an empty trailing `scf.yield` is implicit)."""
        lines: list[str] = []
        stack = [_RegionFrame(self._ops(region, skip_empty_yield), indent)]
        while stack:
            frame = stack[-1]
            if isinstance(frame, _RegionFrame):
                op = next(frame.ops, None)
                if op is None:
                    stack.pop()
                    continue
                pad = "  " * frame.indent
                head = f"{self.vs(op.results)} = " if op.results else ""   # results are named first
                pieces = op.opdef.format.print(self, op)
                name = "return" if op.name == "func.return" else op.name
                first = pieces[0] + ("{" if len(pieces) > 1 else "")
                stack.append(_OpFrame(pieces, f"{pad}{head}{name}{(' ' + pieces[0]) if first else ''}", frame.indent))
                continue
            # an op: its text pieces after the first, each region written out in turn
            if frame.i == len(frame.pieces):
                lines.append(frame.cur)
                stack.pop()
                continue
            piece = frame.pieces[frame.i]
            frame.i += 1
            if isinstance(piece, Region):
                lines.append(frame.cur + "{")
                frame.cur = "  " * frame.indent + "}"
                stack.append(_RegionFrame(self._ops(piece, True), frame.indent + 1))
            else:
                frame.cur += piece
        return lines

    @staticmethod
    def _ops(region: Region, skip_empty_yield: bool):
        ops = region.ops
        if skip_empty_yield and ops and ops[-1].name == "scf.yield" and not ops[-1].operands:
            ops = ops[:-1]
        return iter(ops)

    def op_lines(self, op: Op, indent: int) -> list[str]:
        holder = Region()
        holder.ops = [op]
        return self.region_lines(holder, indent)

    def function(self, f: Function) -> list[str]:
        self.names, self.used, self.counter = {}, set(), 0
        params = ", ".join(f"{self.v(a)}: {a.type}" for a in f.args)
        sig = f"{f.kind} @{f.name}({params})"
        if f.result_types:
            sig += " -> " + (str(f.result_types[0]) if len(f.result_types) == 1
                             else "(" + self.ts(f.result_types) + ")")
        if f.attrs:
            sig += " attributes {" + ", ".join(f"{k} = {format_attr(v)}" for k, v in f.attrs.items()) + "}"
        return [sig + " {"] + self.region_lines(f.body, 1) + ["}"]


class _RegionFrame:
    __slots__ = ("ops", "indent")

    def __init__(self, ops, indent):
        self.ops, self.indent = ops, indent


class _OpFrame:
    __slots__ = ("pieces", "i", "cur", "indent")

    def __init__(self, pieces, cur, indent):
        self.pieces, self.i, self.cur, self.indent = pieces, 1, cur, indent


def format_attr(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(format_attr(x) for x in v) + "]"
    if isinstance(v, str):
        return v if v.replace("_", "").isalnum() else '"' + v.replace('"', '\\"') + '"'
    raise TypeError(f"cannot print attribute {v!r}")


def print_global(g: Global) -> str:
    from .formats import format_scalar
    vals = ", ".join(format_scalar(x, g.elem) for x in g.values)
    return f"global @{g.name} : [{g.elem}; {len(g.values)}] = [{vals}]"


def print_module(m: Module) -> str:
    out: list[str] = []
    for g in m.globals:
        out.append(print_global(g))
    if m.globals:
        out.append("")
    for i, f in enumerate(m.functions):
        if i:
            out.append("")
        out.extend(Printer().function(f))
    return "\n".join(out) + "\n"


def print_function(f: Function) -> str:
    return "\n".join(Printer().function(f)) + "\n"


def print_op(op: Op) -> str:
    return "\n".join(Printer().op_lines(op, 0))
