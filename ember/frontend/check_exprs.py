"""Checking expressions: names, literals, unary operators, indexing, fields, tuples and
bit casts (calls and conversions are in check_calls.py, binary operators in
check_operators.py). Each returns its typed node; constant
expressions over literals, const parameters and typed integers fold to one constant.
Every method that checks a subexpression is a generator (see ember.trampoline)."""

from __future__ import annotations

from ..ir.ops.arith import bitcast_problem
from ..ir.types import BOOL, I64, SCALARS, U32, VOID, ArrayType, PtrType, ScalarType, TupleType
from ..trampoline import run
from . import ast as A
from . import typed as T
from .builtins import INDEX_VALUES, PLAIN_VALUES
from .check_calls import check_call
from .check_operators import check_binary, folded
from .check_types import ERROR, UNTYPED, UNTYPED_FLOAT, UNTYPED_INT, snippet
from .consteval import typed_unop
from .operators import CMP_OPS, LOGIC_OPS


class ExprChecker:
    """Part of the Checker (ember.frontend.checker)."""

    def expr(self, e: A.Expr, expected=None):
        """The typed node of e: a generator when e has subexpressions (run it with
        `yield`), the node itself for a leaf (the trampoline passes it straight back)."""
        return getattr(self, "expr_" + type(e).__name__)(e, expected)

    def check_args(self, e: A.Call):
        """Check the arguments of a call that is already in error (to report their own)."""
        for a in e.args:
            yield self.expr(a)

    def expr_Call(self, e: A.Call, expected):
        return (yield check_call(self, e, expected))

    def typed(self, e: A.Expr, expected=None):
        """Check e and give an untyped constant a concrete type (the expected one, or the default)."""
        t = yield self.expr(e, expected)
        return self.default_type(t, expected)

    def const_value(self, e: A.Expr, t, what: str):
        """Check e as a constant of type t; the value, or None (after an error)."""
        got = run(self.typed(e, t))
        if got.ty is ERROR or t is ERROR:
            return None
        if got.ty != t:
            self.mismatch(got, t, got.ty)
            return None
        if got.const is None:
            self.diags.error("E0401", f"{what} must be a constant expression", e.span,
                             help="use literals and const parameters only")
            return None
        zero = _division_by_zero(e, got)
        if zero is not None:
            self.diags.error("E0403", f"division by zero in {what}", zero.span,
                             label=f"`{snippet(zero.rhs)}` is 0",
                             notes=["in code, x / 0 is defined (all ones), but a constant that depends on "
                                    "it is almost certainly a mistake"])
            return None
        return got.const

    def bad_operand(self, e, op: str, t):
        self.diags.error("E0202", f"`{op}` is not defined for `{t}`", e.span)
        return T.TConst(e.span, ERROR, None)

    def undefined(self, e: A.Name) -> None:
        if e.id in INDEX_VALUES:
            self.diags.error("E0105", f"`{e.id}` has components; use `{e.id}.x`, `.y` or `.z`", e.span)
            return
        t = self.type_params.get(e.id) or SCALARS.get(e.id)
        if t is not None:
            what = f"a type parameter ({t})" if e.id in self.type_params and t is not ERROR else \
                ("a type parameter" if e.id in self.type_params else "a type")
            self.diags.error("E0104", f"`{e.id}` is {what}, not a value", e.span, label="a type here",
                             help=f"convert a value to it with `{e.id}(x)`")
            return
        if e.id in self.value_params:
            # a const value parameter of a device function: already reported (E0107)
            return
        cands = self.visible_names() + list(INDEX_VALUES)
        self.diags.error("E0101", f"cannot find `{e.id}` in this scope", e.span, label="not found",
                         help=self._suggest(e.id, cands))

    # ------------------------------------------------------------------ leaves
    def expr_Name(self, e: A.Name, expected):
        sym = self.lookup(e.id)
        if sym is None and e.id in PLAIN_VALUES:
            return T.TSpecial(e.span, U32, PLAIN_VALUES[e.id], None)
        if sym is None:
            if e.id not in self.module.broken_items:
                self.undefined(e)
            return T.TConst(e.span, ERROR, None)
        if sym.kind == "type":
            self.diags.error("E0104", f"`{e.id}` is a type ({sym.value}), not a value", e.span,
                             help=f"convert a value to it with `{e.id}(x)`")
            return T.TConst(e.span, ERROR, None)
        if sym.kind in ("const", "let") and sym.value is not None:
            return T.TConst(e.span, sym.ty, sym.value, T.TVar(e.span, sym.ty, sym))
        return T.TVar(e.span, sym.ty, sym)

    def expr_IntLit(self, e: A.IntLit, expected):
        lit = T.TConst(e.span, UNTYPED_INT, e.value)
        if e.suffix:
            return self.coerce(lit, SCALARS[e.suffix])
        return lit

    def expr_FloatLit(self, e: A.FloatLit, expected):
        lit = T.TConst(e.span, UNTYPED_FLOAT, e.value)
        if e.suffix:
            return self.coerce(lit, SCALARS[e.suffix])
        return lit

    def expr_BoolLit(self, e: A.BoolLit, expected):
        return T.TConst(e.span, BOOL, e.value)

    # ------------------------------------------------------------------ operators
    def expr_Unary(self, e: A.Unary, expected):
        lit = e.operand
        if e.op == "-" and isinstance(lit, A.IntLit) and lit.suffix:
            # `-128i8` is the literal -128 of type i8 (negating 128i8 would not fit)
            t = SCALARS[lit.suffix]
            if not t.signed:
                self.diags.error("E0202", f"cannot negate an unsigned `{t}`", e.span,
                                 help=f"write a signed type: `-{lit.value}{'i' + lit.suffix[1:]}`")
                return T.TConst(e.span, ERROR, None)
            return self.coerce(T.TConst(e.span, UNTYPED_INT, -lit.value), t)
        x = yield self.expr(e.operand, expected)
        t = x.ty
        if t is ERROR:
            return x
        c = x.const
        node = T.TUnary(e.span, t, e.op, x)
        if e.op == "-":
            if t in UNTYPED:
                return folded(node, t, -c)
            if not (isinstance(t, ScalarType) and t.is_numeric):
                return self.bad_operand(e, "-", t)
            if t.is_int and not t.signed:
                self.diags.error("E0202", f"cannot negate an unsigned `{t}`", e.span,
                                 help=f"subtract from zero for wrapping negation: `0 - {snippet(e.operand)}`")
                return T.TConst(e.span, ERROR, None)
            if c is not None and t.is_int:
                return folded(node, t, typed_unop("-", c, t))
            return node
        # ! and ~
        if t is UNTYPED_INT:
            return folded(node, t, ~c)
        if e.op == "!" and t == BOOL:
            return folded(node, t, not c) if c is not None else node
        if isinstance(t, ScalarType) and t.is_int:
            return folded(node, t, typed_unop("~", c, t)) if c is not None else node
        return self.bad_operand(e, e.op, t)

    def expr_Binary(self, e: A.Binary, expected):
        hint = BOOL if e.op in LOGIC_OPS else (None if e.op in CMP_OPS else expected)
        lhs = yield self.expr(e.lhs, hint)
        return (yield from check_binary(self, e.op, e.op_span, lhs, e.rhs, expected, e.span))

    # ------------------------------------------------------------------ memory and structure
    def expr_Index(self, e: A.Index, expected):
        return (yield self.index(e, store=False))

    def index(self, e: A.Index, store: bool):
        """The base and index of `p[i]`, checked; returns a TLoad whose type is the element."""
        base = yield self.expr(e.base)
        idx = yield self.expr(e.index)
        if idx.ty in UNTYPED:
            idx = self.coerce(idx, I64)
        it = idx.ty
        if it is not ERROR and not (isinstance(it, ScalarType) and it.is_int):
            self.diags.error("E0208", f"an index must be an integer, not `{it}`", idx.span)
        bt = base.ty
        if bt is ERROR:
            return T.TConst(e.span, ERROR, None)
        if isinstance(bt, PtrType):
            if store and not bt.mut:
                self.diags.error("E0210", "cannot store through a read-only pointer", e.span,
                                 label=f"`{snippet(e.base)}` is `{bt}`",
                                 help="declare the parameter `*mut " + f"{bt.space} {bt.pointee}`")
            return T.TLoad(e.span, bt.pointee, base, idx)
        if isinstance(bt, ArrayType):
            if idx.const is not None and not 0 <= idx.const < bt.length:
                self.diags.error("E0216", f"index {idx.const} is out of bounds for `{bt}`", idx.span,
                                 label=f"valid indices are 0..{bt.length - 1}")
            return T.TLoad(e.span, bt.elem, base, idx)
        self.diags.error("E0207", f"`{bt}` cannot be indexed", e.base.span,
                         help="only pointers and shared arrays can be indexed")
        return T.TConst(e.span, ERROR, None)

    def expr_Field(self, e: A.Field, expected):
        base = e.base
        if isinstance(base, A.Name) and base.id in INDEX_VALUES and self.lookup(base.id) is None:
            if e.name not in ("x", "y", "z"):
                self.diags.error("E0105", f"`{base.id}` has no component `{e.name}`", e.name_span,
                                 help="the components are `.x`, `.y` and `.z`")
                return T.TConst(e.span, ERROR, None)
            return T.TSpecial(e.span, U32, INDEX_VALUES[base.id], e.name)
        if isinstance(base, A.Name) and (base.id in SCALARS or base.id in self.type_params) and \
                getattr(self.lookup(base.id), "kind", "type") == "type":
            return self.type_constant(e, base.id)
        t = yield self.expr(base)
        if t.ty is not ERROR:
            self.diags.error("E0105", f"`{t.ty}` has no field `{e.name}`", e.name_span)
        return T.TConst(e.span, ERROR, None)

    def type_constant(self, e: A.Field, name: str) -> T.TExpr:
        """`f32.inf`, `T.max`, `u8.bits`, ...: a constant of a numeric type (or of a type
        parameter's type), ember.frontend.type_constants."""
        from .type_constants import NAMES, value
        t = self.type_params.get(name) or SCALARS.get(name)
        if t is ERROR:
            return T.TConst(e.span, ERROR, None)
        got = value(t, e.name)
        if got is None:
            kinds = NAMES["float" if t.is_float else "int" if t.is_int else "bool"]
            self.diags.error("E0105", f"`{name}` has no constant `{e.name}`", e.name_span,
                             help=f"the constants of `{t}`: " + ", ".join(f"`{t}.{k}`" for k in kinds)
                             if kinds else None)
            return T.TConst(e.span, ERROR, None)
        ty, v = got
        return T.TConst(e.span, ty, v)

    def expr_TupleExpr(self, e: A.TupleExpr, expected):
        hints = expected.elems if isinstance(expected, TupleType) and len(expected.elems) == len(e.elems) \
            else [None] * len(e.elems)
        elems = []
        for x, h in zip(e.elems, hints):
            elems.append((yield self.typed(x, h)))
        types = [x.ty for x in elems]
        if ERROR in types:
            return T.TConst(e.span, ERROR, None)
        for x in elems:
            if isinstance(x.ty, TupleType) or x.ty is VOID:
                self.diags.error("E0212", "tuples cannot contain tuples or calls without a result", x.span)
                return T.TConst(e.span, ERROR, None)
        return T.TTuple(e.span, TupleType(tuple(types)), elems)

    def expr_BitCast(self, e: A.BitCast, expected):
        target = self.resolve_type(e.type)
        value = yield self.typed(e.value)
        src = value.ty
        if ERROR in (target, src):
            return T.TConst(e.span, ERROR, None)
        if isinstance(src, ArrayType) and isinstance(target, PtrType):
            src = PtrType(src.elem, src.space, True)    # an array decays to a pointer to its elements
        problem = bitcast_problem(src, target)
        if problem:
            help_ = None
            if "bytes" in problem:
                help_ = "the sizes must be equal"
            elif not (isinstance(src, PtrType) and isinstance(target, PtrType)):
                help_ = "bit casts take two non-bool scalars of one size, or two pointers"
            self.diags.error("E0205", problem, e.span, help=help_)
            return T.TConst(e.span, ERROR, None)
        return T.TBitcast(e.span, target, value)


def _division_by_zero(e: A.Expr, typed: T.TExpr):
    """The first `/` or `%` by a constant zero inside a folded constant expression."""
    stack = [typed]
    while stack:
        x = stack.pop()
        if isinstance(x, T.TConst):
            if x.folded is not None:
                stack.append(x.folded)
            continue
        if isinstance(x, T.TBinary):
            if x.op in ("/", "%") and x.rhs.const == 0 and not isinstance(x.rhs.const, bool):
                return _Zero(x.span, x.rhs)
            stack += (x.rhs, x.lhs)
        elif isinstance(x, T.TUnary):
            stack.append(x.operand)
        elif isinstance(x, (T.TCast, T.TBitcast)):
            stack.append(x.value)
    return None


class _Zero:
    __slots__ = ("span", "rhs")

    def __init__(self, span, rhs):
        self.span, self.rhs = span, rhs
