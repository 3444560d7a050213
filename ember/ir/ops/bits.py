"""Bit operations of one integer: population count, leading zeros, the most significant
bit, bit reversal (PTX popc, clz, bfind, brev). Each is a single instruction on the GPU
(LLVM's ctpop, ctlz and bitreverse intrinsics); the simulator and the constant folder
compute them exactly on every integer type."""

from __future__ import annotations

from ...lazy_numpy import np
from .. import semantics as S
from ..formats import Operands
from ..opdef import INT, Involution, defop


def _unsigned(a, t):
    """The lanes' bits as unsigned 64-bit numpy integers."""
    return np.asarray(a).astype(S.dtype(t)).view(S.bits_dtype(t)).astype(np.uint64)


def _popc_eval(op, a):
    t = op.value.type
    u = _unsigned(a, t)
    count = np.zeros(u.shape, np.uint32)
    for i in range(t.bits):
        count += ((u >> np.uint64(i)) & np.uint64(1)).astype(np.uint32)
    return (count,)


def _clz_eval(op, a):
    t = op.value.type
    u = _unsigned(a, t)
    out = np.full(u.shape, t.bits, np.uint32)
    for i in range(t.bits):                 # the highest set bit decides
        out = np.where((u >> np.uint64(i)) & np.uint64(1), np.uint32(t.bits - 1 - i), out)
    return (out,)


def _bfind_eval(op, a):
    """The index of the most significant bit that is not a sign bit: of x for unsigned
    types and non-negative values, of ~x for negative signed ones; all ones if none."""
    t = op.value.type
    v = np.asarray(a).astype(S.dtype(t))
    if t.signed:
        v = np.where(v < 0, np.invert(v), v)
    (clz,) = _clz_eval(op, v)
    return ((np.uint32(t.bits - 1) - clz).astype(np.uint32),)     # clz = bits when none: wraps to all ones


def _brev_eval(op, a):
    t = op.value.type
    u = _unsigned(a, t)
    out = np.zeros(u.shape, np.uint64)
    for i in range(t.bits):
        out |= ((u >> np.uint64(i)) & np.uint64(1)) << np.uint64(t.bits - 1 - i)
    return (out.astype(S.bits_dtype(t)).view(S.dtype(t)),)


def _bits_of(v: int, t) -> int:
    return v & ((1 << t.bits) - 1)


def _bfind_fold(op, a):
    t = op.value.type
    if t.signed and a < 0:
        a = ~a
    return ((_bits_of(a, t).bit_length() - 1) & 0xFFFFFFFF,)


def _brev_fold(op, a):
    t = op.value.type
    u = _bits_of(a, t)
    return (int(format(u, f"0{t.bits}b")[::-1], 2),)


defop("arith.popc", Operands(types_of="operands"), operands="value: I", results="result: u32", eval=_popc_eval,
      fold=lambda op, a: (bin(_bits_of(a, op.value.type)).count("1"),),
      example="%r = arith.popc %a : i32", example_args="%a: i32",
      doc="The number of set bits (PTX popc).")
defop("arith.clz", Operands(types_of="operands"), operands="value: I", results="result: u32", eval=_clz_eval,
      fold=lambda op, a: (op.value.type.bits - _bits_of(a, op.value.type).bit_length(),),
      example="%r = arith.clz %a : u64", example_args="%a: u64",
      doc="The number of leading zero bits; the width for 0 (PTX clz).")
defop("arith.bfind", Operands(types_of="operands"), operands="value: I", results="result: u32", eval=_bfind_eval, fold=_bfind_fold,
      example="%r = arith.bfind %a : i32", example_args="%a: i32",
      doc="The index of the most significant bit that differs from the sign (of x, or of ~x for a negative "
          "signed x); 0xFFFFFFFF when there is none (PTX bfind).")
defop("arith.brev", Operands(), operands="value: I", results="result: I", eval=_brev_eval, fold=_brev_fold,
      traits=(Involution(INT),),
      example="%r = arith.brev %a : u32", example_args="%a: u32",
      doc="The bits in reverse order (PTX brev).")
