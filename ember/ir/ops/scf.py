"""scf: structured control flow. Regions are single blocks; loop-carried values are
region arguments fed by `scf.yield`. Region structure (terminators, yielded types) is
checked by the verifier, which knows these ops."""

from __future__ import annotations

from ..formats import For, If, Operands, While
from ..types import BOOL
from . import checks as C
from . import defop


def _if_verify(op):
    return C.first(lambda: None if len(op.operands) == 1 and op.operands[0].type == BOOL
                   else "condition must be one bool",
                   lambda: None if len(op.regions) == 2 else "expects then and else regions")


def _for_verify(op):
    if len(op.operands) < 3 or len(op.regions) != 1:
        return "expects lower bound, upper bound, step and one region"
    lo, hi, step = (v.type for v in op.operands[:3])
    return C.first(lambda: C.integer(lo, "loop bound"),
                   lambda: C.same([lo, hi, step], "bounds and step"),
                   lambda: None if [v.type for v in op.operands[3:]] == [r.type for r in op.results]
                   else "results must match iter_args")


def _while_verify(op):
    if len(op.regions) != 2:
        return "expects a condition region and a body region"
    if [v.type for v in op.operands] != [r.type for r in op.results]:
        return "results must match iter_args"
    return None


defop("scf.if", If(), _if_verify, num_regions=2, pure=False,
      doc="Runs one of two regions; each yields the results.")
defop("scf.for", For(), _for_verify, num_regions=1, pure=False,
      doc="i = lo; while i < hi { body; i += step } (the increment wraps; the comparison "
          "is signed for signed types).")
defop("scf.while", While(), _while_verify, num_regions=2, pure=False,
      doc="The first region computes a condition with `scf.condition`; while it holds, "
          "the second region runs and yields the next iteration's values.")
defop("scf.yield", Operands(types_of="operands"), lambda op: None, terminator=True, pure=False,
      doc="Ends a region of scf.if/scf.for/scf.while's body.")


def _condition_verify(op):
    if not op.operands or op.operands[0].type != BOOL:
        return "first operand must be the bool condition"
    return None


defop("scf.condition", Operands(types_of="operands"), _condition_verify, terminator=True, pure=False,
      doc="Ends scf.while's condition region: the condition, then the values passed on.")
