"""vectorize: merge adjacent scalar loads (and stores) into one 64- or 128-bit access.

Two loads `p[i + c]`, `p[i + c + 1]` (same pointer, same base index, offsets differing by
one element) become `mem.load p[i + c] : vec<2 x T>` plus `vec.extract`s, when the
address is provably aligned to the vector's size: the pointer's declared alignment and
the index's known power-of-two factor (from constants, multiplications and shifts) must
both cover it. Runs of 4 (128 bits) are tried first. Accesses are merged only within a
stretch of a region where nothing that may write the same memory happens in between
(read-only global memory is never written; per-thread arrays and different address
spaces do not alias each other)."""

from __future__ import annotations

from ..core import Module, Op, Region, Value, replace_uses
from ..ops import OPS
from ..types import PtrType, ScalarType, VectorType
from . import register
from .util import const_value

MAX_DIVISIBILITY = 1 << 20


@register("vectorize", "Merge adjacent aligned loads and stores into 64/128-bit vector accesses.")
def vectorize(module: Module) -> bool:
    return any([_region(f.body) for f in module.functions])


def divisibility(v: Value, depth: int = 0) -> int:
    """The largest power of two known to divide the integer value v (capped)."""
    c = const_value(v)
    if c is not None and not isinstance(c, bool):
        return MAX_DIVISIBILITY if c == 0 else min(c & -c, MAX_DIVISIBILITY)
    op = v.op
    if op is None or depth > 12:
        return 1
    n = op.name
    if n == "arith.add" or n == "arith.sub":
        return min(divisibility(op.operands[0], depth + 1), divisibility(op.operands[1], depth + 1))
    if n == "arith.mul":
        return min(divisibility(op.operands[0], depth + 1) * divisibility(op.operands[1], depth + 1),
                   MAX_DIVISIBILITY)
    if n == "arith.shl":
        k = const_value(op.operands[1])
        if k is not None and 0 <= k < v.type.bits:
            return min(divisibility(op.operands[0], depth + 1) << k, MAX_DIVISIBILITY)
    if n == "arith.and":
        k = const_value(op.operands[1])
        if k is not None and k:
            return max(min(k & -k, MAX_DIVISIBILITY), divisibility(op.operands[0], depth + 1))
    if n == "arith.cast":
        src = op.operands[0].type
        if isinstance(src, ScalarType) and src.is_int and src.bits <= v.type.bits:
            return divisibility(op.operands[0], depth + 1)
    return 1


def split(v: Value) -> tuple[Value, int]:
    """index = base + constant offset."""
    op = v.op
    if op is not None and op.name == "arith.add":
        c = const_value(op.operands[1])
        if c is not None:
            base, off = split(op.operands[0])
            return base, off + c
    return v, 0


def _may_write(op: Op, ptr_t: PtrType) -> bool:
    """Could `op` write memory that a pointer of type ptr_t reaches?"""
    if ptr_t.space in ("global", "const") and not ptr_t.mut:
        return False            # read-only memory is not written during the kernel
    n = op.name
    if n in ("gpu.barrier", "func.call"):
        return True
    if n in ("mem.store", "mem.atomic", "mem.cas"):
        target = op.operands[1] if n == "mem.store" else op.operands[0]
        return target.type.space == ptr_t.space
    return any(_may_write(inner, ptr_t) for r in op.regions for inner in r.walk())


def _region(region: Region) -> bool:
    changed = any([_region(r) for op in region.ops for r in op.regions])
    changed |= _merge(region, "load")
    changed |= _merge(region, "store")
    return changed


def _merge(region: Region, kind: str) -> bool:
    ops = region.ops
    name = "mem.load" if kind == "load" else "mem.store"
    ptr_i = 0 if kind == "load" else 1
    candidates = {}
    for pos, op in enumerate(ops):
        if op.name != name:
            continue
        ptr, idx = op.operands[ptr_i], op.operands[ptr_i + 1]
        t = op.results[0].type if kind == "load" else op.operands[0].type
        if not isinstance(t, ScalarType) or not isinstance(ptr.type, PtrType):
            continue
        base, off = split(idx)
        candidates.setdefault((id(ptr), id(base)), []).append((pos, off, op, base))
    plans = []
    used = set()
    for group in candidates.values():
        by_off = {}
        for pos, off, op, base in group:
            by_off.setdefault(off, (pos, op, base))
        for pos, off, op, base in sorted(group, key=lambda g: g[0]):
            if id(op) in used:
                continue
            for width in (4, 2):
                run = [by_off.get(off + k) for k in range(width)]
                if any(r is None or id(r[1]) in used for r in run):
                    continue
                positions = [r[0] for r in run]
                if kind == "load" and positions[0] != min(positions):
                    continue           # the lowest element must come first (its index is used)
                if kind == "store" and positions != sorted(positions):
                    continue
                first, last = min(positions), max(positions)
                ptr_v = op.operands[ptr_i]
                if not _aligned(ptr_v, run[0][1].operands[ptr_i + 1], width):
                    continue
                if _blocked(ops, first, last, ptr_v.type, {id(r[1]) for r in run}, kind):
                    continue
                plans.append((kind, width, [r[1] for r in run], first, last))
                used.update(id(r[1]) for r in run)
                break
    if plans:
        _apply(region, plans)
    return bool(plans)


def _aligned(ptr: Value, index: Value, width: int) -> bool:
    t: PtrType = ptr.type
    size = t.pointee.nbytes
    need = size * width
    index_bytes = min(divisibility(index) * size, MAX_DIVISIBILITY)
    return t.alignment % need == 0 and index_bytes % need == 0


def _blocked(ops: list, first: int, last: int, ptr_t: PtrType, members: set, kind: str) -> bool:
    for op in ops[first + 1:last]:
        if id(op) in members:
            continue
        if _may_write(op, ptr_t):
            return True
        if kind == "store" and op.opdef.reads_memory and op.operands[0].type.space == ptr_t.space:
            return True        # a read between the stores would see old values
        if kind == "store" and any(inner.opdef.reads_memory for r in op.regions for inner in r.walk()):
            return True
    return False


def _apply(region: Region, plans: list) -> None:
    replace_at: dict[int, list[Op]] = {}
    drop = set()
    mapping = {}
    for kind, width, members, first, last in plans:
        if kind == "load":
            lead = members[0]
            t = lead.results[0].type
            vt = VectorType(t, width)
            vload = Op(OPS["mem.load"], list(lead.operands), [vt], dict(lead.attrs), loc=lead.loc)
            new = [vload]
            for k, m in enumerate(members):
                ex = Op(OPS["vec.extract"], [vload.results[0]], [t], {"index": k}, loc=m.loc,
                        result_names=[m.results[0].name])
                new.append(ex)
                mapping[m.results[0]] = ex.results[0]
            replace_at[id(lead)] = new
            drop.update(id(m) for m in members[1:])
        else:
            lead, tail = members[0], members[-1]
            t = lead.operands[0].type
            vt = VectorType(t, width)
            pack = Op(OPS["vec.pack"], [m.operands[0] for m in members], [vt], loc=lead.loc)
            vstore = Op(OPS["mem.store"], [pack.results[0], lead.operands[1], lead.operands[2]], [],
                        dict(lead.attrs), loc=lead.loc)
            replace_at[id(tail)] = [pack, vstore]
            drop.update(id(m) for m in members[:-1])
    out = []
    for op in region.ops:
        if id(op) in replace_at:
            for n in replace_at[id(op)]:
                n.parent = region
                out.append(n)
        elif id(op) not in drop:
            out.append(op)
    region.ops = out
    if mapping:
        replace_uses(region, mapping)
