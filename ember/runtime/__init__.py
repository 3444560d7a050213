"""Running compiled kernels.

    prog = ember.compile("kernels_src/rope.ember", defines={"HEAD_DIM": 128})
    mod = ember.runtime.load(prog)                     # device="cuda", or "sim"
    mod.rope(x, positions, 28, 1e6, grid=(7, 1))       # numpy arrays are copied in and out

Arguments are checked against the kernel's signature before the launch (see
ember.abi): buffer element types, alignment, writability, scalar ranges, the
block size, and that read-only buffers do not overlap written ones.
"""

from __future__ import annotations

from ..abi import LaunchError


def load(program, device: str = "cuda"):
    """Load a compiled program on a device: "cuda" (the GPU) or "sim" (the simulator).
    Both take the same launch arguments."""
    if device == "cuda":
        from .cuda import Module
        return Module(program)
    if device == "sim":
        from ..sim import load as sim_load
        return sim_load(program)
    raise ValueError(f"unknown device `{device}` (expected \"cuda\" or \"sim\")")


def cuda_available() -> bool:
    from .cuda import available
    return available()


__all__ = ["load", "cuda_available", "LaunchError"]
