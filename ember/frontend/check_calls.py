"""Checking calls: conversions `T(x)`, device function calls, and builtin calls, whose
signatures are their ops' constraints (ember.frontend.builtins, ember.ir.signature).

The functions take the checker as their explicit context `ck` (its diagnostics, scopes
and tables, and `ck.expr` for the arguments); those that check subexpressions are
generators run by ember.trampoline."""

from __future__ import annotations

from .. import floats
from ..ir import signature as sig
from ..ir.types import BOOL, F32, I32, SCALARS, U32, VOID, ArrayType, PtrType, ScalarType, TupleType, array_scalar
from ..ir.ops import OPS
from . import ast as A
from . import typed as T
from ..records import replace
from .builtins import BUILTINS, Builtin
from .check_generics import generic_call
from .check_types import ERROR, UNTYPED, UNTYPED_FLOAT, coerce, decays_to, expect, mismatch, snippet


def _error(e) -> T.TExpr:
    return T.TConst(e.span, ERROR, None)


def check_call(ck, e: A.Call, expected):
    if e.name in ck.fn_aliases and ck.lookup(e.name) is None:
        # a call of a function parameter: of the function this instance was given
        e = A.Call(e.span, ck.fn_aliases[e.name], e.name_span, e.args)
    name = e.name
    if name in SCALARS:
        return (yield cast(ck, e, SCALARS[name]))
    if name in ck.type_params:
        if ck.type_params[name] is ERROR:
            yield ck.check_args(e)
            return _error(e)
        return (yield cast(ck, e, ck.type_params[name]))
    if ck.lookup(name) is not None:
        ck.diags.error("E0104", f"`{name}` is a variable, not a function", e.name_span)
        yield ck.check_args(e)
        return _error(e)
    if name == "static_assert" and name not in ck.fns and name not in ck.imported_fns:
        return static_assert(ck, e)
    ck.called(name)
    if name in ck.generic_fns:
        return (yield generic_call(ck, e, *ck.generic_fns[name]))
    if name in ck.fns:
        return (yield user_call(ck, e, ck.fns[name]))
    b = BUILTINS.get(name)
    if b is not None:
        return (yield builtin_call(ck, e, b, expected))
    yield ck.check_args(e)
    if name in ck.module.broken_items:
        return _error(e)
    kernel_names = [k.name for k in ck.module.items if isinstance(k, A.KernelDef)]
    if name in kernel_names:
        ck.diags.error("E0104", f"`{name}` is a kernel; kernels cannot be called", e.name_span,
                       help="move the shared code into an `fn`")
        return _error(e)
    home = std_home(name)
    ck.diags.error("E0104", f"unknown function `{name}`", e.name_span, label="not found",
                   help=f'`{name}` is in the standard library: add `import "{home}";`' if home else
                   ck._suggest(name, list(ck.fns) + list(ck.imported_fns) + list(BUILTINS)
                               + list(SCALARS)))
    return _error(e)


def static_assert(ck, e: A.Call) -> T.TExpr:
    """`static_assert(COND)`: COND, a constant bool, must hold for this compile's const
    values; else E0408 at the condition. It compiles to nothing."""
    if len(e.args) != 1:
        ck.diags.error("E0206", "`static_assert` takes one condition", e.span)
        return _error(e)
    holds = ck.const_value(e.args[0], BOOL, "a static assertion")
    if holds is False:
        consts = [f"{n} = {v}" for n, (_, v) in ck.item.consts.items()] if hasattr(ck.item, "consts") else []
        ck.diags.error("E0408", f"static assertion failed: `{snippet(e.args[0])}`", e.args[0].span,
                       label="false", notes=[f"with {', '.join(consts)}"] if consts else None)
    return T.TConst(e.span, BOOL, True)


# ------------------------------------------------------------------ conversions

