"""The IR's data structures: values, ops, regions, functions, modules.

Structured SSA in the style of MLIR's scf: an op has operands, typed results, attributes
and regions; a region is a single block with arguments whose last op is a terminator.
Loop-carried values are block arguments fed by `scf.yield` (no phis), and there are no
unstructured jumps until lowering builds a CFG.

Ops are described by an `OpDef` in the one op table (`ember.ir.ops`): everything that
knows about an op (verifier, printer, parser, folder, simulator, lowering) reads it there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from ..source import Span
from .types import Type


class Value:
    """An SSA value: the result of an op or an argument of a region."""

    __slots__ = ("type", "name", "owner", "index")

    def __init__(self, type: Type, name: str | None = None, owner: Any = None, index: int = 0):
        self.type = type
        self.name = name      # a hint for the printer (usually the source variable's name)
        self.owner = owner    # the defining Op, or the Region for an argument
        self.index = index

    @property
    def op(self) -> "Op | None":
        owner = self.owner
        return owner if owner.__class__ is Op else None

    def __repr__(self) -> str:
        return f"<Value {self.name or '?'}: {self.type}>"


@dataclass(eq=False)
class OpDef:
    """One entry of the op table."""

    name: str
    format: Any                               # printer/parser family (ember.ir.formats)
    verify: Callable[["Op"], str | None]      # returns an error message or None
    infer: Callable | None = None             # (operand types, attrs) -> result types
    eval: Callable | None = None              # numpy semantics: (op, *operand arrays) -> result arrays
    pure: bool = True                         # no side effects: may be removed when unused
    speculatable: bool = True                 # may run where the program would not (no faults)
    reads_memory: bool = False                # result depends on memory (loads)
    foldable: bool = True                     # `eval` gives the bits the GPU gives (fast math: no)
    convergent: bool = False                  # involves other threads: never moved across control flow
    terminator: bool = False
    num_regions: int = 0
    commutative: bool = False
    doc: str = ""


class Op:
    # `name` is a copy of opdef.name: read in every pass's inner loop, so not a property.
    __slots__ = ("opdef", "name", "operands", "results", "attrs", "regions", "loc", "parent")

    def __init__(self, opdef: OpDef, operands: list[Value], result_types: list[Type],
                 attrs: dict | None = None, regions: list["Region"] | None = None,
                 loc: Span | None = None, result_names: list | None = None):
        self.opdef = opdef
        self.name = opdef.name
        self.operands = list(operands)
        if result_names:
            self.results = [Value(t, n, self, i) for i, (t, n) in enumerate(zip(result_types, result_names))]
        else:
            self.results = [Value(t, None, self, i) for i, t in enumerate(result_types)]
        self.attrs = attrs or {}
        self.regions = regions or []
        for r in self.regions:
            r.parent = self
        self.loc = loc
        self.parent: Region | None = None

    @property
    def result(self) -> Value:
        assert len(self.results) == 1, self.name
        return self.results[0]

    def walk(self) -> Iterator["Op"]:
        """This op and every op nested in its regions, in program order (pre-order)."""
        yield self
        for r in self.regions:
            yield from r.walk()

    def __repr__(self) -> str:
        return f"<Op {self.name}>"


class Region:
    """A single block: arguments and a list of ops ending in a terminator."""

    __slots__ = ("args", "ops", "parent")

    def __init__(self, arg_types: list[Type] = (), arg_names: list | None = None):
        names = arg_names or [None] * len(arg_types)
        self.args = [Value(t, n, self, i) for i, (t, n) in enumerate(zip(arg_types, names))]
        self.ops: list[Op] = []
        self.parent: Op | Function | None = None

    def append(self, op: Op) -> Op:
        op.parent = self
        self.ops.append(op)
        return op

    @property
    def terminator(self) -> Op | None:
        return self.ops[-1] if self.ops and self.ops[-1].opdef.terminator else None

    def walk(self) -> Iterator[Op]:
        for op in self.ops:
            yield from op.walk()


@dataclass(eq=False)
class Function:
    """A kernel (entry point) or a device function (`func`)."""

    name: str
    kind: str                      # "kernel" | "func"
    body: Region
    result_types: list[Type] = field(default_factory=list)
    attrs: dict = field(default_factory=dict)
    loc: Span | None = None

    def __post_init__(self) -> None:
        self.body.parent = self

    @property
    def args(self) -> list[Value]:
        return self.body.args

    def walk(self) -> Iterator[Op]:
        return self.body.walk()


@dataclass(eq=False)
class Global:
    """A module-level constant table in the `const` address space."""

    name: str
    elem: Type
    values: list                   # ints, or float bit patterns
    loc: Span | None = None


@dataclass(eq=False)
class Module:
    functions: list[Function] = field(default_factory=list)
    globals: list[Global] = field(default_factory=list)

    def get(self, name: str) -> Function | None:
        for f in self.functions:
            if f.name == name:
                return f
        return None

    def get_global(self, name: str) -> Global | None:
        for g in self.globals:
            if g.name == name:
                return g
        return None

    @property
    def kernels(self) -> list[Function]:
        return [f for f in self.functions if f.kind == "kernel"]


def replace_uses(root: Region, mapping: dict[Value, Value]) -> None:
    """Rewrite every operand found in `mapping` (transitively) throughout `root`."""
    if not mapping:
        return

    def resolve(v: Value) -> Value:
        while v in mapping:
            v = mapping[v]
        return v

    for op in root.walk():
        ops = op.operands
        for i, v in enumerate(ops):
            if v in mapping:
                ops[i] = resolve(v)


def use_counts(root: Region) -> dict[Value, int]:
    counts: dict[Value, int] = {}
    for op in root.walk():
        for v in op.operands:
            counts[v] = counts.get(v, 0) + 1
    return counts


_KEEP = object()


def clone_region(region: Region, mapping: dict[Value, Value], loc=_KEEP) -> Region:
    """A deep copy of `region`; `mapping` maps outside values to their replacements and
    receives the copies' new values (so uses inside refer to the copies). `loc`, if
    given, replaces the source location of every copied op."""
    new = Region([a.type for a in region.args], [a.name for a in region.args])
    for old, copy in zip(region.args, new.args):
        mapping[old] = copy
    for op in region.ops:
        new.append(clone_op(op, mapping, loc))
    return new


def clone_op(op: Op, mapping: dict[Value, Value], loc=_KEEP) -> Op:
    regions = [clone_region(r, mapping, loc) for r in op.regions]
    new = Op(op.opdef, [mapping.get(v, v) for v in op.operands], [r.type for r in op.results],
             dict(op.attrs), regions, op.loc if loc is _KEEP else loc, [r.name for r in op.results])
    for old, copy in zip(op.results, new.results):
        mapping[old] = copy
    return new


def clone_function(f: Function, name: str | None = None) -> Function:
    return Function(name or f.name, f.kind, clone_region(f.body, {}), list(f.result_types), dict(f.attrs), f.loc)


def clone_module(m: Module) -> Module:
    """A deep copy of the functions (globals are immutable and shared)."""
    return Module([clone_function(f) for f in m.functions], list(m.globals))
