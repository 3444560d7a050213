"""vectorize: merge adjacent scalar loads (and stores) into one 64- or 128-bit access.

Two loads `p[i + c]`, `p[i + c + 1]` (same pointer, same base index, offsets differing by
one element) become `mem.load p[i + c] : vec<2 x T>` plus `vec.extract`s, when the
address is provably aligned to the vector's size: the alignment the pointer provably has
(`ember.ir.analysis.pointers.alignment`: its root's, kept through offsets only as far as
they are known multiples of it) and the index's known power-of-two factor must both
cover it. Runs of 4 (128 bits) are tried first. Accesses are merged only within a
stretch of a region where nothing that may write the same memory happens in between
(memory that cannot change during the kernel is never written; per-thread arrays and
different address spaces do not alias each other)."""

from __future__ import annotations

from ..analysis.pointers import alignment, unchanging
from ..analysis.values import MAX_DIVISIBILITY, const_value, divisibility
from ..core import Module, Op, Region, Value
from ..ops import OPS
from ..ops.ordering import synchronizes
from ..types import PtrType, ScalarType, VectorType
from . import register


@register("vectorize", "Merge adjacent aligned loads and stores into 64/128-bit vector accesses.")
def vectorize(module: Module) -> set:
    changed = set()
    for f in module.functions:
        # integer values' divisibility, shared by the function's queries: merging replaces
        # loaded values (by new ones) but never changes the ops that define an index
        memo: dict = {}
        regions = [f.body] + [r for op in f.walk() for r in op.regions]
        for region in reversed(regions):     # inner regions first
            if _merge(region, "load", memo, module.remarks) | _merge(region, "store", memo, module.remarks):
                changed.add(f)
    return changed


def split(v: Value) -> tuple[Value | None, int]:
    """index = base + constant offset (base None: the index is a constant, `q[3]`)."""
    c = const_value(v)
    if c is not None:
        return None, c
    off = 0
    while True:
        op = v.op
        if op is None or op.name != "arith.add":
            return v, off
        c = const_value(op.operands[1])
        if c is None:
            return v, off
        v, off = op.operands[0], off + c


def _may_write(op: Op, ptr: Value) -> bool:
    """Could `op` (or an op nested in it) write memory that `ptr` reaches?"""
    if unchanging(ptr):
        return False            # nothing writes it during the kernel
    space = ptr.type.space
    for inner in op.walk():
        d = inner.opdef
        if not d.writes_memory and inner.name != "gpu.barrier":
            continue
        if inner.name == "gpu.barrier" or inner.name == "func.call" or synchronizes(inner):
            return True         # another thread's (or the callee's) writes become visible
        target = next((v for v in inner.operands if isinstance(v.type, PtrType)), None)
        if target is None or target.type.space == space:
            return True
    return False


def _merge(region: Region, kind: str, memo: dict, remarks: list | None = None) -> bool:
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
            why = None                 # why the widest contiguous run was not merged
            for width in _widths(op, ptr_i):
                run = [by_off.get(off + k) for k in range(width)]
                if any(r is None or id(r[1]) in used for r in run):
                    continue
                positions = [r[0] for r in run]
                if kind == "load" and positions[0] != min(positions):
                    continue           # the lowest element must come first (its index is used)
                if kind == "store" and positions != sorted(positions):
                    why = why or (width, "the stores are not in address order", None)
                    continue
                first, last = min(positions), max(positions)
                ptr_v = op.operands[ptr_i]
                if not _aligned(ptr_v, run[0][1].operands[ptr_i + 1], width, memo):
                    why = why or (width,) + _unaligned_reason(ptr_v, run[0][1].operands[ptr_i + 1], width, memo)
                    continue
                if _blocked(ops, first, last, ptr_v, {id(r[1]) for r in run}, kind):
                    why = why or (width, "something between them may write the same memory (a store, an "
                                         "atomic, a barrier or a call)", "move the other access before or after")
                    continue
                plans.append((kind, width, [r[1] for r in run], first, last))
                used.update(id(r[1]) for r in run)
                why = None
                break
            if why is not None and remarks is not None and id(op) not in used and not _per_thread(op, ptr_i):
                width, reason, help_ = why
                size = op.operands[ptr_i].type.pointee.nbytes
                remarks.append((op.loc, f"{width} {kind}s of {size}-byte elements here were not merged into one "
                                        f"{width * size}-byte {kind}: {reason}", help_))
    if remarks is not None:
        _hidden_offsets(ops, name, ptr_i, used, remarks)
    if plans:
        _apply(region, plans)
    return bool(plans)


