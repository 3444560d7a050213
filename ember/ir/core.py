"""The IR's data structures: values, ops, regions, functions, modules.

Structured SSA in the style of MLIR's scf: an op has operands, typed results, attributes
and regions; a region is a single block with arguments whose last op is a terminator.
Loop-carried values are block arguments fed by `scf.yield` (no phis), and there are no
unstructured jumps until lowering builds a CFG.

Every value knows its users (`Value.uses`: op -> how many of its operands are the value),
kept up to date by `Op.operands`' setter and `Op.erase()`, so replacing a value
everywhere (`replace_all_uses_with`) costs its uses, not a sweep of the region. An op
counts as a user from its creation until it is erased; an op taken out of the IR must be
erased (the rewriter does it), and the verifier checks that the counts match the IR.

Walking and copying are iterative, so nesting depth costs heap, never Python recursion.
Each op's definition (operands, results, attributes, semantics, ...) is its `OpDef`
(`ember.ir.opdef`); ops are instances of the op's own subclass, which names its operands
(`load.ptr`, `loop.inits`).
"""

from __future__ import annotations

from typing import Any, Iterator

from ..records import field, record
from ..source import Span
from .types import Type


class Value:
    """An SSA value: the result of an op or an argument of a region."""

    __slots__ = ("type", "name", "owner", "index", "uses", "op")

    def __init__(self, type: Type, name: str | None = None, owner: Any = None, index: int = 0):
        self.type = type
        self.name = name      # a hint for the printer (usually the source variable's name)
        self.owner = owner    # the defining Op, or the Region for an argument
        self.index = index
        self.uses: dict = {}  # Op -> number of its operands that are this value
        self.op = owner if isinstance(owner, Op) else None   # the defining op (None: an argument)

    @property
    def users(self):
        return self.uses.keys()

    def replace_all_uses_with(self, new: "Value") -> None:
        if new is self:
            return
        for user in list(self.uses):
            user.replace_operand(self, new)

    def __repr__(self) -> str:
        return f"<Value {self.name or '?'}: {self.type}>"


def _result(type: Type, name: str | None, op: "Op", index: int) -> Value:
    """Result `index` of `op` (Value's constructor without its argument test: ops make
    most values)."""
    v = _new_value(Value)
    v.type = type
    v.name = name
    v.owner = op
    v.index = index
    v.uses = {}
    v.op = op
    return v


_new_value = object.__new__


def _add_uses(op: "Op", values) -> None:
    for v in values:
        uses = v.uses
        uses[op] = uses.get(op, 0) + 1


def _drop_uses(op: "Op", values) -> None:
    for v in values:
        uses = v.uses
        n = uses.get(op, 0) - 1
        if n > 0:
            uses[op] = n
        else:
            uses.pop(op, None)


class Op:
    """An operation. Instances are of the op's own subclass (`opdef.cls`), which adds
    accessors for its named operands, results and attributes.

    `operands` is a tuple read directly (every pass reads it in its inner loop); it is
    changed only through `set_operands`/`set_operand`/`replace_operand`, which keep the
    use lists right (the verifier catches a write behind their back)."""

    # `name` is a copy of opdef.name: read in every pass's inner loop, so not a property.
    __slots__ = ("opdef", "name", "operands", "results", "attrs", "regions", "loc", "parent", "erased",
                 "verified")

    def __init__(self, opdef, operands, result_types, attrs: dict | None = None,
                 regions: list["Region"] | None = None, loc: Span | None = None,
                 result_names: list | None = None):
        cls = opdef.cls
        if cls is not None and self.__class__ is not cls:
            self.__class__ = cls
        self.opdef = opdef
        self.name = opdef.name
        self.operands = operands = tuple(operands)
        for v in operands:
            uses = v.uses
            uses[self] = uses.get(self, 0) + 1
        if result_names:
            self.results = [_result(t, n, self, i) for i, (t, n) in enumerate(zip(result_types, result_names))]
        else:
            self.results = [_result(t, None, self, i) for i, t in enumerate(result_types)]
        self.attrs = attrs or {}
        self.regions = regions or []
        for r in self.regions:
            r.parent = self
        self.loc = loc
        self.parent: Region | None = None
        self.erased = False
        self.verified = None   # the operands the verifier last found this op right with

    # -- operands, with use tracking
    def set_operands(self, values) -> None:
        values = tuple(values)
        _drop_uses(self, self.operands)
        self.operands = values
        _add_uses(self, values)

    def set_operand(self, i: int, v: Value) -> None:
        ops = list(self.operands)
        ops[i] = v
        self.set_operands(ops)

    def replace_operand(self, old: Value, new: Value) -> None:
        """Every occurrence of `old` among the operands becomes `new`."""
        n = old.uses.pop(self, 0)
        if n:
            self.operands = tuple(new if v is old else v for v in self.operands)
            new.uses[self] = new.uses.get(self, 0) + n

    def erase(self) -> None:
        """Take this op (and everything nested in it) out of the IR's use lists. The
        caller removes it from its region's op list."""
        for op in self.walk():
            _drop_uses(op, op.operands)
            op.erased = True

    @property
    def result(self) -> Value:
        assert len(self.results) == 1, self.name
        return self.results[0]

    def walk(self) -> Iterator["Op"]:
        """This op and every op nested in its regions, in program order (pre-order)."""
        yield self
        if self.regions:
            yield from walk_regions(self.regions)

    def __repr__(self) -> str:
        return f"<Op {self.name}>"


