"""The checker's types: resolving written types, parameters, giving untyped constants a
type, assignability, and the messages that report a mismatch."""

from __future__ import annotations

from fractions import Fraction

from .. import floats
from ..ir.types import (ADDRESS_SPACES, BOOL, F32, I32, SCALARS, ArrayType, PtrType, ScalarType, TensorMapType,
                        TupleType, Type, array_scalar, natural_align)
from . import ast as A
from . import typed as T


class _Pseudo(Type):
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __str__(self) -> str:
        return self.name


UNTYPED_INT = _Pseudo("{integer}")
UNTYPED_FLOAT = _Pseudo("{float}")
ERROR = _Pseudo("{error}")
UNTYPED = (UNTYPED_INT, UNTYPED_FLOAT)
# The address spaces a program may name (the IR also has `const`, for Ember's own tables).
LANGUAGE_SPACES = ("global", "shared", "local")


def assignable(t: Type, want: Type) -> bool:
    """A value of type t may be used where `want` is expected: the same type, or a
    pointer that promises at least the alignment `want` does (the promise is dropped)."""
    if t == want:
        return True
    return (isinstance(t, PtrType) and isinstance(want, PtrType) and t.with_align(None) == want.with_align(None)
            and t.alignment % want.alignment == 0)


def decays_to(t: Type, param: Type) -> bool:
    """An array passed where a pointer to its elements (in its address space) is expected
    (a multi-dimensional array: to its scalars, row after row)."""
    return (isinstance(t, ArrayType) and isinstance(param, PtrType) and param.pointee == array_scalar(t)
            and param.space == t.space and param.mut)


def snippet(e: A.Node) -> str:
    text = e.span.file.text[e.span.start:e.span.end]
    return text if len(text) <= 40 and "\n" not in text else "..."


def resolve_type(ck, node: A.Node, allow_array: bool = False, allow_tuple: bool = False,
                 allow_tensormap: bool = False) -> Type:
    if isinstance(node, A.FnTypeExpr):
        ck.diags.error("E0214", "a function type is the type of a device function's parameter only",
                       node.span, help="`fn reduce<const T: type>(v: T, combine: fn(T, T) -> T) -> T`; "
                                       "a call passes a function by name")
        return ERROR
    if isinstance(node, A.TypeName):
        t = SCALARS.get(node.name) or ck.type_params.get(node.name)
        if t is ERROR:
            return ERROR    # a type parameter without a valid value: reported already
        if t is None:
            ck.diags.error("E0103", f"unknown type `{node.name}`", node.span, label="not a type",
                           help=ck._suggest(node.name, SCALARS) or
                           "the scalar types are bool, i8..i64, u8..u64, f16, bf16, f32, f64")
            return ERROR
        return t
    if isinstance(node, A.PtrTypeExpr):
        if node.space not in LANGUAGE_SPACES:
            if node.space in ADDRESS_SPACES:   # const and generic exist in the IR only
                ck.diags.error("E0214", f"`{node.space}` pointers are not part of the language",
                               node.space_span, help="pointers point to `global` memory (parameters: "
                               "`*global T` is read-only and cached), `shared` or `local` memory")
            else:
                ck.diags.error("E0214", f"unknown address space `{node.space}`", node.space_span,
                               help="address spaces are: " + ", ".join(LANGUAGE_SPACES))
            return ERROR
        pointee = resolve_type(ck, node.pointee)
        if pointee is ERROR:
            return ERROR
        if not isinstance(pointee, ScalarType) or pointee.is_bool:
            ck.diags.error("E0214", f"pointers must point to a non-bool scalar, not `{pointee}`",
                           node.pointee.span, help="store flags as `u8`" if pointee == BOOL else None)
            return ERROR
        return PtrType(pointee, node.space, node.mut)
    if isinstance(node, A.ArrayTypeExpr):
        elem = resolve_type(ck, node.elem, allow_array=allow_array)   # `[[f32; 33]; 32]`: rows of 33
        n = ck.const_value(node.length, SCALARS["u32"], "an array length")
        if elem is ERROR or n is None:
            return ERROR
        if not allow_array:
            ck.diags.error("E0214", "array types are only allowed for `var` and `shared` arrays", node.span)
            return ERROR
        if isinstance(elem, ArrayType):
            pass
        elif not isinstance(elem, ScalarType) or elem.is_bool:
            ck.diags.error("E0214", f"array elements must be non-bool scalars, not `{elem}`", node.elem.span)
            return ERROR
        if n <= 0:
            ck.diags.error("E0402", "an array needs at least one element", node.length.span)
            return ERROR
        return ArrayType(elem, n)
    if isinstance(node, A.TensorMapTypeExpr):
        return _tensormap(ck, node, allow_tensormap)
    if isinstance(node, A.TupleTypeExpr):
        if not allow_tuple:
            ck.diags.error("E0214", "a tuple type is only allowed as a function's result type",
                           node.span, help="destructure tuple values with `let (a, b) = ...;`")
            return ERROR
        elems = tuple(resolve_type(ck, e) for e in node.elems)
        if ERROR in elems:
            return ERROR
        for e, t in zip(node.elems, elems):
            if not isinstance(t, (ScalarType, PtrType)):
                ck.diags.error("E0214", f"tuple elements must be scalars or pointers, not `{t}`", e.span)
                return ERROR
        return TupleType(elems)
    raise AssertionError(node)


