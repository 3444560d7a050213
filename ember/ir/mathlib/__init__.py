"""Ember's accurate math library, written as IR expansions.

The lowering emits each accurate math op as its expansion here (and the `expand-math`
pass can copy it into the IR), so the GPU runs exactly this code and the simulator (and the constant folder) computes the same bits by
running it too. Accuracy, measured against higher precision, is documented in
docs/math.md and checked by tests/ir/test_mathlib.py.
"""

from __future__ import annotations

from functools import lru_cache

from ..builder import Builder
from ..core import Function, Module, Region, Value
from ..types import ScalarType
from . import explog, trig
from .dsl import FB, V

EXPANDERS = {
    "math.sin": trig.sin,
    "math.cos": trig.cos,
    "math.sincos": trig.sincos_op,
    "math.tan": trig.tan,
    "math.exp": explog.exp,
    "math.exp2": explog.exp2,
    "math.log": explog.log,
    "math.log2": explog.log2,
    "math.tanh": explog.tanh,
    "math.rsqrt": explog.rsqrt,
    "math.round": explog.round_half_away,
}


def expands(name: str) -> bool:
    return name in EXPANDERS


def emit(b: Builder, name: str, operands: list[Value]) -> list[Value]:
    """Append the expansion of `name` applied to `operands`; returns its results."""
    fb = FB(b)
    return [r.v for r in EXPANDERS[name](fb, V(fb, operands[0]))]


def globals_needed() -> dict:
    """Constant tables the expansions may reference, by name."""
    g = trig.table_global()
    return {g.name: g}


@lru_cache(maxsize=None)
def _support_function(name: str):
    from ..types import F32, F64
    for t in (F32, F64):
        if name == trig.slow_reduction_name(t):
            return trig.slow_reduction_function(t)
    return None


def support_functions(names) -> list:
    """Fresh copies of the out-of-line helpers the expansions call (by callee name)."""
    from ..core import clone_function
    out = []
    for n in sorted(names):
        f = _support_function(n)
        if f is not None:
            out.append(clone_function(f))   # each module gets its own copy
    return out


@lru_cache(maxsize=None)
def expansion_module(name: str, t: ScalarType) -> tuple[Module, Function]:
    """A module with one function computing `name` on type t (for evaluation)."""
    from ..ops import OPS
    opdef = OPS[name]
    results = opdef.infer_types([t], {})
    body = Region([t], ["x"])
    b = Builder(body)
    outs = emit(b, name, [body.args[0]])
    b.op("func.return", outs)
    f = Function("f", "func", body, list(results))
    callees = {op.attrs["callee"] for op in f.walk() if op.name == "func.call"}
    m = Module([f] + support_functions(callees), list(globals_needed().values()))
    return m, f
