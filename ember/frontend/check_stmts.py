"""Checking statements: bindings, arrays, assignments, control flow and returns. Each
returns its typed statement; every function is a generator (see ember.trampoline) and
takes the checker as its explicit context `ck` (diagnostics, scopes, `ck.expr`)."""

from __future__ import annotations

from ..ir.types import BOOL, F32, I32, U32, VOID, ArrayType, ScalarType, TupleType, array_in, array_scalar, swizzled
from . import ast as A
from . import typed as T
from .check_exprs import check_index, expr, typed, undefined
from .check_operators import check_binary
from .check_types import ERROR, UNTYPED, UNTYPED_INT, coerce, expect, mismatch, resolve_type

_KIND_WORDS = {"let": "an immutable binding", "param": "a parameter", "const": "a constant",
               "loop": "a loop variable", "shared": "a shared array", "array": "an array", "type": "a type"}


def check_block(ck, block: A.Block, top: bool = False):
    ck.push()
    out = []
    warned = False
    for i, s in enumerate(block.stmts):
        out.append((yield check_stmt(ck, s, top)))
        if not warned and isinstance(s, (A.Return, A.Break, A.Continue)) and i + 1 < len(block.stmts):
            ck.diags.warning("W0002", "unreachable code", block.stmts[i + 1].span,
                             label="never runs", notes=[f"control leaves at {s.span}"])
            warned = True
    ck.pop()
    return T.TBlock(block.span, out)


def check_stmt(ck, s: A.Node, top: bool = False):
    if isinstance(s, A.SharedDecl):
        return (yield _shared_decl(ck, s, top))
    return (yield _STATEMENTS[type(s)](ck, s))


def _block(ck, s: A.Block):
    return (yield check_block(ck, s))


# ------------------------------------------------------------------ bindings

def _let(ck, s: A.Let):
    declared = resolve_type(ck, s.type) if s.type is not None else None
    if s.is_tuple:
        value = yield expr(ck, s.value)
        t = value.ty
        if declared is not None:
            ck.diags.error("E0214", "a tuple pattern takes no type annotation", s.type.span)
        if t is ERROR:
            elems = [ERROR] * len(s.names)
        elif not isinstance(t, TupleType):
            ck.diags.error("E0211", f"expected a tuple of {len(s.names)} values, found `{t}`", s.value.span)
            elems = [ERROR] * len(s.names)
        elif len(t.elems) != len(s.names):
            ck.diags.error("E0211", f"the pattern has {len(s.names)} names but the value has "
                           f"{len(t.elems)} parts", s.span)
            elems = [ERROR] * len(s.names)
        else:
            elems = list(t.elems)
        syms = [ck.declare(T.Symbol(n, "let", et, sp)) for (n, sp), et in zip(s.names, elems)]
        return T.TLet(s.span, syms, value)
    value = yield _initial_value(ck, s.value, declared)
    (n, sp), = s.names
    # a `let` of a constant is a named constant: usable where constants are required
    # (array lengths, block sizes of nothing, static_assert, unroll bounds)
    const = value.const if value.ty is not ERROR and isinstance(value.ty, ScalarType) else None
    return T.TLet(s.span, [ck.declare(T.Symbol(n, "let", value.ty, sp, const))], value)


def _var(ck, s: A.Var):
    declared = resolve_type(ck, s.type, allow_array=True) if s.type is not None else None
    if isinstance(s.type, A.ArrayTypeExpr) and declared is ERROR:
        if s.value is not None:
            yield expr(ck, s.value)
        return T.TArray(s.span, ck.declare(T.Symbol(s.name, "array", ERROR, s.name_span)))
    if isinstance(declared, ArrayType):
        declared = array_in(declared, "local")
        if s.value is not None:
            yield expr(ck, s.value)
            ck.diags.error("E0217", "an array cannot be initialized from a value", s.value.span,
                           help=f"declare it alone (`var {s.name}: {declared};` starts as zeros) "
                                "and assign its elements")
        ck.count_array(s.name, declared, s.type.span, shared=False)
        return T.TArray(s.span, ck.declare(T.Symbol(s.name, "array", declared, s.name_span)))
    if s.value is None:
        ck.diags.error("E0217", f"`var {s.name}` needs an initial value", s.span,
                       help=f"write `var {s.name} = ...;` (only arrays start as zeros)")
        sym = ck.declare(T.Symbol(s.name, "var", declared or ERROR, s.name_span))
        return T.TVarDecl(s.span, sym, T.TConst(s.span, ERROR, None))
    value = yield _initial_value(ck, s.value, declared)
    return T.TVarDecl(s.span, ck.declare(T.Symbol(s.name, "var", value.ty, s.name_span)), value)


