"""Whether a kernel may be launched as a programmatic dependent of the kernel before it on
the stream (PDL, sm_90: ember.ir.ops.grid_dependency). Such a launch lets the kernel start
while the one before still runs, so it is sound only if the kernel reads and writes no
memory that kernel may touch until it has waited for it: every global access must come
after a `gpu.griddep_wait` that every thread executes. This is proven here on the
optimized IR, never taken from the source's word: the kernel body's top-level ops are
scanned in order, and the kernel qualifies if a `gpu.griddep_wait` comes before any op
that may touch global memory. Shared, local and constant memory belong to the kernel (or
to nobody who writes) and may be used before it; an op with a memory effect and no pointer
in those spaces (a fence, a tensor-map copy, a call) counts as global. A wait nested in
control flow proves nothing (not every thread need reach it).

The option `programmatic_launch` (ember.compile, `--programmatic-launch`) puts the wait at
the start of every kernel that has no wait of its own (`insert_at_entry`), and not the
signal that lets the next kernel start early (gpu.griddep_launch_dependents): measured on
an H100 (2026-11-26, bench/results/layer_ab.md), a decoder layer whose ten kernels all
signalled at their start took up to 15% longer than with plain launches - each kernel's blocks
were dispatched while the kernels before still ran, on whichever SMs had room, and ran
unevenly spread - while the wait alone (the next kernel launched as this one completes,
its launch overlapped) took 1-5% less. Where to signal is the kernel author's call."""

from __future__ import annotations

from ..core import Function, Op
from ..opdef import OPS
from ..types import PtrType

# address spaces a kernel may use before it waits: its own shared and local memory, and
# constant tables no kernel writes
_OWN_SPACES = frozenset({"shared", "local", "const"})
WAIT = "gpu.griddep_wait"


def _may_touch_global(op: Op) -> bool:
    for inner in op.walk():
        if inner.name == "func.call":
            return True
        d = inner.opdef
        if inner.name == WAIT or not (d.reads_memory or d.writes_memory):
            continue
        spaces = [v.type.space for v in inner.operands if isinstance(v.type, PtrType)]
        if not spaces or any(s not in _OWN_SPACES for s in spaces):
            return True
    return False


def waits_before_global(f: Function) -> bool:
    """Whether kernel `f` waits at a top-level gpu.griddep_wait before any op that may
    touch global memory (then a programmatic dependent launch of it is sound)."""
    for op in f.body.ops:
        if op.name == WAIT:
            return True
        if _may_touch_global(op):
            return False
    return False


def insert_at_entry(f: Function) -> None:
    """Start kernel `f` with gpu.griddep_wait, unless it has a wait of its own (its author
    placed it)."""
    if f.kind != "kernel" or any(op.name == WAIT for op in f.walk()):
        return
    f.body.set_ops([Op(OPS[WAIT], [], [], loc=f.loc)] + f.body.ops)
