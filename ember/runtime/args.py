"""Checking launch arguments against a kernel's signature, before anything runs.

Used by every device (the GPU and the simulator) so a launch is validated the same way:
argument count; each buffer's element type, contiguity, alignment and writability;
scalar ranges; no read-only buffer overlapping a written one (read-only pointers are
compiled as `noalias` + invariant loads, so an overlap would read stale data); and the
launch shape against the kernel's declared block size.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

from ..ir.types import PtrType, ScalarType

# numpy dtype string (dtype.str without byte order) -> Ember element type name
_TYPESTR = {"b1": "u8", "i1": "i8", "i2": "i16", "i4": "i32", "i8": "i64", "u1": "u8", "u2": "u16",
            "u4": "u32", "u8": "u64", "f2": "f16", "f4": "f32", "f8": "f64"}
# Ember scalar -> (struct format, byte size) for passing by value
SCALAR_FORMATS = {"i8": "b", "i16": "h", "i32": "i", "i64": "q", "u8": "B", "u16": "H", "u32": "I",
                  "u64": "Q", "f32": "f", "f64": "d", "f16": "e", "bf16": "H"}


class LaunchError(ValueError):
    """A launch that does not fit the kernel's signature (raised before launching)."""


@dataclass
class Buffer:
    """A view of device (or simulator) memory passed for a pointer parameter."""

    ptr: int            # address (or an id in the simulator)
    nbytes: int
    elem: str | None    # element type name, or None when unknown (raw device pointers)
    readonly: bool = False
    contiguous: bool = True
    owner: object = None


def elem_name_of_typestr(typestr: str) -> str | None:
    """`<f4` / `|u1` -> f32 / u8 (None for unsupported types)."""
    return _TYPESTR.get(typestr[1:])


def check_launch(kernel, grid, block) -> tuple[tuple, tuple]:
    """Normalise grid/block to 3-tuples and check them against the kernel's block size."""
    grid = _dims(grid, "grid")
    if block is None:
        if kernel.block is None:
            raise LaunchError(f"`{kernel.name}` has no fixed block size: pass block=(x, y, z)")
        block = kernel.block
    block = _dims(block, "block")
    if kernel.block is not None and block != tuple(kernel.block):
        raise LaunchError(f"`{kernel.name}` is compiled for block {tuple(kernel.block)}, not {block}")
    if block[0] * block[1] * block[2] > 1024:
        raise LaunchError(f"block {block} has more than 1024 threads")
    if grid[1] > 65535 or grid[2] > 65535 or grid[0] > 2 ** 31 - 1:
        raise LaunchError(f"grid {grid} exceeds the limits (2^31-1, 65535, 65535)")
    return grid, block


def _dims(d, what: str) -> tuple:
    if isinstance(d, int):
        d = (d,)
    d = tuple(int(x) for x in d)
    if not 1 <= len(d) <= 3 or any(x <= 0 for x in d):
        raise LaunchError(f"{what} must be 1 to 3 positive integers, got {d}")
    return d + (1,) * (3 - len(d))


def scalar_bytes(value, t: ScalarType, kernel: str, pname: str) -> bytes:
    """The bytes of a scalar argument, after checking it fits the parameter's type."""
    import numpy as np
    if isinstance(value, (np.generic,)):
        value = value.item()
    if isinstance(value, bool):
        value = int(value)
    if t.is_int:
        if not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise LaunchError(f"{kernel}: `{pname}` is `{t}`, got {type(value).__name__} {value!r}")
        lo, hi = t.int_range()
        if not lo <= value <= hi:
            raise LaunchError(f"{kernel}: `{pname}` is `{t}`, and {value} is out of range ({lo}..{hi})")
        return struct.pack("<" + SCALAR_FORMATS[t.name], value)
    if t.is_float:
        if not isinstance(value, (int, float)):
            raise LaunchError(f"{kernel}: `{pname}` is `{t}`, got {type(value).__name__}")
        x = float(value)
        if t.name == "bf16":
            from .. import floats
            return struct.pack("<H", floats.to_bits(floats.round_float(x, "bf16"), "bf16"))
        if t.name in ("f32", "f16") and math.isfinite(x):
            from .. import floats
            x = floats.round_float(x, t.name)   # round once, to nearest (struct may raise on overflow)
        return struct.pack("<" + SCALAR_FORMATS[t.name], x)
    raise LaunchError(f"{kernel}: `{pname}` has unsupported type {t}")


def check_buffers(kernel, bound: list) -> None:
    """Per-buffer checks and the no-overlap rule. `bound` = [(ParamInfo, Buffer or bytes)]."""
    for p, b in bound:
        if not isinstance(p.type, PtrType):
            continue
        t = p.type
        if b.elem is not None and b.elem != t.pointee.name and not (
                t.pointee.name == "bf16" and b.elem == "u16"):
            raise LaunchError(f"{kernel.name}: `{p.name}` points to `{t.pointee}`, got a buffer of {b.elem}")
        if not b.contiguous:
            raise LaunchError(f"{kernel.name}: `{p.name}` needs a contiguous buffer")
        if t.mut and b.readonly:
            raise LaunchError(f"{kernel.name}: `{p.name}` is written by the kernel but the buffer is read-only")
        align = t.alignment
        if b.ptr % align:
            raise LaunchError(f"{kernel.name}: `{p.name}` must be {align}-byte aligned (declared "
                              f"`{t}`), got an address {b.ptr:#x}")
    written = [(p, b) for p, b in bound if isinstance(p.type, PtrType) and p.type.mut]
    for p, b in bound:
        if isinstance(p.type, PtrType) and not p.type.mut and b.nbytes:
            for q, c in written:
                if c.nbytes and b.ptr < c.ptr + c.nbytes and c.ptr < b.ptr + b.nbytes:
                    raise LaunchError(
                        f"{kernel.name}: read-only `{p.name}` overlaps `{q.name}`, which the kernel writes; "
                        "read-only parameters must not alias written ones (use one `*mut` parameter "
                        "to work in place)")


class KernelTable:
    """A loaded program's kernels as attributes (`mod.rope(...)`) and items (`mod["rope"]`),
    the same on the GPU and in the simulator. Subclasses set `self.kernels`."""

    kernels: dict

    def __getattr__(self, name):
        kernels = self.__dict__.get("kernels", {})
        if name in kernels:
            return kernels[name]
        raise AttributeError(f"no kernel `{name}`; kernels: {', '.join(kernels)}")

    def __getitem__(self, name):
        return self.kernels[name]
