"""Helpers shared by the passes: constants, side effects, and splicing ops."""

from __future__ import annotations

from ..builder import Builder
from ..core import Op, Region, Value
from ..ops import OPS
from ..types import ScalarType

# Ops that only allocate: removable when unused, never moved or merged.
ALLOCATIONS = ("mem.alloca", "mem.shared")
REGION_OPS = ("scf.if", "scf.for", "scf.while")


def const_value(v: Value):
    """The constant an SSA value holds (int, bool, or float bit pattern), or None."""
    op = v.op
    if op is not None and op.name == "arith.const":
        return op.attrs["value"]
    return None


def is_const(v: Value) -> bool:
    return v.op is not None and v.op.name == "arith.const"


def make_const(t: ScalarType, value, loc=None) -> Op:
    if t.is_bool:
        value = bool(value)
    elif not t.is_float:
        lo, hi = t.int_range()
        value = int(value)
        width = 1 << t.bits
        value = ((value - lo) % width) + lo
        assert lo <= value <= hi
    return Op(OPS["arith.const"], [], [t], {"value": value}, loc=loc)


def has_effects(op: Op) -> bool:
    """Whether removing the op (when its results are unused) could change the program."""
    if op.opdef.terminator:
        return False
    if op.name in REGION_OPS:
        return any(has_effects(inner) for r in op.regions for inner in r.ops)
    if op.name in ALLOCATIONS:
        return False
    return not op.opdef.pure


def is_movable(op: Op) -> bool:
    """Pure, never faults, takes no other thread part, has no regions: free to hoist or merge."""
    d = op.opdef
    return (d.pure and d.speculatable and not d.reads_memory and not d.convergent and not op.regions
            and not d.terminator and op.name not in ALLOCATIONS)


def builder_before(loc) -> tuple[Region, Builder]:
    """A scratch region and builder; splice the region's ops where they belong."""
    scratch = Region()
    return scratch, Builder(scratch, loc)


def regions_of(module):
    for f in module.functions:
        yield f, f.body
