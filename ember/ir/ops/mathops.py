"""math: floating-point functions in three flavours.

- native (`sqrt`, `floor`, `ceil`, `trunc`, `rint`, `fma`, `copysign`): one correctly
  rounded hardware instruction each, for every float type;
- accurate (`sin`, `cos`, `tan`, `sincos`, `exp`, `exp2`, `log`, `log2`, `tanh`, `rsqrt`,
  `round`): f32 and f64, defined by Ember's own implementation in `ember.ir.mathlib` (the
  lowering emits it in the op's place - or the `expand-math` pass copies it into the IR -
  and the interpreter runs the same expansion); its accuracy is measured and documented
  per function;
- fast (`fast_sin`, `fast_exp2`, ...): f32 only, the GPU's approximate instructions
  (`sin.approx.f32`, `ex2.approx.f32`, ...), whose results PTX does not specify exactly:
  each op carries the error bound docs/math.md documents (`approx`), which the
  differential checker and the GPU corpus hold it to. The simulator returns the correctly
  rounded value, which lies within the bound.
"""

from __future__ import annotations

import math

from ...lazy_numpy import np
from .. import semantics as S
from ..formats import Operands
from ..opdef import Approx, Range, defop

NATIVE_UNARY = {
    "sqrt": (lambda x: np.sqrt(x), "Correctly rounded square root."),
    "floor": (lambda x: np.floor(x), "Round toward -inf."),
    "ceil": (lambda x: np.ceil(x), "Round toward +inf."),
    "trunc": (lambda x: np.trunc(x), "Round toward zero."),
    "rint": (lambda x: np.rint(x), "Round to nearest, ties to even."),
}
ACCURATE_UNARY = ("sin", "cos", "tan", "exp", "exp2", "log", "log2", "tanh", "rsqrt", "round")

_PI = math.pi
_POS = Range(1e-30, 1e30)
# fast op -> (PTX instruction, f64 reference, domain per argument, error kind, bound)
FAST = {
    "fast_sin": ("sin.approx.f32", lambda x: np.sin(x), (Range(-_PI, _PI),), "abs", 2.0 ** -20),
    "fast_cos": ("cos.approx.f32", lambda x: np.cos(x), (Range(-_PI, _PI),), "abs", 2.0 ** -20),
    "fast_exp2": ("ex2.approx.f32", lambda x: np.exp2(x), (Range(-100.0, 100.0),), "rel", 2.0 ** -21),
    "fast_log2": ("lg2.approx.f32", lambda x: np.log2(x), (_POS,), "abs_or_rel", 2.0 ** -21),
    "fast_exp": ("ex2.approx.f32 of x*log2(e)", lambda x: np.exp(x), (Range(-80.0, 80.0),), "rel", 2.0 ** -16),
    "fast_log": ("lg2.approx.f32 times ln 2", lambda x: np.log(x), (_POS,), "abs_or_rel", 2.0 ** -20),
    "fast_rsqrt": ("rsqrt.approx.f32", lambda x: 1.0 / np.sqrt(x), (_POS,), "rel", 2.0 ** -21),
    "fast_sqrt": ("sqrt.approx.f32", lambda x: np.sqrt(x), (_POS,), "rel", 2.0 ** -21),
    "fast_tanh": ("tanh.approx.f32", lambda x: np.tanh(x), (Range(-10.0, 10.0),), "abs", 2.0 ** -10),
    "fast_rcp": ("rcp.approx.f32", lambda x: 1.0 / x, (_POS,), "rel", 2.0 ** -22),
    # The PTX ISA bounds div.approx for divisors of magnitude 2^-126..2^126 (and a normal
    # quotient): both arguments in 1e-18..1e18 keep the quotient normal.
    "fast_div": ("div.approx.f32", lambda a, b: a / b, (Range(1e-18, 1e18, magnitude=True),
                                                         Range(1e-18, 1e18, magnitude=True)),
                 "rel", 2.0 ** -21),
}


def _native_eval(fn):
    def ev(op, *args):
        t = op.results[0].type
        with np.errstate(all="ignore"):
            if t.name in ("f16", "bf16"):
                r = fn(*[a.astype(np.float32) for a in args])
                return (S.round_to(r, t),)
            return (fn(*args).astype(S.dtype(t)),)
    return ev


for _name, (_fn, _doc) in NATIVE_UNARY.items():
    defop(f"math.{_name}", Operands(), operands="x: F", results="result: F", eval=_native_eval(_fn),
          example=f"%r = math.{_name} %x : f32", example_args="%x: f32", doc=_doc)

defop("math.copysign", Operands(), operands="magnitude: F, sign: F", results="result: F",
      eval=_native_eval(lambda a, b: np.copysign(a, b)), example="%r = math.copysign %a, %b : f32", example_args="%a: f32, %b: f32",
      doc="The magnitude of the first, the sign of the second.")
defop("math.fma", Operands(), operands="a: F, b: F, c: F", results="result: F",
      eval=lambda op, a, b, c: (S.fma(a, b, c, op.results[0].type),),
      example="%r = math.fma %a, %b, %c : f32", example_args="%a: f32, %b: f32, %c: f32",
      doc="a*b + c rounded once.")

for _name in ACCURATE_UNARY:
    defop(f"math.{_name}", Operands(), operands="x: F{f32,f64}", results="result: F",
          expanded_by="expand-math", example=f"%r = math.{_name} %x : f32", example_args="%x: f32",
          doc="Accurate: Ember's implementation (see docs/math.md).")

defop("math.sincos", Operands(), operands="x: F{f32,f64}", results="sin: F, cos: F", expanded_by="expand-math",
      example="%s, %c = math.sincos %x : f32, f32", example_args="%x: f32",
      doc="sin and cos of one argument, sharing the range reduction.")


def _fast_eval(fn):
    def ev(op, *args):
        with np.errstate(all="ignore"):
            return (fn(*[a.astype(np.float64) for a in args]).astype(np.float32),)
    return ev


for _name, (_instr, _fn, _domain, _kind, _bound) in FAST.items():
    _n = len(_domain)
    _args = ", ".join(f"%{c}" for c in "ab"[:_n])
    defop(f"math.{_name}", Operands(), operands=", ".join(f"{c}: f32" for c in "xy"[:_n]), results="result: f32",
          eval=_fast_eval(_fn), approx=Approx(_fn, _domain, _kind, _bound),
          example=f"%r = math.{_name} {_args} : f32", example_args=", ".join(f"%{c}: f32" for c in "ab"[:_n]),
          doc=f"Hardware approximation ({_instr}); see docs/math.md for its error bound.")
