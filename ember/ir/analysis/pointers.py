"""Where a pointer value points, derived by following it back through offsets and bit
casts to where it came from (its root): a parameter, an array, a constant table.

- `alignment(p)`: the alignment (bytes) the address provably has: the root's (a
  parameter's declared `align(N)`, an array's placement), kept through each offset only
  as far as the offset's byte count is a known multiple of it (gcd), never inherited
  from a type;
- `unchanging(p)`: the memory cannot change while the kernel runs: the root is a
  read-only (`*global T`) kernel parameter, which launches keep from overlapping any
  written buffer, or a constant table. A read-only pointer made by bit-casting a
  `*mut` one is not;
- `streamed(p)`: the root is a kernel parameter declared `stream` (the kernel's `stream`
  attribute lists their indices): data the kernel reads once.
"""

from __future__ import annotations

from ..core import Function, Value
from ..types import PtrType
from .values import divisibility

# Allocation alignment of arrays as lowering places them.
SHARED_ALIGN = 16
# The ops that make a pointer from another one (an offset, a row of an array, a cast).
_DERIVING = ("mem.offset", "mem.row", "arith.bitcast")


def root(p: Value) -> Value:
    """The value p was derived from by offsets and bit casts."""
    while True:
        op = p.op
        if op is None or op.name not in _DERIVING:
            return p
        p = op.operands[0]


def alignment(p: Value, memo: dict | None = None) -> int:
    """The alignment in bytes p's address provably has (`memo`: see divisibility)."""
    chain = []
    while True:
        op = p.op
        if op is None or op.name not in _DERIVING:
            break
        chain.append(op)
        p = op.operands[0]
    align = _root_alignment(p)
    for op in reversed(chain):
        if op.name in ("mem.offset", "mem.row"):
            step = op.operands[0].type.pointee.nbytes * divisibility(op.operands[1], memo)
            step *= op.attrs["length"] if op.name == "mem.row" else 1
            while align > 1 and step % align:
                align //= 2
    return align


def _root_alignment(p: Value) -> int:
    t = p.type
    op = p.op
    if op is not None and op.name == "mem.shared":
        return max(SHARED_ALIGN, op.attrs.get("align") or 0)
    if op is not None and op.name == "mem.alloca":
        return max(t.pointee.nbytes, 4)
    if isinstance(t, PtrType):
        return t.alignment          # a parameter's declared promise (checked at launch or call)
    return 1


def unchanging(p: Value) -> bool:
    """Nothing writes p's memory during the kernel (see the module docstring)."""
    r = root(p)
    t = r.type
    if r.op is not None:
        return r.op.name == "mem.global"
    owner = r.owner
    fn = getattr(owner, "parent", None)
    return (isinstance(t, PtrType) and not t.mut and t.space == "global" and isinstance(fn, Function)
            and fn.kind == "kernel")


def streamed(p: Value) -> bool:
    """p points into a kernel parameter declared `stream` (see the module docstring)."""
    r = root(p)
    if r.op is not None:
        return False
    fn = getattr(r.owner, "parent", None)
    if not isinstance(fn, Function) or fn.kind != "kernel" or not fn.attrs.get("stream"):
        return False
    return r.index in fn.attrs["stream"]
