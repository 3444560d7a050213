"""gpu: the thread's coordinates, and operations across the threads of a warp or block.

Barriers, shuffles and votes are `convergent`: passes never move them into or out of
control flow, since which threads take part is part of their meaning."""

from __future__ import annotations

from ..formats import Keyword, Operands
from ..types import BOOL, U32
from . import checks as C
from . import defop

DIMS = ("x", "y", "z")
INDEX_OPS = ("gpu.thread_idx", "gpu.block_idx", "gpu.block_dim", "gpu.grid_dim")
SHUFFLE_MODES = ("down", "xor", "idx")
VOTE_MODES = ("all", "any", "ballot")


def _dim_verify(op):
    return C.first(lambda: C.arity(op, 0, 1),
                   lambda: None if op.attrs.get("dim") in DIMS else "dim must be x, y or z",
                   lambda: None if op.results[0].type == U32 else "result must be u32")


for _name in INDEX_OPS:
    defop(_name, Keyword("dim"), _dim_verify, infer=lambda ts, attrs: [U32],
          doc="The thread's coordinates (u32) along one dimension.")


def _u32_verify(op):
    return C.first(lambda: C.arity(op, 0, 1),
                   lambda: None if op.results[0].type == U32 else "result must be u32")


defop("gpu.lane_id", Operands(), _u32_verify, infer=lambda ts, attrs: [U32],
      doc="The thread's lane in its warp: its linear index in the block modulo 32.")
defop("gpu.warp_id", Operands(), _u32_verify, infer=lambda ts, attrs: [U32],
      doc="The index of the thread's warp in its block: its linear index divided by 32.")
defop("gpu.exited", Operands(), lambda op: C.arity(op, 0, 0), pure=False, speculatable=False,
      doc="Marks the threads that execute it as finished (a kernel's `return`); emits no code. The "
          "structured IR keeps running them under a false flag, so the simulator needs this mark to "
          "know that a barrier need not wait for them.")
defop("gpu.barrier", Operands(), lambda op: C.arity(op, 0, 0), pure=False, speculatable=False, convergent=True,
      doc="Every thread of the block waits here; memory written before it is visible after it.")


def _shfl_verify(op):
    return C.first(lambda: C.arity(op, 2, 1),
                   lambda: None if op.attrs.get("mode") in SHUFFLE_MODES else "mode must be down, xor or idx",
                   lambda: C.numeric(op.operands[0].type, "value"),
                   lambda: None if op.operands[1].type == U32 else "the lane operand must be u32",
                   lambda: C.same([op.operands[0].type, op.results[0].type]))


defop("gpu.shfl", Keyword("mode"), _shfl_verify, infer=lambda ts, attrs: [ts[0]], speculatable=False,
      convergent=True,
      doc="Warp shuffle among the active lanes: `down` reads lane+n, `xor` lane^n (a lane past 31 "
          "reads itself), `idx` lane n%32. Reading an inactive lane is an error.")


def _vote_verify(op):
    mode = op.attrs.get("mode")
    want = U32 if mode == "ballot" else BOOL
    return C.first(lambda: C.arity(op, 1, 1),
                   lambda: None if mode in VOTE_MODES else "mode must be all, any or ballot",
                   lambda: None if op.operands[0].type == BOOL else "the predicate must be bool",
                   lambda: None if op.results[0].type == want else f"result must be {want}")


defop("gpu.vote", Keyword("mode"), _vote_verify,
      infer=lambda ts, attrs: [U32 if attrs.get("mode") == "ballot" else BOOL], speculatable=False,
      convergent=True,
      doc="Warp vote over the active lanes: `all`, `any`, or `ballot` (bit i: lane i's predicate).")
