"""Typed AST -> structured SSA IR.

Variables become SSA values: each `if` yields the variables its branches assign, each
loop carries them as region arguments. `break`, `continue` and early `return` become
bool flags carried the same way, and the statements after a possible exit are guarded by
`scf.if !flag`, so the IR stays structured (no jumps) until lowering:

    for i in 0..n { if x[i] < 0 { break; } s += x[i]; }
becomes a `scf.while` carrying (i, s, brk) whose condition is `!brk && i < n` and whose
body runs `s += x[i]` under `scf.if !brk`.
"""

from __future__ import annotations

from ..diagnostics import Diagnostics
from ..ir.builder import Builder
from ..ir.core import Function, Module, Region, Value
from ..ir.types import BOOL, F32, VOID, ArrayType, PtrType, ScalarType, TupleType
from . import ast as A
from .builtins import INDEX_VALUES, PLAIN_VALUES
from .checker import CheckedProgram, FnInfo, KernelInfo

_BINARY_OPS = {"+": "arith.add", "-": "arith.sub", "*": "arith.mul", "/": "arith.div", "%": "arith.rem",
               "&": "arith.and", "|": "arith.or", "^": "arith.xor", "<<": "arith.shl", ">>": "arith.shr"}
_CMP_PREDS = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}


class Flag:
    """A compiler-made bool (or the return value) carried like a variable."""

    __slots__ = ("name", "ty")

    def __init__(self, name: str, ty=BOOL):
        self.name = name
        self.ty = ty


class _Loop:
    __slots__ = ("node", "brk", "cont")

    def __init__(self, node, brk, cont):
        self.node, self.brk, self.cont = node, brk, cont


def _key_type(k):
    return k.ty


def _key_name(k):
    return k.name