def cast(ck, e: A.Call, target: ScalarType):
    if len(e.args) != 1:
        ck.diags.error("E0206", f"`{target}(...)` converts exactly one value", e.span)
        yield ck.check_args(e)
        return _error(e)
    arg = yield ck.expr(e.args[0])
    src = arg.ty
    if src is ERROR:
        return _error(e)
    if src in UNTYPED:
        if target.is_bool:
            ck.diags.error("E0204", "cannot convert a number to `bool`", e.span,
                           help="compare with zero instead: `x != 0`")
            return _error(e)
        if src is UNTYPED_FLOAT and target.is_int:
            ck.diags.error("E0204", f"cannot convert the float constant {floats.describe(arg.const)} to "
                           f"`{target}`", e.span, help="write an integer literal")
            return _error(e)
        arg = coerce(ck, arg, target)
        if arg.ty is ERROR:
            return _error(e)
        return T.TConst(e.span, target, arg.const, T.TCast(e.span, target, arg))
    if not isinstance(src, ScalarType):
        ck.diags.error("E0204", f"cannot convert `{src}` to `{target}`", e.span,
                       help="use `bitcast<T>(p)` to reinterpret a pointer" if isinstance(src, PtrType) else None)
        return _error(e)
    if target.is_bool and not src.is_bool:
        ck.diags.error("E0204", f"cannot convert `{src}` to `bool`", e.span,
                       help=f"compare instead: `{snippet(e.args[0])} != 0`")
        return _error(e)
    if src.is_bool and target.is_float:
        ck.diags.error("E0204", "cannot convert `bool` to a float", e.span,
                       help=f"go through an integer: `{target}(u32({snippet(e.args[0])}))`")
        return _error(e)
    node = T.TCast(e.span, target, arg)
    if arg.const is not None and not target.is_float and not src.is_float:
        from ..ir.fold import fold        # arith.cast's own fold: one definition of conversions
        return T.TConst(e.span, target, fold("arith.cast", [src], [arg.const], target), node)
    return node


# ------------------------------------------------------------------ device functions

def user_call(ck, e: A.Call, info: T.TFunction):
    ck.calls.append((info.name, e.name_span))
    if len(e.args) != len(info.params):
        ck.diags.error("E0206", f"`{e.name}` takes {len(info.params)} argument(s) but {len(e.args)} "
                       "were given", e.span)
        yield ck.check_args(e)
        return _error(e) if info.ret is ERROR else T.TConst(e.span, info.ret, None)
    args = []
    for a, p in zip(e.args, info.params):
        if p.ty is ERROR:
            yield ck.expr(a)
            args.append(_error(a))
            continue
        t = yield ck.typed(a, p.ty)
        if isinstance(t.ty, ArrayType) and t.ty.swizzle:
            ck.diags.error("E0218", f"`{e.name}` would index the swizzled tile `{t.ty}` plainly, ignoring its XOR "
                           "order", t.span, help="index a swizzled tile where it is declared (`t[r][c]`), or pass "
                                                 "it to the builtins that take tiles")
            args.append(_error(a))
            continue
        if t.ty is not ERROR and not decays_to(t.ty, p.ty):
            t = expect(ck, t, p.ty)
        args.append(t)
    return T.TCall(e.span, info.ret, info.name, args)


# ------------------------------------------------------------------ builtins

