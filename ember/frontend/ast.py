"""The abstract syntax tree, as parsed: every node has a `span`. The type checker reads it
and produces the typed AST (`ember.frontend.typed`); it writes nothing here.

`children(n)` lists a node's child nodes and `walk(n)` visits a tree iteratively (a
program may nest as deep as it likes), for every traversal that needs no types."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from ..source import SourceFile, Span


@dataclass(eq=False, slots=True)
class Node:
    span: Span


# ---------------------------------------------------------------- types (as written)

@dataclass(eq=False, slots=True)
class TypeName(Node):
    name: str


@dataclass(eq=False, slots=True)
class PtrTypeExpr(Node):
    mut: bool
    space: str
    space_span: Span
    pointee: Node


@dataclass(eq=False, slots=True)
class ArrayTypeExpr(Node):
    elem: Node
    length: "Expr"


@dataclass(eq=False, slots=True)
class TupleTypeExpr(Node):
    elems: list


# ---------------------------------------------------------------- expressions

@dataclass(eq=False, slots=True)
class Expr(Node):
    pass


@dataclass(eq=False, slots=True)
class Name(Expr):
    id: str


@dataclass(eq=False, slots=True)
class IntLit(Expr):
    value: int
    suffix: str | None


@dataclass(eq=False, slots=True)
class FloatLit(Expr):
    value: Fraction
    suffix: str | None


@dataclass(eq=False, slots=True)
class BoolLit(Expr):
    value: bool


@dataclass(eq=False, slots=True)
class Binary(Expr):
    op: str
    op_span: Span
    lhs: Expr
    rhs: Expr


@dataclass(eq=False, slots=True)
class Unary(Expr):
    op: str
    operand: Expr


@dataclass(eq=False, slots=True)
class Call(Expr):
    name: str
    name_span: Span
    args: list


@dataclass(eq=False, slots=True)
class Index(Expr):
    base: Expr
    index: Expr


@dataclass(eq=False, slots=True)
class Field(Expr):
    base: Expr
    name: str
    name_span: Span


@dataclass(eq=False, slots=True)
class TupleExpr(Expr):
    elems: list


@dataclass(eq=False, slots=True)
class BitCast(Expr):
    type: Node
    value: Expr


# ---------------------------------------------------------------- statements

@dataclass(eq=False, slots=True)
class Block(Node):
    stmts: list


@dataclass(eq=False, slots=True)
class Let(Node):
    names: list          # [(name, span)]
    is_tuple: bool
    type: Node | None
    value: Expr


@dataclass(eq=False, slots=True)
class Var(Node):
    name: str
    name_span: Span
    type: Node | None
    value: Expr | None       # None only for arrays (zero-initialized)


@dataclass(eq=False, slots=True)
class SharedDecl(Node):
    name: str
    name_span: Span
    type: Node


@dataclass(eq=False, slots=True)
class Assign(Node):
    target: Expr
    op: str              # "=" or the binary operator of a compound assignment ("+", "<<", ...)
    op_span: Span
    value: Expr


@dataclass(eq=False, slots=True)
class If(Node):
    cond: Expr
    then: Block
    else_: Node | None   # Block, If or None


@dataclass(eq=False, slots=True)
class For(Node):
    var: str
    var_span: Span
    start: Expr
    end: Expr
    step: Expr | None
    body: Block
    unroll: bool


@dataclass(eq=False, slots=True)
class While(Node):
    cond: Expr
    body: Block


@dataclass(eq=False, slots=True)
class Break(Node):
    pass


@dataclass(eq=False, slots=True)
class Continue(Node):
    pass


@dataclass(eq=False, slots=True)
class Return(Node):
    value: Expr | None


@dataclass(eq=False, slots=True)
class ExprStmt(Node):
    expr: Expr


# ---------------------------------------------------------------- items

@dataclass(eq=False, slots=True)
class GenericParam(Node):
    name: str
    name_span: Span
    type: Node
    default: Expr | None


@dataclass(eq=False, slots=True)
class Param(Node):
    name: str
    name_span: Span
    type: Node
    align: int | None


@dataclass(eq=False, slots=True)
class KernelDef(Node):
    name: str
    name_span: Span
    generics: list
    params: list
    block: list | None   # block-size expressions, or None
    body: Block
    min_blocks: Node | None = None   # `min_blocks(N)`: blocks per SM to fit, or None


@dataclass(eq=False, slots=True)
class FnDef(Node):
    name: str
    name_span: Span
    generics: list
    params: list
    ret: Node | None
    body: Block


@dataclass(eq=False, slots=True)
class Import(Node):
    """`import "path.ember";`: the device functions of another file."""

    path: str
    path_span: Span


@dataclass(eq=False, slots=True)
class Module:
    file: SourceFile
    items: list
    broken_items: set = field(default_factory=set)  # names of items that failed to parse


def children(n) -> list:
    """The child nodes of `n`, in source order."""
    out = []
    for name in n.__dataclass_fields__:
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
