"""scf: structured control flow. Regions are single blocks; loop-carried values are
region arguments fed by `scf.yield`. Each op states what its regions take and yield
(`region_types`), which the verifier checks."""

from __future__ import annotations

from ..formats import For, If, Operands, While
from ..opdef import TERMINATOR, Attr, defop
from ..types import BOOL


def _result_types(op):
    return [v.type for v in op.results]


def _if_regions(op):
    return [([], "scf.yield", _result_types(op))] * 2


def _for_regions(op):
    return [([op.lo.type] + [v.type for v in op.inits], "scf.yield", _result_types(op))]


def _while_regions(op):
    types = _result_types(op)
    return [(types, "scf.condition", [BOOL] + types), (types, "scf.yield", types)]


def _for_verify(op):
    if [v.type for v in op.inits] != _result_types(op):
        return "results must match iter_args"
    return None


def _while_verify(op):
    if [v.type for v in op.inits] != _result_types(op):
        return "results must match iter_args"
    return None


defop("scf.if", If(), operands="cond: bool", results="*results: any", regions=("then", "else_"),
      region_types=_if_regions,
      example="%r = scf.if %c -> (f32) {\n  scf.yield %a : f32\n} else {\n  scf.yield %b : f32\n}",
      example_args="%c: bool, %a: f32, %b: f32",
      doc="Runs one of two regions; each yields the results.")
defop("scf.for", For(), operands="lo: I, hi: I, step: I, *inits: any", results="*results: any", regions=("body",),
      attrs={"unroll": Attr("bool", required=False, doc="asks for full unrolling")}, verify=_for_verify,
      region_types=_for_regions,
      example="%s = scf.for %i = %lo to %hi step %c1 iter_args(%acc = %x) -> (f32) {\n"
              "  %y = arith.add %acc, %acc : f32\n  scf.yield %y : f32\n}",
      example_args="%lo: u32, %hi: u32, %c1: u32, %x: f32",
      doc="i = lo; while i < hi { body; i += step } (the increment wraps; the comparison "
          "is signed for signed types).")
defop("scf.while", While(), operands="*inits: any", results="*results: any", regions=("before", "after"),
      verify=_while_verify, region_types=_while_regions,
      example="%r = scf.while iter_args(%a = %x) -> (u32) {\n  %c = arith.cmp lt %a, %n : u32\n"
              "  scf.condition %c, %a : bool, u32\n} do (%b: u32) {\n  %d = arith.add %b, %b : u32\n"
              "  scf.yield %d : u32\n}",
      example_args="%x: u32, %n: u32",
      doc="The first region computes a condition with `scf.condition`; while it holds, "
          "the second region runs and yields the next iteration's values.")
defop("scf.yield", Operands(types_of="operands"), operands="*values: any", traits=(TERMINATOR,),
      example="%r = scf.if %c -> (f32) {\n  scf.yield %a : f32\n} else {\n  scf.yield %a : f32\n}",
      example_args="%c: bool, %a: f32",
      doc="Ends a region of scf.if/scf.for/scf.while's body.")
defop("scf.condition", Operands(types_of="operands"), operands="cond: bool, *values: any", traits=(TERMINATOR,),
      example="%r = scf.while iter_args(%a = %x) -> (f32) {\n  scf.condition %c, %a : bool, f32\n} do (%b: f32) {\n"
              "  scf.yield %b : f32\n}", example_args="%c: bool, %x: f32",
      doc="Ends scf.while's condition region: the condition, then the values passed on.")

