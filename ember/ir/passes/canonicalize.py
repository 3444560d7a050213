"""canonicalize: fold constants and apply algebraic identities, all exact.

Nothing here names an op: it reads each op's definition.
- Constant folding runs the op's own semantics (its `fold` on Python scalars for integer
  and bool constants, else the simulator's `eval`; an expanded op's expansion), so a
  folded value is bit for bit what the GPU would compute. Ops whose hardware result is
  approximate are never folded.
- The algebraic facts of an op's traits, for the kinds of types they hold for: an
  identity element (`x * 1 -> x`; for floats only the exact ones, `x * 1.0`, `x + (-0.0)`,
  `x - 0.0`, not `x + 0.0`), an absorbing element (`x & 0 -> 0`), idempotence
  (`x | x -> x`), self-inverse (`x ^ x -> 0`), involution (`-(-x) -> x`), and
  commutativity (constants move to the right).
- The op's own `canonicalize` rewrites (`x / 2^k -> x * 2^-k`, integer reassociation
  towards `base + constant`, `select` on a constant, ...; see ember/ir/ops/canon.py).
- Control flow: `scf.if` on a constant is replaced by its taken side; an `scf.if` whose
  sides only compute a few pure values becomes selects (if-conversion); an `scf.for`
  that runs zero times is replaced by its initial values.
"""

from __future__ import annotations

from functools import lru_cache

from ... import floats
from ...lazy_numpy import np
from .. import semantics as S
from ..core import Module, Op
from ..interp import evaluate
from ..opdef import ALL_ONES, FONE, NEG_ZERO, ONE, POS_ZERO, ZERO
from ..ops import OPS
from ..ops.canon import const_value, make_const
from ..rewrite import rewrite
from ..types import ScalarType
from . import register

IF_CONVERT_LIMIT = 6


@register("canonicalize", "Fold constants, apply exact algebraic identities, simplify control flow.")
def canonicalize(module: Module) -> set:
    """One walk per function reaches the fixed point: the walk visits an op after the ops
    that define its operands (and after its regions), so it sees them rewritten already,
    and the ops a rewrite makes are canonicalized as they are made (_settled). A second
    walk changes nothing (tests/ir/passes/test_canonicalize.py checks it on every kernel
    and corpus program, and the differential fuzzer on every program it makes); before,
    every function that changed was walked again to find that out."""
    return {f for f in module.functions if rewrite(f.body, _settled)}


def _settled(op: Op):
    """_visit, with the ops it makes canonicalized in turn (those it keeps or takes out of
    op's regions were visited already)."""
    result = _visit(op)
    if result is None:
        return None
    new_ops, values = result
    if all(n is op or n.parent is not None for n in new_ops):
        return result
    out = []
    replaced = {}
    for n in new_ops:
        if n is op or n.parent is not None:
            out.append(n)
            continue
        again = _settled(n)
        if again is None:
            out.append(n)
            continue
        more, repl = again
        keep = False
        for m in more:
            keep |= m is n
            out.append(m)
        for old, new in zip(n.results, repl):
            if old is not new:
                old.replace_all_uses_with(new)
                replaced[old] = new
        if not keep:
            n.erase()
    return out, [replaced.get(v, v) for v in values]


def _visit(op: Op):
    name = op.name
    if name == "scf.if":
        return _simplify_if(op)
    if name == "scf.for":
        return _simplify_for(op)
    if op.regions or not op.results or name == "arith.const":
        return None
    folded = _fold(op)
    if folded is not None:
        return folded
    swapped = _commute(op)
    return _facts(op) or (op.opdef.canonicalize(op) if op.opdef.canonicalize else None) or swapped


def _fold(op: Op, scalar_only: bool = False):
    """The constants replacing `op` when its operands are all constants, or None.
    `scalar_only`: by the op's `fold` on Python scalars alone (integers and bools, never
    numpy), for passes that fold as they copy (fold_scalar)."""
    d = op.opdef
    if not (d.foldable and d.speculatable) or not op.results or op.name == "arith.const":
        return None
    if scalar_only and d.fold is None:
        return None
    if not all(v.op is not None and v.op.name == "arith.const" for v in op.operands):
        return None
    if not all(isinstance(r.type, ScalarType) for r in op.results):
        return None
    if scalar_only:
        values = d.fold(op, *[const_value(v) for v in op.operands])
        if values is None:
            return None
    else:
        values = constant_results(op)
    consts = [make_const(r.type, v, op.loc) for r, v in zip(op.results, values)]
    return consts, [c.results[0] for c in consts]


def fold_scalar(op: Op):
    """_fold on Python scalars only: never imports numpy (see _fold)."""
    return _fold(op, scalar_only=True)


