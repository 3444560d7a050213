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

The option `programmatic_launch` (ember.compile; `--programmatic-launch`) gives every kernel
that has no wait of its own a wait before its first access that may touch global memory
(`insert_wait`): its index arithmetic, shared-memory setup and prefetches into L2
(mem.prefetch_l2, which touches no memory here) run while the kernel before finishes; with
"signal" (`--programmatic-signal`), the signal that lets the next kernel launch early
(gpu.griddep_launch_dependents) at its start. Measured on an H100 (2026-11-26, a decoder
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


def _may_touch_global(op: Op, callees: dict | None = None, known: dict | None = None) -> bool:
    """Whether `op` (or an op inside it) may access global memory. A call may, unless
    `callees` (name -> Function) gives its body, which is then looked into (once: `known`
    keeps each callee's answer; one being looked into counts as touching, for recursion)."""
    known = {} if known is None else known
    for inner in op.walk():
        if inner.name == "func.call":
            name = inner.attrs["callee"]
            if name not in known:
                known[name] = True
                body = (callees or {}).get(name)
                known[name] = body is None or any(_may_touch_global(o, callees, known) for o in body.body.ops)
            if known[name]:
                return True
            continue
        d = inner.opdef
        if inner.name == WAIT or not (d.reads_memory or d.writes_memory):
            continue
        if any(v.type.is_tensormap for v in inner.operands):     # a TMA copy reads or writes global memory
            return True
        spaces = [v.type.space for v in inner.operands if isinstance(v.type, PtrType)]
        if not spaces or any(s not in OWN_SPACES for s in spaces):
            return True
    return False


def waits_before_global(f: Function, functions: list = ()) -> bool:
    """Whether kernel `f` waits at a top-level gpu.griddep_wait before any op that may
    touch global memory, looking into the device functions of `functions` it calls (then
    a programmatic dependent launch of it is sound)."""
    wait = _first_wait(f)
    return wait is not None and _first_global(f, functions) == wait


def _first_wait(f: Function) -> int | None:
    return next((i for i, op in enumerate(f.body.ops) if op.name == WAIT), None)


def _first_global(f: Function, functions) -> int | None:
    """The position of the first top-level op of `f` that may touch global memory, or of its
    first wait if that comes first (None: neither)."""
    callees, known = {g.name: g for g in functions if g is not f}, {}
    return next((i for i, op in enumerate(f.body.ops) if op.name == WAIT or _may_touch_global(op, callees, known)),
                None)


MODES = ("wait", "signal")


def launch_mode(value) -> str | bool:
    """The programmatic_launch option as False, "wait" or "signal" (True is "wait")."""
    if value is True:
        return "wait"
    if value is False or value in MODES:
        return value
    raise TypeError(f"programmatic_launch must be a bool, \"wait\" or \"signal\", not {value!r}")


def insert_wait(f: Function, functions: list, signal: bool = False) -> None:
    """Give kernel `f` a gpu.griddep_wait, unless it has one of its own (its author placed
    both): as late as the proof allows, before its first top-level op that may touch global
    memory (looking into the device functions it calls, of `functions`), so that what comes
    before - index arithmetic, shared memory, prefetches into L2 - runs while the kernel
    before it finishes. With `signal`, gpu.griddep_launch_dependents at its start."""
    if f.kind != "kernel" or any(op.name == WAIT for op in f.walk()):
        return
    ops, at = list(f.body.ops), _first_global(f, functions)
    ops.insert(at or 0, Op(OPS[WAIT], [], [], loc=f.loc))
    if signal:
        ops.insert(0, Op(OPS["gpu.griddep_launch_dependents"], [], [], loc=f.loc))
    f.body.set_ops(ops)
