"""vec: short vectors, the values of wide (64/128-bit) loads and stores made by the
vectorize pass."""

from __future__ import annotations

from ...lazy_numpy import np

from ..formats import Operands
from ..opdef import Attr, defop
from ..types import VectorType


def _pack_verify(op):
    t = op.result.type
    if len(op.elems) != t.length or any(v.type != t.elem for v in op.elems):
        return f"needs {t.length} operands of type {t.elem}"
    return None


def _extract_verify(op):
    t = op.vector.type
    if op.result.type != t.elem:
        return "result must be the element type"
    if not 0 <= op.index < t.length:
        return "index out of range"
    return None


defop("vec.pack", Operands(), operands="*elems: T", results="result: vec", verify=_pack_verify,
      eval=lambda op, *xs: (np.stack(xs, axis=1),),
      example="%v = vec.pack %a, %b : vec<2 x f32>", example_args="%a: f32, %b: f32",
      doc="A vector from its elements.")
defop("vec.extract", Operands(), operands="vector: vec", results="result: T", attrs={"index": Attr("int")},
      verify=_extract_verify, infer=lambda ts, attrs: [ts[0].elem] if isinstance(ts[0], VectorType) else None,
      eval=lambda op, v: (np.ascontiguousarray(v[:, op.index]),),
      example="%a = vec.extract %v {index = 1} : f32", example_args="%v: vec<2 x f32>",
      doc="Element `index` of a vector.")
