"""The builtin functions and values, as one table the checker and the IR builder read.

Parameter and result patterns:
    F  any float type       N  any numeric type     I  any integer type
    T  any scalar type      f32, bool, u32, ...  exactly that type
    *T a mutable global or shared pointer (or array) whose element type is T
    void  no result
Every occurrence of one letter in a signature stands for the same type. Untyped literal
arguments take the type the other arguments (or the context) give that letter. `types`,
when given, restricts T.
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
    attrs: tuple = ()            # (key, value) attributes of the IR op
    types: tuple | None = None   # allowed types for T


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
    # -- threads of a block and of a warp
    rows.append(Builtin("barrier", (), ("void",), "gpu.barrier",
                        "wait until every thread of the block arrives; orders shared and global memory"))
    for mode, doc in (("down", "the value of lane (this lane + delta), or this lane's own beyond lane 31"),
                      ("xor", "the value of lane (this lane ^ mask), or this lane's own beyond lane 31"),
                      ("idx", "the value of lane (src % 32)")):
        rows.append(Builtin(f"shfl_{mode}", ("N", "u32"), ("N",), "gpu.shfl",
                            f"warp shuffle: {doc}; the source lane must be active", attrs=(("mode", mode),)))
    rows.append(Builtin("vote_all", ("bool",), ("bool",), "gpu.vote", "true if the predicate holds on every active lane of the warp",
                        attrs=(("mode", "all"),)))
    rows.append(Builtin("vote_any", ("bool",), ("bool",), "gpu.vote", "true if the predicate holds on any active lane of the warp",
                        attrs=(("mode", "any"),)))
    rows.append(Builtin("ballot", ("bool",), ("u32",), "gpu.vote",
                        "bit i set if the predicate holds on active lane i of the warp", attrs=(("mode", "ballot"),)))
    ints = ("i32", "u32", "i64", "u64")
    atomics = {"add": ints + ("f32", "f64"), "min": ints, "max": ints, "and": ints, "or": ints,
               "xor": ints, "exch": ints + ("f32",)}
    for op, types in atomics.items():
        rows.append(Builtin(f"atomic_{op}", ("*T", "I", "T"), ("T",), "mem.atomic",
                            f"atomically p[i] = {op}(p[i], v); returns the old value", attrs=(("op", op),),
                            types=types))
    rows.append(Builtin("atomic_cas", ("*T", "I", "T", "T"), ("T",), "mem.cas",
                        "atomically: if p[i] == expected { p[i] = new }; returns the old value", types=ints))
    return {b.name: b for b in rows}


BUILTINS: dict[str, Builtin] = _table()

# Builtin values with .x/.y/.z components (all u32).
INDEX_VALUES = {
    "thread_idx": "gpu.thread_idx", "block_idx": "gpu.block_idx",
    "block_dim": "gpu.block_dim", "grid_dim": "gpu.grid_dim",
}
# Builtin u32 values: the thread's lane in its warp and its warp's index in the block.
PLAIN_VALUES = {"lane_id": "gpu.lane_id", "warp_id": "gpu.warp_id"}


def is_type_var(p: str) -> bool:
    return p in VARS


def exact_type(p: str) -> ScalarType | None:
    return SCALARS.get(p)
