"""The registry of Ember's canonical library functions (ember.ir.passes.expand_math makes
them): one object per name, shared by every module that calls it and never changed, so
the verifier checks it once, when it is made, and the pass manager keeps it from the passes."""

from __future__ import annotations

from .core import Function

_canonical: dict[str, Function] = {}     # library function name -> the canonical object


def is_library_function(f: Function) -> bool:
    """Whether f is the canonical library function of its name."""
    return _canonical.get(f.name) is f


def registered(name: str) -> Function | None:
    return _canonical.get(name)


def register(f: Function) -> Function:
    """f as the canonical function of its name (the one registered first, if any)."""
    return _canonical.setdefault(f.name, f)
