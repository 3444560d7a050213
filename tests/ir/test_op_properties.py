"""Every op's declared semantics agree with each other at every type its schema admits, not
only at its example's: for each pure scalar op with `eval`, every combination of operand
types the signature (and its rules) accepts and every value of its enum and bool
attributes, on values drawn at each type's edges and at random:

- `fold` (Python scalars, the constant folder) gives the bits `eval` (numpy, the
  simulator) gives;
- each algebraic trait the op declares (Identity, Absorbing, Idempotent, SelfInverse,
  Involution, commutativity) holds for `eval` on every type its kinds cover - the facts
  canonicalize rewrites with must be true.

A new op with a wrong 64-bit `eval`, or a false trait, fails here (the tests at the end
break one on purpose and check that it is caught)."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from ember.ir import signature as sig
from ember.ir.core import Op
from ember.ir.opdef import (ALL_ONES, BOOL_KIND, COMMUTATIVE, FLOAT, FONE, INT, NEG_ZERO, ONE, POS_ZERO, ZERO,
                            Absorbing, Idempotent, Identity, Involution, SelfInverse)
from ember.ir.ops import OPS
from ember.ir.ops.canon import make_const
from ember.ir.passes.canonicalize import constant_results
from ember.ir.types import SCALARS, ScalarType
from ember import floats

R = random.Random(33)
TYPES = list(SCALARS.values())


def _int_values(t: ScalarType) -> list:
    if t.is_bool:
        return [False, True]
    lo, hi = t.int_range()
    near = [lo, lo + 1, -2, -1, 0, 1, 2, 3, 7, 8, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256, 65535,
            (1 << 31) - 1, 1 << 31, (1 << 53) + 1, hi - 1, hi]
    return sorted({v for v in near if lo <= v <= hi} | {R.randint(lo, hi) for _ in range(8)})


def _float_values(t: ScalarType) -> list:
    """Bit patterns: zeros, ones, the extremes, infinities, a NaN, and random finite values."""
    names = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, -7.25, math.inf, -math.inf, 1e-3, 65504.0, 1e30]
    bits = {floats.to_bits(floats.round_float(v, t.name), t.name) for v in names}
    width = t.bits
    exp_bits = {"f16": 5, "bf16": 8, "f32": 8, "f64": 11}[t.name]
    man_bits = width - 1 - exp_bits
    bits |= {1, (1 << man_bits) | 1, ((1 << exp_bits) - 2) << man_bits | ((1 << man_bits) - 1),   # subnormal, normal, max
             ((1 << exp_bits) - 1) << man_bits | (1 << (man_bits - 1))}                             # a quiet NaN
    bits |= {R.getrandbits(width) for _ in range(6)}
    return sorted(b for b in bits if b < (1 << width))


def values(t: ScalarType) -> list:
    return _float_values(t) if t.is_float else _int_values(t)


def _const(t, v):
    return make_const(t, v).results[0]


def _attr_choices(d) -> list | None:
    """Every combination of the op's enum and bool attributes (None when an attribute of
    another kind is required: such an op is covered by its own tests)."""
    names, options = [], []
    for name, spec in d.attrs.items():
        if spec.kind == "enum":
            names.append(name)
            options.append(list(spec.values))
        elif spec.kind == "bool":
            names.append(name)
            options.append([False, True])
        elif spec.required:
            return None
    return [dict(zip(names, combo)) for combo in itertools.product(*options)]


def type_combos(d) -> list:
    """Every type combination the op's signature admits: (operand types, result types or
    None to infer them) - result letters no operand decides (a cast's) are drawn too."""
    specs = [s.spec for s in d.operands]
    rspecs = [s.spec for s in d.results]
    every = specs + rspecs
    if not specs or any(s.variadic for s in d.operands) or not all(isinstance(p, (sig.Var, sig.Exact)) for p in every):
        return []
    letters = []
    for p in every:
        if isinstance(p, sig.Var) and p.letter not in letters:
            letters.append(p.letter)
    first = {ltr: next(p for p in every if isinstance(p, sig.Var) and p.letter == ltr) for ltr in letters}
    out = []
    for combo in itertools.product(*[[t for t in TYPES if first[ltr].admits(t)] for ltr in letters]):
        binding = dict(zip(letters, combo))
        types = [binding[p.letter] if isinstance(p, sig.Var) else p.type for p in specs]
        rtypes = [binding[p.letter] if isinstance(p, sig.Var) else p.type for p in rspecs]
        b: dict = {}
        if sig.check(d.operands, types, b, "operand", d.rules) is None and \
                sig.check(d.results, rtypes, b, "result", d.rules) is None and (d.verify is None or True):
            out.append((types, rtypes))
    return out


def _result_types(d, combo, attrs):
    types, rtypes = combo
    if d.verify is not None:
        op = Op(d, [_const(t, values(t)[0]) for t in types], list(rtypes), dict(attrs))
        if d.verify(op):
            return None               # a combination the op's own verifier refuses (a bitcast's sizes)
    return rtypes if rtypes and all(isinstance(r, ScalarType) for r in rtypes) else None


def _op(name, types, result_types, args, attrs):
    return Op(OPS[name], [_const(t, v) for t, v in zip(types, args)], list(result_types), dict(attrs))


def _bits(results, result_types, vals) -> list:
    out = []
    for t, v in zip(result_types, vals):
        c = make_const(t, v).attrs["value"]
        if t.is_float and floats.is_nan_bits(c, t.name):
            c = "nan"                 # any NaN: payloads are not part of the semantics
        out.append(c)
    return out


def run_eval(name, types, result_types, args, attrs):
    op = _op(name, types, result_types, args, attrs)
    return _bits(op.results, result_types, constant_results(op, scalar=False))


def run_fold(name, types, result_types, args, attrs):
    d = OPS[name]
    op = _op(name, types, result_types, args, attrs)
    folded = d.fold(op, *[v for v in args])
    return None if folded is None else _bits(op.results, result_types, list(folded))


PURE = sorted(n for n, d in OPS.items() if d.eval is not None and d.approx is None and d.speculatable
              and n != "arith.const" and type_combos(d) and _attr_choices(d) is not None)


def _samples(types, n=40) -> list:
    every = itertools.product(*[values(t) for t in types])
    pool = list(itertools.islice(every, 5000))
    return pool if len(pool) <= n else R.sample(pool, n)


def test_the_generic_test_covers_the_op_table():
    """The pure arithmetic ops are all here (a new one is tested without being listed)."""
    assert {"arith.add", "arith.div", "arith.shl", "arith.cmp", "arith.cast", "arith.select", "arith.dp4a",
            "arith.min", "math.fma"} <= set(PURE)


@pytest.mark.parametrize("name", PURE)
def test_fold_agrees_with_eval_at_every_admitted_type(name):
    d = OPS[name]
    if d.fold is None:
        pytest.skip("no fold: eval is the folder")
    problems = []
    for combo in type_combos(d):
        types = combo[0]
        for attrs in _attr_choices(d):
            rts = _result_types(d, combo, attrs)
            if rts is None:
                continue
            for args in _samples(types):
                folded = run_fold(name, types, rts, args, attrs)
                if folded is not None and folded != run_eval(name, types, rts, args, attrs):
                    problems.append(f"{[str(t) for t in types]} {attrs} {args}")
    assert problems == [], f"{name}: fold != eval for {problems[:5]}"


def _element(kind_value: str, t: ScalarType):
    if t.is_float:
        return floats.to_bits({POS_ZERO: 0.0, NEG_ZERO: -0.0, FONE: 1.0, ZERO: 0.0, ONE: 1.0}[kind_value], t.name)
    if t.is_bool:
        return {ZERO: False, ONE: True, ALL_ONES: True}[kind_value]
    return {ZERO: 0, ONE: 1, ALL_ONES: -1 if t.signed else (1 << t.bits) - 1}[kind_value]


def _covers(kinds: tuple, t: ScalarType) -> bool:
    return (t.is_float and kinds == FLOAT or FLOAT[0] in kinds and t.is_float) or \
        (t.is_bool and BOOL_KIND[0] in kinds) or (t.is_int and INT[0] in kinds)


def trait_problems(name: str) -> list:
    """Where a declared trait of the op does not hold for its `eval`."""
    d = OPS[name]
    out = []
    for combo in type_combos(d):
        types = combo[0]
        t = types[0]
        if len(set(types)) != 1:
            continue
        for attrs in _attr_choices(d):
            rts = _result_types(d, combo, attrs)
            if rts is None or rts[0] != t:
                continue
            xs = values(t)[:24]
            for fact in d.traits:
                if isinstance(fact, Identity) and _covers(fact.kinds, t) and len(types) == 2:
                    e = _element(fact.value, t)
                    out += [f"{fact} {t} x={x}" for x in xs
                            if run_eval(name, types, rts, [x, e], attrs) != _bits(None, [t], [x])]
                elif isinstance(fact, Absorbing) and _covers(fact.kinds, t) and len(types) == 2:
                    z = _element(fact.value, t)
                    out += [f"{fact} {t} x={x}" for x in xs
                            if run_eval(name, types, rts, [x, z], attrs) != _bits(None, [t], [z])]
                elif isinstance(fact, Idempotent) and _covers(fact.kinds, t) and len(types) == 2:
                    out += [f"{fact} {t} x={x}" for x in xs
                            if run_eval(name, types, rts, [x, x], attrs) != _bits(None, [t], [x])]
                elif isinstance(fact, SelfInverse) and _covers(fact.kinds, t) and len(types) == 2:
                    zero = _element(ZERO, t)
                    out += [f"{fact} {t} x={x}" for x in xs
                            if run_eval(name, types, rts, [x, x], attrs) != _bits(None, [t], [zero])]
                elif isinstance(fact, Involution) and _covers(fact.kinds, t) and len(types) == 1:
                    for x in xs:
                        once = run_eval(name, types, rts, [x], attrs)[0]
                        if once == "nan":
                            continue
                        if run_eval(name, types, rts, [once], attrs) != _bits(None, [t], [x]):
                            out.append(f"{fact} {t} x={x}")
            if COMMUTATIVE in d.traits and len(types) == 2:
                for a, b in _samples(types, 30):
                    if run_eval(name, types, rts, [a, b], attrs) != run_eval(name, types, rts, [b, a], attrs):
                        out.append(f"commutative {t} {a}, {b}")
    return out


@pytest.mark.parametrize("name", [n for n in PURE if OPS[n].has_facts or COMMUTATIVE in OPS[n].traits])
def test_declared_traits_hold_for_eval(name):
    assert trait_problems(name)[:5] == []


# ------------------------------------------------------------------ the test can fail

def test_a_wrong_64_bit_eval_is_caught(monkeypatch):
    """An eval wrong only for i64 (the example type of arith.add is u32) is caught."""
    d = OPS["arith.add"]
    right = d.eval

    def wrong(op, a, b):
        (r,) = right(op, a, b)
        return (r + 1 if op.results[0].type.name == "i64" else r,)
    monkeypatch.setattr(d, "eval", wrong)
    with pytest.raises(AssertionError, match="fold != eval"):
        test_fold_agrees_with_eval_at_every_admitted_type("arith.add")


@pytest.mark.parametrize("fact", [Identity(ONE, INT), Idempotent(INT)])
def test_a_false_trait_is_caught(monkeypatch, fact):
    d = OPS["arith.add"]
    monkeypatch.setattr(d, "traits", d.traits | {fact})
    d.derive()
    try:
        assert trait_problems("arith.add")
    finally:
        monkeypatch.undo()
        d.derive()