def builtin_call(ck, e: A.Call, b: Builtin, expected):
    """A builtin's arguments against its op's signature, through the signature matcher
    the IR verifier uses (ember.ir.signature.match); only what is the language's own is
    here: untyped constants take their type from the context, a shared or per-thread
    array stands for a pointer to its elements, and the mismatch is worded for the call."""
    if b.variadic and len(e.args) > len(b.params):      # one parameter per coordinate given
        b = replace(b, params=b.params + b.params[-1:] * (len(e.args) - len(b.params)))
    n = len(b.params) + len(b.const_attrs)
    if not n <= len(e.args) <= n + len(b.word_attrs):
        takes = f"{n} to {n + len(b.word_attrs)} arguments" if b.word_attrs else f"{n} argument(s)"
        ck.diags.error("E0206", f"`{b.name}` takes {takes} but {len(e.args)} were given", e.span,
                       help=_word_help(b) if b.word_attrs else None)
        words = {w for attr, _ in b.word_attrs for w in OPS[b.op].attrs[attr].values}
        for a in e.args:        # the others' own errors (a word is no name to look up)
            if not (isinstance(a, A.Name) and a.id in words):
                yield ck.expr(a)
        return _error(e)
    const_attrs = _word_attrs(ck, e, b, e.args[n:])
    if const_attrs is None:
        return _error(e)
    for (attr, what), a in zip(b.const_attrs, e.args[len(b.params):]):     # compile-time operands
        value = ck.const_value(a, U32, what)
        if value is None:
            return _error(e)
        bad = OPS[b.op].attrs[attr].check(value)
        if bad:
            ck.diags.error("E0201", f"`{b.name}`: {what} {bad}", a.span)
            return _error(e)
        const_attrs[attr] = value
    args = []
    for a in e.args[:len(b.params)]:
        args.append((yield ck.expr(a)))
    if any(a.ty is ERROR for a in args):
        return _error(e)
    tile = next((a for i, a in enumerate(args) if isinstance(a.ty, ArrayType) and a.ty.swizzle
                 and not _chunk_access(b, i, a.ty, const_attrs)), None)
    if tile is not None and b.tiles is None:
        ck.diags.error("E0218", f"`{b.name}` would ignore the XOR order of the swizzled tile `{tile.ty}`", tile.span,
                       help="read and write a swizzled tile element by element (`t[r][c]`), with the copies and "
                            "loads that move at most 16 aligned bytes (`cp_async_16`, `ldmatrix_*`), or pass it "
                            "to the tensor-core builtins that take tiles (`wgmma`)")
        return _error(e)
    slots = tuple(sig.Slot(f"#{i}", p) for i, p in enumerate(b.params))
    if b.over_tuples and isinstance(args[0].ty, TupleType):
        return _builtin_over_tuple(ck, e, b, slots, args)
    binding: dict = {}
    # the typed arguments first (untyped constants are skipped: they follow the others)
    m = sig.match(slots, [_match_type(a.ty, p) for p, a in zip(b.params, args)], binding, b.rules)
    if m is not None:
        return _builtin_mismatch(ck, e, b, m, args)
    for p, a in zip(b.params, args):     # untyped constants: the context, else the default
        if isinstance(p, sig.Var) and p.letter not in binding and a.ty in UNTYPED:
            first = b.results[0] if b.results else None
            if (isinstance(first, sig.Var) and first.letter == p.letter and isinstance(expected, ScalarType)
                    and p.admits(expected) and not (expected.is_int and a.ty is UNTYPED_FLOAT)):
                binding[p.letter] = expected
            else:
                binding[p.letter] = F32 if a.ty is UNTYPED_FLOAT or p.letter == "F" else I32
            if not p.admits(binding[p.letter]):
                what = "a float constant" if a.ty is UNTYPED_FLOAT else "an integer constant"
                ck.diags.error("E0201", f"`{b.name}` expects {p.words} here, found {what}", a.span,
                               help="it works on " + ", ".join(f"`{x}`" for x in p.allowed)
                               if p.allowed else None)
                return _error(e)
    checked = []
    for p, a in zip(b.params, args):
        if a.ty in UNTYPED:
            a = coerce(ck, a, binding.get(p.letter) if isinstance(p, sig.Var) else p.resolve(binding))
            if a.ty is ERROR:
                return _error(e)
        checked.append(a)
    m = sig.match(slots, [_match_type(a.ty, p) for p, a in zip(b.params, checked)], {}, b.rules)
    if m is not None:
        return _builtin_mismatch(ck, e, b, m, checked)
    if b.op and OPS[b.op].check_consts is not None:
        d = OPS[b.op]
        consts = {slot.name: a.const for slot, a in zip(d.operands, checked)}
        bad = d.check_consts({**dict(b.attrs), **const_attrs}, consts)
        if bad:
            at = checked[[slot.name for slot in d.operands].index(bad[0])]
            ck.diags.error("E0201", f"`{b.name}`: `{bad[0]}` {bad[1]}", at.span)
            return _error(e)
    if b.tiles is not None:
        got = b.tiles(b.name, checked, const_attrs)
        if isinstance(got, tuple):
            ck.diags.error("E0218", f"`{b.name}`: {got[1]}", checked[got[0]].span)
            return _error(e)
        const_attrs.update(got)
    if b.op and OPS[b.op].accesses is not None and not _extents_fit(ck, b, checked, const_attrs):
        return _error(e)
    if not _target_has(ck, e, b):
        return _error(e)
    results = [r.resolve(binding) for r in b.results]
    ty = VOID if not results else results[0] if len(results) == 1 else TupleType(tuple(results))
    return T.TBuiltin(e.span, ty, b, binding, checked, const_attrs)


class _Bytes(dict):
    """Element bytes of the one operand asked about (the others' do not matter)."""

    def __missing__(self, key):
        return 1


