"""unroll: fully unroll scf.for loops whose trip count is a known constant.

The induction variable becomes a constant in each copy, so per-thread arrays indexed by
it get constant indices (and stay in registers after lowering) and folding continues.
Loops written `unroll for` are unrolled up to a larger budget.

Copies are folded as they are made (integer and bool ops whose operands became
constants), and a loop copied out of an unrolled body (also from inside an `if` of it) is
unrolled in turn: an inner loop whose bounds depend on the outer induction variable
(`unroll for j in i * n..(i + 1) * n`) has constant bounds only in the copies, which the
walk (inner loops first) has passed. An `unroll for` left a loop is reported by the
driver (W0003)."""

from __future__ import annotations

from ..analysis.values import const_value
from ..core import Module, Op, Value, clone_op
from ..ops.canon import make_const
from ..rewrite import rewrite
from . import register
from .canonicalize import fold_scalar

MAX_TRIPS = 32
MAX_TRIPS_ASKED = 1024
MAX_OPS = 2048            # trips x body size (x8 when asked for with `unroll`)


@register("unroll", "Fully unroll loops with a small constant trip count.")
def unroll(module: Module) -> set:
    return {f for f in module.functions if rewrite(f.body, _visit)}


def trip_count(op: Op, limit: int) -> int | None:
    """The trip count of `for i = lo; i < hi; i += step` (wrapping add), if constant."""
    lo, hi, step = (const_value(v) for v in op.operands[:3])
    if None in (lo, hi, step):
        return None
    t = op.operands[0].type
    mask = (1 << t.bits) - 1
    lo_r, _ = t.int_range()
    i, n = lo, 0
    while i < hi:
        n += 1
        if n > limit:
            return None
        i = ((i + step - lo_r) & mask) + lo_r
    return n


def _visit(op: Op):
    if op.name != "scf.for":
        return None
    asked = bool(op.attrs.get("unroll"))
    n = trip_count(op, MAX_TRIPS_ASKED if asked else MAX_TRIPS)
    if n is None:
        return None
    size = sum(1 for _ in op.regions[0].walk())
    if n * size > (MAX_OPS * 8 if asked else MAX_OPS):
        return None
    return _expand(op, n)


def _fold_or_unroll(op: Op):
    """A copy made by unrolling: folded if its operands became constants, unrolled if it
    is a loop whose bounds did."""
    if not op.regions:
        return fold_scalar(op)
    return _visit(op) if op.name == "scf.for" else None


def _expand(op: Op, n: int) -> tuple[list[Op], list[Value]]:
    lo, _, step = (const_value(v) for v in op.operands[:3])
    t = op.operands[0].type
    body = op.regions[0]
    carried = list(op.operands[3:])
    copies: list[Op] = []
    iv = lo
    for _ in range(n):
        c = make_const(t, iv, op.loc)
        c.results[0].name = body.args[0].name
        copies.append(c)
        values = {body.args[0]: c.results[0]}
        values.update(zip(body.args[1:], carried))
        for inner in body.ops[:-1]:
            copy = clone_op(inner, values)
            if copy.regions and copy.name != "scf.for":
                for r in copy.regions:          # an scf.if: its loops may now have constant bounds
                    rewrite(r, _fold_or_unroll)
            done = _fold_or_unroll(copy)
            if done is None:
                copies.append(copy)
                continue
            new_ops, new_values = done
            copies.extend(new_ops)
            values.update(zip(inner.results, new_values))
            copy.erase()                    # replaced: drop its uses of the constants
        carried = [values.get(v, v) for v in body.ops[-1].operands]
        iv += step
    return copies, carried
