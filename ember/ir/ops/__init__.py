"""The op table: every IR op is declared exactly once, in one of the dialect modules
below, with its verifier, result-type inference, text form and numpy semantics.
Everything else (builder, printer, parser, verifier, folder, simulator, lowering) looks
ops up here by name."""

from __future__ import annotations

from ..core import OpDef

OPS: dict[str, OpDef] = {}


def defop(name: str, format, verify, **kw) -> OpDef:
    assert name not in OPS, f"op {name} declared twice"
    d = OpDef(name=name, format=format, verify=verify, **kw)
    OPS[name] = d
    return d


def get(name: str) -> OpDef:
    return OPS[name]


# Importing the dialects fills OPS.
from . import arith, mathops, mem, gpu, scf, func, vec  # noqa: E402,F401