class FnGen:
    def __init__(self, prog: CheckedProgram):
        self.prog = prog
        self.env: dict = {}
        self.loops: list[_Loop] = []
        self.ret: Flag | None = None
        self.retval: list = []        # one flag per result
        self.tail_value: list | None = None
        self.b: Builder | None = None
        self.is_kernel = False

    # ------------------------------------------------------------------ functions
    def kernel(self, info: KernelInfo) -> Function:
        self.is_kernel = True
        k = info.node
        region = Region([s.ty for s in info.params], [s.name for s in info.params])
        attrs = {}
        if info.block is not None:
            attrs["block"] = list(info.block)
        f = Function(k.name, "kernel", region, [], attrs, loc=k.name_span)
        self.body(region, info.params, k.body, VOID)
        return f

    def fn(self, info: FnInfo) -> Function:
        node = info.node
        region = Region([s.ty for s in info.params], [s.name for s in info.params])
        results = [] if info.ret is VOID else (list(info.ret.elems) if isinstance(info.ret, TupleType) else [info.ret])
        f = Function(node.name, "func", region, results, {}, loc=node.name_span)
        self.body(region, info.params, node.body, info.ret)
        return f

    def body(self, region: Region, params: list, block: A.Block, ret_type) -> None:
        self.b = Builder(region, block.span)
        for sym, arg in zip(params, region.args):
            self.env[sym] = arg
        stmts = block.stmts
        needs_flags = any(isinstance(n, A.Return) for n in _walk_stmts(stmts[:-1])) or (
            stmts and not isinstance(stmts[-1], A.Return) and any(isinstance(n, A.Return) for n in _walk_stmts(stmts[-1:])))
        results = [] if ret_type is VOID else (list(ret_type.elems) if isinstance(ret_type, TupleType) else [ret_type])
        if needs_flags:
            self.ret = Flag("returned")
            self.env[self.ret] = self.b.const(BOOL, False)
            self.retval = [Flag("retval", t) for t in results]
            for flag, t in zip(self.retval, results):
                self.env[flag] = self.zero(t)
        self.stmts(stmts)
        if self.retval:
            self.b.op("func.return", [self.env[f] for f in self.retval])
        else:
            self.b.op("func.return", list(self.tail_value or []))

    def zero(self, t) -> Value:
        if isinstance(t, ScalarType):
            return self.b.const(t, 0)
        raise AssertionError(f"no zero value for {t}")

    # ------------------------------------------------------------------ analysis
    def assigned(self, nodes) -> list:
        """Keys (symbols and flags) that `nodes` may assign and that exist outside them."""
        out: dict = {}

        def visit(n, depth: int) -> None:
            if isinstance(n, A.Assign):
                if isinstance(n.target, A.Name) and n.target.sym is not None and n.target.sym.kind == "var":
                    out[n.target.sym] = None
            elif isinstance(n, A.Break):
                if depth == 0 and self.loops and self.loops[-1].brk is not None:
                    out[self.loops[-1].brk] = None
            elif isinstance(n, A.Continue):
                if depth == 0 and self.loops and self.loops[-1].cont is not None:
                    out[self.loops[-1].cont] = None
            elif isinstance(n, A.Return):
                if self.ret is not None:
                    out[self.ret] = None
                for f in self.retval:
                    out[f] = None
            elif isinstance(n, A.Block):
                for s in n.stmts:
                    visit(s, depth)
            elif isinstance(n, A.If):
                visit(n.then, depth)
                if n.else_ is not None:
                    visit(n.else_, depth)
            elif isinstance(n, (A.For, A.While)):
                visit(n.body, depth + 1)

        for n in nodes:
            if n is not None:
                visit(n, 0)
        return [k for k in out if k in self.env]

    @staticmethod
    def exits(n, depth: int = 0) -> set:
        """The ways control may leave through `n`: 'return', 'break', 'continue'."""
        if isinstance(n, A.Return):
            return {"return"}
        if isinstance(n, A.Break):
            return {"break"} if depth == 0 else set()
        if isinstance(n, A.Continue):
            return {"continue"} if depth == 0 else set()
        out: set = set()
        if isinstance(n, A.Block):
            for s in n.stmts:
                out |= FnGen.exits(s, depth)
        elif isinstance(n, A.If):
            out |= FnGen.exits(n.then, depth)
            if n.else_ is not None:
                out |= FnGen.exits(n.else_, depth)
        elif isinstance(n, (A.For, A.While)):
            out |= FnGen.exits(n.body, depth + 1)
        return out

    # ------------------------------------------------------------------ regions
    def in_region(self, b: Builder, fn):
        """Run fn with `b` as the builder and a private copy of the environment."""
        saved_b, saved_env = self.b, dict(self.env)
        self.b = b
        try:
            return fn()
        finally:
            self.b, self.env = saved_b, saved_env

    def gen_if(self, cond: Value, keys: list, then_fn, else_fn) -> None:
        """An scf.if that yields `keys`; then_fn/else_fn generate each side."""
        def side(fn):
            def build(b: Builder):
                def run():
                    if fn is not None:
                        fn()
                    return [self.env[k] for k in keys]
                return self.in_region(b, run)
            return build
        results = self.b.if_(cond, [_key_type(k) for k in keys], side(then_fn), side(else_fn))
        for k, v in zip(keys, results):
            v.name = _key_name(k)
            self.env[k] = v

    # ------------------------------------------------------------------ statements
    def stmts(self, stmts: list) -> None:
        for i, s in enumerate(stmts):
            self.stmt(s)
            if isinstance(s, (A.Break, A.Continue, A.Return)):
                return  # what follows is unreachable (the checker warned)
            rest = stmts[i + 1:]
            exits = self.exits(s)
            if rest and exits:
                guard = self.b.not_(self.any_flag(exits))
                keys = self.assigned(rest)
                self.gen_if(guard, keys, lambda: self.stmts(rest), None)
                return

    def any_flag(self, exits: set) -> Value:
        flags = []
        if "return" in exits and self.ret is not None:
            flags.append(self.ret)
        if self.loops:
            if "break" in exits and self.loops[-1].brk is not None:
                flags.append(self.loops[-1].brk)
            if "continue" in exits and self.loops[-1].cont is not None:
                flags.append(self.loops[-1].cont)
        v = self.env[flags[0]]
        for f in flags[1:]:
            v = self.b.binary("arith.or", v, self.env[f])
        return v

    def stmt(self, s) -> None:
        old = self.b.loc
        self.b.loc = s.span
        try:
            getattr(self, "stmt_" + type(s).__name__)(s)
        finally:
            self.b.loc = old

    def stmt_Block(self, s: A.Block) -> None:
        self.stmts(s.stmts)

    def stmt_Let(self, s: A.Let) -> None:
        if s.is_tuple:
            vals = self.expr_multi(s.value)
            for sym, v in zip(s.syms, vals):
                self.bind(sym, v)
            return
        self.bind(s.syms[0], self.expr(s.value))

    def bind(self, sym, v: Value) -> None:
        if v.name is None or v.op is not None and v.op.name == "arith.const":
            v.name = sym.name
        self.env[sym] = v

    def stmt_Var(self, s: A.Var) -> None:
        if isinstance(s.sym.ty, ArrayType):
            t = s.sym.ty
            ptr = self.b.value("mem.alloca", attrs={"length": t.length},
                               type=PtrType(t.elem, "local", True), hint=s.name)
            self.env[s.sym] = ptr
            return
        self.bind(s.sym, self.expr(s.value))

    def stmt_SharedDecl(self, s: A.SharedDecl) -> None:
        t = s.sym.ty
        ptr = self.b.value("mem.shared", attrs={"length": t.length, "name": s.name},
                           type=PtrType(t.elem, "shared", True), hint=s.name)
        self.env[s.sym] = ptr

    def stmt_Assign(self, s: A.Assign) -> None:
        target = s.target
        if isinstance(target, A.Name):
            if s.op == "=":
                v = self.expr(s.value)
            else:
                v = self.binop(s.op, self.env[target.sym], self.expr(s.value), target.ty)
            if v.name is None:
                v.name = target.sym.name
            self.env[target.sym] = v
            return
        ptr, idx = self.address(target)
        if s.op == "=":
            v = self.expr(s.value)
        else:
            old = self.b.value("mem.load", ptr, idx, type=target.ty)
            v = self.binop(s.op, old, self.expr(s.value), target.ty)
        self.b.op("mem.store", [v, ptr, idx])

    def stmt_ExprStmt(self, s: A.ExprStmt) -> None:
        e = s.expr
        if isinstance(e, A.Call) and e.ty is VOID:
            self.expr_any(e)
        elif e.const is None:
            self.expr_any(e)

    def stmt_Return(self, s: A.Return) -> None:
        vals = self.expr_any(s.value) if s.value is not None else []
        if self.is_kernel:
            self.b.op("gpu.exited", [])
        if self.ret is None:
            self.tail_value = vals
            return
        self.env[self.ret] = self.b.const(BOOL, True)
        for f, v in zip(self.retval, vals):
            self.env[f] = v

    def stmt_Break(self, s: A.Break) -> None:
        self.env[self.loops[-1].brk] = self.b.const(BOOL, True)

    def stmt_Continue(self, s: A.Continue) -> None:
        self.env[self.loops[-1].cont] = self.b.const(BOOL, True)

    def stmt_If(self, s: A.If) -> None:
        cond = self.expr(s.cond)
        keys = self.assigned([s.then, s.else_])
        els = s.else_
        else_fn = None
        if isinstance(els, A.If):
            else_fn = lambda: self.stmt_If(els)  # noqa: E731
        elif els is not None:
            else_fn = lambda: self.stmts(els.stmts)  # noqa: E731
        self.gen_if(cond, keys, lambda: self.stmts(s.then.stmts), else_fn)

    def loop_flags(self, node) -> _Loop:
        ex = self.exits(node.body, 0)
        return _Loop(node, Flag("brk") if "break" in ex else None, Flag("cont") if "continue" in ex else None)

    def stmt_For(self, s: A.For) -> None:
        t = s.sym.ty
        lo = self.expr(s.start)
        hi = self.expr(s.end)
        step = self.expr(s.step) if s.step is not None else self.b.const(t, 1)
        loop = self.loop_flags(s)
        returns = "return" in self.exits(s.body, 1)
        if loop.brk is None and loop.cont is None and not returns:
            keys = self.assigned([s.body])

            def body_fn(b: Builder, iv: Value, args: list[Value]):
                def run():
                    self.env[s.sym] = iv
                    for k, a in zip(keys, args):
                        self.env[k] = a
                    self.loops.append(loop)
                    try:
                        self.stmts(s.body.stmts)
                    finally:
                        self.loops.pop()
                    return [self.env[k] for k in keys]
                return self.in_region(b, run)

            attrs = {"unroll": True} if s.unroll else None
            results = self.b.for_(lo, hi, step, [self.env[k] for k in keys], body_fn, iv_name=s.var,
                                  arg_names=[_key_name(k) for k in keys], attrs=attrs)
            for k, v in zip(keys, results):
                v.name = _key_name(k)
                self.env[k] = v
            return
        # A loop with break/continue/return: a while loop carrying the counter and the flags.
        self.env[s.sym] = lo
        cond = lambda: self.b.cmp("lt", self.env[s.sym], hi)  # noqa: E731
        self.flagged_loop(s, loop, cond, lambda: self.b.binary("arith.add", self.env[s.sym], step),
                          counter=s.sym, safe_cond=True)

    def stmt_While(self, s: A.While) -> None:
        # Without flags this is a plain scf.while; with them the condition also checks the flags.
        self.flagged_loop(s, self.loop_flags(s), lambda: self.expr(s.cond), None, counter=None, safe_cond=False)

    def flagged_loop(self, s, loop: _Loop, cond_fn, step_fn, counter, safe_cond: bool) -> None:
        """An scf.while carrying the variables the body assigns, the counter and the flags."""
        if loop.brk is not None:
            self.env[loop.brk] = self.b.const(BOOL, False)
        self.loops.append(loop)
        keys = self.assigned([s.body])
        self.loops.pop()
        if loop.cont is not None and loop.cont in keys:
            keys.remove(loop.cont)   # reset on every iteration, not carried
        if counter is not None and counter not in keys:
            keys.insert(0, counter)
        stop_flags = [f for f in (loop.brk, self.ret if "return" in self.exits(s.body, 1) else None) if f is not None]
        for f in stop_flags:
            if f not in keys:
                keys.append(f)

        def bind(args):
            for k, a in zip(keys, args):
                self.env[k] = a

        def cond_region(b: Builder, args):
            def run():
                bind(args)
                if not stop_flags:
                    c = cond_fn()
                else:
                    stop = self.env[stop_flags[0]]
                    for f in stop_flags[1:]:
                        stop = self.b.binary("arith.or", stop, self.env[f])
                    if safe_cond:
                        c = self.b.binary("arith.and", self.b.not_(stop), cond_fn())
                    else:   # do not evaluate the condition once the loop is left (it may load)
                        c, = self.b.if_(stop, [BOOL], lambda b: [b.const(BOOL, False)],
                                        lambda b: [self.in_region(b, cond_fn)])
                return c, [self.env[k] for k in keys]
            return self.in_region(b, run)

        def body_region(b: Builder, args):
            def run():
                bind(args)
                if loop.cont is not None:
                    self.env[loop.cont] = self.b.const(BOOL, False)
                self.loops.append(loop)
                try:
                    self.stmts(s.body.stmts)
                finally:
                    self.loops.pop()
                if step_fn is not None:
                    self.env[counter] = step_fn()
                return [self.env[k] for k in keys]
            return self.in_region(b, run)

        results = self.b.while_([self.env[k] for k in keys], cond_region, body_region,
                                arg_names=[_key_name(k) for k in keys])
        for k, v in zip(keys, results):
            v.name = _key_name(k)
            self.env[k] = v

    # ------------------------------------------------------------------ expressions
    def expr(self, e: A.Expr) -> Value:
        vals = self.expr_any(e)
        assert len(vals) == 1, e
        return vals[0]

    def expr_multi(self, e: A.Expr) -> list[Value]:
        return self.expr_any(e)

    def expr_any(self, e: A.Expr) -> list[Value]:
        old = self.b.loc
        self.b.loc = e.span
        try:
            if e.const is not None and isinstance(e.ty, ScalarType):
                return [self.b.const(e.ty, e.const)]
            return getattr(self, "expr_" + type(e).__name__)(e)
        finally:
            self.b.loc = old

    def expr_Name(self, e: A.Name):
        if e.sym is None and e.id in PLAIN_VALUES:
            return [self.b.value(PLAIN_VALUES[e.id], type=e.ty)]
        return [self.env[e.sym]]

    def expr_Unary(self, e: A.Unary):
        x = self.expr(e.operand)
        return [self.b.value("arith.neg" if e.op == "-" else "arith.not", x)]

    def expr_Binary(self, e: A.Binary):
        if e.op in ("&&", "||"):
            return [self.logic(e)]
        a = self.expr(e.lhs)
        b = self.expr(e.rhs)
        if e.op in _CMP_PREDS:
            return [self.b.cmp(_CMP_PREDS[e.op], a, b)]
        return [self.binop(e.op, a, b, e.ty)]

    def binop(self, op: str, a: Value, b: Value, t) -> Value:
        if isinstance(a.type, PtrType):
            if op == "-":
                b = self.b.value("arith.neg", b)
            return self.b.value("mem.offset", a, b)
        return self.b.binary(_BINARY_OPS[op], a, b)

    def logic(self, e: A.Binary) -> Value:
        a = self.expr(e.lhs)
        if _safe_to_speculate(e.rhs):
            return self.b.binary("arith.and" if e.op == "&&" else "arith.or", a, self.expr(e.rhs))
        rhs = lambda b: [self.in_region(b, lambda: self.expr(e.rhs))]  # noqa: E731
        konst = lambda value: (lambda b: [b.const(BOOL, value)])  # noqa: E731
        if e.op == "&&":
            r, = self.b.if_(a, [BOOL], rhs, konst(False))
        else:
            r, = self.b.if_(a, [BOOL], konst(True), rhs)
        return r

    def address(self, e: A.Index):
        base = self.expr(e.base)
        idx = self.expr(e.index)
        return base, idx

    def expr_Index(self, e: A.Index):
        ptr, idx = self.address(e)
        return [self.b.value("mem.load", ptr, idx, type=e.ty)]

    def expr_Field(self, e: A.Field):
        op = INDEX_VALUES[e.base.id]
        return [self.b.value(op, attrs={"dim": e.name})]

    def expr_TupleExpr(self, e: A.TupleExpr):
        return [self.expr(x) for x in e.elems]

    def expr_BitCast(self, e: A.BitCast):
        return [self.b.bitcast(self.expr(e.value), e.ty)]

    def expr_Call(self, e: A.Call):
        kind = e.target[0]
        if kind == "cast":
            return [self.b.cast(self.expr(e.args[0]), e.target[1])]
        if kind == "fn":
            return self.call(e)
        _, b, binding = e.target
        args = [self.expr(a) for a in e.args]
        if not b.op:
            return [self.classify(b.name, args[0])]
        attrs = dict(b.attrs) or None
        if e.ty is VOID:
            result_types = []
        else:
            result_types = list(e.ty.elems) if isinstance(e.ty, TupleType) else [e.ty]
        if b.promote_half and any(t.name in ("f16", "bf16") for t in result_types):
            args = [self.b.cast(a, F32) for a in args]
            op = self.b.op(b.op, args, [F32] * len(result_types), attrs)
            return [self.b.cast(r, t) for r, t in zip(op.results, result_types)]
        return list(self.b.op(b.op, args, result_types, attrs).results)

    def classify(self, name: str, x: Value) -> Value:
        if name == "isnan":
            return self.b.cmp("ne", x, x)
        inf = self.b.const(x.type, float("inf"))
        ax = self.b.value("arith.abs", x)
        return self.b.cmp("eq" if name == "isinf" else "lt", ax, inf)

    def call(self, e: A.Call) -> list[Value]:
        info = self.prog.fns[e.target[1]]
        args = [self.expr(a) for a in e.args]
        ret = info.ret
        results = [] if ret is VOID else (list(ret.elems) if isinstance(ret, TupleType) else [ret])
        return list(self.b.op("func.call", args, results, {"callee": info.node.name}).results)


