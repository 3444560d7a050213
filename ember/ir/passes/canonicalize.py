"""canonicalize: fold constants and apply algebraic identities, all exact.

- Constant folding runs the op table's own semantics (the simulator's), so a folded value
  is bit for bit what the GPU would compute. Fast-math ops are never folded.
- Identities hold for every input, in IEEE arithmetic too: `x * 1.0`, `x / 1.0`,
  `x + (-0.0)`, `x - 0.0` are `x`, and `x / 2^k` is `x * 2^-k` (when 2^-k is representable
  both round the same real number once), but `x + 0.0` is not (-0 + 0 = +0) and `x * 0.0`
  is not (NaN, infinities, signs); integer identities use wrapping arithmetic.
- Canonical forms: constants on the right of commutative ops; `x - c` -> `x + (-c)` and
  `(x + c1) + c2` -> `x + (c1 + c2)` for integers (the vectorizer matches `base + offset`).
- Control flow: `scf.if` on a constant is replaced by its taken side; an `scf.if` whose
  sides only compute a few pure values becomes selects (if-conversion); an `scf.for` that
  runs zero times is replaced by its initial values.
"""

from __future__ import annotations

import numpy as np

from .. import semantics as S
from ..core import Function, Module, Op, Region, Value, replace_uses
from ..ops import OPS
from ..types import BOOL, ScalarType
from . import register
from .util import const_value, is_const, is_movable, make_const

MAX_ROUNDS = 8
IF_CONVERT_LIMIT = 6


@register("canonicalize", "Fold constants, apply exact algebraic identities, simplify control flow.")
def canonicalize(module: Module) -> bool:
    changed = False
    for f in module.functions:
        for _ in range(MAX_ROUNDS):
            if not _Canon(f).run():
                break
            changed = True
    return changed


def _exact_reciprocal(bits: int, t: ScalarType):
    """The bit pattern of 1/c when c (given as bits) is a power of two whose reciprocal is
    also representable (so multiplying by it is exactly dividing by c); else None."""
    c = float(S.from_bits(np.array([bits]), t)[0])
    if not np.isfinite(c) or c == 0.0:
        return None
    m, _ = np.frexp(abs(c))
    if m != 0.5:
        return None
    with np.errstate(over="ignore"):
        r = np.float64(1.0) / np.float64(c)     # exact in f64 unless it overflows
    if not np.isfinite(r):
        return None
    rbits = int(S.to_bits(np.array([r]), t)[0])
    back = float(S.from_bits(np.array([rbits]), t)[0])
    return rbits if back == r else None         # representable in t (not rounded, no overflow)


