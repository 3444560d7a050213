"""Type-generic device functions: `fn warp_sum<const T: type>(v: T) -> T { ... }`.

A generic function is a template: each call infers its type parameters from the
arguments' types (`T` bound by `v: T`, `p: *mut shared T`, or a shared array passed for
it; an untyped constant alone gives T its default, i32 or f32), and the checker makes
one instance per distinct binding, checked like an ordinary function with T standing for
its type. Instances are named `name$type...` in the IR (a name no source can write).
A template that no call instantiates is not checked.

The functions take the checker as their explicit context `ck` (its diagnostics, scopes
and the tables of functions and instances); generic_call is a generator run by
ember.trampoline.
"""

from __future__ import annotations

from ..ir.types import F32, I32, SCALARS, VOID, ArrayType, PtrType, ScalarType, array_scalar
from . import ast as A
from . import typed as T
from .check_types import (ERROR, UNTYPED, UNTYPED_FLOAT, check_params, coerce, decays_to, error_expr, expect,
                          resolve_type)


def shown_function(ir_name: str) -> str:
    """An IR function's name as a user reads it, quoted: `f`, or for an instance of a
    generic function (IR name `f$f32`) `f` (instance for f32)."""
    base, _, types = ir_name.partition("$")
    return f"`{base}`" + (f" (instance for {types.replace('$', ', ')})" if types else "")


def function_params(fn: A.FnDef) -> list:
    """The parameters of `fn` that take a function (`combine: fn(T, T) -> T`)."""
    return [p for p in fn.params if isinstance(p.type, A.FnTypeExpr)]


def _is_type_param(g: A.GenericParam) -> bool:
    return isinstance(g.type, A.TypeName) and g.type.name == "type"


def _mentions(node, name: str) -> bool:
    if isinstance(node, A.TypeName):
        return node.name == name
    if isinstance(node, A.PtrTypeExpr):
        return _mentions(node.pointee, name)
    if isinstance(node, A.ArrayTypeExpr):
        return _mentions(node.elem, name)
    if isinstance(node, A.TupleTypeExpr):
        return any(_mentions(e, name) for e in node.elems)
    return False


def generic_signature(ck, fn: A.FnDef) -> bool:
    """Register `fn` as a template if it has type parameters or function parameters
    (reporting problems with them); False when it is an ordinary function."""
    values = [g for g in fn.generics if not _is_type_param(g)]
    for g in values:
        ck.diags.error("E0107", "const value parameters are only allowed on kernels", g.span,
                       help="pass the value as an ordinary parameter (it is folded after inlining); "
                            "device functions may take type parameters: `<const T: type>`")
    types = [g for g in fn.generics if _is_type_param(g)]
    if not types and not function_params(fn):
        return False
    names = set()
    ok = True
    for g in types:
        if g.name in SCALARS or g.name in names:
            ck.diags.error("E0102", f"`{g.name}` cannot be declared as a type parameter here", g.name_span,
                           label="already a type" if g.name in SCALARS else "declared twice")
            ok = False
            continue
        names.add(g.name)
        if g.default is not None:
            ck.diags.error("E0107", f"type parameter `{g.name}` of a device function takes its type from "
                           "the arguments, so it has no default", g.default.span)
        if not any(_mentions(p.type, g.name) for p in fn.params):
            ck.diags.error("E0107", f"no parameter of `{fn.name}` has type `{g.name}`, so calls cannot "
                           "infer it", g.name_span,
                           help=f"give a parameter the type `{g.name}` (or a pointer to it)")
            ok = False
    # a template with a broken signature is still known (calls to it are not "not found"),
    # but its calls are errors already reported here
    ck.generic_fns[fn.name] = (fn, [g.name for g in types] if ok else None)
    return True


