"""The op table: every IR op is defined exactly once, in one of the dialect modules below
(see `ember.ir.opdef` for what a definition holds). Everything else (builder, printer,
parser, verifier, passes, interpreter, simulator, lowering, docs, builtins, fuzzer) reads
it here by name."""

from __future__ import annotations

from ..opdef import OPS, OpDef, defop  # noqa: F401


def get(name: str) -> OpDef:
    return OPS[name]


# Importing the dialects fills OPS.
from . import arith, bits, mathops, ordering, mem, prefetch, async_copy, mbarrier, tma, cluster, grid_dependency, gpu, warp_reduce, tensor, wgmma, scf, func, vec  # noqa: E402,F401
