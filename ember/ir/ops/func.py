"""func: calls to device functions and returns. Calls are checked against the callee's
signature by the module verifier."""

from __future__ import annotations

from ..formats import Call, Operands
from ..opdef import READS_MEMORY, SIDE_EFFECT, TERMINATOR, WRITES_MEMORY, Attr, defop

# A call may do anything its callee does.
defop("func.call", Call(), operands="*args: any", results="*results: any", attrs={"callee": Attr("symbol")},
      traits=(READS_MEMORY, WRITES_MEMORY, SIDE_EFFECT),
      example="func @f(%x: f32) -> f32 {\n  return %x : f32\n}\nfunc @g(%a: f32) -> f32 {\n"
              "  %r = func.call @f(%a) : f32\n  return %r : f32\n}\n",
      doc="Call a device function (inlined before lowering at -O1 and above).")
defop("func.return", Operands(types_of="operands"), operands="*values: any", traits=(TERMINATOR,),
      example="func @f(%a: f32) -> f32 {\n  return %a : f32\n}\n", doc="Ends a function; operands are its results.")