TMA_SWIZZLES = (32, 64, 128)


def _tensormap(ck, node, allowed: bool) -> Type:
    """`tensormap<bf16, [128, 64], swizzle(128)>`: what the host encodes into a CUtensorMap
    and TMA copies: boxes of 1 to 5 dimensions (outermost first) of at most 256 elements
    each, whose innermost bytes are a multiple of 16, and with a swizzle exactly one span."""
    elem = resolve_type(ck, node.elem)
    dims = [ck.const_value(d, SCALARS["u32"], "a box dimension") for d in node.box]
    if elem is ERROR or None in dims:
        return ERROR
    if not isinstance(elem, ScalarType) or elem.is_bool:
        ck.diags.error("E0214", f"a tensor map holds non-bool scalars, not `{elem}`", node.elem.span)
        return ERROR
    if not 1 <= len(dims) <= 5:
        ck.diags.error("E0214", f"a tensor map's box has 1 to 5 dimensions, not {len(dims)}", node.span)
        return ERROR
    for d, at in zip(dims, node.box):
        if not 1 <= d <= 256:
            ck.diags.error("E0214", f"a box dimension is 1..256 elements, not {d}", at.span)
            return ERROR
    inner = dims[-1] * elem.nbytes
    swz = node.swizzle or 0
    if swz and swz not in TMA_SWIZZLES:
        ck.diags.error("E0218", f"a tile swizzles 32, 64 or 128 bytes, not {swz}", node.swizzle_span)
        return ERROR
    if swz and inner != swz:
        ck.diags.error("E0218", f"the innermost box dimension of a `swizzle({swz})` tensor map is {swz} bytes "
                       f"(one row of its tile); {dims[-1]} `{elem}` are {inner}", node.box[-1].span)
        return ERROR
    if inner % 16:
        ck.diags.error("E0214", f"the innermost box dimension is a multiple of 16 bytes; {dims[-1]} `{elem}` are "
                       f"{inner}", node.box[-1].span)
        return ERROR
    if not allowed:
        ck.diags.error("E0214", "a tensor map is a kernel parameter, passed by the host", node.span,
                       help="declare it as a kernel parameter: `a: tensormap<bf16, [128, 64], swizzle(128)>`")
        return ERROR
    return TensorMapType(elem, tuple(dims), swz)


def check_params(ck, params: list, kernel: bool) -> list:
    out, seen = [], {}
    for p in params:
        t = resolve_type(ck, p.type, allow_tensormap=kernel)
        if p.name in seen:
            ck.diags.error("E0102", f"parameter `{p.name}` is declared twice", p.name_span)
        seen[p.name] = p
        if t is not ERROR:
            if kernel and t == BOOL:
                ck.diags.error("E0214", "kernel parameters cannot be `bool`", p.type.span,
                               help="pass a `u32` and compare it with 0")
                t = ERROR
            elif kernel and isinstance(t, PtrType) and t.space != "global":
                ck.diags.error("E0214", f"a kernel cannot take a `{t.space}` pointer", p.type.span,
                               help="kernel pointer parameters point to `global` memory")
                t = ERROR
        if p.align is not None and t is not ERROR:
            t = _param_align(ck, p, t)
        if p.stream is not None:
            _param_stream(ck, p, t, kernel)
        out.append(T.Symbol(p.name, "param", t, p.name_span))
    return out


