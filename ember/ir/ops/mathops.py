"""math: floating-point functions in two flavours.

- native (`sqrt`, `floor`, `ceil`, `trunc`, `rint`, `fma`, `copysign`): one correctly
  rounded hardware instruction each, for every float type;
- accurate (`sin`, `cos`, `tan`, `sincos`, `exp`, `exp2`, `log`, `log2`, `tanh`, `rsqrt`,
  `round`): f32 and f64, defined by Ember's own implementation in `ember.ir.mathlib` (the
  `expand-math` pass replaces them by it before lowering); its accuracy is measured and
  documented per function;
- fast (`fast_sin`, `fast_exp2`, ...): f32 only, the GPU's approximate instructions
  (`sin.approx.f32`, `ex2.approx.f32`, ...) with the error bounds PTX documents. The
  simulator returns the correctly rounded value for these, which lies within the bound.
"""

from __future__ import annotations

import numpy as np

from .. import semantics as S
from ..formats import Operands
from ..types import F32, F64
from . import checks as C
from . import defop

NATIVE_UNARY = {
    "sqrt": np.sqrt, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "rint": np.rint,
}
ACCURATE_UNARY = ("sin", "cos", "tan", "exp", "exp2", "log", "log2", "tanh", "rsqrt", "round")
# fast op -> (numpy reference of the exact function, number of operands)
FAST = {
    "fast_sin": (np.sin, 1), "fast_cos": (np.cos, 1), "fast_exp2": (np.exp2, 1),
    "fast_log2": (np.log2, 1), "fast_exp": (np.exp, 1), "fast_log": (np.log, 1),
    "fast_rsqrt": (lambda x: 1.0 / np.sqrt(x), 1), "fast_sqrt": (np.sqrt, 1),
    "fast_tanh": (np.tanh, 1), "fast_rcp": (lambda x: 1.0 / x, 1),
    "fast_div": (lambda a, b: a / b, 2),
}


def _float_verify(n, only=None):
    def verify(op):
        return C.first(lambda: C.arity(op, n, 1),
                       lambda: C.same([v.type for v in op.operands] + [op.results[0].type]),
                       lambda: C.floating(op.results[0].type),
                       lambda: None if only is None or op.results[0].type in only
                       else f"`{op.name}` is defined for {', '.join(map(str, only))} only")
    return verify


def _same(ts, attrs):
    return [ts[0]]


def _native_eval(fn):
    def ev(op, *args):
        t = op.results[0].type
        with np.errstate(all="ignore"):
            if t.name in ("f16", "bf16"):
                r = fn(*[a.astype(np.float32) for a in args])
                return (S.round_to(r, t),)
            return (fn(*args).astype(S.dtype(t)),)
    return ev


for _name, _fn in NATIVE_UNARY.items():
    defop(f"math.{_name}", Operands(), _float_verify(1), infer=_same, eval=_native_eval(_fn),
          doc="Correctly rounded.")

defop("math.copysign", Operands(), _float_verify(2), infer=_same,
      eval=_native_eval(np.copysign), doc="The magnitude of the first, the sign of the second.")
defop("math.fma", Operands(), _float_verify(3), infer=_same,
      eval=lambda op, a, b, c: (S.fma(a, b, c, op.results[0].type),),
      doc="a*b + c rounded once.")


def _accurate_eval(op, *args):
    from .. import mathlib
    return mathlib.evaluate(op.name, op.results[0].type, args)


for _name in ACCURATE_UNARY:
    defop(f"math.{_name}", Operands(), _float_verify(1, (F32, F64)), infer=_same,
          eval=_accurate_eval, doc="Accurate: Ember's implementation (see docs/math.md).")


def _sincos_verify(op):
    return C.first(lambda: C.arity(op, 1, 2),
                   lambda: C.same([op.operands[0].type] + [r.type for r in op.results]),
                   lambda: None if op.operands[0].type in (F32, F64) else "`math.sincos` is defined for f32, f64 only")


defop("math.sincos", Operands(), _sincos_verify, infer=lambda ts, attrs: [ts[0], ts[0]],
      eval=_accurate_eval, doc="sin and cos of one argument, sharing the range reduction.")


def _fast_eval(fn):
    def ev(op, *args):
        with np.errstate(all="ignore"):
            return (fn(*[a.astype(np.float64) for a in args]).astype(np.float32),)
    return ev


for _name, (_fn, _n) in FAST.items():
    defop(f"math.{_name}", Operands(), _float_verify(_n, (F32,)), infer=_same, eval=_fast_eval(_fn),
          foldable=False, doc="Hardware approximation; see docs/math.md for its error bound.")
