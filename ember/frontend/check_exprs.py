"""Checking expressions: names, literals, unary operators, indexing, fields, tuples and
bit casts (calls and conversions are in check_calls.py, binary operators in
check_operators.py). Each returns its typed node; constant
expressions over literals, const parameters and typed integers fold to one constant.
Every function that checks a subexpression is a generator (see ember.trampoline)."""

from __future__ import annotations

from ..ir.ops import OPS
from ..ir.ops.arith import bitcast_problem
from ..ir.types import BOOL, I64, SCALARS, U32, VOID, ArrayType, PtrType, ScalarType, TupleType, array_scalar
from ..trampoline import run
from . import ast as A
from . import typed as T
from .builtins import INDEX_VALUES, PLAIN_VALUES
from .check_calls import check_call
from .check_operators import check_binary, folded
from .check_types import (ERROR, UNTYPED, UNTYPED_FLOAT, UNTYPED_INT, bad_operand, coerce, default_type, mismatch,
                          resolve_type, snippet)
from .consteval import typed_unop
from .operators import CMP_OPS, LOGIC_OPS


def expr(ck, e: A.Expr, expected=None):
    """The typed node of e: a generator when e has subexpressions (run it with
    `yield`), the node itself for a leaf (the trampoline passes it straight back)."""
    return _EXPRESSIONS[type(e)](ck, e, expected)


def check_args(ck, e: A.Call):
    """Check the arguments of a call that is already in error (to report their own)."""
    for a in e.args:
        yield expr(ck, a)


def _call(ck, e: A.Call, expected):
    return (yield check_call(ck, e, expected))


def typed(ck, e: A.Expr, expected=None):
    """Check e and give an untyped constant a concrete type (the expected one, or the default)."""
    t = yield expr(ck, e, expected)
    return default_type(ck, t, expected)


def const_value(ck, e: A.Expr, t, what: str):
    """Check e as a constant of type t; the value, or None (after an error)."""
    got = run(typed(ck, e, t))
    if got.ty is ERROR or t is ERROR:
        return None
    if got.ty != t:
        mismatch(ck, got, t, got.ty)
        return None
    if got.const is None:
        ck.diags.error("E0401", f"{what} must be a constant expression", e.span,
                       help="use literals and const parameters only")
        return None
    zero = _division_by_zero(e, got)
    if zero is not None:
        ck.diags.error("E0403", f"division by zero in {what}", zero.span,
                       label=f"`{snippet(zero.rhs)}` is 0",
                       notes=["in code, x / 0 is defined (all ones), but a constant that depends on "
                              "it is almost certainly a mistake"])
        return None
    return got.const


def undefined(ck, e: A.Name) -> None:
    if e.id in INDEX_VALUES:
        ck.diags.error("E0105", f"`{e.id}` has components; use `{e.id}.x`, `.y` or `.z`", e.span)
        return
    t = ck.type_params.get(e.id) or SCALARS.get(e.id)
    if t is not None:
        what = f"a type parameter ({t})" if e.id in ck.type_params and t is not ERROR else \
            ("a type parameter" if e.id in ck.type_params else "a type")
        ck.diags.error("E0104", f"`{e.id}` is {what}, not a value", e.span, label="a type here",
                       help=f"convert a value to it with `{e.id}(x)`")
        return
    if e.id in ck.value_params:
        # a const value parameter of a device function: already reported (E0107)
        return
    cands = ck.visible_names() + list(INDEX_VALUES)
    ck.diags.error("E0101", f"cannot find `{e.id}` in this scope", e.span, label="not found",
                   help=ck._suggest(e.id, cands))


