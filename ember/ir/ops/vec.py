"""vec: short vectors, the values of wide (64/128-bit) loads and stores made by the
vectorize pass."""

from __future__ import annotations

import numpy as np

from ..formats import Operands
from ..types import VectorType
from . import checks as C
from . import defop


def _pack_verify(op):
    t = op.results[0].type if len(op.results) == 1 else None
    if not isinstance(t, VectorType):
        return "result must be a vector"
    if len(op.operands) != t.length or any(v.type != t.elem for v in op.operands):
        return f"needs {t.length} operands of type {t.elem}"
    return None


def _extract_verify(op):
    return C.first(lambda: C.arity(op, 1, 1),
                   lambda: None if isinstance(op.operands[0].type, VectorType) else "operand must be a vector",
                   lambda: None if op.results[0].type == op.operands[0].type.elem else "result must be the element type",
                   lambda: None if isinstance(op.attrs.get("index"), int)
                   and 0 <= op.attrs["index"] < op.operands[0].type.length else "index out of range")


defop("vec.pack", Operands(), _pack_verify,
      eval=lambda op, *xs: (np.stack(xs, axis=1),),
      doc="A vector from its elements.")
defop("vec.extract", Operands(), _extract_verify,
      infer=lambda ts, attrs: [ts[0].elem],
      eval=lambda op, v: (np.ascontiguousarray(v[:, op.attrs["index"]]),),
      doc="Element `index` of a vector.")
