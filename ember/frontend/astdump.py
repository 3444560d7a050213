"""`--emit ast`: the typed AST (the checker's result) as an indented tree, one node per line.

    Let head : u32 <8:5>
      Special block_idx.x : u32 <8:16>

Each line names the node, its key fields, its type (after `:`), the constant a folded
expression has (after `=`, with the expression it was folded from below it) and its
line:column.
"""

from __future__ import annotations


from ..floats import describe
from . import typed as T


def _value(v) -> str:
    from fractions import Fraction
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, Fraction):
        if v.denominator == 1:
            return describe(v.numerator)
        try:
            return repr(float(v))
        except OverflowError:
            return describe(v)
    if isinstance(v, int):
        return describe(v)
    return repr(v) if isinstance(v, float) else str(v)


def _label(n) -> str:
    ty = f" : {n.ty}" if isinstance(n, T.TExpr) else ""
    if isinstance(n, T.TConst):
        inner = n.folded
        if inner is not None:
            return _label(inner).split(" : ")[0] + f"{ty} = {_value(n.value)}"
        return f"Const {_value(n.value)}{ty}"
    if isinstance(n, T.TVar):
        return f"Name {n.sym.name}{ty}"
    if isinstance(n, T.TSpecial):
        return f"Special {n.op.split('.')[1]}{'.' + n.dim if n.dim else ''}{ty}"
    if isinstance(n, (T.TUnary, T.TBinary, T.TLogic)):
        return f"{type(n).__name__[1:]} {n.op}{ty}"
    if isinstance(n, T.TCall):
        return f"Call {n.fn} (fn){ty}"
    if isinstance(n, T.TBuiltin):
        return f"Call {n.builtin.name} (builtin){ty}"
    if isinstance(n, T.TCast):
        return f"Call {n.ty} (cast){ty}"
    if isinstance(n, T.TLet):
        names = ", ".join(s.name for s in n.syms)
        types = ", ".join(str(s.ty) for s in n.syms)
        return f"Let {'(' + names + ')' if len(n.syms) > 1 else names} : {types}"
    if isinstance(n, T.TVarDecl):
        return f"Var {n.sym.name} : {n.sym.ty}"
    if isinstance(n, T.TArray):
        return f"{'Shared' if n.sym.kind == 'shared' else 'Array'} {n.sym.name} : {n.sym.ty}"
    if isinstance(n, T.TAssign):
        return f"Assign {n.sym.name}"
    if isinstance(n, T.TStore):
        return f"Store{' ' + n.op + '=' if n.op else ''}"
    if isinstance(n, T.TFor):
        return f"{'Unroll' if n.unroll else ''}For {n.sym.name} : {n.sym.ty}"
    return f"{type(n).__name__[1:]}{ty}"


def _children(n) -> list:
    if isinstance(n, T.TConst):
        f = n.folded
        return [] if f is None else _children(f)
    out = []
    for name in n._fields:
        if name in ("span", "ty", "folded"):
            continue
        v = getattr(n, name)
        if isinstance(v, (T.TExpr, T.TStmt)):
            out.append(v)
        elif isinstance(v, list):
            out.extend(x for x in v if isinstance(x, (T.TExpr, T.TStmt)))
    return out


def _tree(root, depth: int, out: list) -> None:
    stack = [(root, depth)]
    while stack:
        n, d = stack.pop()
        line, col = n.span.line_col
        out.append(f"{'  ' * d}{_label(n)} <{line}:{col}>")
        stack.extend((c, d + 1) for c in reversed(_children(n)))


def dump(prog: T.TProgram) -> str:
    out: list[str] = []
    for k in prog.kernels:
        out.append(f"KernelDef {k.name}")
        for name, (t, v) in k.consts.items():
            out.append(f"  ConstParam {name}" + (f" : {t} = {_value(v)}" if t is not None else f" : type = {v}"))
        for i, p in enumerate(k.params):
            out.append(f"  Param {p.name} : {p.ty}" + (" stream" if i in k.stream else ""))
        if k.body is not None:
            _tree(k.body, 1, out)
    for f in prog.fns.values():
        out.append(f"FnDef {f.name} -> {f.ret}")
        for p in f.params:
            out.append(f"  Param {p.name} : {p.ty}")
        if f.body is not None:
            _tree(f.body, 1, out)
    return "\n".join(out) + "\n"