# ------------------------------------------------------------------ leaves
def _name(ck, e: A.Name, expected):
    sym = ck.lookup(e.id)
    if sym is None and e.id in PLAIN_VALUES:
        need = OPS[PLAIN_VALUES[e.id]].min_sm
        if need > ck.target.sm:
            ck.diags.error("E0501", f"`{e.id}` needs sm_{need} or newer; the target is {ck.target.arch}", e.span,
                           help=f"compile with --arch sm_{need} (or newer)")
            return T.TConst(e.span, ERROR, None)
        return T.TSpecial(e.span, U32, PLAIN_VALUES[e.id], None)
    if sym is None:
        if e.id not in ck.module.broken_items:
            undefined(ck, e)
        return T.TConst(e.span, ERROR, None)
    if sym.kind == "type":
        ck.diags.error("E0104", f"`{e.id}` is a type ({sym.value}), not a value", e.span,
                       help=f"convert a value to it with `{e.id}(x)`")
        return T.TConst(e.span, ERROR, None)
    if sym.kind in ("const", "let") and sym.value is not None:
        return T.TConst(e.span, sym.ty, sym.value, T.TVar(e.span, sym.ty, sym))
    return T.TVar(e.span, sym.ty, sym)


def _int_literal(ck, e: A.IntLit, expected):
    lit = T.TConst(e.span, UNTYPED_INT, e.value)
    if e.suffix:
        return coerce(ck, lit, SCALARS[e.suffix])
    return lit


def _float_literal(ck, e: A.FloatLit, expected):
    lit = T.TConst(e.span, UNTYPED_FLOAT, e.value)
    if e.suffix:
        return coerce(ck, lit, SCALARS[e.suffix])
    return lit


def _bool_literal(ck, e: A.BoolLit, expected):
    return T.TConst(e.span, BOOL, e.value)


