"""Building IR: appends ops to a region, infers result types from the op table, and
builds structured control flow from Python callbacks.

    b = Builder(region)
    x = b.op("arith.add", [a, c])                 # result type inferred
    r, = b.if_(cond, [F32], lambda b: [b.const(F32, 1.0)], lambda b: [y])
"""

from __future__ import annotations

from typing import Callable

from .. import floats
from ..source import Span
from .core import Op, Region, Value
from .ops import OPS
from .types import BOOL, ScalarType, Type


class Builder:
    def __init__(self, region: Region, loc: Span | None = None):
        self.region = region
        self.loc = loc

    def at(self, region: Region) -> "Builder":
        return Builder(region, self.loc)

    # -- generic
    def op(self, name: str, operands: list[Value], result_types: list[Type] | None = None,
           attrs: dict | None = None, regions: list[Region] | None = None,
           names: list | None = None, loc: Span | None = None) -> Op:
        opdef = OPS[name]
        if result_types is None:
            result_types = opdef.infer_types([v.type for v in operands], attrs or {}) if opdef.results else []
            if result_types is None:
                raise TypeError(f"{name}: cannot infer result types from {[str(v.type) for v in operands]}")
        op = Op(opdef, operands, result_types, attrs, regions, loc or self.loc, names)
        self.region.append(op)
        return op

    def value(self, name: str, *operands: Value, attrs: dict | None = None, type: Type | None = None,
              hint: str | None = None) -> Value:
        """A single-result op."""
        op = self.op(name, list(operands), [type] if type is not None else None, attrs,
                     names=[hint] if hint else None)
        return op.results[0]

    # -- constants
    def const(self, t: ScalarType, value, hint: str | None = None) -> Value:
        """A constant from a Python value (floats are rounded to t exactly)."""
        if t.is_float:
            bits = floats.to_bits(floats.round_float(float(value), t.name), t.name)
            return self.const_bits(t, bits, hint)
        if t.is_bool:
            return self.op("arith.const", [], [t], {"value": bool(value)}, names=[hint]).results[0]
        return self.op("arith.const", [], [t], {"value": int(value)}, names=[hint]).results[0]

    def const_bits(self, t: ScalarType, bits: int, hint: str | None = None) -> Value:
        return self.op("arith.const", [], [t], {"value": int(bits)}, names=[hint]).results[0]

    # -- shorthands used by the IR generator and the math library
    def binary(self, name: str, a: Value, b: Value) -> Value:
        return self.value(name, a, b)

    def cmp(self, pred: str, a: Value, b: Value) -> Value:
        return self.value("arith.cmp", a, b, attrs={"pred": pred})

    def select(self, c: Value, a: Value, b: Value) -> Value:
        return self.value("arith.select", c, a, b)

    def cast(self, x: Value, t: Type) -> Value:
        if x.type == t:
            return x
        return self.value("arith.cast", x, type=t)

    def bitcast(self, x: Value, t: Type) -> Value:
        if x.type == t:
            return x
        return self.value("arith.bitcast", x, type=t)

    def not_(self, x: Value) -> Value:
        return self.value("arith.not", x)

    # -- structured control flow
    def yield_(self, values: list[Value]) -> None:
        self.op("scf.yield", list(values))

    def if_(self, cond: Value, result_types: list[Type],
            then_fn: Callable[["Builder"], list[Value]],
            else_fn: Callable[["Builder"], list[Value]] | None = None) -> list[Value]:
        then_r, else_r = Region(), Region()
        for region, fn in ((then_r, then_fn), (else_r, else_fn)):
            b = self.at(region)
            vals = fn(b) if fn is not None else []
            b.yield_(vals or [])
        assert cond.type == BOOL
        return self.op("scf.if", [cond], list(result_types), regions=[then_r, else_r]).results

    def for_(self, lo: Value, hi: Value, step: Value, inits: list[Value],
             body_fn: Callable[["Builder", Value, list[Value]], list[Value]],
             iv_name: str | None = None, arg_names: list | None = None, attrs: dict | None = None) -> list[Value]:
        body = Region([lo.type] + [v.type for v in inits], [iv_name] + list(arg_names or [None] * len(inits)))
        b = self.at(body)
        b.yield_(body_fn(b, body.args[0], body.args[1:]))
        return self.op("scf.for", [lo, hi, step] + list(inits), [v.type for v in inits],
                       attrs=attrs, regions=[body]).results

    def while_(self, inits: list[Value],
               cond_fn: Callable[["Builder", list[Value]], tuple[Value, list[Value]]],
               body_fn: Callable[["Builder", list[Value]], list[Value]],
               arg_names: list | None = None) -> list[Value]:
        types = [v.type for v in inits]
        names = list(arg_names or [None] * len(inits))
        before, after = Region(types, names), Region(types, names)
        b = self.at(before)
        c, forwarded = cond_fn(b, before.args)
        b.op("scf.condition", [c] + list(forwarded))
        b = self.at(after)
        b.yield_(body_fn(b, after.args))
        return self.op("scf.while", list(inits), types, regions=[before, after]).results
