"""The launch ABI: how arguments are passed to a kernel and checked against its signature
before anything runs, shared by the GPU runtime and the simulator.

Used by every device (the GPU and the simulator) so a launch is validated the same way:
argument count; each buffer's element type, contiguity, alignment and writability;
scalar ranges; no read-only buffer overlapping a written one (read-only pointers are
compiled as `noalias` + invariant loads, so an overlap would read stale data); and the
launch shape against the kernel's declared block size.
"""

from __future__ import annotations

import math
import struct

from .ir.types import PtrType, ScalarType
from .records import record

# numpy dtype string (dtype.str without byte order) -> Ember element type name
_TYPESTR = {"b1": "u8", "i1": "i8", "i2": "i16", "i4": "i32", "i8": "i64", "u1": "u8", "u2": "u16",
            "u4": "u32", "u8": "u64", "f2": "f16", "f4": "f32", "f8": "f64"}
# Ember scalar -> (struct format, byte size) for passing by value
SCALAR_FORMATS = {"i8": "b", "i16": "h", "i32": "i", "i64": "q", "u8": "B", "u16": "H", "u32": "I",
                  "u64": "Q", "f32": "f", "f64": "d", "f16": "e", "bf16": "H"}


class LaunchError(ValueError):
    """A launch that does not fit the kernel's signature (raised before launching)."""


@record
class Buffer:
    """A view of device (or simulator) memory passed for a pointer parameter."""

    ptr: int            # address (or an id in the simulator)
    nbytes: int
    elem: str | None    # element type name, or None when unknown (raw device pointers)
    readonly: bool = False
    contiguous: bool = True
    owner: object = None
    device: int | None = None    # the GPU it lives on, when known


BIG_ENDIAN = " (big-endian)"


@record
class Tensor:
    """What a `tensormap<..>` parameter is made from: a tensor's address, shape and byte
    strides (outermost first) and element type (or None when unknown)."""

    ptr: int
    shape: tuple
    strides: tuple
    elem: str | None
    owner: object = None
    device: int | None = None


def host_tensor(kernel, p, a, where: str) -> tuple:
    """A numpy array given for tensor map p, checked: (its Tensor at address 0, a byte
    buffer holding it with its own strides - padded rows too -, the array as laid there)."""
    import numpy as np
    if not isinstance(a, np.ndarray):
        raise LaunchError(f"{kernel.name}: `{p.name}` ({p.type}) needs {where}, got {type(a).__name__}")
    strides = tuple(int(s) for s in a.strides)
    t = Tensor(0, tuple(a.shape), strides, elem_name_of_dtype(a.dtype))
    check_tensor(kernel, p, t)
    buf = np.zeros(sum((n - 1) * s for n, s in zip(a.shape, strides)) + a.itemsize, np.uint8)
    laid = np.ndarray(a.shape, a.dtype, buffer=buf, strides=strides)
    laid[...] = a
    return t, buf, laid


def check_tensor(kernel, p, t: Tensor) -> None:
    """A tensor TMA can address through `p`'s map (cuTensorMapEncodeTiled's rules), or a
    LaunchError naming the parameter: its rank and element type, a contiguous innermost
    dimension, the other strides multiples of 16 bytes, a 16-byte aligned address."""
    ty = p.type
    where = f"{kernel.name}: `{p.name}` ({ty})"
    if len(t.shape) != ty.rank:
        raise LaunchError(f"{where} needs a {ty.rank}-dimensional tensor, got {len(t.shape)} dimension(s) "
                          f"{tuple(t.shape)}")
    if t.elem is not None and t.elem != ty.elem.name and not (ty.elem.name == "bf16" and t.elem == "u16"):
        raise LaunchError(f"{where} needs a tensor of {ty.elem}, got {t.elem}")
    es = ty.elem.nbytes
    if any(d <= 0 or d >= 1 << 32 for d in t.shape):
        raise LaunchError(f"{where}: every dimension is 1..2^32-1 elements, got {tuple(t.shape)}")
    if t.shape[-1] > 1 and t.strides[-1] != es:
        raise LaunchError(f"{where}: the innermost dimension must be contiguous ({es}-byte stride), got a "
                          f"{t.strides[-1]}-byte stride")
    for d, s in enumerate(t.strides[:-1]):
        if s % 16 or not 0 < s < 1 << 40:
            raise LaunchError(f"{where}: the stride of dimension {d} is {s} bytes; TMA needs a positive multiple "
                              "of 16 (pad the rows)")
    if t.ptr % 16:
        raise LaunchError(f"{where}: the tensor must be 16-byte aligned, got an address {t.ptr:#x}")


