"""The configurations a tuner may try: each kernel's const parameters declared
`tune [a, b, ...]` span a space (their product, the others at their defaults or `-D`
values), and a configuration is admissible when the kernel checks with it - its
`static_assert`s are the constraints between parameters (`static_assert(BLOCK * VEC <=
COLS)`). A parameter bound by `defines` is fixed, not tuned. One declaration in the
source, read here, by `ember tune-space` and by a tuner.

    space = ember.tune_space("kernels_src/rmsnorm.ember", kernel="rmsnorm_rows")
    space["rmsnorm_rows"].admissible      # [{"BLOCK": 128, "VEC": 2}, ...]
"""

from __future__ import annotations

import itertools

from ..records import field, record


@record
class TuneSpace:
    """One kernel's configurations: those that check, and those that do not with why."""

    kernel: str
    params: dict                     # tuned parameter -> its values, in declaration order
    default: dict = field(default_factory=dict)        # the configuration compiled without -D
    admissible: list = field(default_factory=list)     # [{parameter: value}]
    rejected: list = field(default_factory=list)       # [({parameter: value}, first error message)]


def tune_space(source_or_path, arch: str | None = None, kernel: str | None = None,
               defines: dict | None = None, include_dirs: list | None = None, warnings: list | None = None) -> dict:
    """{kernel name: TuneSpace} for every kernel with tuned parameters (or the one named):
    each configuration of the product of their values checked (the front end only: fast).
    `warnings`: a list the file's warnings are appended to (a -D that no kernel has)."""
    from .. import compile as compile_
    from ..diagnostics import CompileError
    kw = {"arch": arch} if arch else {}
    kw.update(stop_after="ast", cache=False, include_dirs=include_dirs or [],
              kernels=[kernel] if kernel is not None else None)
    failed = None
    try:
        base = compile_(source_or_path, defines=defines or {}, **kw)
        if warnings is not None:
            warnings.extend(base.warnings)
        declared = {name: (info.tunables, info.consts) for name, info in base.kernels.items()}
    except CompileError as e:
        # the default configuration need not check with these values (COLS = 512 and a
        # default BLOCK of 1024): the others are tried all the same - and if none checks,
        # the file's error is the answer
        failed, declared = e, getattr(e, "declared", None)
        if not declared or not any(t for t, _ in declared.values()):
            raise
    out = {}
    fixed = set(defines or {})
    for name, (declared_tunables, consts) in declared.items():
        tunables = {p: v for p, v in declared_tunables.items() if p not in fixed}
        if (kernel is not None and name != kernel) or not tunables:
            continue
        space = TuneSpace(name, tunables, {p: consts[p] for p in tunables if p in consts})
        for values in itertools.product(*tunables.values()):
            config = dict(zip(tunables, values))
            try:
                compile_(source_or_path, defines={**(defines or {}), **config}, **{**kw, "kernels": [name]})
                space.admissible.append(config)
            except CompileError as e:
                first = e.diagnostics.errors[0]
                space.rejected.append((config, f"{first.code}: {first.message}"))
        out[name] = space
    if failed is not None and not any(space.admissible for space in out.values()):
        raise failed
    return out