# ------------------------------------------------------------------ operators
def _unary(ck, e: A.Unary, expected):
    lit = e.operand
    if e.op == "-" and isinstance(lit, A.IntLit) and lit.suffix:
        # `-128i8` is the literal -128 of type i8 (negating 128i8 would not fit)
        t = SCALARS[lit.suffix]
        if not t.signed:
            ck.diags.error("E0202", f"cannot negate an unsigned `{t}`", e.span,
                           help=f"write a signed type: `-{lit.value}{'i' + lit.suffix[1:]}`")
            return T.TConst(e.span, ERROR, None)
        return coerce(ck, T.TConst(e.span, UNTYPED_INT, -lit.value), t)
    x = yield expr(ck, e.operand, expected)
    t = x.ty
    if t is ERROR:
        return x
    c = x.const
    node = T.TUnary(e.span, t, e.op, x)
    if e.op == "-":
        if t in UNTYPED:
            return folded(node, t, -c)
        if not (isinstance(t, ScalarType) and t.is_numeric):
            return bad_operand(ck, e, "-", t)
        if t.is_int and not t.signed:
            ck.diags.error("E0202", f"cannot negate an unsigned `{t}`", e.span,
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
    return bad_operand(ck, e, e.op, t)


def _binary(ck, e: A.Binary, expected):
    hint = BOOL if e.op in LOGIC_OPS else (None if e.op in CMP_OPS else expected)
    lhs = yield expr(ck, e.lhs, hint)
    return (yield from check_binary(ck, e.op, e.op_span, lhs, e.rhs, expected, e.span))


# ------------------------------------------------------------------ memory and structure
def _load(ck, e: A.Index, expected):
    return (yield check_index(ck, e, store=False))


def check_index(ck, e: A.Index, store: bool):
    """The base and index of `p[i]`, checked; returns a TLoad whose type is the element."""
    base = yield expr(ck, e.base)
    idx = yield expr(ck, e.index)
    if idx.ty in UNTYPED:
        idx = coerce(ck, idx, I64)
    it = idx.ty
    if it is not ERROR and not (isinstance(it, ScalarType) and it.is_int):
        ck.diags.error("E0208", f"an index must be an integer, not `{it}`", idx.span)
    bt = base.ty
    if bt is ERROR:
        return T.TConst(e.span, ERROR, None)
    if isinstance(bt, PtrType):
        if store and not bt.mut:
            ck.diags.error("E0210", "cannot store through a read-only pointer", e.span,
                           label=f"`{snippet(e.base)}` is `{bt}`",
                           help="declare the parameter `*mut " + f"{bt.space} {bt.pointee}`")
        return T.TLoad(e.span, bt.pointee, base, idx)
    if isinstance(bt, ArrayType):
        if idx.const is not None and not bt.sized_by and not 0 <= idx.const < bt.length:
            ck.diags.error("E0216", f"index {idx.const} is out of bounds for `{bt}`", idx.span,
                           label=f"valid indices are 0..{bt.length - 1}")
        return T.TLoad(e.span, bt.elem, base, idx)
    ck.diags.error("E0207", f"`{bt}` cannot be indexed", e.base.span,
                   help="only pointers and shared arrays can be indexed")
    return T.TConst(e.span, ERROR, None)


def _field(ck, e: A.Field, expected):
    base = e.base
    if isinstance(base, A.Name) and base.id in INDEX_VALUES and ck.lookup(base.id) is None:
        if e.name not in ("x", "y", "z"):
            ck.diags.error("E0105", f"`{base.id}` has no component `{e.name}`", e.name_span,
                           help="the components are `.x`, `.y` and `.z`")
            return T.TConst(e.span, ERROR, None)
        return T.TSpecial(e.span, U32, INDEX_VALUES[base.id], e.name)
    if isinstance(base, A.Name) and (base.id in SCALARS or base.id in ck.type_params) and \
            getattr(ck.lookup(base.id), "kind", "type") == "type":
        return _type_constant(ck, e, base.id)
    t = yield expr(ck, base)
    if t.ty is not ERROR:
        ck.diags.error("E0105", f"`{t.ty}` has no field `{e.name}`", e.name_span)
    return T.TConst(e.span, ERROR, None)


def _type_constant(ck, e: A.Field, name: str) -> T.TExpr:
    """`f32.inf`, `T.max`, `u8.bits`, ...: a constant of a numeric type (or of a type
    parameter's type), ember.frontend.type_constants."""
    from .type_constants import NAMES, value
    t = ck.type_params.get(name) or SCALARS.get(name)
    if t is ERROR:
        return T.TConst(e.span, ERROR, None)
    got = value(t, e.name)
    if got is None:
        kinds = NAMES["float" if t.is_float else "int" if t.is_int else "bool"]
        ck.diags.error("E0105", f"`{name}` has no constant `{e.name}`", e.name_span,
                       help=f"the constants of `{t}`: " + ", ".join(f"`{t}.{k}`" for k in kinds)
                       if kinds else None)
        return T.TConst(e.span, ERROR, None)
    ty, v = got
    return T.TConst(e.span, ty, v)


def _tuple(ck, e: A.TupleExpr, expected):
    hints = expected.elems if isinstance(expected, TupleType) and len(expected.elems) == len(e.elems) \
        else [None] * len(e.elems)
    elems = []
    for x, h in zip(e.elems, hints):
        elems.append((yield typed(ck, x, h)))
    types = [x.ty for x in elems]
    if ERROR in types:
        return T.TConst(e.span, ERROR, None)
    for x in elems:
        if isinstance(x.ty, TupleType) or x.ty is VOID:
            ck.diags.error("E0212", "tuples cannot contain tuples or calls without a result", x.span)
            return T.TConst(e.span, ERROR, None)
    return T.TTuple(e.span, TupleType(tuple(types)), elems)


def _bitcast(ck, e: A.BitCast, expected):
    target = resolve_type(ck, e.type)
    value = yield typed(ck, e.value)
    src = value.ty
    if ERROR in (target, src):
        return T.TConst(e.span, ERROR, None)
    if isinstance(src, ArrayType) and isinstance(target, PtrType):
        src = PtrType(array_scalar(src), src.space, True)    # an array decays to a pointer to its elements
    problem = bitcast_problem(src, target)
    if problem:
        help_ = None
        if "bytes" in problem:
            help_ = "the sizes must be equal"
        elif not (isinstance(src, PtrType) and isinstance(target, PtrType)):
            help_ = "bit casts take two non-bool scalars of one size, or two pointers"
        ck.diags.error("E0205", problem, e.span, help=help_)
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


# the checker of each kind of expression node
_EXPRESSIONS = {
    A.Call: _call,
    A.Name: _name,
    A.IntLit: _int_literal,
    A.FloatLit: _float_literal,
    A.BoolLit: _bool_literal,
    A.Unary: _unary,
    A.Binary: _binary,
    A.Index: _load,
    A.Field: _field,
    A.TupleExpr: _tuple,
    A.BitCast: _bitcast,
}
