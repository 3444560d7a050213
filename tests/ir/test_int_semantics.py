"""Each op's `fold` (the constant folder on Python scalars, ember/ir/int_semantics.py) gives
the bits of its numpy `eval` (the simulator's semantics) on every integer type and bool:
at the edges of each type (MIN, MAX, -1, 0, shift amounts around the width, integers around
float rounding boundaries, and just above ties that rounding through f64 would break the wrong
way) and at random. And compiling a kernel does not import numpy."""

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from ember.ir.core import Op
from ember.ir.ops import OPS
from ember.ir.ops.canon import make_const
from ember.ir.passes.canonicalize import constant_results
from ember.ir.types import BOOL, SCALARS

ROOT = Path(__file__).resolve().parents[2]
INTS = [t for t in SCALARS.values() if t.is_int]
FLOATS = [t for t in SCALARS.values() if t.is_float]
R = random.Random(2026)


def _edges(t) -> list:
    if t.is_bool:
        return [False, True]
    lo, hi = t.int_range()
    near = [lo, lo + 1, -2, -1, 0, 1, 2, 3, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256,
            2049, 2051, 4097, 65504, 65519, 65520, 65535, 16777217, 16777219, hi - 1, hi,
            (1 << 53) + 1, (1 << 53) + 3, (1 << 62) + 2 ** 40 + 1,
            # just above a tie of f32 / bf16 / f16 that rounding through f64 first would lose
            (1 << 60) + (1 << 36) + 1, (1 << 60) + (1 << 52) + 1, (1 << 60) + (1 << 49) + 1,
            -(1 << 60) - (1 << 36) - 1]
    return sorted({v for v in near if lo <= v <= hi} | {R.randint(lo, hi) for _ in range(12)})


def _const(t, v):
    return Op(OPS["arith.const"], [], [t], {"value": v}).results[0]


def _agree(name: str, operand_types: list, result_type, values: list, attrs=None) -> None:
    op = Op(OPS[name], [_const(t, v) for t, v in zip(operand_types, values)], [result_type], dict(attrs or {}))
    folded = constant_results(op, scalar=True)
    evaluated = constant_results(op, scalar=False)
    got = [make_const(r.type, v).attrs["value"] for r, v in zip(op.results, folded)]
    want = [make_const(r.type, v).attrs["value"] for r, v in zip(op.results, evaluated)]
    assert got == want, f"{name} {attrs or ''} {list(zip(operand_types, values))} -> {result_type}"


def _pairs(a: list, b: list, n: int = 300) -> list:
    every = [(x, y) for x in a for y in b]
    return every if len(every) <= n else R.sample(every, n)


def test_every_foldable_arith_op_folds_without_numpy():
    """A foldable arith op without `fold` would make compiles of it import numpy."""
    missing = [n for n, d in OPS.items() if n.startswith("arith.") and n != "arith.const" and d.foldable
               and d.fold is None]
    assert not missing


@pytest.mark.parametrize("name", ["arith.add", "arith.sub", "arith.mul", "arith.div", "arith.rem", "arith.min",
                                  "arith.max", "arith.and", "arith.or", "arith.xor"])
def test_binary(name):
    types = INTS + ([BOOL] if name in ("arith.and", "arith.or", "arith.xor") else [])
    for t in types:
        for a, b in _pairs(_edges(t), _edges(t)):
            _agree(name, [t, t], t, [a, b])


@pytest.mark.parametrize("name", ["arith.shl", "arith.shr"])
def test_shifts(name):
    for t in INTS:
        for u in INTS:
            for a, b in _pairs(_edges(t), _edges(u), 60):
                _agree(name, [t, u], t, [a, b])


@pytest.mark.parametrize("name", ["arith.neg", "arith.not", "arith.abs"])
def test_unary(name):
    for t in INTS + ([BOOL] if name == "arith.not" else []):
        for a in _edges(t):
            _agree(name, [t], t, [a])


def test_cmp():
    for pred in ("eq", "ne", "lt", "le", "gt", "ge"):
        for t in INTS + [BOOL]:
            for a, b in _pairs(_edges(t), _edges(t), 80):
                _agree("arith.cmp", [t, t], BOOL, [a, b], {"pred": pred})


def test_select():
    for t in INTS + [BOOL] + FLOATS:
        values = _edges(t) if not t.is_float else [0, 1, (1 << t.bits) - 1, R.getrandbits(t.bits)]
        for c in (False, True):
            for a, b in _pairs(values, values, 20):
                _agree("arith.select", [BOOL, t, t], t, [c, a, b])


def test_cast_from_integers_and_bools():
    """Wrapping between integers, x != 0 to bool, and one correct rounding to every float
    type (ties to even; too large is inf)."""
    for src in INTS + [BOOL]:
        for dst in INTS + [BOOL] + FLOATS:
            if src == dst:
                continue
            for a in _edges(src):
                _agree("arith.cast", [src], dst, [a])


def test_bitcast():
    for src in INTS + FLOATS:
        for dst in INTS + FLOATS:
            if src == dst or src.bits != dst.bits:
                continue
            if src.is_float:
                values = [0, 1, (1 << src.bits) - 1, 1 << (src.bits - 1)] + [R.getrandbits(src.bits) for _ in range(20)]
            else:
                values = _edges(src)
            for a in values:
                _agree("arith.bitcast", [src], dst, [a])


def test_dp4a():
    from ember.ir.types import I32, U32
    for ta in (I32, U32):
        for tb in (I32, U32):
            acc = U32 if ta == U32 and tb == U32 else I32
            for _ in range(150):
                a, b, c = (R.choice(_edges(t)) for t in (ta, tb, acc))
                _agree("arith.dp4a", [ta, tb, acc], acc, [a, b, c])


def test_a_compile_does_not_import_numpy():
    """Kernels fold integer constants only: a cold compile must not pay numpy's import."""
    code = ("import sys, ember\n"
            "ember.compile('kernels_src/rmsnorm.ember', cache=False)\n"
            "ember.compile('kernels_src/rope.ember', defines={'HEAD_DIM': 128}, cache=False)\n"
            "print('numpy' in sys.modules)\n")
    env = dict(os.environ, EMBER_NO_CACHE="1")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