def _initial_value(ck, e: A.Expr, declared):
    """An initializer, against an optional declared type (its type is the binding's)."""
    if declared is ERROR:
        yield expr(ck, e)
        return T.TConst(e.span, ERROR, None)
    v = yield typed(ck, e, declared)
    t = v.ty
    if t is ERROR:
        return T.TConst(e.span, declared or ERROR, None)
    if isinstance(t, TupleType):
        ck.diags.error("E0212", f"a tuple `{t}` cannot be bound to one name", e.span,
                       help="destructure it: `let (a, b) = ...;`")
        return T.TConst(e.span, ERROR, None)
    if t is VOID:
        ck.diags.error("E0213", "this call has no result", e.span)
        return T.TConst(e.span, ERROR, None)
    if isinstance(t, ArrayType):
        ck.diags.error("E0217", "an array is not a value that can be copied", e.span,
                       help="read its elements with `a[i]`")
        return T.TConst(e.span, ERROR, None)
    if declared is not None:
        v = expect(ck, v, declared)
        return v if v.ty is not ERROR else T.TConst(e.span, declared, None)
    return v


def _shared_decl(ck, s: A.SharedDecl, top: bool):
    sized = _launch_sized(ck, s, top)
    if sized is not None:
        if s.swizzle is not None:
            ck.diags.error("E0218", "a shared array sized at launch is not a tile: it cannot be swizzled",
                           s.swizzle_span)
        return sized
    t = resolve_type(ck, s.type, allow_array=True)
    if ck.fn_kind != "kernel" or not top:
        ck.diags.error("E0307", "`shared` arrays are declared at the top level of a kernel body", s.span)
    elif t is not ERROR and not isinstance(t, ArrayType):
        ck.diags.error("E0214", "a `shared` declaration needs an array type `[T; N]`", s.type.span)
        t = ERROR
    if isinstance(t, ArrayType):
        t = array_in(t, "shared")
        if s.swizzle is not None:
            t = _swizzled_tile(ck, s, t)
        if ck.fn_kind == "kernel" and top:
            ck.count_array(s.name, t, s.span, shared=True)
    return T.TArray(s.span, ck.declare(T.Symbol(s.name, "shared", t, s.name_span)))
    yield


SWIZZLES = (32, 64, 128)


def _swizzled_tile(ck, s: A.SharedDecl, t: ArrayType):
    """`shared a: [[bf16; 64]; 128] swizzle(128);`: a tile whose rows are one swizzle span
    (N bytes) each and come in whole 8-row atoms, so that the XOR order the tensor cores
    and TMA use (16-byte chunk c of row r at chunk c ^ (r * N / 128 mod N / 16)) permutes
    chunks within each row and depends only on the row's index (docs/language.md)."""
    rows, row = t, t.elem
    while isinstance(row, ArrayType) and isinstance(row.elem, ArrayType):
        rows, row = row, row.elem
    if s.swizzle not in SWIZZLES:
        ck.diags.error("E0218", f"a tile swizzles 32, 64 or 128 bytes, not {s.swizzle}", s.swizzle_span)
        return t
    if not isinstance(row, ArrayType) or rows is row:
        ck.diags.error("E0218", f"a swizzled tile has rows: `[[T; {s.swizzle} bytes]; R]` or more dimensions, "
                       f"not `{t}`", s.type.span)
        return t
    width = row.length * array_scalar(row).nbytes
    if width != s.swizzle:
        ck.diags.error("E0218", f"each row of a `swizzle({s.swizzle})` tile is {s.swizzle} bytes; "
                       f"`{row}` is {width}", s.type.span,
                       help=f"rows of {s.swizzle // array_scalar(row).nbytes} `{array_scalar(row)}`")
        return t
    if rows.length % 8:
        ck.diags.error("E0218", f"a swizzled tile's rows come in atoms of 8; `{t}` has {rows.length} per "
                       "block", s.type.span, help="a multiple of 8 rows")
        return t
    return swizzled(t, s.swizzle)


