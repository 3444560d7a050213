"""Ember IR -> LLVM IR -> PTX. llvmlite (LLVM) is imported only in this package.

`LOWER` maps each op name to its lowering, registered with `@lowers(...)` in the
per-dialect files; every op of the op table is either lowered here or declared
`expanded_by` a pass that replaces it before lowering, which is checked when this
package loads (so adding an op without either fails at once, naming the op)."""

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
    """Ops that are neither lowered nor expanded before lowering."""
    from ..ir.ops import OPS
    return sorted(name for name, d in OPS.items() if name not in LOWER and not d.expanded_by
                  and not d.terminator)


from . import lower_arith, lower_control, lower_gpu, lower_math, lower_mem, lower_tensor  # noqa: E402,F401

_missing = missing_lowerings()
if _missing:
    import sys
    # Forget the per-dialect modules too, so that importing again re-registers them and
    # reports the same ops (not every op, as a half-imported package would).
    for _name in [m for m in sys.modules if m.startswith(__name__ + ".")]:
        del sys.modules[_name]
    raise ImportError(f"ops with no lowering and no `expanded_by`: {', '.join(_missing)}")
