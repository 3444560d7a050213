"""Name resolution and type checking: AST -> typed AST.

Rules (docs/language.md has the user-facing version):
- no implicit conversions at all; `T(x)` converts, `bitcast<T>(x)` reinterprets;
- literals are untyped constants (exact integers and rationals) until the context gives
  them a type: the other operand, the declared type, the parameter, or a default (i32 for
  integers, f32 for floats); a constant that does not fit its type is an error;
- `let` binds immutably, `var` mutably; parameters, loop variables and constants are
  immutable;
- const generic parameters of a kernel are bound at compile time (-D NAME=VALUE, or the
  declared default), so expressions over them and literals are folded here.

The checker reports as many errors as it can in one run: an expression whose type could
not be determined gets the error type, which silences errors that would only repeat it.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from fractions import Fraction

from .. import floats, targets
from ..values import parse_scalar
from ..diagnostics import Diagnostics
from ..source import Span
from ..ir.types import (ADDRESS_SPACES, BOOL, F32, I32, I64, SCALARS, U32, VOID, ArrayType, PtrType,
                        ScalarType, TupleType, Type, natural_align, size_of)
from . import ast as A
from .builtins import BUILTINS, INDEX_VALUES, KIND_WORDS, PLAIN_VALUES, VARS, Builtin
from .consteval import ConstError, int_binop, int_unop, untyped_binop, wrap


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

ARITH_OPS = ("+", "-", "*", "/", "%")
BIT_OPS = ("&", "|", "^")
CMP_OPS = ("==", "!=", "<", "<=", ">", ">=")
SHIFT_OPS = ("<<", ">>")
LOGIC_OPS = ("&&", "||")


class Symbol:
    __slots__ = ("name", "kind", "ty", "span", "value")

    def __init__(self, name: str, kind: str, ty: Type, span, value=None):
        self.name = name
        self.kind = kind      # let | var | param | const | loop | shared
        self.ty = ty
        self.span = span
        self.value = value    # for const: the bound value

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name}: {self.ty}>"


@dataclass
class FnInfo:
    node: A.FnDef
    params: list            # [Symbol]
    ret: Type
    calls: list = field(default_factory=list)   # [(callee name, span)]
    local_bytes: int = 0                         # per-thread arrays declared in the body


@dataclass
class KernelInfo:
    node: A.KernelDef
    consts: dict            # name -> (type, value)
    params: list            # [Symbol]
    block: tuple | None     # (x, y, z) or None
    calls: list = field(default_factory=list)   # [(callee name, span)]
    local_bytes: int = 0
    shared_bytes: int = 0   # static shared memory, as ptxas lays it out (16-byte aligned arrays)


@dataclass
class CheckedProgram:
    module: A.Module
    kernels: list
    fns: dict


class Checker:
    def __init__(self, module: A.Module, defines: dict[str, str], diags: Diagnostics, target,
                 only: set | None = None):
        self.module = module
        self.target = target
        self.only = only
        self.defines = dict(defines)
        self.diags = diags
        self.fns: dict[str, FnInfo] = {}
        self.kernels: list[KernelInfo] = []
        self.scopes: list[dict[str, Symbol]] = []
        self.used_defines: set[str] = set()
        # per-function context
        self.fn_kind = "kernel"
        self.ret_type: Type = VOID
        self.loop_depth = 0
        self.calls: list | None = None
        self.block_depth = 0
        self.type_params: dict[str, ScalarType] = {}   # the current kernel's `const T: type`

    # ------------------------------------------------------------------ driver
    def run(self) -> CheckedProgram:
        items: dict[str, A.Node] = {}
        for item in self.module.items:
            reserved = self._reserved_name(item)
            if reserved:
                self.diags.error("E0102", f"`{item.name}` is {reserved}; a {'kernel' if isinstance(item, A.KernelDef) else 'function'} "
                                 "cannot take its name", item.name_span, label="reserved name",
                                 help=f"rename it, e.g. `my_{item.name}`")
                continue
            prev = items.get(item.name)
            if prev is not None:
                self.diags.error("E0102", f"`{item.name}` is defined more than once", item.name_span,
                                 label="redefined here", notes=[f"first defined at {prev.name_span}"])
                continue
            items[item.name] = item
        for item in self.module.items:
            if isinstance(item, A.FnDef) and items.get(item.name) is item:
                self.fn_signature(item)
        if self.only is not None:
            names = {k.name for k in self.module.items if isinstance(k, A.KernelDef)}
            for name in sorted(self.only - names):
                self.diags.error("E0109", f"`{self.module.file.name}` has no kernel `{name}`",
                                 help=self._suggest(name, names) or
                                 ("its kernels: " + ", ".join(sorted(names)) if names else None))
        for item in self.module.items:
            if isinstance(item, A.KernelDef) and items.get(item.name) is item and (
                    self.only is None or item.name in self.only):
                self.kernel(item)
        for info in self.fns.values():
            self.fn_body(info)
        self.check_recursion()
        if not self.diags.has_errors:
            self.check_local_memory()
        for name in self.defines:
            if name not in self.used_defines and self.only is None:
                self.diags.warning("W0001", f"`-D {name}` is not a const parameter of any kernel",
                                   help=self._suggest(name, self._all_const_names()))
        if not self.kernels and not self.module.broken_items and not self.diags.has_errors:
            items = self.module.items
            where = items[0].name_span if items else Span(self.module.file, 0, 0)
            self.diags.error("E0109", f"`{self.module.file.name}` defines no kernel", where,
                             label="only device functions here" if items else "an empty program",
                             help="declare an entry point with `kernel name(...) { ... }`")
        return CheckedProgram(self.module, self.kernels, self.fns)

    @staticmethod
    def _reserved_name(item) -> str | None:
        """Names a device function must not take: calls would mean the builtin (or the
        conversion), not the function."""
        if item.name in SCALARS:
            return "a type (its calls convert)"
        if isinstance(item, A.FnDef) and item.name in BUILTINS:
            return "a builtin function"
        if item.name in INDEX_VALUES or item.name in PLAIN_VALUES:
            return "a builtin value"
        return None

    def _all_const_names(self) -> list[str]:
        return [g.name for k in self.module.items if isinstance(k, A.KernelDef) for g in k.generics]

    # ------------------------------------------------------------------ scopes
    def push(self) -> None:
        self.scopes.append({})

    def pop(self) -> None:
        self.scopes.pop()

    def declare(self, sym: Symbol) -> Symbol:
        self.scopes[-1][sym.name] = sym
        return sym

    def lookup(self, name: str) -> Symbol | None:
        for scope in reversed(self.scopes):
            s = scope.get(name)
            if s is not None:
                return s
        return None

    def visible_names(self) -> list[str]:
        names = []
        for scope in self.scopes:
            names.extend(scope)
        return names

    @staticmethod
    def _suggest(name: str, candidates) -> str | None:
        close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
        return f"a similar name exists: `{close[0]}`" if close else None

    # ------------------------------------------------------------------ types
    def resolve_type(self, node: A.Node, allow_array: bool = False, allow_tuple: bool = False) -> Type:
        if isinstance(node, A.TypeName):
            t = SCALARS.get(node.name) or self.type_params.get(node.name)
            if t is ERROR:
                return ERROR    # a type parameter without a valid value: reported already
            if t is None:
                self.diags.error("E0103", f"unknown type `{node.name}`", node.span, label="not a type",
                                 help=self._suggest(node.name, SCALARS) or
                                 "the scalar types are bool, i8..i64, u8..u64, f16, bf16, f32, f64")
                return ERROR
            return t
        if isinstance(node, A.PtrTypeExpr):
            if node.space not in LANGUAGE_SPACES:
                if node.space in ADDRESS_SPACES:   # const and generic exist in the IR only
                    self.diags.error("E0214", f"`{node.space}` pointers are not part of the language",
                                     node.space_span, help="pointers point to `global` memory (parameters: "
                                     "`*global T` is read-only and cached), `shared` or `local` memory")
                else:
                    self.diags.error("E0214", f"unknown address space `{node.space}`", node.space_span,
                                     help="address spaces are: " + ", ".join(LANGUAGE_SPACES))
                return ERROR
            pointee = self.resolve_type(node.pointee)
            if pointee is ERROR:
                return ERROR
            if not isinstance(pointee, ScalarType) or pointee.is_bool:
                self.diags.error("E0214", f"pointers must point to a non-bool scalar, not `{pointee}`",
                                 node.pointee.span,
                                 help="store flags as `u8`" if pointee == BOOL else None)
                return ERROR
            return PtrType(pointee, node.space, node.mut)
        if isinstance(node, A.ArrayTypeExpr):
            elem = self.resolve_type(node.elem)
            n = self.const_int(node.length, U32, "an array length")
            if elem is ERROR or n is None:
                return ERROR
            if not allow_array:
                self.diags.error("E0214", "array types are only allowed for `var` and `shared` arrays", node.span)
                return ERROR
            if not isinstance(elem, ScalarType) or elem.is_bool:
                self.diags.error("E0214", f"array elements must be non-bool scalars, not `{elem}`", node.elem.span)
                return ERROR
            if n <= 0:
                self.diags.error("E0402", "an array needs at least one element", node.length.span)
                return ERROR
            return ArrayType(elem, n)
        if isinstance(node, A.TupleTypeExpr):
            if not allow_tuple:
                self.diags.error("E0214", "a tuple type is only allowed as a function's result type",
                                 node.span, help="destructure tuple values with `let (a, b) = ...;`")
                return ERROR
            elems = tuple(self.resolve_type(e) for e in node.elems)
            if ERROR in elems:
                return ERROR
            for e, t in zip(node.elems, elems):
                if not isinstance(t, (ScalarType, PtrType)):
                    self.diags.error("E0214", f"tuple elements must be scalars or pointers, not `{t}`", e.span)
                    return ERROR
            return TupleType(elems)
        raise AssertionError(node)

    # ------------------------------------------------------------------ items
    def params(self, params: list, kernel: bool) -> list[Symbol]:
        out, seen = [], {}
        for p in params:
            t = self.resolve_type(p.type)
            if p.name in seen:
                self.diags.error("E0102", f"parameter `{p.name}` is declared twice", p.name_span)
            seen[p.name] = p
            if t is not ERROR:
                if kernel and t == BOOL:
                    self.diags.error("E0214", "kernel parameters cannot be `bool`", p.type.span,
                                     help="pass a `u32` and compare it with 0")
                    t = ERROR
                elif kernel and isinstance(t, PtrType) and t.space != "global":
                    self.diags.error("E0214", f"a kernel cannot take a `{t.space}` pointer", p.type.span,
                                     help="kernel pointer parameters point to `global` memory")
                    t = ERROR
            if p.align is not None and t is not ERROR:
                t = self.param_align(p, t)
            sym = Symbol(p.name, "param", t, p.name_span)
            p.sym = sym
            out.append(sym)
        return out

    def param_align(self, p: A.Param, t: Type) -> Type:
        if not isinstance(t, PtrType):
            self.diags.error("E0214", "`align(N)` applies to pointer parameters only", p.span)
            return t
        n = p.align
        if n <= 0 or n & (n - 1) or n > 256:
            self.diags.error("E0214", f"`align({n})` must be a power of two no larger than 256", p.span)
            return t
        if n < natural_align(t.pointee):
            self.diags.error("E0214", f"`align({n})` is below the natural alignment of `{t.pointee}` "
                             f"({natural_align(t.pointee)})", p.span)
            return t
        return t.with_align(n)

    def fn_signature(self, fn: A.FnDef) -> None:
        if fn.generics:
            self.diags.error("E0107", "const parameters are only allowed on kernels", fn.generics[0].span,
                             help="pass the value as an ordinary parameter; it is folded after inlining")
        self.push()
        params = self.params(fn.params, kernel=False)
        self.pop()
        ret = self.resolve_type(fn.ret, allow_tuple=True) if fn.ret is not None else VOID
        self.fns[fn.name] = FnInfo(fn, params, ret)

    def kernel(self, k: A.KernelDef) -> None:
        self.push()
        consts: dict[str, tuple] = {}
        self.type_params = {}
        for g in k.generics:
            if isinstance(g.type, A.TypeName) and g.type.name == "type":
                self.type_param(k, g, consts)
                continue
            t = self.resolve_type(g.type)
            if t is not ERROR and not isinstance(t, ScalarType):
                self.diags.error("E0214", "const parameters must have a scalar type", g.type.span)
                t = ERROR
            value = self.const_param_value(k, g, t)
            if g.name in consts:
                self.diags.error("E0102", f"const parameter `{g.name}` is declared twice", g.name_span)
            sym = Symbol(g.name, "const", t if value is not None else ERROR, g.name_span, value)
            g.sym = sym
            consts[g.name] = (t, value)
            self.declare(sym)
        params = self.params(k.params, kernel=True)
        for sym in params:
            if sym.name in consts:
                self.diags.error("E0102", f"`{sym.name}` is both a const parameter and a parameter", sym.span)
            elif sym.name not in self.scopes[-1]:   # a duplicate does not shadow the first
                self.declare(sym)
        block = self.block_dims(k)
        info = KernelInfo(k, consts, params, block)
        self.kernels.append(info)
        self.enter_fn("kernel", VOID, k.name)
        self.memory = info
        self.body(k.body, top=True)
        info.calls = self.calls
        self.pop()
        self.type_params = {}

    def type_param(self, k: A.KernelDef, g: A.GenericParam, consts: dict) -> None:
        """`const T: type = f32`: a scalar type bound at compile time (-D T=f16), usable
        wherever a type is (parameters, `let x: T`, arrays, `T(x)` casts, `bitcast<T>`).
        Without a valid type, T stands for ERROR so its uses report nothing more."""
        self.type_params[g.name] = ERROR
        if g.name in consts or g.name in SCALARS:
            self.diags.error("E0102", f"`{g.name}` cannot be declared as a type parameter here", g.name_span,
                             label="already a type" if g.name in SCALARS else "declared twice")
            return
        if g.name in self.defines:
            self.used_defines.add(g.name)
            text, where = self.defines[g.name].strip(), g.name_span
        elif isinstance(g.default, A.Name):
            text, where = g.default.id, g.default.span
        elif g.default is not None:
            self.diags.error("E0404", f"the default of type parameter `{g.name}` must be a type name",
                             g.default.span, help=f"for example `const {g.name}: type = f32`")
            return
        else:
            self.diags.error("E0106", f"type parameter `{g.name}` of kernel `{k.name}` has no value",
                             g.name_span, label="needs a type",
                             help=f"pass `-D {g.name}=f16` (or `defines={{'{g.name}': 'f16'}}`), "
                                  f"or give it a default: `const {g.name}: type = f32`")
            return
        t = SCALARS.get(text)
        if t is None or t.is_bool:
            self.diags.error("E0404", f"`{text}` is not a numeric type for type parameter `{g.name}`", where,
                             label="a type parameter" if where is g.name_span else "not a numeric type",
                             help="one of i8..i64, u8..u64, f16, bf16, f32, f64")
            return
        self.type_params[g.name] = t
        consts[g.name] = (None, t.name)
        sym = Symbol(g.name, "type", ERROR, g.name_span, t.name)
        g.sym = sym
        self.declare(sym)

    def const_param_value(self, k: A.KernelDef, g: A.GenericParam, t: Type):
        if t is ERROR:
            return None
        if g.name in self.defines:
            self.used_defines.add(g.name)
            text = self.defines[g.name]
            try:
                return parse_scalar(text, t)
            except (ValueError, ZeroDivisionError) as e:
                self.diags.error("E0404", f"`-D {g.name}={text}` is not a valid `{t}`: {e}", g.name_span,
                                 label=f"`{g.name}` is declared `{t}` here")
                return None
        if g.default is not None:
            v = self.const_value(g.default, t, "a const parameter default")
            return v
        self.diags.error("E0106", f"const parameter `{g.name}` of kernel `{k.name}` has no value",
                         g.name_span, label="needs a value",
                         help=f"pass `-D {g.name}=<{t}>` (or `defines={{'{g.name}': ...}}`), "
                              f"or give it a default: `const {g.name}: {t} = ...`")
        return None

    def block_dims(self, k: A.KernelDef):
        if k.block is None:
            return None
        if len(k.block) > 3:
            self.diags.error("E0402", "a block has at most three dimensions", k.block[3].span)
            return None
        dims = []
        for e in k.block:
            v = self.const_int(e, U32, "a block dimension")
            if v is None:
                return None
            if v <= 0:
                self.diags.error("E0402", f"block dimensions must be positive (this one is {v})", e.span)
                return None
            dims.append(v)
        dims += [1] * (3 - len(dims))
        limits = (1024, 1024, 64)
        for d, lim, e in zip(dims, limits, k.block):
            if d > lim:
                self.diags.error("E0402", f"block dimension {d} exceeds the limit of {lim}", e.span)
                return None
        if dims[0] * dims[1] * dims[2] > 1024:
            self.diags.error("E0402", f"a block of {dims[0]}x{dims[1]}x{dims[2]} threads exceeds 1024 threads",
                             k.block[0].span.to(k.block[-1].span))
            return None
        return tuple(dims)

    def enter_fn(self, kind: str, ret: Type, name: str) -> None:
        self.fn_kind = kind
        self.ret_type = ret
        self.loop_depth = 0
        self.calls = []
        self.fn_name = name

    def fn_body(self, info: FnInfo) -> None:
        self.push()
        for sym in info.params:
            if sym.name not in self.scopes[-1]:
                self.declare(sym)
        self.enter_fn("fn", info.ret, info.node.name)
        self.memory = info
        self.body(info.node.body, top=True)
        info.calls = self.calls
        if info.ret is not VOID and info.ret is not ERROR and not _always_returns(info.node.body):
            end = info.node.body.span
            self.diags.error("E0305", f"function `{info.node.name}` may reach its end without returning a `{info.ret}`",
                             Span(end.file, end.end - 1, end.end), label="the end is reachable here",
                             help="end every path with `return <value>;`")
        self.pop()

    def check_local_memory(self) -> None:
        """Per-thread arrays of a kernel, with those of every device function it inlines
        (one copy per call), against the target's local memory per thread."""
        limit = self.target.local_bytes_per_thread
        totals: dict[str, int] = {}

        def total(name: str) -> int:   # the call graph is acyclic (checked before)
            if name not in totals:
                info = self.fns[name]
                totals[name] = min(info.local_bytes + sum(total(c) for c, _ in info.calls if c in self.fns),
                                   limit + 1)
            return totals[name]

        for k in self.kernels:
            used = min(k.local_bytes + sum(total(c) for c, _ in k.calls if c in self.fns), limit + 1)
            if used > limit:
                self.diags.error("E0406", f"kernel `{k.node.name}` needs more than {limit // 1024} KB of "
                                 "per-thread arrays (with the device functions it calls)", k.node.name_span,
                                 help="shrink the arrays, or share one array between the calls")

    def check_recursion(self) -> None:
        graph = {name: info.calls for name, info in self.fns.items()}
        state: dict[str, int] = {}

        def visit(name: str) -> None:
            state[name] = 1
            for callee, span in graph.get(name, []):
                if callee not in graph:
                    continue
                if state.get(callee) == 1:
                    self.diags.error("E0108", f"`{callee}` is called recursively", span,
                                     label="this call closes a cycle",
                                     help="device functions are inlined; rewrite the recursion as a loop")
                elif state.get(callee) is None:
                    visit(callee)
            state[name] = 2

        for name in graph:
            if name not in state:
                visit(name)

    # ------------------------------------------------------------------ statements
    def body(self, block: A.Block, top: bool = False) -> None:
        self.push()
        self.block_depth += 1
        self._top = top
        warned = False
        for i, s in enumerate(block.stmts):
            self.stmt(s, top)
            if not warned and isinstance(s, (A.Return, A.Break, A.Continue)) and i + 1 < len(block.stmts):
                self.diags.warning("W0002", "unreachable code", block.stmts[i + 1].span,
                                   label="never runs", notes=[f"control leaves at {s.span}"])
                warned = True
        self.block_depth -= 1
        self.pop()

    def stmt(self, s: A.Node, top: bool = False) -> None:
        m = getattr(self, "stmt_" + type(s).__name__)
        m(s, top) if isinstance(s, A.SharedDecl) else m(s)

    def stmt_Block(self, s: A.Block) -> None:
        self.body(s)

    def stmt_Let(self, s: A.Let) -> None:
        declared = self.resolve_type(s.type) if s.type is not None else None
        if s.is_tuple:
            t = self.expr(s.value)
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
            s.syms = [self.declare(Symbol(n, "let", et, sp)) for (n, sp), et in zip(s.names, elems)]
            return
        t = self.value(s.value, declared)
        (n, sp), = s.names
        s.syms = [self.declare(Symbol(n, "let", t, sp))]

    def stmt_Var(self, s: A.Var) -> None:
        declared = self.resolve_type(s.type, allow_array=True) if s.type is not None else None
        if isinstance(s.type, A.ArrayTypeExpr) and declared is ERROR:
            if s.value is not None:
                self.expr(s.value)
            s.sym = self.declare(Symbol(s.name, "array", ERROR, s.name_span))
            return
        if isinstance(declared, ArrayType):
            declared = ArrayType(declared.elem, declared.length, "local")
            nbytes = size_of(declared)
            limit = self.target.local_bytes_per_thread
            if nbytes > limit:
                self.diags.error("E0406", f"`{s.name}` takes {nbytes} bytes per thread; per-thread arrays are "
                                 f"limited to {limit // 1024} KB", s.type.span,
                                 help="use a shared array, or split the work between threads")
            self.memory.local_bytes += nbytes
            if s.value is not None:
                self.expr(s.value)
                self.diags.error("E0217", "an array cannot be initialized from a value", s.value.span,
                                 help=f"declare it alone (`var {s.name}: {declared};` starts as zeros) "
                                      "and assign its elements")
            s.sym = self.declare(Symbol(s.name, "array", declared, s.name_span))
            return
        if s.value is None:
            self.diags.error("E0217", f"`var {s.name}` needs an initial value", s.span,
                             help=f"write `var {s.name} = ...;` (only arrays start as zeros)")
            s.sym = self.declare(Symbol(s.name, "var", declared or ERROR, s.name_span))
            return
        t = self.value(s.value, declared)
        s.sym = self.declare(Symbol(s.name, "var", t, s.name_span))

    def value(self, e: A.Expr, declared: Type | None) -> Type:
        """Check an initializer against an optional declared type."""
        if declared is ERROR:
            self.expr(e)
            return ERROR
        t = self.typed(e, declared)
        if t is ERROR:
            return declared or ERROR
        if isinstance(t, TupleType):
            self.diags.error("E0212", f"a tuple `{t}` cannot be bound to one name", e.span,
                             help="destructure it: `let (a, b) = ...;`")
            return ERROR
        if t is VOID:
            self.diags.error("E0213", "this call has no result", e.span)
            return ERROR
        if isinstance(t, ArrayType):
            self.diags.error("E0217", "an array is not a value that can be copied", e.span,
                             help="read its elements with `a[i]`")
            return ERROR
        if declared is not None and t != declared:
            self.mismatch(e, declared, t)
            return declared
        return t

    def stmt_SharedDecl(self, s: A.SharedDecl, top: bool) -> None:
        t = self.resolve_type(s.type, allow_array=True)
        if self.fn_kind != "kernel" or not top:
            self.diags.error("E0307", "`shared` arrays are declared at the top level of a kernel body", s.span)
        elif t is not ERROR and not isinstance(t, ArrayType):
            self.diags.error("E0214", "a `shared` declaration needs an array type `[T; N]`", s.type.span)
            t = ERROR
        if isinstance(t, ArrayType):
            t = ArrayType(t.elem, t.length, "shared")
            self.count_shared(s, t)
        s.sym = self.declare(Symbol(s.name, "shared", t, s.name_span))

    def count_shared(self, s: A.SharedDecl, t: ArrayType) -> None:
        k = self.memory
        limit = self.target.static_shared_bytes
        before = k.shared_bytes
        k.shared_bytes = (before + 15) // 16 * 16 + size_of(t)
        if k.shared_bytes > limit >= before:
            self.diags.error("E0405", f"kernel `{self.fn_name}` declares {k.shared_bytes} bytes of shared memory "
                             f"with `{s.name}`; a block may declare at most {limit} bytes ({limit // 1024} KB)",
                             s.span, label=f"{size_of(t)} bytes",
                             help="shrink the arrays, or tile the work over several passes")

    def stmt_Assign(self, s: A.Assign) -> None:
        target = s.target
        if isinstance(target, A.Name):
            sym = self.lookup(target.id)
            if sym is None:
                self.undefined(target)
                self.expr(s.value)
                return
            target.sym = sym
            target.ty = sym.ty
            if sym.kind != "var":
                what = {"let": "an immutable binding", "param": "a parameter", "const": "a constant",
                        "loop": "a loop variable", "shared": "a shared array", "array": "an array",
                        "type": "a type"}[sym.kind]
                help_ = {"let": f"declare it with `var {sym.name} = ...` to make it mutable",
                         "param": f"copy it into a variable first: `var {sym.name}_ = {sym.name};`",
                         "loop": "use a `while` loop to change the counter"}.get(sym.kind)
                self.diags.error("E0301", f"cannot assign to `{sym.name}`, {what}", target.span,
                                 label="assigned here", help=help_, notes=[f"`{sym.name}` is declared at {sym.span}"])
            tt = sym.ty
        elif isinstance(target, A.Index):
            tt = self.index(target, store=True)
        else:
            self.diags.error("E0302", "cannot assign to this expression", target.span,
                             help="assign to a `var` or to an element `p[i]`")
            self.expr(s.value)
            return
        if tt is ERROR:
            self.expr(s.value)
            return
        if s.op == "=":
            vt = self.typed(s.value, tt)
            if vt is not ERROR and vt != tt:
                self.mismatch(s.value, tt, vt)
        else:
            self.binary_types(s.op, s.op_span, target, s.value, tt, compound=True)

    def stmt_If(self, s: A.If) -> None:
        self.condition(s.cond)
        self.body(s.then)
        if isinstance(s.else_, A.If):
            self.stmt_If(s.else_)
        elif s.else_ is not None:
            self.body(s.else_)

    def condition(self, e: A.Expr) -> None:
        t = self.typed(e, BOOL)
        if t is not ERROR and t != BOOL:
            self.diags.error("E0209", f"a condition must be `bool`, not `{t}`", e.span,
                             help="compare explicitly, e.g. `x != 0`" if isinstance(t, ScalarType) else None)

    def stmt_While(self, s: A.While) -> None:
        self.condition(s.cond)
        self.loop_depth += 1
        self.body(s.body)
        self.loop_depth -= 1

    def stmt_For(self, s: A.For) -> None:
        parts = [s.start, s.end] + ([s.step] if s.step is not None else [])
        types = [self.expr(e) for e in parts]
        concrete = [t for t in types if t not in UNTYPED and t is not ERROR]
        t = ERROR if ERROR in types else None
        if t is None:
            if concrete:
                t = concrete[0]
                for e, et in zip(parts, types):
                    if et in UNTYPED:
                        self.coerce(e, t)
                    elif et != t:
                        self.mismatch(e, t, et)
                        t = ERROR
            else:
                t = I32
                for e in parts:
                    self.coerce(e, t)
        if t is not ERROR and not (isinstance(t, ScalarType) and t.is_int):
            self.diags.error("E0201", f"loop bounds must be integers, not `{t}`", s.start.span.to(s.end.span))
            t = ERROR
        if s.step is not None and s.step.const is not None and t is not ERROR and s.step.const <= 0:
            self.diags.error("E0306", f"the step of a `for` loop must be positive, not {s.step.const}",
                             s.step.span, help="count down with a `while` loop")
        self.push()
        s.sym = self.declare(Symbol(s.var, "loop", t, s.var_span))
        self.loop_depth += 1
        self.body(s.body)
        self.loop_depth -= 1
        self.pop()

    def stmt_Break(self, s: A.Break) -> None:
        if self.loop_depth == 0:
            self.diags.error("E0303", "`break` outside a loop", s.span)

    def stmt_Continue(self, s: A.Continue) -> None:
        if self.loop_depth == 0:
            self.diags.error("E0303", "`continue` outside a loop", s.span)

    def stmt_Return(self, s: A.Return) -> None:
        if self.fn_kind == "kernel" or self.ret_type is VOID:
            if s.value is not None:
                self.expr(s.value)
                what = "a kernel" if self.fn_kind == "kernel" else f"`{self.fn_name}`, which has no result type,"
                self.diags.error("E0304", f"{what} cannot return a value", s.value.span,
                                 help="use `return;`" if self.fn_kind == "kernel" else
                                 f"declare a result type: `fn {self.fn_name}(...) -> T`")
            return
        if s.value is None:
            self.diags.error("E0304", f"`{self.fn_name}` must return a `{self.ret_type}`", s.span)
            return
        if self.ret_type is ERROR:
            self.expr(s.value)
            return
        t = self.typed(s.value, self.ret_type)
        if t is not ERROR and t != self.ret_type:
            self.mismatch(s.value, self.ret_type, t)

    def stmt_ExprStmt(self, s: A.ExprStmt) -> None:
        t = self.expr(s.expr)
        if t in UNTYPED:
            self.coerce(s.expr, I32 if t is UNTYPED_INT else F32)

    # ------------------------------------------------------------------ expressions
    def expr(self, e: A.Expr, expected: Type | None = None) -> Type:
        t = getattr(self, "expr_" + type(e).__name__)(e, expected)
        e.ty = t
        return t

    def typed(self, e: A.Expr, expected: Type | None = None) -> Type:
        """Check e and give an untyped constant a concrete type (the expected one, or the default)."""
        t = self.expr(e, expected)
        if t in UNTYPED:
            target = expected if isinstance(expected, ScalarType) and expected.is_numeric else (
                I32 if t is UNTYPED_INT else F32)
            if t is UNTYPED_FLOAT and isinstance(expected, ScalarType) and expected.is_int:
                target = F32   # report the mismatch with the float's default type
            return self.coerce(e, target)
        return t

    def coerce(self, e: A.Expr, target: Type) -> Type:
        """Give an untyped constant expression the type `target` (checking it fits)."""
        t = e.ty
        if t not in UNTYPED or target is ERROR:
            return t
        if not isinstance(target, ScalarType) or target.is_bool:
            self.mismatch(e, target, I32 if t is UNTYPED_INT else F32)
            e.ty = ERROR
            return ERROR
        v = e.const
        if target.is_int:
            if t is UNTYPED_FLOAT:
                whole = v == int(v)
                self.diags.error("E0201", "mismatched types", e.span,
                                 label=f"expected `{target}`, found a float constant",
                                 help=(f"write an integer: `{floats.describe(int(v))}`" if whole else
                                       "use an integer, or convert the other operand to a float type"))
                e.ty = ERROR
                return ERROR
            lo, hi = target.int_range()
            if not lo <= v <= hi:
                self.diags.error("E0203", f"the constant {floats.describe(v)} does not fit in `{target}` ({lo}..{hi})",
                                 e.span, label=f"out of range for `{target}`")
                e.ty = ERROR
                return ERROR
            e.const = v
        else:
            x = floats.round_fraction(Fraction(v), target.name)
            if x in (float("inf"), float("-inf")):
                self.diags.error("E0203", f"the constant {floats.describe(v)} overflows `{target}`", e.span)
                e.ty = ERROR
                return ERROR
            e.const = x
        e.ty = target
        return target

    def mismatch(self, e: A.Expr, want: Type, got: Type) -> None:
        help_ = None
        if isinstance(want, ScalarType) and isinstance(got, ScalarType) and want.is_numeric and got.is_numeric:
            help_ = f"convert explicitly: `{want}({_snippet(e)})`"
        self.diags.error("E0201", "mismatched types", e.span, label=f"expected `{want}`, found `{got}`", help=help_)

    def undefined(self, e: A.Name) -> None:
        if e.id in INDEX_VALUES:
            self.diags.error("E0105", f"`{e.id}` has components; use `{e.id}.x`, `.y` or `.z`", e.span)
            return
        cands = self.visible_names() + list(INDEX_VALUES)
        self.diags.error("E0101", f"cannot find `{e.id}` in this scope", e.span, label="not found",
                         help=self._suggest(e.id, cands))

    def expr_Name(self, e: A.Name, expected) -> Type:
        sym = self.lookup(e.id)
        if sym is None and e.id in PLAIN_VALUES:
            return U32
        if sym is None:
            if e.id in self.module.broken_items:
                return ERROR
            self.undefined(e)
            return ERROR
        e.sym = sym
        if sym.kind == "type":
            self.diags.error("E0104", f"`{e.id}` is a type ({sym.value}), not a value", e.span,
                             help=f"convert a value to it with `{e.id}(x)`")
            return ERROR
        if sym.kind == "const" and sym.value is not None:
            e.const = sym.value
        if sym.kind == "shared":
            return sym.ty
        return sym.ty

    def expr_IntLit(self, e: A.IntLit, expected) -> Type:
        e.const = e.value
        if e.suffix:
            return self.coerce_literal(e, SCALARS[e.suffix])
        return UNTYPED_INT

    def expr_FloatLit(self, e: A.FloatLit, expected) -> Type:
        e.const = e.value
        if e.suffix:
            return self.coerce_literal(e, SCALARS[e.suffix])
        return UNTYPED_FLOAT

    def coerce_literal(self, e, t: ScalarType) -> Type:
        e.ty = UNTYPED_INT if isinstance(e, A.IntLit) else UNTYPED_FLOAT
        return self.coerce(e, t)

    def expr_BoolLit(self, e: A.BoolLit, expected) -> Type:
        e.const = e.value
        return BOOL

    def expr_Unary(self, e: A.Unary, expected) -> Type:
        lit = e.operand
        if e.op == "-" and isinstance(lit, A.IntLit) and lit.suffix:
            # `-128i8` is the literal -128 of type i8 (negating 128i8 would not fit)
            lit.const = lit.value
            lit.ty = UNTYPED_INT
            e.const = -lit.value
            t = SCALARS[lit.suffix]
            if not t.signed:
                self.diags.error("E0202", f"cannot negate an unsigned `{t}`", e.span,
                                 help=f"write a signed type: `-{lit.value}{'i' + lit.suffix[1:]}`")
                return ERROR
            e.ty = UNTYPED_INT
            return self.coerce(e, t)
        t = self.expr(e.operand, expected)
        if t is ERROR:
            return ERROR
        c = e.operand.const
        if e.op == "-":
            if t in UNTYPED:
                e.const = -c
                return t
            if not (isinstance(t, ScalarType) and t.is_numeric):
                return self.bad_operand(e, "-", t)
            if t.is_int and not t.signed:
                self.diags.error("E0202", f"cannot negate an unsigned `{t}`", e.span,
                                 help=f"subtract from zero for wrapping negation: `0 - {_snippet(e.operand)}`")
                return ERROR
            if c is not None and t.is_int:
                e.const = int_unop("-", c, t)
            return t
        # ! and ~
        if t is UNTYPED_INT:
            e.const = ~c
            return t
        if e.op == "!" and t == BOOL:
            if c is not None:
                e.const = not c
            return t
        if isinstance(t, ScalarType) and t.is_int:
            if c is not None:
                e.const = int_unop("~", c, t)
            return t
        return self.bad_operand(e, e.op, t)

    def bad_operand(self, e, op: str, t: Type) -> Type:
        self.diags.error("E0202", f"`{op}` is not defined for `{t}`", e.span)
        return ERROR

    def expr_Binary(self, e: A.Binary, expected) -> Type:
        return self.binary_types(e.op, e.op_span, e.lhs, e.rhs, expected, node=e)

    def binary_types(self, op: str, op_span, lhs: A.Expr, rhs: A.Expr, expected, node=None,
                     compound: bool = False) -> Type:
        """Type of `lhs op rhs` (for compound assignment, lhs's type is fixed: `expected`)."""
        if op in LOGIC_OPS:
            lt, rt = self.typed(lhs, BOOL), self.typed(rhs, BOOL)
            for side, t in ((lhs, lt), (rhs, rt)):
                if t is not ERROR and t != BOOL:
                    self.diags.error("E0202", f"`{op}` needs `bool` operands, found `{t}`", side.span)
                    return ERROR
            if ERROR in (lt, rt):
                return ERROR
            if node is not None and lhs.const is not None and rhs.const is not None:
                node.const = (lhs.const and rhs.const) if op == "&&" else (lhs.const or rhs.const)
            return BOOL

        if op in SHIFT_OPS:
            lt = self.expr(lhs, expected) if not compound else lhs.ty
            rt = self.typed(rhs, U32) if rhs.ty is None or rhs.ty in UNTYPED else rhs.ty
            if ERROR in (lt, rt):
                return ERROR
            if not (isinstance(rt, ScalarType) and rt.is_int):
                self.diags.error("E0202", f"shift amounts must be integers, not `{rt}`", rhs.span)
                return ERROR
            if lt is UNTYPED_INT:
                if rhs.const is not None and node is not None:
                    try:
                        node.const = untyped_binop(op, lhs.const, rhs.const)
                    except ConstError as err:
                        self.diags.error("E0403", str(err), node.span)
                        return ERROR
                    return UNTYPED_INT
                target = expected if isinstance(expected, ScalarType) and expected.is_int else I32
                lt = self.coerce(lhs, target)
            if not (isinstance(lt, ScalarType) and lt.is_int):
                self.diags.error("E0202", f"`{op}` needs an integer on the left, not `{lt}`", lhs.span)
                return ERROR
            if node is not None and lhs.const is not None and rhs.const is not None:
                node.const = int_binop(op, lhs.const, rhs.const, lt)
            return lt

        # arithmetic, bitwise and comparison: both sides one type
        hint = None if op in CMP_OPS else expected
        lt = lhs.ty if compound else self.expr(lhs, hint)
        rt = self.expr(rhs, lt if lt not in UNTYPED else hint)
        if ERROR in (lt, rt):
            return ERROR
        for side, st in ((lhs, lt), (rhs, rt)):
            if isinstance(st, TupleType):
                self.diags.error("E0212", f"a tuple `{st}` is not a single value", side.span,
                                 label=f"`{op}` needs one value here", help="destructure it first: `let (a, b) = ...;`")
                return ERROR
            if st is VOID:
                self.diags.error("E0213", "this call has no result", side.span)
                return ERROR
        # pointer arithmetic: p + i, p - i
        if isinstance(lt, PtrType) and op in ("+", "-"):
            if rt in UNTYPED:
                rt = self.coerce(rhs, I64)
            if not (isinstance(rt, ScalarType) and rt.is_int):
                self.diags.error("E0202", f"a pointer offset must be an integer, not `{rt}`", rhs.span)
                return ERROR
            if op == "-" and not rt.signed:
                self.diags.error("E0202", "subtracting an unsigned offset from a pointer", rhs.span,
                                 help="add a signed offset instead: `p + (-i64(n))`")
                return ERROR
            return lt
        if lt in UNTYPED and rt in UNTYPED:
            try:
                value = untyped_binop(op, lhs.const, rhs.const)
            except ConstError as err:
                self.diags.error("E0403", str(err), (node or rhs).span)
                return ERROR
            if node is not None:
                node.const = value
            if op in CMP_OPS:
                return BOOL
            return UNTYPED_FLOAT if UNTYPED_FLOAT in (lt, rt) else UNTYPED_INT
        if lt in UNTYPED:
            lt = self.coerce(lhs, rt)
        elif rt in UNTYPED:
            rt = self.coerce(rhs, lt)
        if ERROR in (lt, rt):
            return ERROR
        if lt != rt:
            self.diags.error("E0201", f"mismatched types in `{op}`", op_span,
                             label=f"`{lt}` {op} `{rt}`",
                             help=self._convert_help(lhs, rhs, lt, rt))
            return ERROR
        t = lt
        if not isinstance(t, ScalarType):
            return self.bad_operand(node or lhs, op, t)
        if op in CMP_OPS:
            if t.is_bool and op not in ("==", "!="):
                return self.bad_operand(node or lhs, op, t)
            if node is not None and lhs.const is not None and rhs.const is not None and not t.is_float:
                node.const = int_binop(op, lhs.const, rhs.const, t)
            return BOOL
        if op in BIT_OPS:
            if t.is_float:
                return self.bad_operand(node or lhs, op, t)
        elif t.is_bool:
            return self.bad_operand(node or lhs, op, t)
        elif op == "%" and t.is_float:
            self.diags.error("E0202", "`%` is not defined for floats", op_span,
                             help="compute it explicitly, e.g. `x - trunc(x / y) * y`")
            return ERROR
        if node is not None and lhs.const is not None and rhs.const is not None and not t.is_float:
            node.const = int_binop(op, lhs.const, rhs.const, t)
        return t

    @staticmethod
    def _convert_help(lhs, rhs, lt, rt) -> str | None:
        if isinstance(lt, ScalarType) and isinstance(rt, ScalarType) and lt.is_numeric and rt.is_numeric:
            return f"convert one side explicitly, e.g. `{lt}({_snippet(rhs)})`"
        return None

    def expr_Index(self, e: A.Index, expected) -> Type:
        return self.index(e, store=False)

    def index(self, e: A.Index, store: bool) -> Type:
        bt = self.expr(e.base)
        it = self.expr(e.index)
        if it in UNTYPED:
            it = self.coerce(e.index, I64)
        if it is not ERROR and not (isinstance(it, ScalarType) and it.is_int):
            self.diags.error("E0208", f"an index must be an integer, not `{it}`", e.index.span)
        if bt is ERROR:
            e.ty = ERROR
            return ERROR
        if isinstance(bt, PtrType):
            if store and not bt.mut:
                self.diags.error("E0210", "cannot store through a read-only pointer", e.span,
                                 label=f"`{_snippet(e.base)}` is `{bt}`",
                                 help="declare the parameter `*mut " + f"{bt.space} {bt.pointee}`")
            e.ty = bt.pointee
            return bt.pointee
        if isinstance(bt, ArrayType):
            if e.index.const is not None and not 0 <= e.index.const < bt.length:
                self.diags.error("E0216", f"index {e.index.const} is out of bounds for `{bt}`", e.index.span,
                                 label=f"valid indices are 0..{bt.length - 1}")
            e.ty = bt.elem
            return bt.elem
        self.diags.error("E0207", f"`{bt}` cannot be indexed", e.base.span,
                         help="only pointers and shared arrays can be indexed")
        e.ty = ERROR
        return ERROR

    def expr_Field(self, e: A.Field, expected) -> Type:
        base = e.base
        if isinstance(base, A.Name) and base.id in INDEX_VALUES and self.lookup(base.id) is None:
            if e.name not in ("x", "y", "z"):
                self.diags.error("E0105", f"`{base.id}` has no component `{e.name}`", e.name_span,
                                 help="the components are `.x`, `.y` and `.z`")
                return ERROR
            base.ty = U32
            return U32
        t = self.expr(base)
        if t is not ERROR:
            self.diags.error("E0105", f"`{t}` has no field `{e.name}`", e.name_span)
        return ERROR

    def expr_TupleExpr(self, e: A.TupleExpr, expected) -> Type:
        hints = expected.elems if isinstance(expected, TupleType) and len(expected.elems) == len(e.elems) \
            else [None] * len(e.elems)
        types = [self.typed(x, h) for x, h in zip(e.elems, hints)]
        if ERROR in types:
            return ERROR
        for x, t in zip(e.elems, types):
            if isinstance(t, TupleType) or t is VOID:
                self.diags.error("E0212", "tuples cannot contain tuples or calls without a result", x.span)
                return ERROR
        return TupleType(tuple(types))

    def expr_BitCast(self, e: A.BitCast, expected) -> Type:
        target = self.resolve_type(e.type)
        src = self.typed(e.value)
        if ERROR in (target, src):
            return ERROR
        if isinstance(src, ArrayType) and isinstance(target, PtrType):
            src = PtrType(src.elem, src.space, True)    # an array decays to a pointer to its elements
        if isinstance(target, PtrType) and isinstance(src, PtrType):
            if target.space != src.space:
                self.diags.error("E0205", f"a bit cast cannot change the address space ({src.space} -> {target.space})", e.span)
                return ERROR
            if target.mut and not src.mut:
                self.diags.error("E0205", "a bit cast cannot make a read-only pointer mutable", e.span)
                return ERROR
            return target
        if not (isinstance(target, ScalarType) and isinstance(src, ScalarType)) or target.is_bool or src.is_bool:
            self.diags.error("E0205", f"cannot bit cast `{src}` to `{target}`", e.span,
                             help="bit casts take two non-bool scalars of one size, or two pointers")
            return ERROR
        if size_of(target) != size_of(src):
            self.diags.error("E0205", f"cannot bit cast `{src}` ({size_of(src)} bytes) to `{target}` "
                             f"({size_of(target)} bytes)", e.span, help="the sizes must be equal")
            return ERROR
        return target

    def expr_Call(self, e: A.Call, expected) -> Type:
        name = e.name
        if name in SCALARS:
            return self.cast(e, SCALARS[name])
        if name in self.type_params:
            if self.type_params[name] is ERROR:
                for a in e.args:
                    self.expr(a)
                return ERROR
            return self.cast(e, self.type_params[name])
        if self.lookup(name) is not None:
            self.diags.error("E0104", f"`{name}` is a variable, not a function", e.name_span)
            for a in e.args:
                self.expr(a)
            return ERROR
        if name in self.fns:
            return self.user_call(e, self.fns[name])
        b = BUILTINS.get(name)
        if b is not None:
            return self.builtin_call(e, b, expected)
        for a in e.args:
            self.expr(a)
        if name in self.module.broken_items:
            return ERROR
        kernel_names = [k.name for k in self.module.items if isinstance(k, A.KernelDef)]
        if name in kernel_names:
            self.diags.error("E0104", f"`{name}` is a kernel; kernels cannot be called", e.name_span,
                             help="move the shared code into an `fn`")
            return ERROR
        self.diags.error("E0104", f"unknown function `{name}`", e.name_span, label="not found",
                         help=self._suggest(name, list(self.fns) + list(BUILTINS) + list(SCALARS)))
        return ERROR

    def cast(self, e: A.Call, target: ScalarType) -> Type:
        e.target = ("cast", target)
        if len(e.args) != 1:
            self.diags.error("E0206", f"`{target}(...)` converts exactly one value", e.span)
            for a in e.args:
                self.expr(a)
            return ERROR
        arg = e.args[0]
        src = self.expr(arg)
        if src is ERROR:
            return ERROR
        if src in UNTYPED:
            if target.is_bool:
                self.diags.error("E0204", "cannot convert a number to `bool`", e.span,
                                 help="compare with zero instead: `x != 0`")
                return ERROR
            if src is UNTYPED_FLOAT and target.is_int:
                self.diags.error("E0204", f"cannot convert the float constant {floats.describe(arg.const)} to `{target}`",
                                 e.span, help="write an integer literal")
                return ERROR
            if self.coerce(arg, target) is ERROR:
                return ERROR
            e.const = arg.const
            return target
        if not isinstance(src, ScalarType):
            self.diags.error("E0204", f"cannot convert `{src}` to `{target}`", e.span,
                             help="use `bitcast<T>(p)` to reinterpret a pointer" if isinstance(src, PtrType) else None)
            return ERROR
        if target.is_bool and not src.is_bool:
            self.diags.error("E0204", f"cannot convert `{src}` to `bool`", e.span,
                             help=f"compare instead: `{_snippet(arg)} != 0`")
            return ERROR
        if src.is_bool and target.is_float:
            self.diags.error("E0204", "cannot convert `bool` to a float", e.span,
                             help=f"go through an integer: `{target}(u32({_snippet(arg)}))`")
            return ERROR
        if arg.const is not None and not target.is_float and not src.is_float:
            v = int(arg.const)
            e.const = bool(v) if target.is_bool else wrap(v, target)
        return target

    def user_call(self, e: A.Call, info: FnInfo) -> Type:
        e.target = ("fn", info.node.name)
        self.calls.append((info.node.name, e.name_span))
        if len(e.args) != len(info.params):
            self.diags.error("E0206", f"`{e.name}` takes {len(info.params)} argument(s) but {len(e.args)} "
                             "were given", e.span)
            for a in e.args:
                self.expr(a)
            return info.ret if info.ret is not VOID else VOID
        for a, p in zip(e.args, info.params):
            if p.ty is ERROR:
                self.expr(a)
                continue
            t = self.typed(a, p.ty)
            if t is not ERROR and t != p.ty and not _decays_to(t, p.ty):
                self.mismatch(a, p.ty, t)
        return info.ret

    def builtin_call(self, e: A.Call, b: Builtin, expected) -> Type:
        if len(e.args) != len(b.params):
            self.diags.error("E0206", f"`{b.name}` takes {len(b.params)} argument(s) but {len(e.args)} "
                             "were given", e.span)
            for a in e.args:
                self.expr(a)
            return ERROR
        types = [self.expr(a) for a in e.args]
        if ERROR in types:
            return ERROR
        binding: dict[str, Type] = {}
        for p, t, a in zip(b.params, types, e.args):
            if p == "*T":
                elem = _pointer_element(t)
                if elem is None:
                    self.diags.error("E0201", f"`{b.name}` needs a `*mut global` or `*mut shared` pointer "
                                     f"(or a shared array), found `{t}`", a.span)
                    return ERROR
                if b.types is not None and elem.name not in b.types:
                    self.diags.error("E0201", f"`{b.name}` is not available for `{elem}`", a.span,
                                     help="it works on " + ", ".join(f"`{x}`" for x in b.types))
                    return ERROR
                binding["T"] = elem
                continue
            if p in VARS and t not in UNTYPED:
                if not (isinstance(t, ScalarType) and VARS[p](t)):
                    self.diags.error("E0201", f"`{b.name}` expects {KIND_WORDS[p]} here, found `{t}`", a.span)
                    return ERROR
                if p in binding and binding[p] != t:
                    self.diags.error("E0201", f"mismatched types in `{b.name}`", a.span,
                                     label=f"expected `{binding[p]}`, found `{t}`")
                    return ERROR
                binding.setdefault(p, t)
        for p, t, a in zip(b.params, types, e.args):
            if p in VARS and p not in binding:
                if (b.result[0] == p and isinstance(expected, ScalarType) and VARS[p](expected)
                        and not (expected.is_int and t is UNTYPED_FLOAT)):
                    binding[p] = expected
                elif t is UNTYPED_FLOAT or p == "F":
                    binding[p] = F32
                elif t is UNTYPED_INT:
                    binding[p] = I32
                elif isinstance(t, ScalarType):
                    binding[p] = t
        for p, t, a in zip(b.params, types, e.args):
            if p == "*T":
                continue
            want = binding.get(p) if p in VARS else SCALARS[p]
            if t in UNTYPED:
                t = self.coerce(a, want)
            if t is not ERROR and t != want:
                self.mismatch(a, want, t)
                return ERROR
            if t is ERROR:
                return ERROR
        e.target = ("builtin", b, binding)
        if b.result == ("void",):
            return VOID
        results = [binding[r] if r in VARS else SCALARS[r] for r in b.result]
        return results[0] if len(results) == 1 else TupleType(tuple(results))

    # ------------------------------------------------------------------ constant expressions
    def const_value(self, e: A.Expr, t: Type, what: str):
        """Check e as a constant of type t; returns the value or None (after an error)."""
        got = self.typed(e, t)
        if got is ERROR or t is ERROR:
            return None
        if got != t:
            self.mismatch(e, t, got)
            return None
        if e.const is None:
            self.diags.error("E0401", f"{what} must be a constant expression", e.span,
                             help="use literals and const parameters only")
            return None
        zero = _division_by_zero(e)
        if zero is not None:
            self.diags.error("E0403", f"division by zero in {what}", zero.span,
                             label=f"`{_snippet(zero.rhs)}` is 0",
                             notes=["in code, x / 0 is defined (all ones), but a constant that depends on "
                                    "it is almost certainly a mistake"])
            return None
        return e.const

    def const_int(self, e: A.Expr, t: ScalarType, what: str) -> int | None:
        return self.const_value(e, t, what)


