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


def load(program, device="cuda", sass_path: str = "nvjitlink"):
    """Load a compiled program on a device: "cuda" (GPU 0), "cuda:N" or N (GPU N), or "sim"
    (the simulator). Both take the same launch arguments (`grid`, `block`, `stream`,
    `sync`). On a GPU, `sass_path` says how the PTX becomes machine code: "nvjitlink" or
    "driver" (docs/sass_paths.md; a tuned table names the faster one per kernel)."""
    if device == "sim":
        from ..sim import load as sim_load
        return sim_load(program)
    if device == "cuda" or isinstance(device, int) or (isinstance(device, str) and device.startswith("cuda:")):
        from .cuda import Module, device_ordinal
        return Module(program, device=device_ordinal(device), sass_path=sass_path)
    raise ValueError(f"unknown device `{device}` (expected \"cuda\", \"cuda:N\", an ordinal or \"sim\")")


def cuda_available() -> bool:
    from .cuda import available
    return available()


__all__ = ["load", "cuda_available", "LaunchError"]
