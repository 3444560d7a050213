"""gpu: the thread's coordinates in the launch."""

from __future__ import annotations

from ..formats import Keyword
from ..types import U32
from . import checks as C
from . import defop

DIMS = ("x", "y", "z")
INDEX_OPS = ("gpu.thread_idx", "gpu.block_idx", "gpu.block_dim", "gpu.grid_dim")


def _dim_verify(op):
    return C.first(lambda: C.arity(op, 0, 1),
                   lambda: None if op.attrs.get("dim") in DIMS else "dim must be x, y or z",
                   lambda: None if op.results[0].type == U32 else "result must be u32")


for _name in INDEX_OPS:
    defop(_name, Keyword("dim"), _dim_verify, infer=lambda ts, attrs: [U32])
