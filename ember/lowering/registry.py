"""The lowering of each op, by op name: `LOWER`, filled by `@lowers(...)` in the
per-dialect files (lower_*.py) and read by ember.lowering.llvm_lower. A module of its own,
so that the dialect files and the lowering machinery import it rather than the package
(which imports them all and checks that every op has a lowering)."""

from __future__ import annotations

LOWER: dict = {}


def lowers(*names):
    """Register a lowering: fn(L, op, lowered operands) -> lowered results (a generator
    yielding `L.region(r)` per region for ops with regions)."""
    def reg(fn):
        for n in names:
            assert n not in LOWER, f"op {n} lowered twice"
            LOWER[n] = fn
        return fn
    return reg


def missing_lowerings() -> list[str]:
    """Ops (but terminators, which their region's lowering handles) with no lowering."""
    from ..ir.ops import OPS
    return sorted(name for name, d in OPS.items() if name not in LOWER and not d.terminator)
