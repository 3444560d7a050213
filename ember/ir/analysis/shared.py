"""Where a kernel's shared arrays lie. A block may declare at most 48 KB of shared memory
statically; beyond that it must use dynamic shared memory, which the launch sizes and
which a kernel must opt into (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, up to
227 KB on sm_90). Ember decides this per kernel, invisibly to the source: a kernel whose
arrays fit stays static; one whose arrays do not places every array in one dynamic
shared buffer, laid out as ptxas lays static ones out (declaration order, each
SHARED_ALIGN-aligned). Lowering places the arrays; the driver records the bytes the
launch must give (`KernelInfo.dynamic_shared`); the runtime and generated headers pass
them. A shared array sized at launch (`shared row: [f32; cols];`, `mem.shared_sized`)
puts every array of its kernel in the dynamic buffer, itself last: each launch gives the
fixed bytes plus its length (the parameter's value) times its element's bytes."""

from __future__ import annotations

from ...targets import STATIC_SHARED_BYTES
from ..core import Function
from ..types import size_of
from .pointers import SHARED_ALIGN


def _aligned(n: int, align: int = SHARED_ALIGN) -> int:
    return (n + align - 1) // align * align


def alignment(op) -> int:
    """The bytes a shared array's start is aligned to (a swizzled tile asks for more)."""
    return max(SHARED_ALIGN, op.attrs.get("align") or 0)


def layout(f: Function) -> tuple[dict, int]:
    """({shared array op: byte offset}, total bytes of the fixed-size ones) for the shared
    arrays of `f`; a launch-sized array (`mem.shared_sized`) comes after them all."""
    offsets, total, sized = {}, 0, []
    for op in f.walk():
        if op.name == "mem.shared":
            total = _aligned(total, alignment(op))
            offsets[op] = total
            total += size_of(op.results[0].type.pointee) * op.length
        elif op.name == "mem.shared_sized":
            sized.append(op)
    for op in sized:
        offsets[op] = _aligned(total)
    return offsets, total


def sized(f: Function):
    """The launch-sized shared array of kernel `f`: (the kernel parameter giving its length,
    its element's bytes, its name), or None."""
    for op in f.walk():
        if op.name == "mem.shared_sized":
            n = op.operands[0]
            index = next((i for i, a in enumerate(f.args) if a is n), None)
            return index, op.results[0].type.pointee.nbytes, op.attrs.get("name", "")
    return None


def dynamic_bytes(f: Function) -> int:
    """The dynamic shared memory every launch of kernel `f` needs (0: its arrays are
    static); a launch-sized array's bytes come on top (`sized`), at this offset."""
    if f.kind != "kernel":
        return 0
    total = layout(f)[1]
    if sized(f) is not None:
        return _aligned(total)
    return total if total > STATIC_SHARED_BYTES else 0


def uses_dynamic(f: Function) -> bool:
    """Whether kernel `f`'s shared arrays lie in its dynamic shared buffer."""
    return f.kind == "kernel" and (sized(f) is not None or dynamic_bytes(f) > 0)