def _launch_sized(ck, s: A.SharedDecl, top: bool):
    """`shared row: [f32; cols];` with `cols` a kernel parameter: an array sized at launch
    (at most one per kernel, one-dimensional, at the kernel's top level); None when the
    declaration is not of this form."""
    node = s.type
    if not (isinstance(node, A.ArrayTypeExpr) and isinstance(node.length, A.Name)):
        return None
    sym = ck.lookup(node.length.id)
    if sym is None or sym.kind != "param":
        return None
    name_span = node.length.span
    if ck.fn_kind != "kernel" or not top:
        ck.diags.error("E0307", "`shared` arrays are declared at the top level of a kernel body", s.span)
        return T.TArray(s.span, ck.declare(T.Symbol(s.name, "shared", ERROR, s.name_span)))
    elem = resolve_type(ck, node.elem, allow_array=True)
    t = ERROR
    if sym.ty != U32:
        ck.diags.error("E0214", f"a shared array sized at launch takes its length from a `u32` parameter; "
                       f"`{sym.name}` is `{sym.ty}`", name_span)
    elif elem is not ERROR and (not isinstance(elem, ScalarType) or elem.is_bool):
        ck.diags.error("E0214", f"a shared array sized at launch holds non-bool scalars, not `{elem}`",
                       node.elem.span, help="only its one dimension can be sized at launch")
    elif ck.item.sized_shared:
        ck.diags.error("E0214", f"kernel `{ck.fn_name}` already has a shared array sized at launch "
                       f"(`{ck.item.sized_shared}`); it may have one", s.span,
                       help="put both in one array, one after the other")
    elif elem is not ERROR:
        ck.item.sized_shared = s.name
        t = ArrayType(elem, 0, "shared", sym.name)
    length = T.TVar(name_span, sym.ty, sym)
    return T.TArray(s.span, ck.declare(T.Symbol(s.name, "shared", t, s.name_span)), length)


# ------------------------------------------------------------------ assignment

def _assign(ck, s: A.Assign):
    target = s.target
    if isinstance(target, A.Name):
        sym = ck.lookup(target.id)
        if sym is None:
            undefined(ck, target)
            yield expr(ck, s.value)
            return T.TExprStmt(s.span, T.TConst(s.span, ERROR, None))
        if sym.kind != "var":
            help_ = {"let": f"declare it with `var {sym.name} = ...` to make it mutable",
                     "param": f"copy it into a variable first: `var {sym.name}_ = {sym.name};`",
                     "loop": "use a `while` loop to change the counter"}.get(sym.kind)
            ck.diags.error("E0301", f"cannot assign to `{sym.name}`, {_KIND_WORDS[sym.kind]}", target.span,
                           label="assigned here", help=help_, notes=[f"`{sym.name}` is declared at {sym.span}"])
        tt = sym.ty
        current = T.TVar(target.span, tt, sym)
    elif isinstance(target, A.Index):
        current = yield check_index(ck, target, store=True)
        tt = current.ty
        if isinstance(tt, ArrayType):
            ck.diags.error("E0302", f"cannot assign to a row (`{tt}`) of a multi-dimensional array", target.span,
                           help="assign to its elements, one index per dimension: `a[i][j] = ...`")
            tt = ERROR
    else:
        ck.diags.error("E0302", "cannot assign to this expression", target.span,
                       help="assign to a `var` or to an element `p[i]`")
        yield expr(ck, s.value)
        return T.TExprStmt(s.span, T.TConst(s.span, ERROR, None))
    if tt is ERROR:
        yield expr(ck, s.value)
        return T.TExprStmt(s.span, T.TConst(s.span, ERROR, None))
    if s.op == "=":
        value = yield typed(ck, s.value, tt)
        if value.ty is not ERROR:
            value = expect(ck, value, tt)
        if isinstance(current, T.TVar):
            return T.TAssign(s.span, current.sym, value)
        return T.TStore(s.span, current.base, current.index, value)
    combined = yield from check_binary(ck, s.op, s.op_span, current, s.value, tt, s.span, compound=True)
    if combined.ty is ERROR:
        return T.TExprStmt(s.span, combined)
    if isinstance(current, T.TVar):
        return T.TAssign(s.span, current.sym, combined)     # x = x op e (or a pointer offset)
    return T.TStore(s.span, current.base, current.index, combined.rhs, s.op, tt)


