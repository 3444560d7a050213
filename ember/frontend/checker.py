"""Name resolution and type checking: AST -> typed AST (`ember.frontend.typed`).

Rules (docs/language.md has the user-facing version):
- no implicit conversions, except that a pointer may lose a promised alignment
  (`*global f32 align(16)` where a `*global f32` is expected); `T(x)` converts,
  `bitcast<T>(x)` reinterprets;
- literals are untyped constants (exact integers and rationals) until the context gives
  them a type: the other operand, the declared type, the parameter, or a default (i32 for
  integers, f32 for floats); a constant that does not fit its type is an error;
- `let` binds immutably, `var` mutably; parameters, loop variables and constants are
  immutable;
- const generic parameters of a kernel are bound at compile time (-D NAME=VALUE, or the
  declared default), so expressions over them and literals are folded here.

The checker reports as many errors as it can in one run: an expression whose type could
not be determined gets the error type, which silences errors that would only repeat it.
The Checker class holds the state (scopes, tables, diagnostics) and checks items and
resources; types (check_types.py), expressions (check_exprs.py), statements
(check_stmts.py), calls (check_calls.py), binary operators (check_operators.py) and
generic functions (check_generics.py) are plain functions taking the checker as their
explicit context `ck`, imported where they are used, so the import graph shows the
route. The modules that check_exprs itself imports reach the expression checker through
four callbacks of the context (`ck.expr`, `ck.typed`, `ck.const_value`, `ck.check_args`)
instead of an import that would close a circle. Every traversal of statements and expressions is a generator
run by `ember.trampoline`, so nesting depth costs no Python recursion.
"""

from __future__ import annotations

from .. import targets
from ..diagnostics import Diagnostics
from ..ir.types import SCALARS, U32, VOID, ScalarType, size_of
from ..source import Span
from ..trampoline import run
from ..values import parse_scalar
from . import ast as A
from . import typed as T
from .builtins import BUILTINS, INDEX_VALUES, PLAIN_VALUES
from . import check_exprs
from .check_generics import generic_signature
from .check_stmts import always_returns, check_block
from .check_types import ERROR, check_params, resolve_type

Symbol = T.Symbol


