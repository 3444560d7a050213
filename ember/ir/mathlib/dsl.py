"""A thin layer over the IR builder so the math library reads like the math:

    z = r * r
    s = fb.fma(r * z, fb.horner(z, SIN_F32), r)

`V` wraps an IR value; Python numbers mixed into arithmetic become constants of the
other operand's type. Comparisons are methods (`x.lt(y)`) so that `==` keeps its meaning.
"""

from __future__ import annotations

from ..builder import Builder
from ..core import Region
from ..types import BOOL, ScalarType, Type


class V:
    __slots__ = ("fb", "v")

    def __init__(self, fb: "FB", v):
        self.fb = fb
        self.v = v

    @property
    def type(self) -> ScalarType:
        return self.v.type

    def _o(self, other) -> "V":
        return other if isinstance(other, V) else self.fb.c(self.type, other)

    def _bin(self, name, other, swap=False):
        o = self._o(other)
        a, b = (o, self) if swap else (self, o)
        return V(self.fb, self.fb.b.binary(name, a.v, b.v))

    def __add__(self, o): return self._bin("arith.add", o)
    def __radd__(self, o): return self._bin("arith.add", o, True)
    def __sub__(self, o): return self._bin("arith.sub", o)
    def __rsub__(self, o): return self._bin("arith.sub", o, True)
    def __mul__(self, o): return self._bin("arith.mul", o)
    def __rmul__(self, o): return self._bin("arith.mul", o, True)
    def __truediv__(self, o): return self._bin("arith.div", o)
    def __rtruediv__(self, o): return self._bin("arith.div", o, True)
    def __and__(self, o): return self._bin("arith.and", o)
    def __or__(self, o): return self._bin("arith.or", o)
    def __xor__(self, o): return self._bin("arith.xor", o)
    def __lshift__(self, o): return self._bin("arith.shl", o)
    def __rshift__(self, o): return self._bin("arith.shr", o)

    def __neg__(self):
        return V(self.fb, self.fb.b.value("arith.neg", self.v))

    def _cmp(self, pred, o) -> "V":
        return V(self.fb, self.fb.b.cmp(pred, self.v, self._o(o).v))

    def lt(self, o): return self._cmp("lt", o)
    def le(self, o): return self._cmp("le", o)
    def gt(self, o): return self._cmp("gt", o)
    def ge(self, o): return self._cmp("ge", o)
    def eq(self, o): return self._cmp("eq", o)
    def ne(self, o): return self._cmp("ne", o)

    def __bool__(self):
        raise TypeError("an IR value has no Python truth value; use fb.select or fb.if_")


class FB:
    """Function builder: constants, intrinsics and control flow over `V`s."""

    def __init__(self, b: Builder):
        self.b = b

    def v(self, x: V) -> V:
        """x as seen from this builder's region (so that ops on it are emitted here)."""
        return V(self, x.v)

    def c(self, t: Type, value) -> V:
        return V(self, self.b.const(t, value))

    def bits(self, t: ScalarType, bits: int) -> V:
        return V(self, self.b.const_bits(t, bits))

    def op(self, name: str, *args, type: Type | None = None) -> V:
        vals = [a.v if isinstance(a, V) else a for a in args]
        return V(self, self.b.value(name, *vals, type=type))

    def fma(self, a: V, b, c) -> V:
        t = a.type
        b = b if isinstance(b, V) else self.c(t, b)
        c = c if isinstance(c, V) else self.c(t, c)
        return self.op("math.fma", a, b, c)

    def select(self, cond: V, a, b) -> V:
        t = a.type if isinstance(a, V) else b.type
        a = a if isinstance(a, V) else self.c(t, a)
        b = b if isinstance(b, V) else self.c(t, b)
        return V(self, self.b.select(cond.v, a.v, b.v))

    def cast(self, x: V, t: Type) -> V:
        return V(self, self.b.cast(x.v, t))

    def bitcast(self, x: V, t: Type) -> V:
        return V(self, self.b.bitcast(x.v, t))

    def rint(self, x: V) -> V: return self.op("math.rint", x)
    def trunc(self, x: V) -> V: return self.op("math.trunc", x)
    def sqrt(self, x: V) -> V: return self.op("math.sqrt", x)
    def abs(self, x: V) -> V: return self.op("arith.abs", x)
    def copysign(self, x: V, y: V) -> V: return self.op("math.copysign", x, y)
    def max(self, x: V, y) -> V: return self.op("arith.max", x, x._o(y))
    def min(self, x: V, y) -> V: return self.op("arith.min", x, x._o(y))

    def or_(self, a: V, b: V) -> V:
        return V(self, self.b.binary("arith.or", a.v, b.v))

    def not_(self, a: V) -> V:
        return V(self, self.b.not_(a.v))

    def horner(self, x: V, coeffs) -> V:
        """c0 + x*(c1 + x*(c2 + ...)) with FMAs."""
        acc = self.c(x.type, coeffs[-1])
        for c in reversed(coeffs[:-1]):
            acc = self.fma(acc, x, c)
        return acc

    def if_(self, cond: V, types: list, then_fn, else_fn) -> list:
        """then_fn/else_fn get an FB for their region and return a list of V. Values from
        outside must be rebound with `f.v(x)` so that ops on them land in the region."""
        def side(fn):
            return lambda b: [r.v for r in fn(FB(b))]
        results = self.b.if_(cond.v, types, side(then_fn), side(else_fn))
        return [V(self, r) for r in results]

    def load(self, ptr: V, idx: V, t: Type) -> V:
        return V(self, self.b.value("mem.load", ptr.v, idx.v, type=t))


def scratch(loc=None) -> tuple[Region, FB]:
    region = Region()
    return region, FB(Builder(region, loc))


__all__ = ["V", "FB", "BOOL", "scratch"]