class _Canon:
    def __init__(self, f: Function):
        self.f = f
        self.mapping: dict[Value, Value] = {}
        self.changed = False

    def resolve(self, v: Value) -> Value:
        while v in self.mapping:
            v = self.mapping[v]
        return v

    def run(self) -> bool:
        self.region(self.f.body)
        if self.mapping:
            replace_uses(self.f.body, self.mapping)
        return self.changed

    def region(self, r: Region) -> None:
        out: list[Op] = []
        for op in r.ops:
            op.operands = [self.resolve(v) for v in op.operands]
            for sub in op.regions:
                self.region(sub)
            rewrite = self.rewrite(op)
            if rewrite is None:
                out.append(op)
                continue
            new_ops, results = rewrite
            self.changed = True
            for n in new_ops:
                n.parent = r
                n.operands = [self.resolve(v) for v in n.operands]
            out.extend(new_ops)
            for old, new in zip(op.results, results):
                self.mapping[old] = self.resolve(new)
        r.ops = out

    # ------------------------------------------------------------------ rewrites
    def rewrite(self, op: Op):
        name = op.name
        if name == "scf.if":
            return self.simplify_if(op)
        if name == "scf.for":
            return self.simplify_for(op)
        if op.regions or not op.results or name == "arith.const":
            return None
        folded = self.fold(op)
        if folded is not None:
            return folded
        return self.identity(op)

    def fold(self, op: Op):
        d = op.opdef
        if not (d.eval and d.foldable and d.pure and d.speculatable and not d.reads_memory and not d.convergent):
            return None
        if not all(is_const(v) for v in op.operands):
            return None
        if not all(isinstance(r.type, ScalarType) for r in op.results):
            return None
        args = [S.const(const_value(v), v.type, 1) for v in op.operands]
        with np.errstate(all="ignore"):
            values = d.eval(op, *args)
        consts = []
        for r, arr in zip(op.results, values):
            t = r.type
            a = np.asarray(arr)
            if t.is_float:
                v = int(S.to_bits(a, t)[0])
            elif t.is_bool:
                v = bool(a.reshape(-1)[0])
            else:
                v = int(a.reshape(-1)[0])
            consts.append(make_const(t, v, op.loc))
        return consts, [c.results[0] for c in consts]

    def identity(self, op: Op):
        name = op.name
        ops = op.operands
        if op.opdef.commutative and len(ops) == 2 and is_const(ops[0]) and not is_const(ops[1]):
            op.operands = [ops[1], ops[0]]
            self.changed = True
            ops = op.operands
        t = op.results[0].type
        same = lambda: ([], [ops[0]])  # noqa: E731

        def const(value):
            c = make_const(t, value, op.loc)
            return [c], [c.results[0]]

        if len(ops) == 2:
            a, b = ops
            cb = const_value(b)
            if isinstance(t, ScalarType) and t.is_int:
                if name in ("arith.add", "arith.sub", "arith.or", "arith.xor", "arith.shl", "arith.shr") and cb == 0:
                    return same()
                if name in ("arith.mul", "arith.div") and cb == 1:
                    return same()
                if name in ("arith.mul", "arith.and") and cb == 0:
                    return const(0)
                if name == "arith.and" and cb is not None and cb & ((1 << t.bits) - 1) == (1 << t.bits) - 1:
                    return same()
                if name in ("arith.sub", "arith.xor") and a is b:
                    return const(0)
                if name in ("arith.and", "arith.or", "arith.min", "arith.max") and a is b:
                    return same()
                if name == "arith.sub" and cb is not None:
                    c = make_const(t, -cb, op.loc)
                    add = Op(OPS["arith.add"], [a, c.results[0]], [t], loc=op.loc)
                    return [c, add], [add.results[0]]
                if name == "arith.add" and cb is None and b.op is not None and b.op.name == "arith.add" \
                        and const_value(b.op.operands[1]) is not None:
                    # a + (x + c) -> (a + x) + c: the constant moves outwards
                    inner = Op(OPS["arith.add"], [a, b.op.operands[0]], [t], loc=op.loc)
                    outer = Op(OPS["arith.add"], [inner.results[0], b.op.operands[1]], [t], loc=op.loc)
                    return [inner, outer], [outer.results[0]]
                if name == "arith.add" and cb is not None and a.op is not None and a.op.name == "arith.add":
                    inner = const_value(a.op.operands[1])
                    if inner is not None:
                        c = make_const(t, inner + cb, op.loc)
                        add = Op(OPS["arith.add"], [a.op.operands[0], c.results[0]], [t], loc=op.loc)
                        return [c, add], [add.results[0]]
            elif t == BOOL and name in ("arith.and", "arith.or", "arith.xor"):
                if cb is not None:
                    if name == "arith.and":
                        return same() if cb else const(False)
                    if name == "arith.or":
                        return const(True) if cb else same()
                    if name == "arith.xor" and not cb:
                        return same()
                if a is b and name in ("arith.and", "arith.or"):
                    return same()
            elif isinstance(t, ScalarType) and t.is_float and cb is not None:
                one = S.to_bits(np.array([1.0]), t)[0]
                neg_zero = S.to_bits(np.array([-0.0]), t)[0]
                pos_zero = 0
                if name in ("arith.mul", "arith.div") and cb == one:
                    return same()
                if name == "arith.add" and cb == neg_zero:
                    return same()
                if name == "arith.sub" and cb == pos_zero:
                    return same()
                if name == "arith.div":
                    recip = _exact_reciprocal(cb, t)
                    if recip is not None:   # x / 2^k == x * 2^-k, both are x * 2^-k rounded once
                        c = make_const(t, recip, op.loc)
                        mul = Op(OPS["arith.mul"], [a, c.results[0]], [t], loc=op.loc)
                        return [c, mul], [mul.results[0]]
            if name == "arith.cmp" and a is b and not a.type.is_float:
                pred = op.attrs["pred"]
                return const(pred in ("eq", "le", "ge"))
        if name == "arith.select":
            c, x, y = ops
            cc = const_value(c)
            if cc is not None:
                return [], [x if cc else y]
            if x is y:
                return [], [x]
            if t == BOOL and const_value(x) is True and const_value(y) is False:
                return [], [c]
        if name in ("arith.not", "arith.neg") and ops[0].op is not None and ops[0].op.name == name:
            return [], [ops[0].op.operands[0]]
        if name in ("arith.cast", "arith.bitcast") and ops[0].type == t:
            return same()
        return None

    def simplify_if(self, op: Op):
        cond = const_value(op.operands[0])
        if cond is not None:
            region = op.regions[0] if cond else op.regions[1]
            body = region.ops[:-1]
            yields = region.ops[-1].operands
            return body, list(yields)
        then_r, else_r = op.regions
        if not op.results:
            if len(then_r.ops) == 1 and len(else_r.ops) == 1:
                return [], []
            return None
        # if-conversion: both sides compute a few pure values -> compute both, select
        inner = then_r.ops[:-1] + else_r.ops[:-1]
        if len(inner) <= IF_CONVERT_LIMIT and all(is_movable(o) for o in inner):
            hoisted = list(inner)
            results, selects = [], []
            for tv, ev in zip(then_r.ops[-1].operands, else_r.ops[-1].operands):
                if tv is ev:
                    results.append(tv)
                    continue
                s = Op(OPS["arith.select"], [op.operands[0], tv, ev], [tv.type], loc=op.loc)
                selects.append(s)
                results.append(s.results[0])
            return hoisted + selects, results
        return None

    def simplify_for(self, op: Op):
        lo, hi, step = op.operands[:3]
        vlo, vhi = const_value(lo), const_value(hi)
        if vlo is not None and vhi is not None and not vlo < vhi:
            return [], list(op.operands[3:])   # the body never runs
        return None