def _param_stream(ck, p: A.Param, t: Type, kernel: bool) -> None:
    """`stream`: a hint on a kernel's read-only pointer (its data is read once), turned
    into cache qualifiers on the loads through it (ember.lowering.lower_mem)."""
    if not kernel:
        ck.diags.error("E0214", "`stream` applies to kernel parameters only", p.stream,
                       help="a device function's loads keep the hint of the kernel parameter they read")
    elif t is not ERROR and not (isinstance(t, PtrType) and not t.mut):
        ck.diags.error("E0214", "`stream` applies to read-only pointer parameters (`*global T`) only",
                       p.stream, label=f"`{p.name}` is `{t}`")


def _param_align(ck, p: A.Param, t: Type) -> Type:
    if not isinstance(t, PtrType):
        ck.diags.error("E0214", "`align(N)` applies to pointer parameters only", p.span)
        return t
    n = p.align
    if n <= 0 or n & (n - 1) or n > 256:
        ck.diags.error("E0214", f"`align({n})` must be a power of two no larger than 256", p.span)
        return t
    if n < natural_align(t.pointee):
        ck.diags.error("E0214", f"`align({n})` is below the natural alignment of `{t.pointee}` "
                       f"({natural_align(t.pointee)})", p.span)
        return t
    return t.with_align(n)


# ------------------------------------------------------------------ constants
def coerce(ck, e: T.TExpr, target: Type) -> T.TExpr:
    """Give an untyped constant the type `target` (checking it fits); typed
    expressions are returned as they are."""
    t = e.ty
    if t not in UNTYPED or target is ERROR:
        return e
    if not isinstance(target, ScalarType) or target.is_bool:
        mismatch(ck, e, target, I32 if t is UNTYPED_INT else F32)
        return error_expr(e)
    v = e.value
    if target.is_int:
        if t is UNTYPED_FLOAT:
            whole = v == int(v)
            ck.diags.error("E0201", "mismatched types", e.span,
                           label=f"expected `{target}`, found a float constant",
                           help=(f"write an integer: `{floats.describe(int(v))}`" if whole else
                                 "use an integer, or convert the other operand to a float type"))
            return error_expr(e)
        lo, hi = target.int_range()
        if not lo <= v <= hi:
            ck.diags.error("E0203", f"the constant {floats.describe(v)} does not fit in `{target}` "
                           f"({lo}..{hi})", e.span, label=f"out of range for `{target}`")
            return error_expr(e)
        return T.TConst(e.span, target, v, e.folded)
    x = floats.round_fraction(Fraction(v), target.name)
    if x in (float("inf"), float("-inf")):
        ck.diags.error("E0203", f"the constant {floats.describe(v)} overflows `{target}`", e.span)
        return error_expr(e)
    return T.TConst(e.span, target, x, e.folded)


def default_type(ck, e: T.TExpr, expected: Type | None = None) -> T.TExpr:
    """An untyped constant gets the expected type (if numeric) or its default."""
    t = e.ty
    if t not in UNTYPED:
        return e
    target = expected if isinstance(expected, ScalarType) and expected.is_numeric else (
        I32 if t is UNTYPED_INT else F32)
    if t is UNTYPED_FLOAT and isinstance(expected, ScalarType) and expected.is_int:
        target = F32   # report the mismatch with the float's default type
    return coerce(ck, e, target)


def error_expr(e: T.TExpr) -> T.TExpr:
    return T.TConst(e.span, ERROR, None)


# ------------------------------------------------------------------ messages
def mismatch(ck, e, want: Type, got: Type) -> None:
    help_ = None
    if isinstance(want, ScalarType) and isinstance(got, ScalarType) and want.is_numeric and got.is_numeric:
        help_ = f"convert explicitly: `{want}({snippet(e)})`"
    ck.diags.error("E0201", "mismatched types", e.span, label=f"expected `{want}`, found `{got}`", help=help_)


def bad_operand(ck, e, op: str, t):
    ck.diags.error("E0202", f"`{op}` is not defined for `{t}`", e.span)
    return T.TConst(e.span, ERROR, None)


def expect(ck, e: T.TExpr, want: Type) -> T.TExpr:
    """e (already given an untyped constant's type) where a `want` is needed: an error
    if it is not assignable, a conversion when a pointer drops an alignment promise."""
    if e.ty is ERROR or want is ERROR or e.ty == want:
        return e
    if assignable(e.ty, want):
        return T.TBitcast(e.span, want, e)
    mismatch(ck, e, want, e.ty)
    return error_expr(e)
