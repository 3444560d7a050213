"""The typed AST: what the type checker hands to IR generation.

Every expression has its type, and every name is resolved to its symbol; implicit facts
are explicit: untyped constants are folded to one constant of their final type, a
builtin call names its builtin and the types its letters stand for, a pointer that loses
a promised alignment is a conversion, compound assignments say what they combine. IR
generation reads only this (never the parse tree's annotations, which do not exist).
"""

from __future__ import annotations

from typing import Any

from ..records import field, record
from ..source import Span


class Symbol:
    """A named thing a program declares: a `let`, `var`, parameter, const parameter,
    loop variable, array, or a type parameter."""

    __slots__ = ("name", "kind", "ty", "span", "value")

    def __init__(self, name: str, kind: str, ty, span: Span, value=None):
        self.name = name
        self.kind = kind      # let | var | param | const | loop | array | shared | type
        self.ty = ty
        self.span = span
        self.value = value    # a const parameter's value (a type parameter's type name)

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name}: {self.ty}>"


# ---------------------------------------------------------------- expressions

@record(eq=False, slots=True)
class TExpr:
    span: Span
    ty: Any

    @property
    def const(self):
        """The value, when the expression is a constant."""
        return None


@record(eq=False, slots=True)
class TConst(TExpr):
    value: Any                # int, bool, exact Fraction (untyped), or a float rounded to ty
    folded: Any = None        # the expression it was folded from (for --emit ast)

    @property
    def const(self):
        return self.value


@record(eq=False, slots=True)
class TVar(TExpr):
    sym: Symbol


@record(eq=False, slots=True)
class TSpecial(TExpr):
    """A builtin value: `thread_idx.x` (op gpu.thread_idx, dim x), `lane_id`, ..."""

    op: str
    dim: str | None


@record(eq=False, slots=True)
class TUnary(TExpr):
    op: str                   # "-", "!", "~"
    operand: TExpr


@record(eq=False, slots=True)
class TBinary(TExpr):
    """Arithmetic, bitwise, shift or comparison of scalars."""

    op: str
    lhs: TExpr
    rhs: TExpr


@record(eq=False, slots=True)
class TLogic(TExpr):
    """`&&`/`||`; `eager` when the right side may be evaluated unconditionally (it reads
    no memory and calls no function)."""

    op: str
    lhs: TExpr
    rhs: TExpr
    eager: bool


@record(eq=False, slots=True)
class TOffset(TExpr):
    """Pointer plus (or minus) an element count."""

    ptr: TExpr
    offset: TExpr
    negate: bool


@record(eq=False, slots=True)
class TLoad(TExpr):
    base: TExpr               # a pointer or an array
    index: TExpr


@record(eq=False, slots=True)
class TCast(TExpr):
    value: TExpr


@record(eq=False, slots=True)
class TBitcast(TExpr):
    """Reinterpretation (also a pointer losing a promised alignment)."""

    value: TExpr


@record(eq=False, slots=True)
class TCall(TExpr):
    """A device function call; `ty` is its result (a TupleType for several, VOID)."""

    fn: str
    args: list


@record(eq=False, slots=True)
class TBuiltin(TExpr):
    builtin: Any              # ember.frontend.builtins.Builtin
    binding: dict             # type variable -> type
    args: list
    const_attrs: dict = field(default_factory=dict)   # attributes given as constant arguments


@record(eq=False, slots=True)
class TTuple(TExpr):
    elems: list


# ---------------------------------------------------------------- statements

@record(eq=False, slots=True)
class TStmt:
    span: Span


@record(eq=False, slots=True)
class TBlock(TStmt):
    stmts: list


@record(eq=False, slots=True)
class TLet(TStmt):
    syms: list                # one symbol, or several for a destructured tuple
    value: TExpr


@record(eq=False, slots=True)
class TVarDecl(TStmt):
    sym: Symbol
    value: TExpr


@record(eq=False, slots=True)
class TArray(TStmt):
    """A per-thread (`var a: [T; N];`) or shared array (`length`: the kernel parameter
    that sizes a shared array at launch, `shared row: [f32; cols];`)."""

    sym: Symbol
    length: "TExpr | None" = None


@record(eq=False, slots=True)
class TAssign(TStmt):
    """`x = e` (compound assignments arrive with the operation applied: `x = x + e`)."""

    sym: Symbol
    value: TExpr


@record(eq=False, slots=True)
class TStore(TStmt):
    """`p[i] = e`, or with `op`, `p[i] op= e` (the address is computed once; the old
    value is loaded before `e` is evaluated)."""

    base: TExpr
    index: TExpr
    value: TExpr
    op: str | None = None
    elem: Any = None


@record(eq=False, slots=True)
class TIf(TStmt):
    cond: TExpr
    then: TBlock
    else_: Any                # TBlock, TIf or None


@record(eq=False, slots=True)
class TFor(TStmt):
    sym: Symbol
    start: TExpr
    end: TExpr
    step: TExpr | None
    body: TBlock
    unroll: bool


@record(eq=False, slots=True)
class TWhile(TStmt):
    cond: TExpr
    body: TBlock


@record(eq=False, slots=True)
class TBreak(TStmt):
    pass


@record(eq=False, slots=True)
class TContinue(TStmt):
    pass


@record(eq=False, slots=True)
class TReturn(TStmt):
    value: TExpr | None


@record(eq=False, slots=True)
class TExprStmt(TStmt):
    expr: TExpr


# ---------------------------------------------------------------- items

@record(eq=False)
class TKernel:
    name: str
    span: Span
    name_span: Span
    consts: dict              # name -> (type or None for a type parameter, value)
    params: list              # [Symbol]
    block: tuple | None       # (x, y, z) or None
    body: TBlock = None
    min_blocks: int | None = None   # launch bound: blocks of `block` that must fit on one SM
    cluster: tuple | None = None    # (x, y, z) blocks per cluster, or None
    tunables: dict = field(default_factory=dict)   # const parameter -> the values `tune [...]` lists
    stream: list = field(default_factory=list)   # indices of the parameters declared `stream`
    calls: list = field(default_factory=list)    # [(callee name, span)]
    local_bytes: int = 0
    shared_bytes: int = 0     # static shared memory, as ptxas lays it out
    sized_shared: str = ""    # the shared array sized at launch, if any


@record(eq=False)
class TFunction:
    name: str
    span: Span
    name_span: Span
    params: list              # [Symbol]
    ret: Any                  # a type, a TupleType, or VOID
    body: TBlock = None
    calls: list = field(default_factory=list)
    local_bytes: int = 0


@record(eq=False)
class TProgram:
    kernels: list             # [TKernel]
    fns: dict                 # name -> TFunction
    module: Any = None        # the parsed module (ember.frontend.ast.Module)


def stmt_children(s: TStmt) -> list:
    """The statements directly inside `s`."""
    if isinstance(s, TBlock):
        return list(s.stmts)
    if isinstance(s, TIf):
        return [s.then] + ([s.else_] if s.else_ is not None else [])
    if isinstance(s, (TFor, TWhile)):
        return [s.body]
    return []
