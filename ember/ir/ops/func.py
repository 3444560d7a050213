"""func: calls to device functions and returns. Calls are checked against the callee's
signature by the module verifier."""

from __future__ import annotations

from ..formats import Call, Operands
from . import defop

defop("func.call", Call(), lambda op: None if "callee" in op.attrs else "missing callee",
      pure=False, doc="Call a device function (inlined before lowering at -O1 and above).")
defop("func.return", Operands(types_of="operands"), lambda op: None, terminator=True, pure=False,
      doc="Ends a function; operands are its results.")
