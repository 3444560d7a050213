"""The builtin functions and values, as one table the checker and the IR builder read.

Parameter and result patterns:
    F  any float type       N  any numeric type     I  any integer type
    T  any scalar type      f32, bool, u32, ...  exactly that type
Every occurrence of one letter in a signature stands for the same type. Untyped literal
arguments take the type the other arguments (or the context) give that letter.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.types import SCALARS, ScalarType

VARS = {
    "F": lambda t: t.is_float,
    "N": lambda t: t.is_numeric,
    "I": lambda t: t.is_int,
    "T": lambda t: True,
}
KIND_WORDS = {"F": "a float", "N": "a number", "I": "an integer", "T": "a scalar"}


@dataclass(frozen=True)
class Builtin:
    name: str
    params: tuple
    result: tuple          # one entry per result (sincos has two)
    op: str                # the IR op; "" when the IR builder expands it
    doc: str
    promote_half: bool = False   # f16/bf16 arguments are computed in f32 and rounded back


def _table() -> dict[str, Builtin]:
    rows: list[Builtin] = []
    accurate = {
        "sin": "sine (accurate)", "cos": "cosine (accurate)", "tan": "tangent (accurate)",
        "exp": "e^x (accurate)", "exp2": "2^x (accurate)", "log": "natural logarithm (accurate)",
        "log2": "base-2 logarithm (accurate)", "tanh": "hyperbolic tangent (accurate)",
        "rsqrt": "1/sqrt(x), as two correctly rounded operations",
        "round": "round half away from zero",
    }
    for name, doc in accurate.items():
        rows.append(Builtin(name, ("F",), ("F",), f"math.{name}", doc, promote_half=True))
    native = {"sqrt": "square root (correctly rounded)", "floor": "round down", "ceil": "round up",
              "trunc": "round toward zero", "rint": "round half to even"}
    for name, doc in native.items():
        rows.append(Builtin(name, ("F",), ("F",), f"math.{name}", doc))
    rows += [
        Builtin("sincos", ("F",), ("F", "F"), "math.sincos",
                "(sin(x), cos(x)) with one shared range reduction (accurate)", promote_half=True),
        Builtin("fma", ("F", "F", "F"), ("F",), "math.fma", "a*b + c with one rounding"),
        Builtin("copysign", ("F", "F"), ("F",), "math.copysign", "|a| with the sign of b"),
        Builtin("min", ("N", "N"), ("N",), "arith.min", "the smaller; floats ignore NaN, -0 < +0"),
        Builtin("max", ("N", "N"), ("N",), "arith.max", "the larger; floats ignore NaN, -0 < +0"),
        Builtin("abs", ("N",), ("N",), "arith.abs", "absolute value (wraps at the minimum integer)"),
        Builtin("select", ("bool", "T", "T"), ("T",), "arith.select",
                "c ? a : b, evaluating both (no branch)"),
        Builtin("isnan", ("F",), ("bool",), "", "x is a NaN"),
        Builtin("isinf", ("F",), ("bool",), "", "x is +inf or -inf"),
        Builtin("isfinite", ("F",), ("bool",), "", "x is neither NaN nor infinite"),
    ]
    fast = {
        "fast_sin": "sin.approx.f32", "fast_cos": "cos.approx.f32", "fast_exp2": "ex2.approx.f32",
        "fast_log2": "lg2.approx.f32", "fast_exp": "ex2.approx.f32 of x*log2(e)",
        "fast_log": "lg2.approx.f32 times ln 2", "fast_rsqrt": "rsqrt.approx.f32",
        "fast_sqrt": "sqrt.approx.f32", "fast_tanh": "tanh.approx.f32", "fast_rcp": "rcp.approx.f32",
    }
    for name, instr in fast.items():
        rows.append(Builtin(name, ("f32",), ("f32",), f"math.{name}", f"hardware approximation ({instr})"))
    rows.append(Builtin("fast_div", ("f32", "f32"), ("f32",), "math.fast_div",
                        "hardware approximation (div.approx.f32)"))
    return {b.name: b for b in rows}


BUILTINS: dict[str, Builtin] = _table()

# Builtin values with .x/.y/.z components (all u32).
INDEX_VALUES = {
    "thread_idx": "gpu.thread_idx", "block_idx": "gpu.block_idx",
    "block_dim": "gpu.block_dim", "grid_dim": "gpu.grid_dim",
}


def is_type_var(p: str) -> bool:
    return p in VARS


def exact_type(p: str) -> ScalarType | None:
    return SCALARS.get(p)