def _division_by_zero(e: A.Expr):
    """The first `/` or `%` by a constant zero inside a constant expression, or None."""
    stack = [e]
    while stack:
        n = stack.pop()
        if isinstance(n, A.Binary):
            if n.op in ("/", "%") and n.rhs.const == 0 and not isinstance(n.rhs.const, bool):
                return n
            stack += (n.rhs, n.lhs)
        elif isinstance(n, A.Unary):
            stack.append(n.operand)
        elif isinstance(n, A.Call):
            stack += reversed(n.args)
    return None


def _pointer_element(t: Type) -> ScalarType | None:
    """The element type of something atomics can update: a mutable global or shared
    pointer, or a shared array."""
    if isinstance(t, PtrType) and t.mut and t.space in ("global", "shared"):
        return t.pointee
    if isinstance(t, ArrayType) and t.space == "shared":
        return t.elem
    return None


def _decays_to(t: Type, param: Type) -> bool:
    """An array passed where a pointer to its elements (in its address space) is expected."""
    return (isinstance(t, ArrayType) and isinstance(param, PtrType) and param.pointee == t.elem
            and param.space == t.space and param.mut)


def _always_returns(block: A.Block) -> bool:
    for s in block.stmts:
        if isinstance(s, A.Return):
            return True
        if isinstance(s, A.Block) and _always_returns(s):
            return True
        if isinstance(s, A.If) and s.else_ is not None:
            els = s.else_
            else_returns = _always_returns(els) if isinstance(els, A.Block) else _always_returns(A.Block(els.span, [els]))
            if _always_returns(s.then) and else_returns:
                return True
    return False


def _snippet(e: A.Expr) -> str:
    text = e.span.file.text[e.span.start:e.span.end]
    return text if len(text) <= 40 and "\n" not in text else "..."


def check(module: A.Module, defines: dict[str, str], diags: Diagnostics, target=None,
          only: set | None = None) -> CheckedProgram:
    """Check a module; `only` names the kernels to check (None: all of them)."""
    if target is None:
        target = targets.resolve(targets.DEFAULT_ARCH)
    return Checker(module, defines, diags, target, only).run()
