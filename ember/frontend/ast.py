"""The abstract syntax tree, as parsed: every node has a `span`. The type checker reads it
and produces the typed AST (`ember.frontend.typed`); it writes nothing here.

`children(n)` lists a node's child nodes and `walk(n)` visits a tree iteratively (a
program may nest as deep as it likes), for every traversal that needs no types."""

from __future__ import annotations

from fractions import Fraction

from ..records import field, record
from ..source import SourceFile, Span


@record(eq=False, slots=True)
class Node:
    span: Span


# ---------------------------------------------------------------- types (as written)

@record(eq=False, slots=True)
class TypeName(Node):
    name: str


@record(eq=False, slots=True)
class PtrTypeExpr(Node):
    mut: bool
    space: str
    space_span: Span
    pointee: Node


@record(eq=False, slots=True)
class ArrayTypeExpr(Node):
    elem: Node
    length: "Expr"


@record(eq=False, slots=True)
class TensorMapTypeExpr(Node):
    """`tensormap<T, [d0, d1]>` or `tensormap<T, [d0, d1], swizzle(N)>`."""
    elem: Node
    box: list
    swizzle: int | None = None
    swizzle_span: Span | None = None


@record(eq=False, slots=True)
class TupleTypeExpr(Node):
    elems: list


@record(eq=False, slots=True)
class FnTypeExpr(Node):
    """`fn(T, T) -> T`: a device function's parameter that takes a function (bound per
    call, at compile time: every call is inlined)."""
    params: list
    ret: Node | None


# ---------------------------------------------------------------- expressions

@record(eq=False, slots=True)
class Expr(Node):
    pass


@record(eq=False, slots=True)
class Name(Expr):
    id: str


@record(eq=False, slots=True)
class IntLit(Expr):
    value: int
    suffix: str | None


@record(eq=False, slots=True)
class FloatLit(Expr):
    value: Fraction
    suffix: str | None


@record(eq=False, slots=True)
class BoolLit(Expr):
    value: bool


@record(eq=False, slots=True)
class Binary(Expr):
    op: str
    op_span: Span
    lhs: Expr
    rhs: Expr


@record(eq=False, slots=True)
class Unary(Expr):
    op: str
    operand: Expr


@record(eq=False, slots=True)
class Call(Expr):
    name: str
    name_span: Span
    args: list


@record(eq=False, slots=True)
class Index(Expr):
    base: Expr
    index: Expr


@record(eq=False, slots=True)
class Field(Expr):
    base: Expr
    name: str
    name_span: Span


@record(eq=False, slots=True)
class TupleExpr(Expr):
    elems: list


@record(eq=False, slots=True)
class BitCast(Expr):
    type: Node
    value: Expr


# ---------------------------------------------------------------- statements

@record(eq=False, slots=True)
class Block(Node):
    stmts: list


@record(eq=False, slots=True)
class Let(Node):
    names: list          # [(name, span)]
    is_tuple: bool
    type: Node | None
    value: Expr


@record(eq=False, slots=True)
class Var(Node):
    name: str
    name_span: Span
    type: Node | None
    value: Expr | None       # None only for arrays (zero-initialized)


@record(eq=False, slots=True)
class SharedDecl(Node):
    name: str
    name_span: Span
    type: Node
    swizzle: int | None = None        # `swizzle(128)`: the tile's bytes lie in the hardware's XOR order
    swizzle_span: Span | None = None


@record(eq=False, slots=True)
class Assign(Node):
    target: Expr
    op: str              # "=" or the binary operator of a compound assignment ("+", "<<", ...)
    op_span: Span
    value: Expr


@record(eq=False, slots=True)
class If(Node):
    cond: Expr
    then: Block
    else_: Node | None   # Block, If or None


@record(eq=False, slots=True)
class For(Node):
    var: str
    var_span: Span
    start: Expr
    end: Expr
    step: Expr | None
    body: Block
    unroll: bool


@record(eq=False, slots=True)
class While(Node):
    cond: Expr
    body: Block


@record(eq=False, slots=True)
class Break(Node):
    pass


@record(eq=False, slots=True)
class Continue(Node):
    pass


@record(eq=False, slots=True)
class Return(Node):
    value: Expr | None


@record(eq=False, slots=True)
class ExprStmt(Node):
    expr: Expr


# ---------------------------------------------------------------- items

@record(eq=False, slots=True)
class GenericParam(Node):
    name: str
    name_span: Span
    type: Node
    default: Expr | None
    tune: list | None = None      # `tune [a, b, ...]`: the values a tuner may give it


@record(eq=False, slots=True)
class Param(Node):
    name: str
    name_span: Span
    type: Node
    align: int | None
    stream: Span | None = None     # `stream`: where it is written, or None


@record(eq=False, slots=True)
class KernelDef(Node):
    name: str
    name_span: Span
    generics: list
    params: list
    block: list | None   # block-size expressions, or None
    body: Block
    min_blocks: Node | None = None   # `min_blocks(N)`: blocks per SM to fit, or None
    cluster: list | None = None      # `cluster(x, y, z)`: cluster-size expressions, or None


@record(eq=False, slots=True)
class FnDef(Node):
    name: str
    name_span: Span
    generics: list
    params: list
    ret: Node | None
    body: Block


@record(eq=False, slots=True)
class Import(Node):
    """`import "path.ember";`: the device functions of another file."""

    path: str
    path_span: Span


@record(eq=False, slots=True)
class Module:
    file: SourceFile
    items: list
    broken_items: set = field(default_factory=set)  # names of items that failed to parse
    # every import statement met, in order: (index of the importing file, the path as
    # written, index of the file it reads) in the file list imports.resolve returns
    import_edges: list = field(default_factory=list)


def children(n) -> list:
    """The child nodes of `n`, in source order."""
    out = []
    for name in n._fields:
        v = getattr(n, name)
        if isinstance(v, Node):
            out.append(v)
        elif isinstance(v, list):
            out.extend(x for x in v if isinstance(x, Node))
    return out


def walk(n):
    """`n` and every node below it, pre-order, iteratively."""
    stack = [n]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(children(node)))
