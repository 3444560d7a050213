"""The pass manager. A pass is a named function `run(module)` that rewrites the IR in
place and returns the set of functions it changed (or True/False); `-O` levels are lists
of pass names; the verifier runs after every pass on what it changed."""

from __future__ import annotations

import time
from typing import Callable

from ...records import record
from ..core import Module
from ..library import is_library_function
from ..verifier import VerifyError, verify_module


@record(frozen=True)
class Pass:
    name: str
    run: Callable[[Module], object]   # rewrites in place; returns the functions it changed (or a bool)
    doc: str


PASSES: dict[str, Pass] = {}


def register(name: str, doc: str):
    def deco(fn):
        PASSES[name] = Pass(name, fn, doc)
        return fn
    return deco


# The accurate math ops stay whole through the pipelines (folded, merged and hoisted as
# ops); the lowering emits Ember's implementation of each (expand-math does the same in
# the IR, for a pass list that asks for it).
PIPELINES: dict[int, list[str]] = {
    0: [],
    1: ["inline", "canonicalize", "cse", "dce"],
    2: ["inline", "canonicalize", "licm", "unroll", "canonicalize", "cse", "dce"],
    3: ["inline", "canonicalize", "licm", "unroll", "canonicalize", "cse", "vectorize", "dce"],
}


class PassFailed(Exception):
    def __init__(self, pass_name: str, error: VerifyError):
        self.pass_name = pass_name
        self.error = error
        super().__init__(f"IR after pass '{pass_name}' does not verify:\n{error}")


def run_passes(module: Module, names: list[str], *, verify: bool = True,
               after: Callable[[str, Module], None] | None = None,
               timings: dict | None = None) -> None:
    for name in names:
        p = PASSES.get(name)
        if p is None:
            raise KeyError(f"unknown pass `{name}`; passes: {', '.join(sorted(PASSES))}")
        t0 = time.perf_counter()
        held = _hold_library(module)
        changed = p.run(module)
        if held is not None or any(f.attrs.get("library") for f in module.functions):
            _restore_library(module, held or [])
        if timings is not None:
            timings[f"pass:{name}"] = timings.get(f"pass:{name}", 0.0) + time.perf_counter() - t0
        if verify and changed:   # an unchanged module (or function) was verified already
            t0 = time.perf_counter()
            try:
                verify_module(module, changed if isinstance(changed, set) else None)
            except VerifyError as e:
                raise PassFailed(name, e) from e
            if timings is not None:
                timings["verify"] = timings.get("verify", 0.0) + time.perf_counter() - t0
        if after is not None:
            after(name, module)


def _hold_library(module: Module) -> list | None:
    """Take the canonical library functions (expand-math adds them; every module shares
    them) out of the module, so that no pass changes them; None if there are none."""
    held = [f for f in module.functions if is_library_function(f)]
    if not held:
        return None
    module.functions = [f for f in module.functions if not is_library_function(f)]
    return held


def _restore_library(module: Module, held: list) -> None:
    """Put back the library functions the module's own functions still call (and those they
    call), after the others, by name."""
    library = {f.name: f for f in held}
    library.update((f.name, f) for f in module.functions if is_library_function(f))
    own = [f for f in module.functions if not is_library_function(f)]
    called: dict = {}
    pending = own
    while pending:
        names = {op.attrs["callee"] for f in pending for op in f.walk() if op.name == "func.call"}
        pending = [library[n] for n in sorted(names) if n in library and n not in called]
        called.update((f.name, f) for f in pending)
    module.functions = own + [called[n] for n in sorted(called)]


# Importing the pass modules registers them.
from . import canonicalize, cse, dce, expand_math, inline, licm, unroll, vectorize  # noqa: E402,F401
