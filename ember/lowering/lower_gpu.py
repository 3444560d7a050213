"""Lowering of the gpu ops: special registers, barriers, shuffles and votes."""

from __future__ import annotations

from . import llvm_ir as ll

from .registry import lowers
from .llvm_lower import I1, I32, I64, lltype


_SREG = {"gpu.thread_idx": "tid", "gpu.block_idx": "ctaid", "gpu.block_dim": "ntid", "gpu.grid_dim": "nctaid"}


def _sreg_value(L, reg: str):
    return L.intrinsic(f"llvm.nvvm.read.ptx.sreg.{reg}", [], [], ret=I32)


@lowers("gpu.lane_id")
def _lane_id(L, op, args):
    return [_sreg_value(L, "laneid")]


@lowers("gpu.warp_id")
def _warp_id(L, op, args):
    """The linear thread index / 32 (%warpid is a hardware slot, not this)."""
    b = L.b
    block = L.f.attrs.get("block")
    linear = _sreg_value(L, "tid.x")
    if not (block and block[1] == 1 and block[2] == 1):
        y, z = _sreg_value(L, "tid.y"), _sreg_value(L, "tid.z")
        nx, ny = _sreg_value(L, "ntid.x"), _sreg_value(L, "ntid.y")
        linear = b.add(linear, b.mul(nx, b.add(y, b.mul(ny, z))))
    return [b.lshr(linear, ll.Constant(I32, 5))]


@lowers("gpu.exited")
def _exited(L, op, args):
    return []   # the structured control flow already skips the rest; this only informs the simulator


@lowers("gpu.barrier")
def _barrier(L, op, args):
    L.intrinsic("llvm.nvvm.barrier0", [], [], ret=ll.VoidType())
    return []


@lowers("gpu.warp_barrier")
def _warp_barrier(L, op, args):
    L.intrinsic("llvm.nvvm.bar.warp.sync", [], [ll.Constant(I32, -1)], ret=ll.VoidType())
    return []


_SHFL_MODE = {"down": "down", "up": "up", "xor": "bfly", "idx": "idx"}


def _shfl32(L, mode: str, v, lane):
    """One 32-bit shuffle among the active lanes, over a whole warp: the clamp c is 31 (the
    last lane) for down, xor and idx, and 0 (the first) for up, as PTX defines it."""
    mask = L.intrinsic("llvm.nvvm.activemask", [], [], ret=I32)
    suffix = "f32" if str(v.type) == "float" else "i32"
    return L.intrinsic(f"llvm.nvvm.shfl.sync.{_SHFL_MODE[mode]}.{suffix}", [],
                       [mask, v, lane, ll.Constant(I32, 0 if mode == "up" else 31)], ret=v.type)


@lowers("gpu.shfl")
def _shfl(L, op, args):
    b = L.b
    v, lane = args
    t = op.results[0].type
    mode = op.attrs["mode"]
    if t.bits == 32:
        return [_shfl32(L, mode, v, lane)]
    if t.bits == 64:   # two 32-bit halves
        bits = b.bitcast(v, I64) if t.is_float else v
        lo = _shfl32(L, mode, b.trunc(bits, I32), lane)
        hi = _shfl32(L, mode, b.trunc(b.lshr(bits, ll.Constant(I64, 32)), I32), lane)
        r = b.or_(b.zext(lo, I64), b.shl(b.zext(hi, I64), ll.Constant(I64, 32)))
        return [b.bitcast(r, lltype(t)) if t.is_float else r]
    # 8- and 16-bit values travel in a 32-bit register
    narrow = ll.IntType(t.bits)
    bits = b.bitcast(v, narrow) if t.is_float else v
    r = b.trunc(_shfl32(L, mode, b.zext(bits, I32), lane), narrow)
    return [b.bitcast(r, lltype(t)) if t.is_float else r]


@lowers("gpu.vote")
def _vote(L, op, args):
    mask = L.intrinsic("llvm.nvvm.activemask", [], [], ret=I32)
    mode = op.attrs["mode"]
    ret = I32 if mode == "ballot" else I1
    return [L.intrinsic(f"llvm.nvvm.vote.{mode}.sync", [], [mask, args[0]], ret=ret)]


@lowers("gpu.elect")
def _elect(L, op, args):
    mask = L.intrinsic("llvm.nvvm.activemask", [], [], ret=I32)
    text = "{ .reg .pred p; elect.sync _|p, $1; selp.u32 $0, 1, 0, p; }"
    leader = L.b.asm(ll.FunctionType(I32, [I32]), text, "=r,r", [mask], True)
    return [L.b.icmp_unsigned("!=", leader, ll.Constant(I32, 0))]


@lowers("gpu.setmaxnreg")
def _setmaxnreg(L, op, args):
    text = f"setmaxnreg.{op.attrs['kind']}.sync.aligned.u32 {op.attrs['regs']};"
    L.b.asm(ll.FunctionType(ll.VoidType(), []), text, "~{memory}", [], True)
    return []


@lowers(*_SREG)
def _sreg(L, op, args):
    name = f"llvm.nvvm.read.ptx.sreg.{_SREG[op.name]}.{op.attrs['dim']}"
    return [L.intrinsic(name, [], [], ret=I32)]




@lowers("gpu.redux")
def _redux(L, op, args):
    """redux.sync over the active lanes; min and max unsigned for u32."""
    mask = L.intrinsic("llvm.nvvm.activemask", [], [], ret=I32)
    kind = op.attrs["kind"]
    if kind in ("min", "max") and not op.value.type.signed:
        kind = "u" + kind
    return [L.intrinsic(f"llvm.nvvm.redux.sync.{kind}", [], [args[0], mask], ret=I32)]


@lowers("gpu.match")
def _match(L, op, args):
    mask = L.intrinsic("llvm.nvvm.activemask", [], [], ret=I32)
    width = "i64" if op.value.type.bits == 64 else "i32"
    if op.attrs["kind"] == "any":
        return [L.intrinsic(f"llvm.nvvm.match.any.sync.{width}", [], [mask, args[0]], ret=I32)]
    pair = L.intrinsic(f"llvm.nvvm.match.all.sync.{width}p", [], [mask, args[0]],
                       ret=ll.LiteralStructType([I32, ll.IntType(1)]))
    return [L.b.extract_value(pair, 0)]