def walk_regions(regions) -> Iterator[Op]:
    """Every op of `regions` and of the regions nested in them, pre-order, iteratively."""
    stack = [iter(r.ops) for r in reversed(regions)]
    while stack:
        op = next(stack[-1], None)
        if op is None:
            stack.pop()
            continue
        yield op
        if op.regions:
            stack.extend(iter(r.ops) for r in reversed(op.regions))


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

    def set_ops(self, ops: list[Op]) -> None:
        """Replace the op list (ops that leave it must have been erased or moved)."""
        for op in ops:
            op.parent = self
        self.ops = ops

    @property
    def terminator(self) -> Op | None:
        return self.ops[-1] if self.ops and self.ops[-1].opdef.terminator else None

    def walk(self) -> Iterator[Op]:
        return walk_regions((self,))


@record(eq=False)
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


@record(eq=False)
class Global:
    """A module-level constant table in the `const` address space."""

    name: str
    elem: Type
    values: list                   # ints, or float bit patterns
    loc: Span | None = None


@record(eq=False)
class Module:
    functions: list[Function] = field(default_factory=list)
    globals: list[Global] = field(default_factory=list)
    # Optimisation remarks, when asked for (`--remarks`): passes append (loc, message, help)
    # for what they could have done and did not, naming the fact that was missing.
    remarks: list | None = None

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


_KEEP = object()


def _copy_shallow(op: Op, mapping: dict, loc) -> Op:
    """`op` without its regions' ops (its regions are new and empty), operands mapped, and
    its results mapped to the copy's. Op's constructor, unrolled: copying is most of what
    inlining and unrolling do."""
    copy = _new_op(op.__class__)
    copy.opdef = op.opdef
    copy.name = op.name
    get = mapping.get
    copy.operands = operands = tuple([get(v, v) for v in op.operands])
    for v in operands:
        uses = v.uses
        uses[copy] = uses.get(copy, 0) + 1
    results = []
    for r in op.results:
        new = _result(r.type, r.name, copy, r.index)
        mapping[r] = new
        results.append(new)
    copy.results = results
    copy.attrs = dict(op.attrs)
    if op.regions:
        regions = []
        for r in op.regions:
            new_region = Region([a.type for a in r.args], [a.name for a in r.args])
            mapping.update(zip(r.args, new_region.args))
            new_region.parent = copy
            regions.append(new_region)
        copy.regions = regions
    else:
        copy.regions = []
    copy.loc = op.loc if loc is _KEEP else loc
    copy.parent = None
    copy.erased = False
    copy.verified = None
    return copy


_new_op = object.__new__


def clone_op(op: Op, mapping: dict[Value, Value], loc=_KEEP) -> Op:
    """A deep copy of `op`; `mapping` maps outside values to their replacements and
    receives the copies' new values (so uses inside refer to the copies). `loc`, if
    given, replaces the source location of every copied op."""
    root = _copy_shallow(op, mapping, loc)
    # Ops inside a region only use values defined before the region's op (copied already)
    # or earlier in the region, so regions may be filled in any order.
    stack = list(zip(op.regions, root.regions))
    while stack:
        src, dst = stack.pop()
        for inner in src.ops:
            copy = _copy_shallow(inner, mapping, loc)
            dst.append(copy)
            stack.extend(zip(inner.regions, copy.regions))
    return root


def clone_region(region: Region, mapping: dict[Value, Value], loc=_KEEP) -> Region:
    """A deep copy of `region` (see clone_op)."""
    new = Region([a.type for a in region.args], [a.name for a in region.args])
    mapping.update(zip(region.args, new.args))
    for op in region.ops:
        new.append(clone_op(op, mapping, loc))
    return new


def clone_function(f: Function, name: str | None = None) -> Function:
    return Function(name or f.name, f.kind, clone_region(f.body, {}), list(f.result_types), dict(f.attrs), f.loc)


def clone_module(m: Module) -> Module:
    """A deep copy of the functions (globals are immutable and shared)."""
    return Module([clone_function(f) for f in m.functions], list(m.globals))
