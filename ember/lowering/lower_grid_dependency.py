"""Lowering of programmatic dependent launch's two ops (ember.ir.ops.grid_dependency) to
their PTX instructions, as inline PTX with a memory clobber so LLVM moves no load or store
across them."""

from __future__ import annotations

from .lower_mbarrier import inline_ptx
from .registry import lowers


@lowers("gpu.griddep_wait")
def _wait(L, op, args):
    inline_ptx(L, "griddepcontrol.wait;", "", [])
    return []


@lowers("gpu.griddep_launch_dependents")
def _launch_dependents(L, op, args):
    inline_ptx(L, "griddepcontrol.launch_dependents;", "", [])
    return []