# ------------------------------------------------------------------ control flow

def _if(ck, s: A.If):
    """An `if` whose condition is a constant (once const parameters are bound) compiles only
    the branch it takes: the other is discarded unchecked, as C++'s `if constexpr` discards
    one, so that a kernel can hold what only other values of its const parameters make
    valid (a transposed operand's tile shape: kernels_src/gemm_wgmma.ember)."""
    cond = yield _condition(ck, s.cond)
    taken = cond.const if cond.ty == BOOL and isinstance(cond.const, bool) else None
    then = T.TBlock(s.then.span, []) if taken is False else (yield check_block(ck, s.then))
    if s.else_ is not None and taken is True:
        els = T.TBlock(s.else_.span, [])
    elif isinstance(s.else_, A.If):
        els = yield _if(ck, s.else_)
    elif s.else_ is not None:
        els = yield check_block(ck, s.else_)
    else:
        els = None
    return T.TIf(s.span, cond, then, els)


def _condition(ck, e: A.Expr):
    c = yield typed(ck, e, BOOL)
    t = c.ty
    if t is not ERROR and t != BOOL:
        ck.diags.error("E0209", f"a condition must be `bool`, not `{t}`", e.span,
                       help="compare explicitly, e.g. `x != 0`" if isinstance(t, ScalarType) else None)
    return c


def _while(ck, s: A.While):
    cond = yield _condition(ck, s.cond)
    ck.loop_depth += 1
    body = yield check_block(ck, s.body)
    ck.loop_depth -= 1
    return T.TWhile(s.span, cond, body)


def _for(ck, s: A.For):
    parts = [s.start, s.end] + ([s.step] if s.step is not None else [])
    checked = []
    for e in parts:
        checked.append((yield expr(ck, e)))
    types = [x.ty for x in checked]
    concrete = [t for t in types if t not in UNTYPED and t is not ERROR]
    t = ERROR if ERROR in types else None
    if t is None:
        if concrete:
            t = concrete[0]
            for i, (x, xt) in enumerate(zip(checked, types)):
                if xt in UNTYPED:
                    checked[i] = coerce(ck, x, t)
                elif xt != t:
                    mismatch(ck, x, t, xt)
                    t = ERROR
        else:
            t = I32
            checked = [coerce(ck, x, t) for x in checked]
    if t is not ERROR and not (isinstance(t, ScalarType) and t.is_int):
        ck.diags.error("E0201", f"loop bounds must be integers, not `{t}`", s.start.span.to(s.end.span))
        t = ERROR
    step = checked[2] if s.step is not None else None
    if step is not None and step.const is not None and t is not ERROR and step.const <= 0:
        ck.diags.error("E0306", f"the step of a `for` loop must be positive, not {step.const}",
                       s.step.span, help="count down with a `while` loop")
    ck.push()
    sym = ck.declare(T.Symbol(s.var, "loop", t, s.var_span))
    ck.loop_depth += 1
    body = yield check_block(ck, s.body)
    ck.loop_depth -= 1
    ck.pop()
    return T.TFor(s.span, sym, checked[0], checked[1], step, body, s.unroll)