def _safe_to_speculate(e: A.Expr) -> bool:
    """No loads and no user calls: evaluating it when not needed changes nothing."""
    if isinstance(e, A.Index):
        return False
    if isinstance(e, A.Call):
        if e.target is not None and e.target[0] == "fn":
            return False
        return all(_safe_to_speculate(a) for a in e.args)
    if isinstance(e, A.Binary):
        return _safe_to_speculate(e.lhs) and _safe_to_speculate(e.rhs)
    if isinstance(e, A.Unary):
        return _safe_to_speculate(e.operand)
    if isinstance(e, A.BitCast):
        return _safe_to_speculate(e.value)
    return True


def _walk_stmts(stmts):
    for s in stmts:
        yield s
        if isinstance(s, A.Block):
            yield from _walk_stmts(s.stmts)
        elif isinstance(s, A.If):
            yield from _walk_stmts(s.then.stmts)
            if isinstance(s.else_, A.If):
                yield from _walk_stmts([s.else_])
            elif s.else_ is not None:
                yield from _walk_stmts(s.else_.stmts)
        elif isinstance(s, (A.For, A.While)):
            yield from _walk_stmts(s.body.stmts)


def generate(prog: CheckedProgram, diags: Diagnostics) -> Module:
    """Every kernel and every device function (LLVM drops the unused internal ones)."""
    m = Module()
    for info in prog.kernels:
        m.functions.append(FnGen(prog).kernel(info))
    for info in prog.fns.values():
        m.functions.append(FnGen(prog).fn(info))
    return m
