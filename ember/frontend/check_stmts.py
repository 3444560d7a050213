"""Checking statements: bindings, arrays, assignments, control flow and returns. Each
returns its typed statement; every method is a generator (see ember.trampoline)."""

from __future__ import annotations

from ..ir.types import BOOL, F32, I32, VOID, ArrayType, ScalarType, TupleType
from . import ast as A
from . import typed as T
from .check_operators import check_binary
from .check_types import ERROR, UNTYPED, UNTYPED_INT

_KIND_WORDS = {"let": "an immutable binding", "param": "a parameter", "const": "a constant",
               "loop": "a loop variable", "shared": "a shared array", "array": "an array", "type": "a type"}


class StmtChecker:
    """Part of the Checker (ember.frontend.checker)."""

    def block(self, block: A.Block, top: bool = False):
        self.push()
        out = []
        warned = False
        for i, s in enumerate(block.stmts):
            out.append((yield self.stmt(s, top)))
            if not warned and isinstance(s, (A.Return, A.Break, A.Continue)) and i + 1 < len(block.stmts):
                self.diags.warning("W0002", "unreachable code", block.stmts[i + 1].span,
                                   label="never runs", notes=[f"control leaves at {s.span}"])
                warned = True
        self.pop()
        return T.TBlock(block.span, out)

    def stmt(self, s: A.Node, top: bool = False):
        if isinstance(s, A.SharedDecl):
            return (yield self.stmt_SharedDecl(s, top))
        return (yield getattr(self, "stmt_" + type(s).__name__)(s))

    def stmt_Block(self, s: A.Block):
        return (yield self.block(s))

    # ------------------------------------------------------------------ bindings
    def stmt_Let(self, s: A.Let):
        declared = self.resolve_type(s.type) if s.type is not None else None
        if s.is_tuple:
            value = yield self.expr(s.value)
            t = value.ty
            if declared is not None:
                self.diags.error("E0214", "a tuple pattern takes no type annotation", s.type.span)
            if t is ERROR:
                elems = [ERROR] * len(s.names)
            elif not isinstance(t, TupleType):
                self.diags.error("E0211", f"expected a tuple of {len(s.names)} values, found `{t}`", s.value.span)
                elems = [ERROR] * len(s.names)
            elif len(t.elems) != len(s.names):
                self.diags.error("E0211", f"the pattern has {len(s.names)} names but the value has "
                                 f"{len(t.elems)} parts", s.span)
                elems = [ERROR] * len(s.names)
            else:
                elems = list(t.elems)
            syms = [self.declare(T.Symbol(n, "let", et, sp)) for (n, sp), et in zip(s.names, elems)]
            return T.TLet(s.span, syms, value)
        value = yield self.value(s.value, declared)
        (n, sp), = s.names
        # a `let` of a constant is a named constant: usable where constants are required
        # (array lengths, block sizes of nothing, static_assert, unroll bounds)
        const = value.const if value.ty is not ERROR and isinstance(value.ty, ScalarType) else None
        return T.TLet(s.span, [self.declare(T.Symbol(n, "let", value.ty, sp, const))], value)

    def stmt_Var(self, s: A.Var):
        declared = self.resolve_type(s.type, allow_array=True) if s.type is not None else None
        if isinstance(s.type, A.ArrayTypeExpr) and declared is ERROR:
            if s.value is not None:
                yield self.expr(s.value)
            return T.TArray(s.span, self.declare(T.Symbol(s.name, "array", ERROR, s.name_span)))
        if isinstance(declared, ArrayType):
            declared = ArrayType(declared.elem, declared.length, "local")
            if s.value is not None:
                yield self.expr(s.value)
                self.diags.error("E0217", "an array cannot be initialized from a value", s.value.span,
                                 help=f"declare it alone (`var {s.name}: {declared};` starts as zeros) "
                                      "and assign its elements")
            self.count_array(s.name, declared, s.type.span, shared=False)
            return T.TArray(s.span, self.declare(T.Symbol(s.name, "array", declared, s.name_span)))
        if s.value is None:
            self.diags.error("E0217", f"`var {s.name}` needs an initial value", s.span,
                             help=f"write `var {s.name} = ...;` (only arrays start as zeros)")
            sym = self.declare(T.Symbol(s.name, "var", declared or ERROR, s.name_span))
            return T.TVarDecl(s.span, sym, T.TConst(s.span, ERROR, None))
        value = yield self.value(s.value, declared)
        return T.TVarDecl(s.span, self.declare(T.Symbol(s.name, "var", value.ty, s.name_span)), value)

    def value(self, e: A.Expr, declared):
        """An initializer, against an optional declared type (its type is the binding's)."""
        if declared is ERROR:
            yield self.expr(e)
            return T.TConst(e.span, ERROR, None)
        v = yield self.typed(e, declared)
        t = v.ty
        if t is ERROR:
            return T.TConst(e.span, declared or ERROR, None)
        if isinstance(t, TupleType):
            self.diags.error("E0212", f"a tuple `{t}` cannot be bound to one name", e.span,
                             help="destructure it: `let (a, b) = ...;`")
            return T.TConst(e.span, ERROR, None)
        if t is VOID:
            self.diags.error("E0213", "this call has no result", e.span)
            return T.TConst(e.span, ERROR, None)
        if isinstance(t, ArrayType):
            self.diags.error("E0217", "an array is not a value that can be copied", e.span,
                             help="read its elements with `a[i]`")
            return T.TConst(e.span, ERROR, None)
        if declared is not None:
            v = self.expect(v, declared)
            return v if v.ty is not ERROR else T.TConst(e.span, declared, None)
        return v

    def stmt_SharedDecl(self, s: A.SharedDecl, top: bool):
        t = self.resolve_type(s.type, allow_array=True)
        if self.fn_kind != "kernel" or not top:
            self.diags.error("E0307", "`shared` arrays are declared at the top level of a kernel body", s.span)
        elif t is not ERROR and not isinstance(t, ArrayType):
            self.diags.error("E0214", "a `shared` declaration needs an array type `[T; N]`", s.type.span)
            t = ERROR
        if isinstance(t, ArrayType):
            t = ArrayType(t.elem, t.length, "shared")
            if self.fn_kind == "kernel" and top:
                self.count_array(s.name, t, s.span, shared=True)
        return T.TArray(s.span, self.declare(T.Symbol(s.name, "shared", t, s.name_span)))
        yield

    # ------------------------------------------------------------------ assignment
    def stmt_Assign(self, s: A.Assign):
        target = s.target
        if isinstance(target, A.Name):
            sym = self.lookup(target.id)
            if sym is None:
                self.undefined(target)
                yield self.expr(s.value)
                return T.TExprStmt(s.span, T.TConst(s.span, ERROR, None))
            if sym.kind != "var":
                help_ = {"let": f"declare it with `var {sym.name} = ...` to make it mutable",
                         "param": f"copy it into a variable first: `var {sym.name}_ = {sym.name};`",
                         "loop": "use a `while` loop to change the counter"}.get(sym.kind)
                self.diags.error("E0301", f"cannot assign to `{sym.name}`, {_KIND_WORDS[sym.kind]}", target.span,
                                 label="assigned here", help=help_, notes=[f"`{sym.name}` is declared at {sym.span}"])
            tt = sym.ty
            current = T.TVar(target.span, tt, sym)
        elif isinstance(target, A.Index):
            current = yield self.index(target, store=True)
            tt = current.ty
        else:
            self.diags.error("E0302", "cannot assign to this expression", target.span,
                             help="assign to a `var` or to an element `p[i]`")
            yield self.expr(s.value)
            return T.TExprStmt(s.span, T.TConst(s.span, ERROR, None))
        if tt is ERROR:
            yield self.expr(s.value)
            return T.TExprStmt(s.span, T.TConst(s.span, ERROR, None))
        if s.op == "=":
            value = yield self.typed(s.value, tt)
            if value.ty is not ERROR:
                value = self.expect(value, tt)
            if isinstance(current, T.TVar):
                return T.TAssign(s.span, current.sym, value)
            return T.TStore(s.span, current.base, current.index, value)
        combined = yield from check_binary(self, s.op, s.op_span, current, s.value, tt, s.span, compound=True)
        if combined.ty is ERROR:
            return T.TExprStmt(s.span, combined)
        if isinstance(current, T.TVar):
            return T.TAssign(s.span, current.sym, combined)     # x = x op e (or a pointer offset)
        return T.TStore(s.span, current.base, current.index, combined.rhs, s.op, tt)

    # ------------------------------------------------------------------ control flow
    def stmt_If(self, s: A.If):
        cond = yield self.condition(s.cond)
        then = yield self.block(s.then)
        if isinstance(s.else_, A.If):
            els = yield self.stmt_If(s.else_)
        elif s.else_ is not None:
            els = yield self.block(s.else_)
        else:
            els = None
        return T.TIf(s.span, cond, then, els)

    def condition(self, e: A.Expr):
        c = yield self.typed(e, BOOL)
        t = c.ty
        if t is not ERROR and t != BOOL:
            self.diags.error("E0209", f"a condition must be `bool`, not `{t}`", e.span,
                             help="compare explicitly, e.g. `x != 0`" if isinstance(t, ScalarType) else None)
        return c

    def stmt_While(self, s: A.While):
        cond = yield self.condition(s.cond)
        self.loop_depth += 1
        body = yield self.block(s.body)
        self.loop_depth -= 1
        return T.TWhile(s.span, cond, body)

    def stmt_For(self, s: A.For):
        parts = [s.start, s.end] + ([s.step] if s.step is not None else [])
        checked = []
        for e in parts:
            checked.append((yield self.expr(e)))
        types = [x.ty for x in checked]
        concrete = [t for t in types if t not in UNTYPED and t is not ERROR]
        t = ERROR if ERROR in types else None
        if t is None:
            if concrete:
                t = concrete[0]
                for i, (x, xt) in enumerate(zip(checked, types)):
                    if xt in UNTYPED:
                        checked[i] = self.coerce(x, t)
                    elif xt != t:
                        self.mismatch(x, t, xt)
                        t = ERROR
            else:
                t = I32
                checked = [self.coerce(x, t) for x in checked]
        if t is not ERROR and not (isinstance(t, ScalarType) and t.is_int):
            self.diags.error("E0201", f"loop bounds must be integers, not `{t}`", s.start.span.to(s.end.span))
            t = ERROR
        step = checked[2] if s.step is not None else None
        if step is not None and step.const is not None and t is not ERROR and step.const <= 0:
            self.diags.error("E0306", f"the step of a `for` loop must be positive, not {step.const}",
                             s.step.span, help="count down with a `while` loop")
        self.push()
        sym = self.declare(T.Symbol(s.var, "loop", t, s.var_span))
        self.loop_depth += 1
        body = yield self.block(s.body)
        self.loop_depth -= 1
        self.pop()
        return T.TFor(s.span, sym, checked[0], checked[1], step, body, s.unroll)

    def stmt_Break(self, s: A.Break):
        if self.loop_depth == 0:
            self.diags.error("E0303", "`break` outside a loop", s.span)
        return T.TBreak(s.span)
        yield

    def stmt_Continue(self, s: A.Continue):
        if self.loop_depth == 0:
            self.diags.error("E0303", "`continue` outside a loop", s.span)
        return T.TContinue(s.span)
        yield

    def stmt_Return(self, s: A.Return):
        if self.fn_kind == "kernel" or self.ret_type is VOID:
            if s.value is not None:
                yield self.expr(s.value)
                what = "a kernel" if self.fn_kind == "kernel" else f"`{self.fn_name}`, which has no result type,"
                self.diags.error("E0304", f"{what} cannot return a value", s.value.span,
                                 help="use `return;`" if self.fn_kind == "kernel" else
                                 f"declare a result type: `fn {self.fn_name}(...) -> T`")
            return T.TReturn(s.span, None)
        if s.value is None:
            self.diags.error("E0304", f"`{self.fn_name}` must return a `{self.ret_type}`", s.span)
            return T.TReturn(s.span, None)
        if self.ret_type is ERROR:
            yield self.expr(s.value)
            return T.TReturn(s.span, None)
        value = yield self.typed(s.value, self.ret_type)
        if value.ty is not ERROR:
            if isinstance(self.ret_type, TupleType) and isinstance(value, T.TTuple) \
                    and len(value.elems) == len(self.ret_type.elems):
                elems = [self.expect(x, t) for x, t in zip(value.elems, self.ret_type.elems)]
                value = T.TTuple(value.span, self.ret_type, elems) if all(x.ty is not ERROR for x in elems) \
                    else T.TConst(value.span, ERROR, None)
            else:
                value = self.expect(value, self.ret_type)
        return T.TReturn(s.span, value)

    def stmt_ExprStmt(self, s: A.ExprStmt):
        e = yield self.expr(s.expr)
        if e.ty in UNTYPED:
            e = self.coerce(e, I32 if e.ty is UNTYPED_INT else F32)
        return T.TExprStmt(s.span, e)


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