def generic_call(ck, e: A.Call, fn: A.FnDef, names: list | None):
    if names is None:
        yield ck.check_args(e)
        return T.TConst(e.span, ERROR, None)
    if len(e.args) != len(fn.params):
        ck.diags.error("E0206", f"`{e.name}` takes {len(fn.params)} argument(s) but {len(e.args)} were given",
                       e.span)
        yield ck.check_args(e)
        return T.TConst(e.span, ERROR, None)
    functions: dict = {}                    # function parameter -> the function passed for it
    value_params, value_args = [], []
    for a, p in zip(e.args, fn.params):
        if isinstance(p.type, A.FnTypeExpr):
            callee = function_argument(ck, a, p, e.name)
            if callee is None:
                return T.TConst(e.span, ERROR, None)
            functions[p.name] = callee
        else:
            value_params.append(p)
            value_args.append(a)
    args = []
    for a in value_args:
        args.append((yield ck.expr(a)))
    if any(a.ty is ERROR for a in args):
        return T.TConst(e.span, ERROR, None)
    binding: dict = {}
    for a, p in zip(args, value_params):
        if not _infer(ck, p.type, a, binding, names, e.name):
            return T.TConst(e.span, ERROR, None)
    defaults: dict = {}                    # only untyped constants: f32 if one is a float, else i32
    for a, p in zip(args, value_params):
        if isinstance(p.type, A.TypeName) and p.type.name in names and p.type.name not in binding:
            if a.ty is UNTYPED_FLOAT or defaults.get(p.type.name) is F32:
                defaults[p.type.name] = F32
            else:
                defaults[p.type.name] = I32
    binding.update(defaults)
    info = instance(ck, fn, names, binding, functions)
    if info is None:
        return T.TConst(e.span, ERROR, None)
    ck.instance_calls.setdefault(info.name, e.name_span)
    ck.calls.append((info.name, e.name_span))
    checked = []
    for a, p in zip(args, info.params):
        if p.ty is ERROR:
            checked.append(error_expr(a))
            continue
        a = coerce(ck, a, p.ty) if a.ty in UNTYPED else a
        if a.ty is not ERROR and not decays_to(a.ty, p.ty):
            a = expect(ck, a, p.ty)
        checked.append(a)
    return T.TCall(e.span, info.ret, info.name, checked)


def _infer(ck, node, arg: T.TExpr, binding: dict, names: list, fn_name: str) -> bool:
    """Bind the type parameters in a parameter's type from its argument; False after
    reporting a conflict."""
    t = arg.ty
    if isinstance(node, A.TypeName) and node.name in names:
        if t in UNTYPED:
            return True
        if not isinstance(t, ScalarType) or t.is_bool:
            ck.diags.error("E0201", f"`{fn_name}`: type parameter `{node.name}` must be a numeric type, "
                           f"not `{t}`", arg.span)
            return False
        bound = binding.setdefault(node.name, t)
        if bound != t:
            ck.diags.error("E0201", f"mismatched types in `{fn_name}`", arg.span,
                           label=f"`{node.name}` is `{bound}` from an earlier argument, this is `{t}`")
            return False
        return True
    if isinstance(node, A.PtrTypeExpr):
        elem = t.pointee if isinstance(t, PtrType) else array_scalar(t) if isinstance(t, ArrayType) else None
        if elem is None:
            return True       # not a pointer: reported as a mismatch once instantiated
        return _infer(ck, node.pointee, T.TConst(arg.span, elem, None), binding, names, fn_name)
    return True


def instance(ck, fn: A.FnDef, names: list, binding: dict, functions: dict | None = None) -> T.TFunction | None:
    functions = functions or {}
    key = (fn.name, tuple(binding[n].name for n in names), tuple(functions.values()))
    info = ck.instances.get(key)
    if info is not None:
        return info
    saved = ck.type_params
    ck.type_params = dict(binding)
    ck.push()
    params = check_params(ck, [p for p in fn.params if not isinstance(p.type, A.FnTypeExpr)], kernel=False)
    ck.pop()
    ret = resolve_type(ck, fn.ret, allow_tuple=True) if fn.ret is not None else VOID
    ck.type_params = saved
    name = "$".join((fn.name,) + key[1] + key[2])
    info = T.TFunction(name, fn.span, fn.name_span, params, ret)
    ck.instances[key] = info
    ck.fns[name] = info
    ck.fn_nodes[name] = fn
    ck.fn_type_params[name] = dict(binding)
    ck.fn_functions[name] = dict(functions)
    return info


def function_argument(ck, a: A.Expr, p: A.Param, fn_name: str) -> str | None:
    """The function a call passes for a function parameter: a name of a device function
    or a builtin (or, inside a function that was passed one, its own function
    parameter); None after reporting."""
    from .builtins import BUILTINS
    name = a.id if isinstance(a, A.Name) and ck.lookup(a.id) is None else None
    if name is not None:
        name = ck.fn_aliases.get(name, name)
    known = name is not None and (name in ck.fns or name in ck.generic_fns or name in ck.imported_fns
                                  or (name in BUILTINS and BUILTINS[name].results))
    if not known:
        ck.diags.error("E0201", f"`{fn_name}`: `{p.name}` takes a function", a.span,
                       label="not a function's name",
                       help="pass a device function or a builtin by name, e.g. `max`")
        return None
    want = len(p.type.params)
    ck.called(name)
    if name in BUILTINS:
        have = len(BUILTINS[name].params) + len(BUILTINS[name].const_attrs)
    else:
        node = ck.fn_nodes.get(name) or (ck.generic_fns.get(name) or (None,))[0]
        have = len([q for q in node.params if not isinstance(q.type, A.FnTypeExpr)]) if node else want
    if have != want:
        ck.diags.error("E0206", f"`{fn_name}`: `{p.name}` takes a function of {want} argument(s), and "
                       f"`{name}` takes {have}", a.span)
        return None
    return name