def elem_name_of_dtype(dtype) -> str | None:
    """A numpy dtype -> the Ember element type it holds (None for one Ember has not):
    `elem_name_of_typestr` of its typestr, and bf16 for ml_dtypes' bfloat16 (whose
    typestr is a bare `<V2`)."""
    if getattr(dtype, "name", "") == "bfloat16":
        # a byte-swapped one (dtype.newbyteorder(">")) is named big-endian like `>f2`
        return "bf16" + (BIG_ENDIAN if dtype.str[0] == ">" else "")
    return elem_name_of_typestr(dtype.str)


def elem_name_of_typestr(typestr: str) -> str | None:
    """`<f4` / `|u1` -> f32 / u8 (None for unsupported types). A big-endian multi-byte type
    (`>f4`) is named with BIG_ENDIAN appended, which matches no parameter type: the GPU
    and the simulator read memory as little-endian, so such a buffer would be misread."""
    name = _TYPESTR.get(typestr[1:])
    if name is not None and typestr[0] == ">" and typestr[2:] != "1":
        return name + BIG_ENDIAN
    return name


# Per-dimension block limits and the most threads in a block, on every architecture.
BLOCK_LIMITS = (1024, 1024, 64)
MAX_THREADS_PER_BLOCK = 1024
GRID_LIMITS = (2 ** 31 - 1, 65535, 65535)


def check_launch(kernel, grid, block) -> tuple[tuple, tuple]:
    """Normalise grid/block to 3-tuples and check them against the kernel's block size
    and the hardware's limits."""
    grid = _dims(grid, "grid")
    if block is None:
        if kernel.block is None:
            raise LaunchError(f"`{kernel.name}` has no fixed block size: pass block=(x, y, z)")
        block = kernel.block
    block = _dims(block, "block")
    if kernel.block is not None and block != tuple(kernel.block):
        raise LaunchError(f"`{kernel.name}` is compiled for block {tuple(kernel.block)}, not {block}")
    for d, (n, limit) in enumerate(zip(block, BLOCK_LIMITS)):
        if n > limit:
            raise LaunchError(f"block {block}: dimension {'xyz'[d]} is {n}, above the limit of {limit}")
    if block[0] * block[1] * block[2] > MAX_THREADS_PER_BLOCK:
        raise LaunchError(f"block {block} has more than {MAX_THREADS_PER_BLOCK} threads")
    for d, (n, limit) in enumerate(zip(grid, GRID_LIMITS)):
        if n > limit:
            raise LaunchError(f"grid {grid}: dimension {'xyz'[d]} is {n}, above the limit of {limit}")
    cluster = getattr(kernel, "cluster", None)
    if cluster and any(g % c for g, c in zip(grid, cluster)):
        raise LaunchError(f"`{kernel.name}` runs in clusters of {tuple(cluster)} blocks: the grid {grid} must be a "
                          "multiple of that in each dimension")
    return grid, block


def launch_shared_bytes(kernel, args, limit: int | None) -> int:
    """The dynamic shared memory of one launch: the kernel's fixed part, plus a shared
    array sized at launch (`shared row: [f32; cols];`): its parameter's value times its
    element's bytes, checked against `limit` (what a block may use on the device)."""
    total = kernel.dynamic_shared
    if not getattr(kernel, "sized_shared", None):
        return total
    index, elem, name = kernel.sized_shared
    p = kernel.params[index]
    n = int(args[index])
    total += n * elem
    if limit is not None and total > limit:
        raise LaunchError(f"{kernel.name}: `{p.name}` = {n} makes shared array `{name}` {n * elem} bytes "
                          f"({total} bytes of shared memory in all), above the {limit} bytes a block may use "
                          f"on this device")
    return total