def constant_results(op: Op, scalar: bool = True) -> list:
    """The results of an op whose operands are all constants, as `arith.const` holds them
    (integers not yet wrapped): by the op's `fold` on Python scalars where it has one and
    `scalar` is set, else by its numpy semantics."""
    d = op.opdef
    if scalar and d.fold is not None:
        values = d.fold(op, *[const_value(v) for v in op.operands])
        if values is not None:
            return list(values)
    args = [S.const(const_value(v), v.type, 1) for v in op.operands]
    with np.errstate(all="ignore"):
        arrays = evaluate(op, args)
    values = []
    for r, arr in zip(op.results, arrays):
        t = r.type
        a = np.asarray(arr)
        if t.is_float:
            values.append(int(S.to_bits(a, t)[0]))
        elif t.is_bool:
            values.append(bool(a.reshape(-1)[0]))
        else:
            values.append(int(a.reshape(-1)[0]))
    return values


def _commute(op: Op):
    """Constants go to the right of commutative ops; the op is changed in place (returned
    as kept, so the walk counts a change)."""
    ops = op.operands
    if op.opdef.commutative and len(ops) == 2 and const_value(ops[0]) is not None and const_value(ops[1]) is None:
        op.set_operands([ops[1], ops[0]])
        return [op], list(op.results)
    return None


@lru_cache(maxsize=None)
def _symbol_bits(symbol: str, t: ScalarType):
    """The constant an algebraic fact names, as the IR stores it for type t."""
    if t.is_float:
        value = {POS_ZERO: 0.0, NEG_ZERO: -0.0, FONE: 1.0}.get(symbol)
        return None if value is None else floats.to_bits(value, t.name)
    if t.is_bool:
        return {ZERO: False, ALL_ONES: True}.get(symbol)
    return {ZERO: 0, ONE: 1, ALL_ONES: (1 << t.bits) - 1}.get(symbol)


def _matches(c, symbol: str, t: ScalarType) -> bool:
    want = _symbol_bits(symbol, t)
    if want is None or c is None:
        return False
    if t.is_int:
        return (c & ((1 << t.bits) - 1)) == want
    return c == want and isinstance(c, bool) == t.is_bool


def _facts(op: Op):
    """The op's algebraic facts (identity, absorbing element, idempotence, self-inverse,
    involution) that apply to these operands."""
    d = op.opdef
    if not d.has_facts:
        return None
    t = op.results[0].type
    kind = t.kind if isinstance(t, ScalarType) else None
    ops = op.operands
    if len(ops) == 2:
        a, b = ops
        cb = const_value(b)
        if cb is not None:
            for fact in d.identities:
                if kind in fact.kinds and _matches(cb, fact.value, t):
                    return [], [a]
            for fact in d.absorbing:
                if kind in fact.kinds and _matches(cb, fact.value, t):
                    c = make_const(t, _symbol_bits(fact.value, t), op.loc)
                    return [c], [c.results[0]]
        if a is b:
            for fact in d.self_inverse:
                if kind in fact.kinds:
                    c = make_const(t, 0, op.loc)
                    return [c], [c.results[0]]
            for fact in d.idempotent:
                if kind in fact.kinds:
                    return [], [a]
    elif len(ops) == 1:
        inner = ops[0].op
        if inner is not None and inner.opdef is d:
            for fact in d.involution:
                if kind in fact.kinds:
                    return [], [inner.operands[0]]
    return None


def _simplify_if(op: Op):
    cond = const_value(op.operands[0])
    if cond is not None:
        region = op.regions[0] if cond else op.regions[1]
        body = region.ops[:-1]
        yields = list(region.ops[-1].operands)
        region.ops[-1].erase()
        region.ops = []
        return body, yields
    then_r, else_r = op.regions
    if not op.results:
        if len(then_r.ops) == 1 and len(else_r.ops) == 1:
            return [], []
        return None
    # if-conversion: both sides compute a few pure values -> compute both, select
    inner = then_r.ops[:-1] + else_r.ops[:-1]
    if len(inner) <= IF_CONVERT_LIMIT and all(o.opdef.speculatable and not o.regions for o in inner):
        results, selects = [], []
        for tv, ev in zip(then_r.ops[-1].operands, else_r.ops[-1].operands):
            if tv is ev:
                results.append(tv)
                continue
            s = Op(OPS["arith.select"], [op.operands[0], tv, ev], [tv.type], loc=op.loc)
            selects.append(s)
            results.append(s.results[0])
        for r in (then_r, else_r):
            r.ops[-1].erase()
            r.ops = []
        return inner + selects, results
    return None


def _simplify_for(op: Op):
    lo, hi = op.operands[:2]
    vlo, vhi = const_value(lo), const_value(hi)
    if vlo is not None and vhi is not None and not vlo < vhi:
        return [], list(op.operands[3:])   # the body never runs
    return None
