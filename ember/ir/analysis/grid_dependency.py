"""Whether a kernel may be launched as a programmatic dependent of the kernel before it on
the stream (PDL, sm_90: ember.ir.ops.grid_dependency). Such a launch lets the kernel start
while the one before still runs, so it is sound only if the kernel reads and writes no
memory that kernel may touch until it has waited for it: every global access must come
after a `gpu.griddep_wait` that every thread executes. This is proven here on the
optimized IR, never taken from the source's word: the kernel body's top-level ops are
scanned in order, and the kernel qualifies if a `gpu.griddep_wait` comes before any op
that may touch global memory. Shared, local and constant memory belong to the kernel (or
to nobody who writes) and may be used before it; an op with a memory effect and no pointer
in those spaces (a fence, a call) counts as global, and so does a tensor-map copy (its
pointers are shared: the map names the global tensor). A wait nested in
control flow proves nothing (not every thread need reach it).

The option `programmatic_launch` (ember.compile; `--programmatic-launch`) puts the wait at
the start of every kernel that has no wait of its own (`insert_at_entry`); with "signal"
(`--programmatic-signal`), the signal that lets the next kernel launch early
(gpu.griddep_launch_dependents) before it. Measured on an H100 (2026-11-26, a decoder
layer of ten kernels, bench/results/layer_ab.md): all ten signalling at their start took up
to 15% longer than plain launches - each kernel's blocks were dispatched while the kernels
before still ran, onto whichever SMs had room, and ran unevenly spread; the wait alone
(each kernel launched as the one before completes, its launch overlapped) 1-5% less; and
the small kernels (norms, RoPE, quantisation: a few blocks an SM at most) signalling while
the GEMVs and the attention only wait 1-3.5% less again - the big kernel after a small one
is dispatched early, the SMs being mostly free. Not every big kernel takes it well: the
attention's split, sized to about two blocks an SM, took 20% longer after a merge that
signalled (ember/ops/kernels.py SIGNAL_EARLY). So ember.ops signals from chosen small
kernels only."""

from __future__ import annotations

from ..core import Function, Op
from ..opdef import OPS
from ..types import PtrType

# address spaces a kernel may use before it waits: its own shared and local memory, and
# constant tables no kernel writes
OWN_SPACES = frozenset({"shared", "local", "const"})
WAIT = "gpu.griddep_wait"


def _may_touch_global(op: Op) -> bool:
    for inner in op.walk():
        if inner.name == "func.call":
            return True
        d = inner.opdef
        if inner.name == WAIT or not (d.reads_memory or d.writes_memory):
            continue
        if any(v.type.is_tensormap for v in inner.operands):     # a TMA copy reads or writes global memory
            return True
        spaces = [v.type.space for v in inner.operands if isinstance(v.type, PtrType)]
        if not spaces or any(s not in OWN_SPACES for s in spaces):
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


MODES = ("wait", "signal")


def launch_mode(value) -> str | bool:
    """The programmatic_launch option as False, "wait" or "signal" (True is "wait")."""
    if value is True:
        return "wait"
    if value is False or value in MODES:
        return value
    raise TypeError(f"programmatic_launch must be a bool, \"wait\" or \"signal\", not {value!r}")


def insert_at_entry(f: Function, signal: bool = False) -> None:
    """Start kernel `f` with gpu.griddep_wait (after gpu.griddep_launch_dependents with
    `signal`), unless it has a wait of its own (its author placed both)."""
    if f.kind != "kernel" or any(op.name == WAIT for op in f.walk()):
        return
    ops = [Op(OPS[WAIT], [], [], loc=f.loc)]
    if signal:
        ops.insert(0, Op(OPS["gpu.griddep_launch_dependents"], [], [], loc=f.loc))
    f.body.set_ops(ops + f.body.ops)