def _dims(d, what: str) -> tuple:
    """An int or a sequence of 1 to 3 ints (numpy integers too), as a 3-tuple."""
    import numbers
    if isinstance(d, numbers.Integral) and not isinstance(d, bool):
        d = (d,)
    if isinstance(d, (str, bytes)) or not isinstance(d, (tuple, list)):
        raise LaunchError(f"{what} must be an integer or a tuple of 1 to 3 integers, got {d!r}")
    if not all(isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in d):
        raise LaunchError(f"{what} must hold integers, got {tuple(d)!r}")
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
        # No kernel parameter is a bool (docs/language.md): True for a `u32` count or a float
        # is a mistaken argument, not a 1 to pass on.
        raise LaunchError(f"{kernel}: `{pname}` is `{t}`, got bool {value!r} (kernel parameters are numbers; "
                          f"pass int({value!r}) if 1 or 0 is meant)")
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
        from . import floats
        try:
            x = float(value)
        except OverflowError:
            raise LaunchError(f"{kernel}: `{pname}` is `{t}`, and {floats.describe(value)} overflows it") from None
        if math.isfinite(x):
            rounded = floats.round_float(x, t.name)   # round once, to nearest
            if math.isinf(rounded):
                raise LaunchError(f"{kernel}: `{pname}` is `{t}`, and {value!r} overflows it "
                                  "(pass inf for infinity)")
            x = rounded
        if t.name == "bf16":
            return struct.pack("<H", floats.to_bits(x, "bf16"))
        return struct.pack("<" + SCALAR_FORMATS[t.name], x)
    raise LaunchError(f"{kernel}: `{pname}` has unsupported type {t}")


def require_contiguous(kernel, p, array) -> None:
    """Host arrays are staged by their bytes, so they must be contiguous (C order)."""
    if not array.flags.c_contiguous:
        raise LaunchError(f"{kernel.name}: `{p.name}` needs a contiguous buffer "
                          "(np.ascontiguousarray makes one)")


def check_buffers(kernel, bound: list) -> None:
    """Per-buffer checks and the no-overlap rule. `bound` = [(ParamInfo, Buffer or bytes)]."""
    for p, b in bound:
        if not isinstance(p.type, PtrType):
            continue
        t = p.type
        if b.elem is not None and b.elem.endswith(BIG_ENDIAN):
            raise LaunchError(f"{kernel.name}: `{p.name}` is a big-endian {b.elem[:-len(BIG_ENDIAN)]} array; "
                              f"kernels read memory "
                              f"as little-endian: convert it first (numpy: a.astype(a.dtype.newbyteorder('<')))")
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


@record
class HostGroup:
    """Host arrays whose memory overlaps, staged as one copy of their union so that the
    kernel sees them aliased exactly as it would see overlapping device buffers."""

    lo: int                     # host address of the union's first byte
    nbytes: int
    members: list               # [(argument position, byte offset in the union)]
    arrays: list                # the numpy arrays, in member order

    @property
    def written(self) -> bool:
        return any(a.flags.writeable for a in self.arrays)

    def host_view(self):
        """The union's bytes, as a writable uint8 view of host memory."""
        import ctypes

        import numpy as np
        if not self.nbytes:
            return np.zeros(0, dtype=np.uint8)
        return np.ctypeslib.as_array((ctypes.c_uint8 * self.nbytes).from_address(self.lo))


def host_groups(args: dict) -> list[HostGroup]:
    """Group numpy arrays (argument position -> array) whose bytes overlap; each array on
    its own when it overlaps nothing. Arrays must be contiguous (checked by the caller)."""
    spans = []
    for pos, a in args.items():
        lo = a.__array_interface__["data"][0] if a.nbytes else 0
        spans.append((lo, lo + a.nbytes, pos, a))
    spans.sort(key=lambda s: (s[0], s[2]))
    groups: list[HostGroup] = []
    end = -1
    for lo, hi, pos, a in spans:
        if groups and a.nbytes and lo < end:
            g = groups[-1]
            end = max(end, hi)
            g.nbytes = end - g.lo
            g.members.append((pos, lo - g.lo))
            g.arrays.append(a)
        else:
            groups.append(HostGroup(lo, a.nbytes, [(pos, 0)], [a]))
            end = hi if a.nbytes else -1
    return groups


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
