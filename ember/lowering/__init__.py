"""Ember IR -> LLVM IR -> PTX. llvmlite (LLVM) is imported only in this package.

`LOWER` (ember.lowering.registry) maps each op name to its lowering, registered with
`@lowers(...)` in the per-dialect files (the accurate math ops, `expanded_by="expand-math"`, all in
lower_expansion); every op of the op table but the terminators is lowered here, which is
checked when this package loads (so adding an op without a lowering fails at once, naming
the op)."""

from __future__ import annotations

from .registry import LOWER, lowers, missing_lowerings  # noqa: F401 (the package's interface)

from . import lower_arith, lower_bits, lower_cluster, lower_control, lower_expansion, lower_gpu, lower_grid_dependency, lower_math, lower_mbarrier, lower_mem, lower_ordering, lower_prefetch, lower_tensor, lower_tma, lower_wgmma  # noqa: E402,F401,E501

_missing = missing_lowerings()
if _missing:
    import sys
    # Forget the per-dialect modules too, so that importing again re-registers them and
    # reports the same ops (not every op, as a half-imported package would).
    for _name in [m for m in sys.modules if m.startswith(__name__ + ".")]:
        del sys.modules[_name]
    raise ImportError(f"ops with no lowering: {', '.join(_missing)}")