def _break(ck, s: A.Break):
    if ck.loop_depth == 0:
        ck.diags.error("E0303", "`break` outside a loop", s.span)
    return T.TBreak(s.span)
    yield


def _continue(ck, s: A.Continue):
    if ck.loop_depth == 0:
        ck.diags.error("E0303", "`continue` outside a loop", s.span)
    return T.TContinue(s.span)
    yield


def _return(ck, s: A.Return):
    if ck.fn_kind == "kernel" or ck.ret_type is VOID:
        if s.value is not None:
            yield expr(ck, s.value)
            what = "a kernel" if ck.fn_kind == "kernel" else f"`{ck.fn_name}`, which has no result type,"
            ck.diags.error("E0304", f"{what} cannot return a value", s.value.span,
                           help="use `return;`" if ck.fn_kind == "kernel" else
                           f"declare a result type: `fn {ck.fn_name}(...) -> T`")
        return T.TReturn(s.span, None)
    if s.value is None:
        ck.diags.error("E0304", f"`{ck.fn_name}` must return a `{ck.ret_type}`", s.span)
        return T.TReturn(s.span, None)
    if ck.ret_type is ERROR:
        yield expr(ck, s.value)
        return T.TReturn(s.span, None)
    value = yield typed(ck, s.value, ck.ret_type)
    if value.ty is not ERROR:
        if isinstance(ck.ret_type, TupleType) and isinstance(value, T.TTuple) \
                and len(value.elems) == len(ck.ret_type.elems):
            elems = [expect(ck, x, t) for x, t in zip(value.elems, ck.ret_type.elems)]
            value = T.TTuple(value.span, ck.ret_type, elems) if all(x.ty is not ERROR for x in elems) \
                else T.TConst(value.span, ERROR, None)
        else:
            value = expect(ck, value, ck.ret_type)
    return T.TReturn(s.span, value)


def _expr_stmt(ck, s: A.ExprStmt):
    e = yield expr(ck, s.expr)
    if e.ty in UNTYPED:
        e = coerce(ck, e, I32 if e.ty is UNTYPED_INT else F32)
    return T.TExprStmt(s.span, e)


# the checker of each kind of statement (a shared declaration also needs `top`)
_STATEMENTS = {
    A.Block: _block,
    A.Let: _let,
    A.Var: _var,
    A.Assign: _assign,
    A.If: _if,
    A.While: _while,
    A.For: _for,
    A.Break: _break,
    A.Continue: _continue,
    A.Return: _return,
    A.ExprStmt: _expr_stmt,
}


def always_returns(block: A.Block) -> bool:
    """Every path through `block` ends in a `return` (an `if` needs both sides to)."""
    return _returns(block)


def _returns(node) -> bool:
    """Iteratively: blocks and ifs are decided after the ones nested in them. A block
    returns if one of its statements does; an `if` returns if both sides do."""
    memo: dict = {}
    stack = [(node, False)]
    while stack:
        n, expanded = stack.pop()
        if id(n) in memo:
            continue
        kids = _return_kids(n)
        if not expanded and kids:
            stack.append((n, True))
            stack.extend((k, False) for k in kids)
            continue
        memo[id(n)] = _decide(n, memo)
    return memo[id(node)]


def _return_kids(n) -> list:
    if isinstance(n, A.Block):
        return [s for s in n.stmts if isinstance(s, (A.Block, A.If))]
    if isinstance(n, A.If):
        return [n.then] + ([n.else_] if n.else_ is not None else [])
    return []


def _decide(n, memo) -> bool:
    if isinstance(n, A.Block):
        for s in n.stmts:
            if isinstance(s, A.Return):
                return True
            if isinstance(s, (A.Block, A.If)) and memo[id(s)]:
                return True
        return False
    if isinstance(n, A.If):
        return n.else_ is not None and memo[id(n.then)] and memo[id(n.else_)]
    return isinstance(n, A.Return)
