"""Which kernels keep per-thread arrays in local memory, read from their PTX: the driver's
W0004 (ember.diagnostic_codes). LLVM keeps an array in a local-memory depot where an index
is not a constant after unrolling and inlining, or where a function is too large for it to
promote its arrays (ember.lowering.ptx.LARGE_FUNCTION); the PTX says so before any
assembler runs, so every compile can report it (spills come on top only in ptxas:
`ember compile --check`)."""

from __future__ import annotations

import re

_PTX_FUNCTION = re.compile(r"^(?:\.visible\s+|\.weak\s+)?\.(entry|func)\b[^(]*?(?:\([^)]*\)\s*)?([\w$]+)\s*\(",
                           re.M)
_PTX_DEPOT = re.compile(r"^\s*\.local\s+\.align\s+\d+\s+\.b8\s+__local_depot\d+\[(\d+)\]", re.M)


def local_depots(ptx: str) -> dict:
    """{kernel name: bytes} of the kernels (PTX .entry functions) whose code declares a
    local-memory depot: the per-thread arrays LLVM kept in memory (its stack frame before
    assembly; spills come on top only in ptxas)."""
    heads = list(_PTX_FUNCTION.finditer(ptx))
    out = {}
    for i, head in enumerate(heads):
        body = ptx[head.end():heads[i + 1].start() if i + 1 < len(heads) else len(ptx)]
        depot = _PTX_DEPOT.search(body)
        if head.group(1) == "entry" and depot:
            out[head.group(2)] = int(depot.group(1))
    return out


def warn_local_memory(ptx: str, module, diags) -> list:
    """W0004 for each kernel whose PTX keeps per-thread arrays in local memory, at the
    kernel's declaration."""
    depots = local_depots(ptx)
    return [diags.warning("W0004", f"kernel `{f.name}` keeps {depots[f.name]} bytes of per-thread arrays in "
                          "local memory", f.loc, "this kernel",
                          help="index arrays with `unroll for` variables or constants (a dynamic index, or a "
                               "loop that is not unrolled, keeps an array in memory), or split a very large "
                               "kernel; `ember explain W0004`")
            for f in module.kernels if f.name in depots]
