"""Checking binary operators: `a op b` becomes a typed node, folded when both sides are
constants. Each operator class has one function here; which scalar types an operator
admits is not restated but asked of its op's signature (ember.frontend.operators), and
typed constants fold through the op's own `fold` (ember.frontend.consteval).

The functions take the checker as their explicit context `ck` (its diagnostics, `expr`,
`typed`, `coerce`, `default_type`) and are generators run by ember.trampoline."""

from __future__ import annotations

from ..ir.types import BOOL, I32, I64, U32, VOID, PtrType, ScalarType, TupleType
from . import ast as A
from . import typed as T
from .check_types import ERROR, UNTYPED, UNTYPED_FLOAT, UNTYPED_INT, bad_operand, coerce, default_type, snippet
from .consteval import ConstError, typed_binop, untyped_binop
from .operators import CMP_OPS, LOGIC_OPS, SHIFT_OPS, operator_admits


def error_node(span) -> T.TConst:
    """The node of an expression that was reported already (errors do not cascade)."""
    return T.TConst(span, ERROR, None)


def folded(e: T.TExpr, ty, value) -> T.TConst:
    """e folded to a constant (the folded expression is kept for --emit ast)."""
    return T.TConst(e.span, ty, value, e)


def check_binary(ck, op: str, op_span, lhs: T.TExpr, rhs_node: A.Expr, expected, span, compound=False):
    """`lhs op rhs` with lhs checked already (for a compound assignment, lhs is the target,
    whose type is fixed and which is never folded)."""
    if op in LOGIC_OPS:
        return (yield from _logic(ck, op, lhs, rhs_node, span))
    if op in SHIFT_OPS:
        return (yield from _shift(ck, op, lhs, rhs_node, expected, span, compound))
    return (yield from _same_type(ck, op, op_span, lhs, rhs_node, expected, span, compound))


def _logic(ck, op, lhs, rhs_node, span):
    """`&&`, `||`: bool operands; the right side is evaluated eagerly when that is safe."""
    lhs = default_type(ck, lhs, BOOL)
    rhs = yield ck.typed(rhs_node, BOOL)
    for side in (lhs, rhs):
        if side.ty is not ERROR and side.ty != BOOL:
            ck.diags.error("E0202", f"`{op}` needs `bool` operands, found `{side.ty}`", side.span)
            return error_node(span)
    if ERROR in (lhs.ty, rhs.ty):
        return error_node(span)
    node = T.TLogic(span, BOOL, op, lhs, rhs, eager=safe_to_speculate(rhs))
    if lhs.const is not None and rhs.const is not None:
        return folded(node, BOOL, (lhs.const and rhs.const) if op == "&&" else (lhs.const or rhs.const))
    return node


def _shift(ck, op, lhs, rhs_node, expected, span, compound):
    """`<<`, `>>`: the result has the left side's type; the amount is any integer."""
    rhs = yield ck.typed(rhs_node, U32)
    lt, rt = lhs.ty, rhs.ty
    if ERROR in (lt, rt):
        return error_node(span)
    if not _is_integer(ck, rhs, "shift amounts must be integers, not `{}`"):
        return error_node(span)
    if lt is UNTYPED_INT:
        if rhs.const is not None and not compound:
            return _untyped(ck, op, lhs, rhs, UNTYPED_INT, span)
        lhs = coerce(ck, lhs, expected if isinstance(expected, ScalarType) and expected.is_int else I32)
        lt = lhs.ty
    if lt is ERROR or not _is_integer(ck, lhs, f"`{op}` needs an integer on the left, not `{{}}`"):
        return error_node(span)
    node = T.TBinary(span, lt, op, lhs, rhs)
    if lhs.const is not None and rhs.const is not None and not compound:
        return folded(node, lt, typed_binop(op, lhs.const, rhs.const, lt, rt))
    return node


