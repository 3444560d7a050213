"""`--emit ast`: the typed AST as an indented tree, one node per line.

    Let head : u32 <8:5>
      Field x : u32 <8:16>

Each line names the node, its key fields, the checker's type (after `:`), the folded
constant (after `=`) and its line:column.
"""

from __future__ import annotations

import dataclasses

from . import ast as A


def _label(n) -> str:
    if isinstance(n, A.KernelDef):
        return f"KernelDef {n.name}"
    if isinstance(n, A.FnDef):
        return f"FnDef {n.name}"
    if isinstance(n, A.GenericParam):
        s = f"ConstParam {n.name}"
        if n.sym is not None:
            s += f" : {n.sym.ty}"
            if n.sym.value is not None:
                s += f" = {_value(n.sym.value)}"
        return s
    if isinstance(n, A.Param):
        return f"Param {n.name}" + (f" : {n.sym.ty}" if n.sym is not None else "")
    if isinstance(n, A.Let):
        names = ", ".join(x for x, _ in n.names)
        types = ", ".join(str(s.ty) for s in n.syms)
        return f"Let {'(' + names + ')' if n.is_tuple else names}" + (f" : {types}" if types else "")
    if isinstance(n, A.Var):
        return f"Var {n.name}" + (f" : {n.sym.ty}" if n.sym is not None else "")
    if isinstance(n, A.SharedDecl):
        return f"Shared {n.name}" + (f" : {n.sym.ty}" if n.sym is not None else "")
    if isinstance(n, A.Assign):
        return f"Assign {n.op if n.op == '=' else n.op + '='}"
    if isinstance(n, A.For):
        return f"{'Unroll' if n.unroll else ''}For {n.var}" + (f" : {n.sym.ty}" if n.sym is not None else "")
    if isinstance(n, A.Name):
        return f"Name {n.id}"
    if isinstance(n, (A.IntLit, A.FloatLit)):
        return f"{type(n).__name__} {_value(n.value)}{'_' + n.suffix if n.suffix else ''}"
    if isinstance(n, A.BoolLit):
        return f"BoolLit {'true' if n.value else 'false'}"
    if isinstance(n, A.Binary):
        return f"Binary {n.op}"
    if isinstance(n, A.Unary):
        return f"Unary {n.op}"
    if isinstance(n, A.Call):
        kind = n.target[0] if n.target else "?"
        return f"Call {n.name} ({kind})"
    if isinstance(n, A.Field):
        return f"Field {n.name}"
    if isinstance(n, A.TypeName):
        return f"Type {n.name}"
    if isinstance(n, A.PtrTypeExpr):
        return f"PtrType {'mut ' if n.mut else ''}{n.space}"
    return type(n).__name__


def _value(v) -> str:
    from fractions import Fraction
    if isinstance(v, bool):
        return "true" if v else "false"
    from ..floats import describe
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


def _children(n):
    """Every field holding a node (or a list of nodes), in declaration order."""
    for f in dataclasses.fields(n):
        v = getattr(n, f.name)
        if isinstance(v, A.Node):
            yield f.name, v
        elif isinstance(v, list):
            for x in v:
                if isinstance(x, A.Node):
                    yield f.name, x


def dump(module: A.Module) -> str:
    out: list[str] = []

    def visit(n, depth: int, role: str = "") -> None:
        line, col = n.span.line_col
        s = "  " * depth + _label(n)
        if isinstance(n, A.Expr) and n.ty is not None:
            s += f" : {n.ty}"
            if n.const is not None and not isinstance(n, (A.IntLit, A.FloatLit, A.BoolLit)):
                s += f" = {_value(n.const)}"
        if isinstance(n, A.KernelDef) and n.block is not None:
            s += " block"
        out.append(f"{s} <{line}:{col}>")
        for r, c in _children(n):
            visit(c, depth + 1, r)

    for item in module.items:
        visit(item, 0)
    return "\n".join(out) + "\n"