def _chunk_access(b: Builtin, i: int, t: ArrayType, const_attrs: dict) -> bool:
    """Whether argument i of the builtin is a pointer from which it touches at most 16
    bytes at an index (aligned to their size, as the op requires): within one 16-byte
    chunk, which a swizzled tile moves whole, so the index's place in the XOR order is the
    access's (ember.frontend.irgen.FnGen.swizzle_index)."""
    d = OPS[b.op] if b.op else None
    if d is None or d.accesses is None or i >= len(d.operands):
        return False
    es = array_scalar(t).nbytes
    for ptr, _, count in d.accesses({**dict(b.attrs), **const_attrs}, _Bytes({d.operands[i].name: es})):
        if ptr == d.operands[i].name:
            return count * es <= 16
    return False


def _builtin_over_tuple(ck, e: A.Call, b: Builtin, slots: tuple, args: list):
    """`shfl_xor((m, s), 16u32)`: the builtin once per element of the tuple, the other
    arguments (of exact types) shared; each element type must pass the op's signature."""
    rest = []
    for p, a in zip(b.params[1:], args[1:]):
        a = coerce(ck, a, p.type) if a.ty in UNTYPED else a
        if a.ty is ERROR:
            return _error(e)
        rest.append(a)
    elems = args[0].ty.elems
    results = []
    for k, t in enumerate(elems):
        binding: dict = {}
        m = sig.match(slots, [t] + [_match_type(a.ty, p) for p, a in zip(b.params[1:], rest)], binding, b.rules)
        if m is not None and m.index == 0:
            ck.diags.error("E0201", f"`{b.name}` of a tuple: element {k} is `{t}`, which it cannot take",
                           args[0].span, help=f"`{b.name}` takes {b.params[0].words}")
            return _error(e)
        if m is not None:
            return _builtin_mismatch(ck, e, b, m, [args[0], *rest])
        results.append(b.results[0].resolve(binding))
    if not _target_has(ck, e, b):
        return _error(e)
    return T.TBuiltin(e.span, TupleType(tuple(results)), b, {}, [args[0], *rest])


def _target_has(ck, e: A.Call, b: Builtin) -> bool:
    """Whether the target is new enough for the builtin's op and the words given as its
    arguments (a cluster scope); False after reporting."""
    if b.op and OPS[b.op].arch_specific and not ck.target.arch.endswith("a") and b.min_sm <= ck.target.sm:
        ck.diags.error("E0501", f"`{b.name}` needs an arch-specific target (sm_{ck.target.sm}a); the target is "
                       f"{ck.target.arch}", e.name_span, help=f"compile with --arch sm_{ck.target.sm}a")
        return False
    if b.min_sm <= ck.target.sm:
        needs = OPS[b.op].min_sm_for if b.op else None
        for (attr, _), a in zip(b.word_attrs, e.args[len(b.params):]):
            need = needs({attr: a.id}) if needs else 0
            if need > ck.target.sm:
                ck.diags.error("E0501", f"`{b.name}` at `{a.id}` {attr} needs sm_{need} or newer; the target is "
                               f"{ck.target.arch}", a.span, help=f"compile with --arch sm_{need} (or newer)")
                return False
        return True
    ck.diags.error("E0501", f"`{b.name}` needs sm_{b.min_sm} or newer; the target is {ck.target.arch}",
                   e.name_span, help=f"compile with --arch sm_{b.min_sm} (or newer)")
    return False


def _word_attrs(ck, e: A.Call, b: Builtin, args: list) -> dict | None:
    """The trailing word arguments (`release`, `gpu`) as the attributes they name; None
    after reporting one that is not a word of its attribute."""
    out = {}
    for (attr, what), a in zip(b.word_attrs, args):
        words = OPS[b.op].attrs[attr].values
        if not (isinstance(a, A.Name) and a.id in words):
            found = f"`{a.id}`" if isinstance(a, A.Name) else "an expression"
            later = [w for w, _ in b.word_attrs[len(out) + 1:]
                     if isinstance(a, A.Name) and a.id in OPS[b.op].attrs[w].values]
            help_ = (f"`{a.id}` is a {later[0]}, which comes after {what}: write `{words[0]}, {a.id}`"
                     if later else _word_help(b))
            ck.diags.error("E0201", f"`{b.name}`: {what} must be one of {', '.join(words)}, found {found}",
                           a.span, help=help_)
            return None
        out[attr] = a.id
    return out


def _word_help(b: Builtin) -> str:
    attrs = OPS[b.op].attrs
    return (f"`{b.name}` takes " + " then ".join(f"{what} ({', '.join(attrs[attr].values)})"
                                                 for attr, what in b.word_attrs)
            + " after its other arguments, each optional (docs/memory_model.md)")