def _same_type(ck, op, op_span, lhs, rhs_node, expected, span, compound):
    """Arithmetic, bitwise and comparison operators: both sides of one scalar type (an
    untyped constant takes the other side's), except a pointer plus or minus an offset."""
    lt = lhs.ty
    rhs = yield ck.expr(rhs_node, lt if lt not in UNTYPED else (None if op in CMP_OPS else expected))
    rt = rhs.ty
    if ERROR in (lt, rt) or not (_one_value(ck, op, lhs) and _one_value(ck, op, rhs)):
        return error_node(span)
    if isinstance(lt, PtrType) and op in ("+", "-"):
        return _pointer_offset(ck, op, lhs, rhs, span)
    if lt in UNTYPED and rt in UNTYPED:
        ty = BOOL if op in CMP_OPS else (UNTYPED_FLOAT if UNTYPED_FLOAT in (lt, rt) else UNTYPED_INT)
        return _untyped(ck, op, lhs, rhs, ty, span)
    if lt in UNTYPED:
        lhs = coerce(ck, lhs, rt)
    elif rt in UNTYPED:
        rhs = coerce(ck, rhs, lt)
    lt, rt = lhs.ty, rhs.ty
    if ERROR in (lt, rt):
        return error_node(span)
    if lt != rt:
        ck.diags.error("E0201", f"mismatched types in `{op}`", op_span, label=f"`{lt}` {op} `{rt}`",
                       help=_convert_help(rhs, lt, rt))
        return error_node(span)
    if not (isinstance(lt, ScalarType) and operator_admits(op, lt)):
        return _not_admitted(ck, op, op_span, lhs if compound else error_node(span), lt, span)
    node = T.TBinary(span, BOOL if op in CMP_OPS else lt, op, lhs, rhs)
    if lhs.const is not None and rhs.const is not None and not lt.is_float and not compound:
        return folded(node, node.ty, typed_binop(op, lhs.const, rhs.const, lt))
    return node


def _one_value(ck, op, side) -> bool:
    """An operand is one value: not a tuple, not the missing result of a void call."""
    if isinstance(side.ty, TupleType):
        ck.diags.error("E0212", f"a tuple `{side.ty}` is not a single value", side.span,
                       label=f"`{op}` needs one value here", help="destructure it first: `let (a, b) = ...;`")
        return False
    if side.ty is VOID:
        ck.diags.error("E0213", "this call has no result", side.span)
        return False
    return True


def _is_integer(ck, side, message: str) -> bool:
    """Whether side is of an integer type; if not, the error `message` (naming its type) at it."""
    if isinstance(side.ty, ScalarType) and side.ty.is_int:
        return True
    ck.diags.error("E0202", message.format(side.ty), side.span)
    return False


def _pointer_offset(ck, op, ptr, offset, span):
    """`p + i`, `p - i`: an integer offset in elements (a signed one to subtract)."""
    if offset.ty in UNTYPED:
        offset = coerce(ck, offset, I64)
    if offset.ty is ERROR or not _is_integer(ck, offset, "a pointer offset must be an integer, not `{}`"):
        return error_node(span)
    if op == "-" and not offset.ty.signed:
        ck.diags.error("E0202", "subtracting an unsigned offset from a pointer", offset.span,
                       help="add a signed offset instead: `p + (-i64(n))`")
        return error_node(span)
    # an offset pointer promises no alignment of its own (none is inherited)
    return T.TOffset(span, ptr.ty.with_align(None), ptr, offset, op == "-")


def _untyped(ck, op, lhs, rhs, ty, span):
    """Two untyped constants: exact arithmetic, the only kind const evaluation keeps."""
    try:
        value = untyped_binop(op, lhs.const, rhs.const)
    except ConstError as err:
        ck.diags.error("E0403", str(err), span)
        return error_node(span)
    return folded(T.TBinary(span, ty, op, lhs, rhs), ty, value)


def _not_admitted(ck, op, op_span, where, t, span):
    """The operator's op does not take `t` (its signature said so)."""
    if op == "%" and isinstance(t, ScalarType) and t.is_float:
        ck.diags.error("E0202", "`%` is not defined for floats", op_span,
                       help="compute it explicitly, e.g. `x - trunc(x / y) * y`")
        return error_node(span)
    return bad_operand(ck, where, op, t)


def _convert_help(rhs, lt, rt) -> str | None:
    if isinstance(lt, ScalarType) and isinstance(rt, ScalarType) and lt.is_numeric and rt.is_numeric:
        return f"convert one side explicitly, e.g. `{lt}({snippet(rhs)})`"
    return None


def safe_to_speculate(e: T.TExpr) -> bool:
    """No loads and no user calls: evaluating it when not needed changes nothing."""
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, (T.TLoad, T.TCall)):
            return False
        if isinstance(x, T.TBuiltin):
            stack.extend(x.args)
        elif isinstance(x, (T.TBinary, T.TLogic)):
            stack += (x.lhs, x.rhs)
        elif isinstance(x, T.TUnary):
            stack.append(x.operand)
        elif isinstance(x, (T.TBitcast, T.TCast)):
            stack.append(x.value)
        elif isinstance(x, T.TOffset):
            stack += (x.ptr, x.offset)
        elif isinstance(x, T.TTuple):
            stack.extend(x.elems)
    return True