class Checker:
    def __init__(self, module: A.Module, defines: dict[str, str], diags: Diagnostics, target,
                 only: set | None = None):
        self.module = module
        self.target = target
        self.only = only
        self.defines = dict(defines)
        self.diags = diags
        self.fns: dict[str, T.TFunction] = {}
        self.fn_nodes: dict[str, A.FnDef] = {}
        # imported functions (with `only`, the file's own too) not yet called: not checked
        self.imported_fns: dict[str, A.FnDef] = {}
        self.kernels: list[T.TKernel] = []
        self.scopes: list[dict[str, Symbol]] = []
        self.used_defines: set[str] = set()
        # per-function context
        self.fn_kind = "kernel"
        self.fn_name = ""
        self.ret_type = VOID
        self.loop_depth = 0
        self.calls: list = []
        self.item = None             # the TKernel or TFunction being checked
        self.type_params: dict[str, ScalarType] = {}   # the current kernel's or instance's `const T: type`
        self.generic_fns: dict[str, tuple] = {}         # name -> (FnDef, type parameter names)
        self.instances: dict[tuple, T.TFunction] = {}   # (name, type names) -> instance
        self.fn_type_params: dict[str, dict] = {}       # instance name -> its type parameters
        self.value_params: set = set()                  # the current device function's const value
                                                        # parameters (an error, E0107: uses stay quiet)
        self.instance_calls: dict[str, object] = {}     # instance name -> the call that made it
        self.fn_functions: dict[str, dict] = {}         # instance name -> its function parameters' functions
        self.fn_aliases: dict[str, str] = {}            # in an instance's body: function parameter -> function

    # ------------------------------------------------------------------ callbacks
    # for the modules check_exprs imports (calls, operators, generics, types)
    def expr(self, e: A.Expr, expected=None):
        return check_exprs.expr(self, e, expected)

    def typed(self, e: A.Expr, expected=None):
        return check_exprs.typed(self, e, expected)

    def const_value(self, e: A.Expr, t, what: str):
        return check_exprs.const_value(self, e, t, what)

    def check_args(self, e: A.Call):
        return check_exprs.check_args(self, e)

    # ------------------------------------------------------------------ driver
    def run(self) -> T.TProgram:
        items: dict[str, A.Node] = {}
        for item in self.module.items:
            reserved = self._reserved_name(item)
            if reserved:
                what = "kernel" if isinstance(item, A.KernelDef) else "function"
                self.diags.error("E0102", f"`{item.name}` is {reserved}; a {what} cannot take its name",
                                 item.name_span, label="reserved name", help=f"rename it, e.g. `my_{item.name}`")
                continue
            prev = items.get(item.name)
            if prev is not None:
                self.diags.error("E0102", f"`{item.name}` is defined more than once", item.name_span,
                                 label="redefined here", notes=[f"first defined at {prev.name_span}"])
                continue
            items[item.name] = item
        for item in self.module.items:
            if isinstance(item, A.FnDef) and items.get(item.name) is item:
                if item.span.file is self.module.file and self.only is None:
                    self.register_fn(item)
                else:
                    # an imported function costs nothing until something calls it; nor, with
                    # some kernels only, does a function of the file none of them calls - its
                    # body may need a newer target than theirs (decode_attention_mma.ember's
                    # cluster merge, sm_90, beside the split pass that runs on sm_80)
                    self.imported_fns[item.name] = item
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
        bodies = list(self.fns.values())
        done = 0
        while done < len(bodies):            # checking a body may instantiate more functions
            self.fn_body(bodies[done])
            done += 1
            if len(self.fns) > len(bodies):
                bodies = list(self.fns.values())
        self.check_recursion()
        if not self.diags.has_errors:
            self.check_local_memory()
        # With some kernels only (`ember run --kernel`, the runtime's one kernel), a define may
        # be another kernel's: unused, it is named only where no kernel of the file has it
        everyones = set(self._all_const_names()) if self.only is not None else set()
        for name in self.defines:
            if name not in self.used_defines and name not in everyones:
                self.diags.warning("W0001", f"`-D {name}` is not a const parameter of any kernel",
                                   help=self._suggest(name, self._all_const_names()))
        if not self.kernels and not self.module.broken_items and not self.diags.has_errors:
            items_ = self.module.items
            where = items_[0].name_span if items_ else Span(self.module.file, 0, 0)
            self.diags.error("E0109", f"`{self.module.file.name}` defines no kernel", where,
                             label="only device functions here" if items_ else "an empty program",
                             help="declare an entry point with `kernel name(...) { ... }`")
        return T.TProgram(self.kernels, self.fns, self.module)

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
        if item.name.startswith("__ember_"):
            # the math expansions call Ember's library functions by these names: a function of
            # the program's own would take their calls (at -O0, where it is not inlined first)
            return "in the `__ember_` namespace of Ember's own functions"
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
        import difflib                  # only when there is an error to explain (1.4 ms to import)
        close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
        return f"a similar name exists: `{close[0]}`" if close else None

    # ------------------------------------------------------------------ items
    def register_fn(self, fn: A.FnDef) -> None:
        """Check a device function's signature (a generic one becomes a template); its body
        is checked later (`run`)."""
        if not generic_signature(self, fn):
            self.fn_signature(fn)

    def called(self, name: str) -> None:
        """A call names `name`: an imported function is checked from its first call on, so
        that the unused functions of a large import cost no checking and no IR."""
        fn = self.imported_fns.pop(name, None)
        if fn is not None:
            saved = (self.type_params, self.value_params, self.scopes)
            self.type_params, self.value_params, self.scopes = {}, set(), []
            self.register_fn(fn)
            self.type_params, self.value_params, self.scopes = saved

    def fn_signature(self, fn: A.FnDef) -> None:
        self.push()
        params = check_params(self, fn.params, kernel=False)
        self.pop()
        ret = resolve_type(self, fn.ret, allow_tuple=True) if fn.ret is not None else VOID
        self.fns[fn.name] = T.TFunction(fn.name, fn.span, fn.name_span, params, ret)
        self.fn_nodes[fn.name] = fn

    def kernel(self, k: A.KernelDef) -> None:
        self.push()
        consts: dict[str, tuple] = {}
        self.type_params = {}
        tunables = {}
        for g in k.generics:
            if isinstance(g.type, A.TypeName) and g.type.name == "type":
                if g.tune is not None:
                    self.diags.error("E0404", f"type parameter `{g.name}` cannot be tuned: a tuner chooses values",
                                     g.tune[0].span, help="compile each type with `-D` instead")
                self.type_param(k, g, consts)
                continue
            t = resolve_type(self, g.type)
            if t is not ERROR and not isinstance(t, ScalarType):
                self.diags.error("E0214", "const parameters must have a scalar type", g.type.span)
                t = ERROR
            value = self.const_param_value(k, g, t)
            if g.name in consts:
                self.diags.error("E0102", f"const parameter `{g.name}` is declared twice", g.name_span)
            sym = Symbol(g.name, "const", t if value is not None else ERROR, g.name_span, value)
            consts[g.name] = (t, value)
            if g.tune is not None and t is not ERROR:
                tunables[g.name] = self.tune_values(g, t)
            self.declare(sym)
        params = check_params(self, k.params, kernel=True)
        for sym in params:
            if sym.name in consts:
                self.diags.error("E0102", f"`{sym.name}` is both a const parameter and a parameter", sym.span)
            elif sym.name not in self.scopes[-1]:   # a duplicate does not shadow the first
                self.declare(sym)
        block = self.block_dims(k)
        info = T.TKernel(k.name, k.span, k.name_span, consts, params, block)
        info.min_blocks = self.min_blocks(k, block)
        info.cluster = self.cluster_dims(k)
        info.tunables = {n: v for n, v in tunables.items() if v is not None}
        info.stream = [i for i, p in enumerate(k.params) if p.stream is not None]
        self.kernels.append(info)
        self.enter_fn("kernel", VOID, k.name, info)
        info.body = run(check_block(self, k.body, top=True))
        info.calls = self.calls
        self.pop()
        self.type_params = {}

    def type_param(self, k: A.KernelDef, g: A.GenericParam, consts: dict) -> None:
        """`const T: type = f32`: a scalar type bound at compile time (-D T=f16), its default a
        type name or an earlier type parameter (`const TI: type = T`), usable
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
        if t is None and where is not g.name_span and text in self.type_params:
            t = self.type_params[text]        # `const TI: type = T`: an earlier type parameter's value
            if t is ERROR:
                return                        # its own error is reported
        if t is None or t.is_bool:
            self.diags.error("E0404", f"`{text}` is not a numeric type for type parameter `{g.name}`", where,
                             label="a type parameter" if where is g.name_span else "not a numeric type",
                             help="one of i8..i64, u8..u64, f16, bf16, f32, f64")
            return
        self.type_params[g.name] = t
        consts[g.name] = (None, t.name)
        self.declare(Symbol(g.name, "type", ERROR, g.name_span, t.name))

    def tune_values(self, g: A.GenericParam, t) -> list | None:
        """`tune [a, b, ...]`: distinct constants of the parameter's type, its default among
        them (so that the default configuration is one the tuner tries), or None."""
        values = []
        for e in g.tune:
            v = self.const_value(e, t, "a tuned value")
            if v is None:
                return None
            if v in values:
                self.diags.error("E0404", f"`{g.name}` is tuned over {v} twice", e.span)
                return None
            values.append(v)
        default = self.const_value(g.default, t, "a const parameter default") if g.default is not None else None
        if g.default is not None and default not in values:
            self.diags.error("E0404", f"the default of `{g.name}` ({default}) is not among the values it is tuned over",
                             g.default.span, help=f"add {default} to `tune [...]`")
            return None
        return values

    def const_param_value(self, k: A.KernelDef, g: A.GenericParam, t):
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
            return self.const_value(g.default, t, "a const parameter default")
        self.diags.error("E0106", f"const parameter `{g.name}` of kernel `{k.name}` has no value",
                         g.name_span, label="needs a value",
                         help=f"pass `-D {g.name}=<{t}>` (or `defines={{'{g.name}': ...}}`), "
                              f"or give it a default: `const {g.name}: {t} = ...`")
        return None

    def dims(self, exprs: list, what: str):
        """1 to 3 positive constants (E0402 otherwise), padded with 1s to three, or None."""
        if len(exprs) > 3:
            self.diags.error("E0402", f"a {what} has at most three dimensions", exprs[3].span)
            return None
        dims = []
        for e in exprs:
            v = self.const_value(e, U32, f"a {what} dimension")
            if v is None:
                return None
            if v <= 0:
                self.diags.error("E0402", f"{what} dimensions must be positive (this one is {v})", e.span)
                return None
            dims.append(v)
        return dims + [1] * (3 - len(dims))

    def block_dims(self, k: A.KernelDef):
        if k.block is None:
            return None
        dims = self.dims(k.block, "block")
        if dims is None:
            return None
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

    def cluster_dims(self, k: A.KernelDef):
        """`cluster(x, y, z)`: blocks run in clusters of that shape (sm_90), at most 16 blocks
        (8 is the portable cluster size; past it the runtime and the header's launcher opt
        the kernel in, and a GPU that cannot refuses the launch)."""
        if k.cluster is None:
            return None
        dims = self.dims(k.cluster, "cluster")
        if dims is None:
            return None
        if tuple(dims) == (1, 1, 1):
            return None          # a cluster of one block is every block's: a kernel parameterised by
                                 # its cluster size compiles as before when the size is 1, on any target
        if self.target.sm < 90:
            self.diags.error("E0501", f"clusters need sm_90 or newer; the target is {self.target.arch}",
                             k.cluster[0].span, help="compile with --arch sm_90 (or newer)")
            return None
        if dims[0] * dims[1] * dims[2] > 16:
            self.diags.error("E0402", f"a cluster of {dims[0]}x{dims[1]}x{dims[2]} blocks exceeds the 16 blocks an "
                             "sm_90 GPU runs together at most (8 on every one)",
                             k.cluster[0].span.to(k.cluster[-1].span))
            return None
        return tuple(dims)

    def min_blocks(self, k: A.KernelDef, block):
        """`min_blocks(N)`: the launch bound that N blocks of the kernel's fixed size fit on
        one SM at once (PTX .minnctapersm: ptxas limits registers per thread to make it so)."""
        if k.min_blocks is None:
            return None
        if k.block is None:
            self.diags.error("E0407", "`min_blocks` needs a fixed block size", k.min_blocks.span,
                             help="add `block(...)` before it: the bound is on blocks of that size")
            return None
        v = self.const_value(k.min_blocks, U32, "`min_blocks`")
        if v is None or block is None:
            return None
        if v == 0:          # no bound (a tunable MIN_BLOCKS may offer none: .minnctapersm 1 is not none)
            return None
        threads = block[0] * block[1] * block[2]
        if v < 0 or v * threads > 2048 or v > 32:
            self.diags.error("E0407", f"{v} blocks of {threads} threads cannot be resident on one SM at once",
                             k.min_blocks.span, label="at most 32 blocks and 2048 threads per SM",
                             help="ask for fewer blocks (or a smaller block)")
            return None
        return v

    def enter_fn(self, kind: str, ret, name: str, item) -> None:
        self.fn_kind = kind
        self.ret_type = ret
        self.loop_depth = 0
        self.calls = []
        self.fn_name = name
        self.item = item

    def fn_body(self, info: T.TFunction) -> None:
        node = self.fn_nodes[info.name]
        self.type_params = self.fn_type_params.get(info.name, {})
        self.value_params = {g.name for g in node.generics
                             if not (isinstance(g.type, A.TypeName) and g.type.name == "type")}
        self.fn_aliases = self.fn_functions.get(info.name, {})
        reported = len(self.diags.items)
        self.push()
        for sym in info.params:
            if sym.name not in self.scopes[-1]:
                self.declare(sym)
        self.enter_fn("fn", info.ret, info.name, info)
        info.body = run(check_block(self, node.body, top=True))
        info.calls = self.calls
        if info.ret is not VOID and info.ret is not ERROR and not always_returns(node.body):
            end = node.body.span
            self.diags.error("E0305", f"function `{node.name}` may reach its end without returning a `{info.ret}`",
                             Span(end.file, end.end - 1, end.end), label="the end is reachable here",
                             help="end every path with `return <value>;`")
        self.pop()
        if info.name in self.instance_calls:
            call = self.instance_calls[info.name]
            note = f"in {self.shown(info.name)}, instantiated by the call at {call}"
            in_std = node.span.file.name.startswith("std/")
            for d in self.diags.items[reported:]:
                if in_std and d.span is not None:
                    # an error inside the standard library is the user's call's: reported there,
                    # with where in the library it arose
                    d.notes.insert(0, f"inside {self.shown(info.name)} at {d.span}: {d.label or d.message}")
                    d.span, d.label = call, f"{d.message} (in the standard library's `{node.name}`)"
                else:
                    d.notes.append(note)
        self.type_params = {}
        self.value_params = set()
        self.fn_aliases = {}

    def shown(self, name: str) -> str:
        """A function's name as a user writes it, quoted: an instance of a generic function
        is `f` (with T = f32), never its IR name `f$f32`."""
        binding = dict(self.fn_type_params.get(name) or {})
        binding.update(self.fn_functions.get(name) or {})
        if not binding:
            return f"`{name}`"
        base = name.split("$", 1)[0]
        return f"`{base}` (with {', '.join(f'{k} = {v}' for k, v in binding.items())})"

    # ------------------------------------------------------------------ whole-program checks
    def check_recursion(self) -> None:
        """Device functions are inlined, so none may call itself, directly or not."""
        graph = {name: info.calls for name, info in self.fns.items()}
        state: dict[str, int] = {}
        for root in graph:
            if root in state:
                continue
            state[root] = 1
            stack = [(root, iter(graph[root]))]
            while stack:
                name, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    state[name] = 2
                    stack.pop()
                    continue
                callee, span = nxt
                if callee not in graph:
                    continue
                if state.get(callee) == 1:
                    self.diags.error("E0108", f"{self.shown(callee)} is called recursively", span,
                                     label="this call closes a cycle",
                                     help="device functions are inlined; rewrite the recursion as a loop")
                elif state.get(callee) is None:
                    state[callee] = 1
                    stack.append((callee, iter(graph[callee])))

    def check_local_memory(self) -> None:
        """Per-thread arrays of a kernel, with those of every device function it inlines
        (one copy per call), against the target's local memory per thread."""
        limit = self.target.local_bytes_per_thread
        totals: dict[str, int] = {}
        for name in _callees_first(self.fns):
            info = self.fns[name]
            totals[name] = min(info.local_bytes + sum(totals.get(c, 0) for c, _ in info.calls), limit + 1)
        for k in self.kernels:
            used = min(k.local_bytes + sum(totals.get(c, 0) for c, _ in k.calls), limit + 1)
            if used > limit:
                self.diags.error("E0406", f"kernel `{k.name}` needs more than {limit // 1024} KB of "
                                 "per-thread arrays (with the device functions it calls)", k.name_span,
                                 help="shrink the arrays, or share one array between the calls")

    def count_array(self, name: str, t, span, shared: bool) -> None:
        """Shared arrays against the shared memory a block may use on the target (static,
        or dynamic above 48 KB: ember.ir.analysis.shared; laid out 16-byte aligned as ptxas
        does); per-thread arrays against local memory."""
        nbytes = size_of(t)
        if not shared:
            limit = self.target.local_bytes_per_thread
            if nbytes > limit:
                self.diags.error("E0406", f"`{name}` takes {nbytes} bytes per thread; per-thread arrays are "
                                 f"limited to {limit // 1024} KB", span,
                                 help="use a shared array, or split the work between threads")
            self.item.local_bytes += nbytes
            return
        k = self.item
        limit = self.target.max_shared_bytes
        before = k.shared_bytes
        k.shared_bytes = (before + 15) // 16 * 16 + nbytes
        if k.shared_bytes > limit >= before:
            self.diags.error("E0405", f"kernel `{self.fn_name}` declares {k.shared_bytes} bytes of shared memory "
                             f"with `{name}`; a block may use at most {limit} bytes ({limit // 1024} KB) on "
                             f"{self.target.arch}", span, label=f"{nbytes} bytes",
                             help="shrink the arrays, or tile the work over several passes",
                             notes=[f"above {self.target.static_shared_bytes // 1024} KB a kernel's shared arrays "
                                    "are placed in dynamic shared memory, which launches size for it"])


def _callees_first(fns: dict) -> list[str]:
    """Function names, every callee before its callers (the graph is acyclic here)."""
    order, done = [], set()
    for root in fns:
        if root in done:
            continue
        stack = [(root, iter(fns[root].calls))]
        done.add(root)
        while stack:
            name, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                order.append(name)
                stack.pop()
                continue
            callee = nxt[0]
            if callee in fns and callee not in done:
                done.add(callee)
                stack.append((callee, iter(fns[callee].calls)))
    return order


def check(module: A.Module, defines: dict[str, str], diags: Diagnostics, target=None,
          only: set | None = None) -> T.TProgram:
    """Check a module; `only` names the kernels to check (None: all of them)."""
    if target is None:
        target = targets.resolve(targets.DEFAULT_ARCH)
    return Checker(module, defines, diags, target, only).run()
