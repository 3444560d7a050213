"""Folding one op on constants by the op's own `fold` (Python scalars, no numpy): what the
language's type checker uses for typed constant expressions (`BLOCK * 4`, `-1i8`, a
comparison of const parameters), so that typed integer arithmetic is defined once - by the
ops (ember.ir.int_semantics), which the constant folder and the simulator share."""

from __future__ import annotations

from .core import Op
from .ops import OPS
from .ops.canon import make_const
from .types import ScalarType


class NotFoldable(ValueError):
    """The op has no fold for these operands (a float, for example)."""


def fold(name: str, operand_types: list, values: list, result_type: ScalarType, attrs: dict | None = None):
    """The constant `name` computes from constant operands of `operand_types`, as arith.const
    holds it in `result_type` (integers wrapped)."""
    d = OPS[name]
    if d.fold is None:
        raise NotFoldable(f"{name} has no fold")
    operands = [make_const(t, v).results[0] for t, v in zip(operand_types, values)]
    op = Op(d, operands, [result_type], dict(attrs or {}))
    out = d.fold(op, *values)
    if out is None:
        raise NotFoldable(f"{name} does not fold {values}")
    return make_const(result_type, out[0]).attrs["value"]