def _per_thread(op, ptr_i: int) -> bool:
    """An access to a per-thread array: it lives in registers once its indices are
    constants, so whether it is merged does not matter (no remark)."""
    root = op.operands[ptr_i]
    while root.op is not None and root.op.name in ("mem.offset", "mem.row", "arith.bitcast"):
        root = root.op.operands[0]
    return root.op is not None and root.op.name == "mem.alloca"


def _hidden_offsets(ops: list, name: str, ptr_i: int, used: set, remarks: list) -> None:
    """Accesses whose indices are conversions of `j + 0`, `j + 1`, ... (`w[u64(j + v)]`):
    adjacent, but a widening conversion of a sum is not the sum of the conversions (the
    narrow sum may wrap), so nothing can merge them; say how to write the index instead."""
    groups: dict = {}
    for op in ops:
        if op.name != name or id(op) in used or _per_thread(op, ptr_i):
            continue
        conv = op.operands[ptr_i + 1].op
        if conv is None or conv.name != "arith.cast":
            continue
        inner = conv.operands[0]
        if not (isinstance(inner.type, ScalarType) and inner.type.is_int):
            continue
        base, off = split(inner)
        if base is not None:
            groups.setdefault((id(op.operands[ptr_i]), id(base)), []).append((off, op))
    for group in groups.values():
        offsets = {off for off, _ in group}
        first = min(group, key=lambda g: g[0])
        if len(offsets) < 2 or first[0] + 1 not in offsets:
            continue
        op = first[1]
        run = 1
        while first[0] + run in offsets:
            run += 1
        kind = "load" if name == "mem.load" else "store"
        wide = op.operands[ptr_i + 1].type
        remarks.append((op.loc, f"{run} adjacent {kind}s here were not merged: each index converts a sum "
                                f"(`{wide}(j + k)`), and a conversion of a sum is not the sum of the conversions "
                                f"(the narrow sum may wrap), so they are not known to be adjacent",
                        f"convert before adding: `{wide}(j) + {wide}(k)`"))


def _widths(op, ptr_i: int) -> tuple:
    """Vector widths to try, widest first: up to 16 bytes (8 elements of 16 bits, as a
    128-bit access), never more than 4 elements of 32 bits or 2 of 64."""
    size = op.operands[ptr_i].type.pointee.nbytes
    return tuple(w for w in (8, 4, 2) if w * size <= 16)


def _unaligned_reason(ptr: Value, index: Value, width: int, memo: dict) -> tuple:
    """(why, help): which of the pointer's alignment and the index's known factor fell short."""
    size = ptr.type.pointee.nbytes
    need = size * width
    have = alignment(ptr, memo)
    if have % need:
        root = ptr
        while root.op is not None and root.op.name in ("mem.offset", "arith.bitcast"):
            root = root.op.operands[0]
        name = root.name or "the pointer"
        return (f"the address is provably aligned to {have} bytes only, and a {need}-byte access needs {need}",
                f"if `{name}` is a kernel parameter, promise it: `{name}: ... align({need})` (launches check it)")
    factor = divisibility(index, memo)
    return (f"the index is known to be a multiple of {factor} element(s) only, and a {need}-byte access needs a "
            f"multiple of {need // size}",
            f"write the index so that its factor shows: `{need // size} * j + k` rather than a value computed "
            f"elsewhere")


def _aligned(ptr: Value, index: Value, width: int, memo: dict) -> bool:
    size = ptr.type.pointee.nbytes
    need = size * width
    index_bytes = min(divisibility(index, memo) * size, MAX_DIVISIBILITY)
    return alignment(ptr, memo) % need == 0 and index_bytes % need == 0


def _blocked(ops: list, first: int, last: int, ptr: Value, members: set, kind: str) -> bool:
    space = ptr.type.space
    for op in ops[first + 1:last]:
        if id(op) in members:
            continue
        if _may_write(op, ptr):
            return True
        if kind == "store" and op.opdef.reads_memory and op.operands and getattr(op.operands[0].type, "space", None) == space:
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
            drop.update(id(m) for m in members)
        else:
            lead, tail = members[0], members[-1]
            t = lead.operands[0].type
            vt = VectorType(t, width)
            pack = Op(OPS["vec.pack"], [m.operands[0] for m in members], [vt], loc=lead.loc)
            vstore = Op(OPS["mem.store"], [pack.results[0], lead.operands[1], lead.operands[2]], [],
                        dict(lead.attrs), loc=lead.loc)
            replace_at[id(tail)] = [pack, vstore]
            drop.update(id(m) for m in members)
    out = []
    for op in region.ops:
        if id(op) in replace_at:
            out.extend(replace_at[id(op)])
        if id(op) not in drop:
            out.append(op)
    for old, new in mapping.items():
        old.replace_all_uses_with(new)
    for op in region.ops:
        if id(op) in drop:
            op.erase()
    region.set_ops(out)
