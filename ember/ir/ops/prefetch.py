"""Prefetching global memory into the L2 cache: a hint with no effect on any value.

`mem.prefetch_l2` (PTX prefetch.global.L2) asks for the cache line holding ptr[index] to
be brought into L2 and returns at once. It reads nothing into the thread and orders
nothing, so it has no memory effect for the passes (only SIDE_EFFECT, which keeps it) and
touches no memory for the programmatic-launch proof (ember.ir.analysis.grid_dependency):
L2 is where every SM's accesses meet, so a line brought in before the kernel before has
written it is updated by that write like any other - nothing stale can be read through
it. That is what it is for: a kernel launched as a programmatic dependent may prefetch the
data the kernel before does not write (a GEMV's weights) while it waits at griddep_wait,
and find it in L2 after (docs/language.md).

The address must lie inside the buffer (PTX leaves a prefetch outside the state space's
window undefined): the simulator checks bounds and alignment as for a load, and reads and
records nothing (MAY_FAULT: it is never hoisted where the program would not run it).
"""

from __future__ import annotations

from ..formats import Operands
from ..opdef import MAY_FAULT, SIDE_EFFECT, defop


def _simulate(m, op, args, mask):
    m.access(op, args[0], args[1], mask, op.operands[0].type.pointee, "c")
    return []


defop("mem.prefetch_l2", Operands(types_of="operands"), operands="ptr: &global T, index: I",
      traits=(SIDE_EFFECT, MAY_FAULT), simulate=_simulate,
      example="mem.prefetch_l2 %p, %i : *global u32, u64", example_args="%p: *global u32, %i: u64",
      doc="Bring the cache line holding ptr[index] into the L2 cache (PTX prefetch.global.L2): a hint, "
          "no effect on any value; the address must be inside the buffer. Allowed before griddep_wait "
          "in a programmatic dependent launch.")
