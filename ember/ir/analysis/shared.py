"""Where a kernel's shared arrays lie. A block may declare at most 48 KB of shared memory
statically; beyond that it must use dynamic shared memory, which the launch sizes and
which a kernel must opt into (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, up to
227 KB on sm_90). Ember decides this per kernel, invisibly to the source: a kernel whose
arrays fit stays static; one whose arrays do not places every array in one dynamic
shared buffer, laid out as ptxas lays static ones out (declaration order, each
SHARED_ALIGN-aligned). Lowering places the arrays; the driver records the bytes the
launch must give (`KernelInfo.dynamic_shared`); the runtime and generated headers pass
them."""

from __future__ import annotations

from ...targets import STATIC_SHARED_BYTES
from ..core import Function
from ..types import size_of
from .pointers import SHARED_ALIGN


def layout(f: Function) -> tuple[dict, int]:
    """({mem.shared op: byte offset}, total bytes) for the shared arrays of `f`."""
    offsets, total = {}, 0
    for op in f.walk():
        if op.name == "mem.shared":
            total = (total + SHARED_ALIGN - 1) // SHARED_ALIGN * SHARED_ALIGN
            offsets[op] = total
            total += size_of(op.results[0].type.pointee) * op.length
    return offsets, total


def dynamic_bytes(f: Function) -> int:
    """The dynamic shared memory a launch of kernel `f` needs (0: its arrays are static)."""
    if f.kind != "kernel":
        return 0
    total = layout(f)[1]
    return total if total > STATIC_SHARED_BYTES else 0