def _builtin_mismatch(ck, e: A.Call, b: Builtin, m, args: list):
    """A signature Mismatch (ember.ir.signature) in the words of a call."""
    at = args[m.index] if m.index is not None else args[0]
    spec = m.slot.spec if m.slot is not None else None
    works_on = None
    allowed = spec.var.allowed if isinstance(spec, sig.PointerTo) else getattr(spec, "allowed", None)
    if allowed:
        works_on = "it works on " + ", ".join(f"`{x}`" for x in allowed)
    if m.kind == "pointer":
        arrays = " (or a shared array)" if "shared" in spec.spaces else ""
        arrays = " (a per-thread array)" if spec.spaces == ("local",) else arrays
        ck.diags.error("E0201", f"`{b.name}` needs {spec.words}{arrays}, found `{at.ty}`", at.span)
    elif m.kind == "element":
        ck.diags.error("E0201", f"mismatched element types in `{b.name}`", at.span,
                       label=f"expected `{m.bound}` elements, found `{m.found.pointee}`")
    elif m.kind == "allowed":
        found = m.found.pointee if isinstance(spec, sig.PointerTo) else m.found
        ck.diags.error("E0201", f"`{b.name}` is not available for `{found}`", at.span, help=works_on)
    elif m.kind == "kind":
        ck.diags.error("E0201", f"`{b.name}` expects {spec.words} here, found `{m.found}`", at.span)
    elif m.kind == "bound":
        ck.diags.error("E0201", f"mismatched types in `{b.name}`", at.span,
                       label=f"expected `{m.bound}`, found `{m.found}`")
    elif m.kind == "exact":
        mismatch(ck, at, spec.type, m.found)
    else:   # a Rule's derived type
        ck.diags.error("E0201", f"`{b.name}`: this argument {m.detail}", at.span)
    return _error(e)


def _extents_fit(ck, b: Builtin, args: list, const_attrs: dict) -> bool:
    """An array argument must hold every element the op touches from a constant index
    (mma's 8 A elements from a[j], ...); False after reporting."""
    d = OPS[b.op]
    slot = {s.name: a for s, a in zip(d.operands, args)}
    elem_bytes = {s.name: (array_scalar(a.ty) if isinstance(a.ty, ArrayType) else a.ty.pointee).nbytes
                  for s, a in zip(d.operands, args) if isinstance(a.ty, (ArrayType, PtrType))}
    for ptr, index, count in d.accesses({**dict(b.attrs), **const_attrs}, elem_bytes):
        arr, at = slot[ptr], slot[index]
        if not isinstance(arr.ty, ArrayType) or at.const is None:
            continue
        if not 0 <= int(at.const) <= arr.ty.length - count:
            ck.diags.error("E0216", f"`{b.name}` touches {count} elements of `{ptr}` from index {at.const}, "
                           f"past the end of `{arr.ty}`", at.span,
                           label=f"{ptr}[{at.const}..{int(at.const) + count}] is out of bounds",
                           help=f"the array needs at least {int(at.const) + count} elements"
                           if int(at.const) >= 0 else None)
            return False
    return True


_STD_INDEX: dict = {}


def std_home(name: str) -> str | None:
    """The standard-library file that defines function `name` (`std/reduce.ember`), if any:
    found by a scan of the std files' `fn` names, made only when a call is not found."""
    if not _STD_INDEX:
        import os
        import re
        from ..import_paths import std_dir
        for f in sorted(os.listdir(std_dir())):
            if f.endswith(".ember"):
                with open(os.path.join(std_dir(), f), encoding="utf-8") as fh:
                    for fn in re.findall(r"^fn\s+([A-Za-z_]\w*)", fh.read(), re.M):
                        _STD_INDEX.setdefault(fn, f"std/{f}")
        _STD_INDEX.setdefault("", "")
    return _STD_INDEX.get(name)


def _match_type(t, spec):
    """The type an argument offers to its slot: an array where a pointer is taken is a
    mutable pointer to its elements (in the array's space); an untyped constant is not
    known yet (None)."""
    if t in UNTYPED:
        return None
    if isinstance(spec, sig.PointerTo) and isinstance(t, ArrayType) and (t.space or "local") in spec.spaces:
        return PtrType(array_scalar(t), t.space or "local", True)
    return t
