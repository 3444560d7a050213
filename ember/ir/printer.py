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
    def region_body(self, region: Region, indent: int, skip_empty_yield: bool = False) -> list[str]:
        lines: list[str] = []
        ops = region.ops
        if skip_empty_yield and ops and ops[-1].name == "scf.yield" and not ops[-1].operands:
            ops = ops[:-1]
        for op in ops:
            lines.extend(self.op_lines(op, indent))
        return lines

    def op_lines(self, op: Op, indent: int) -> list[str]:
        pad = "  " * indent
        head = f"{self.vs(op.results)} = " if op.results else ""  # results are named first
        text = op.opdef.format.print(self, op, indent)
        name = "return" if op.name == "func.return" else op.name
        first, *rest = text.split("\n")
        return [f"{pad}{head}{name}{(' ' + first) if first else ''}"] + rest

    def function(self, f: Function) -> list[str]:
        self.names, self.used, self.counter = {}, set(), 0
        params = ", ".join(f"{self.v(a)}: {a.type}" for a in f.args)
        sig = f"{f.kind} @{f.name}({params})"
        if f.result_types:
            sig += " -> " + (str(f.result_types[0]) if len(f.result_types) == 1
                             else "(" + self.ts(f.result_types) + ")")
        if f.attrs:
            sig += " attributes {" + ", ".join(f"{k} = {format_attr(v)}" for k, v in f.attrs.items()) + "}"
        return [sig + " {"] + self.region_body(f.body, 1) + ["}"]


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
