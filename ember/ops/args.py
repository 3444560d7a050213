"""What an ember.ops call checks before it launches anything: each tensor argument read
as a device view (torch tensors directly; CuPy, ember DeviceArrays and any other object
through the CUDA Array Interface or DLPack), then its device, dtype, rank, shape,
contiguity and alignment, and each scalar's range - with one error per problem naming the
argument, the rule and what was given (ArgumentError). Nothing here touches the GPU.

Inside `with ember.ops.on_simulator():` the ops take numpy arrays instead and run their
kernels in Ember's simulator (the same checks, plans and launches; for tests without a
GPU and for finding races and out-of-bounds accesses in a whole decode step)."""

from __future__ import annotations

import contextlib
import math

from ..records import record

# torch dtypes by their str(), numpy typestrs by their kind+size: Ember's element names
_TORCH_DTYPES = {"torch.float32": "f32", "torch.float16": "f16", "torch.bfloat16": "bf16", "torch.float64": "f64",
                 "torch.int32": "i32", "torch.int64": "i64", "torch.int16": "i16", "torch.int8": "i8",
                 "torch.uint8": "u8", "torch.uint16": "u16", "torch.uint32": "u32", "torch.bool": "bool"}
ITEMSIZE = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "i32": 4, "i64": 8, "i16": 2, "i8": 1, "u8": 1, "u16": 2,
            "u32": 4, "bool": 1}


class ArgumentError(ValueError):
    """An ember.ops argument breaks a rule of the op: nothing was launched."""

    def __init__(self, op: str, argument: str, message: str):
        self.op, self.argument = op, argument
        super().__init__(f"ember.ops.{op}: `{argument}` {message}")


@record
class DeviceView:
    """A device tensor argument as the checks see it (strides in elements)."""

    obj: object
    shape: tuple
    strides: tuple
    dtype: str | None              # Ember's element name; None for a type Ember has not
    ptr: int
    device: int | None             # the CUDA ordinal, when the object says
    readonly: bool = False         # the object says its memory may not be written


def _contiguous_strides(shape) -> tuple:
    strides, step = [], 1
    for d in reversed(shape):
        strides.insert(0, step)
        step *= max(int(d), 1)
    return tuple(strides)


_SIMULATOR = [False]
_SIMULATED_ARCH = ["sm_90"]


def simulating() -> bool:
    return _SIMULATOR[0]


def simulated_arch() -> str:
    """The GPU the simulator stands in for (on_simulator's `arch`): what its kernels are
    compiled for, so their shared memory is held to its limit."""
    return _SIMULATED_ARCH[0]


def compute_capability(device: int) -> tuple:
    """(major, minor) of the GPU an op runs on, by which it chooses its kernels: CUDA
    device `device`'s, or in the simulator the one of the arch it stands in for."""
    if simulating():
        from ..targets import resolve
        sm = resolve(simulated_arch()).sm
        return sm // 10, sm % 10
    from ..runtime import cuda
    return tuple(cuda.context(device).compute_capability)


@contextlib.contextmanager
def on_simulator(arch: str = "sm_90"):
    """ember.ops on numpy arrays, run in the simulator, while the block runs (the plans made
    meanwhile are forgotten after it: their launches are the simulator's). `arch`: the GPU
    it stands in for (an sm_86 gives a block 99 KB of shared memory where an sm_90 gives
    227 KB: the ops choose their kernels as they would on it)."""
    from ..targets import resolve
    from . import plan
    resolve(arch)                                  # an unknown arch: TargetError, before anything
    before = _SIMULATOR[0], _SIMULATED_ARCH[0]
    _SIMULATOR[0], _SIMULATED_ARCH[0] = True, arch
    try:
        yield
    finally:
        _SIMULATOR[0], _SIMULATED_ARCH[0] = before
        plan.clear()


def view(op: str, name: str, obj, written: bool = False) -> DeviceView:
    """`obj` as a DeviceView, or an ArgumentError saying why it is not a device tensor - or,
    `written` (the op writes it), why it may not be written (an export marked read-only:
    the CUDA Array Interface's or DLPack's flag, a numpy array's in the simulator)."""
    v = _view(op, name, obj)
    if written and v.readonly:
        raise ArgumentError(op, name, f"is read-only: {op} writes it (pass a writable tensor)")
    return v


def _view(op: str, name: str, obj) -> DeviceView:
    if _SIMULATOR[0] and type(obj).__module__ == "numpy" and hasattr(obj, "__array_interface__"):
        from ..abi import elem_name_of_dtype
        size = obj.dtype.itemsize
        return DeviceView(obj, tuple(obj.shape), tuple(st // size for st in obj.strides), elem_name_of_dtype(obj.dtype),
                          int(obj.__array_interface__["data"][0]), None, not obj.flags.writeable)
    if type(obj).__module__.split(".")[0] == "torch" and hasattr(obj, "data_ptr"):
        if obj.device.type != "cuda":
            raise ArgumentError(op, name, f"is a torch tensor on `{obj.device}`: move it to a CUDA device "
                                          "(`.cuda()`) - ember.ops runs on GPU memory")
        return DeviceView(obj, tuple(obj.shape), tuple(obj.stride()), _TORCH_DTYPES.get(str(obj.dtype)),
                          int(obj.data_ptr()), obj.device.index)
    try:
        cai = obj.__cuda_array_interface__
    except (AttributeError, TypeError, ValueError, RuntimeError):
        cai = None
    if isinstance(cai, dict):
        from ..abi import elem_name_of_typestr
        shape = tuple(int(d) for d in cai["shape"])
        typestr = cai["typestr"]
        size = int(typestr[2:]) if typestr[2:].isdigit() else 1
        strides = cai.get("strides")
        strides = _contiguous_strides(shape) if strides is None else tuple(int(s) // size for s in strides)
        dtype = elem_name_of_typestr(typestr)
        if typestr[1:] == "V2" and "bfloat16" in str(getattr(obj, "dtype", "")):
            dtype = "bf16"
        return DeviceView(obj, shape, strides, dtype, int(cai["data"][0]), None, bool(cai["data"][1]))
    if hasattr(obj, "__dlpack_device__"):
        kind, ordinal = obj.__dlpack_device__()
        if int(kind) not in (2, 13):          # kDLCUDA, kDLCUDAManaged
            what = "a numpy array" if type(obj).__module__ == "numpy" else f"a {type(obj).__name__}"
            raise ArgumentError(op, name, f"is {what} in host memory (DLPack device type {int(kind)}), not a device "
                                          "tensor: ember.ops runs on GPU memory (torch CUDA tensors, CuPy arrays)")
        from ..abi import elem_name_of_dtype
        from cuda.core.utils import StridedMemoryView
        v = StridedMemoryView.from_any_interface(obj, stream_ptr=-1)
        shape = tuple(int(d) for d in v.shape)
        strides = _contiguous_strides(shape) if v.strides is None else tuple(int(s) for s in v.strides)
        try:
            dtype = elem_name_of_dtype(v.dtype)
        except Exception:       # noqa: BLE001 - a type numpy cannot name
            dtype = None
        return DeviceView(obj, shape, strides, dtype, int(v.ptr), int(ordinal), bool(v.readonly))
    kind = "a numpy array in host memory" if type(obj).__module__ == "numpy" else f"a {type(obj).__name__}"
    raise ArgumentError(op, name, f"is {kind}, not a device tensor: pass a torch CUDA tensor, a CuPy array or "
                                  "any CUDA array with DLPack or __cuda_array_interface__")


def dtype(op: str, name: str, v: DeviceView, allowed: tuple) -> str:
    if v.dtype not in allowed:
        raise ArgumentError(op, name, f"has dtype {v.dtype or 'unknown'}; {op} takes {' or '.join(allowed)}")
    return v.dtype


def same_dtype(op: str, name: str, v: DeviceView, other: str, expected: str) -> None:
    if v.dtype != expected:
        raise ArgumentError(op, name, f"has dtype {v.dtype}, but `{other}` is {expected}: they must match")


def rank(op: str, name: str, v: DeviceView, ranks: tuple, what: str) -> None:
    if len(v.shape) not in ranks:
        raise ArgumentError(op, name, f"has rank {len(v.shape)} (shape {list(v.shape)}); expected {what}")


def shape(op: str, name: str, v: DeviceView, expected: tuple, what: str) -> None:
    if tuple(v.shape) != tuple(expected):
        raise ArgumentError(op, name, f"has shape {list(v.shape)}; expected {list(expected)} ({what})")


def contiguous(op: str, name: str, v: DeviceView) -> None:
    """Row-major and dense: the kernels index rows by their length."""
    if any(d != 1 and s != e for d, s, e in zip(v.shape, v.strides, _contiguous_strides(v.shape))):
        raise ArgumentError(op, name, f"is not contiguous (strides {list(v.strides)} for shape {list(v.shape)}): "
                                      "pass `.contiguous()`")


def token_rows(op: str, name: str, v: DeviceView) -> int:
    """The token stride (in elements) of [batch, tokens, heads, dim] whose heads and dims are
    dense but whose tokens may lie apart (the q, k or v part of one projection's rows)."""
    _, m, heads, d = v.shape
    if (d > 1 and v.strides[3] != 1) or (heads > 1 and v.strides[2] != d):
        raise ArgumentError(op, name, f"has strides {list(v.strides)}: each token's [heads, head_dim] must be dense "
                                      f"(strides [.., .., {d}, 1])")
    stride = v.strides[1] if m > 1 else v.strides[0]
    if v.shape[0] > 1 and v.strides[0] != m * stride:
        raise ArgumentError(op, name, f"has strides {list(v.strides)}: the batch stride must be tokens x the token "
                                      f"stride ({m} x {stride}), one run of token rows")
    if (v.shape[0] * m > 1 and stride < heads * d) or stride > 2 ** 32 - 1:
        raise ArgumentError(op, name, f"has a token stride of {stride} elements; at least {heads * d} (the rows "
                                      "may not overlap) and below 2^32 are needed")
    return stride


def aligned(op: str, name: str, v: DeviceView, nbytes: int) -> None:
    if v.ptr % nbytes:
        raise ArgumentError(op, name, f"starts at 0x{v.ptr:x}, not a multiple of {nbytes} bytes: {op} loads it "
                                      f"in {nbytes}-byte vectors (a view offset into a larger tensor can do this)")


def same_device(op: str, views: dict) -> int | None:
    """The CUDA ordinal the tensors share (None when none says)."""
    known = {n: v.device for n, v in views.items() if v.device is not None}
    ordinals = set(known.values())
    if len(ordinals) > 1:
        listed = ", ".join(f"`{n}` on cuda:{d}" for n, d in known.items())
        raise ArgumentError(op, next(iter(known)), f"and the others are on different GPUs ({listed})")
    return ordinals.pop() if ordinals else None


def no_overlap(op: str, a: str, va: DeviceView, b: str, vb: DeviceView, both_written: bool = False) -> None:
    """Two buffers, one written (or both), may not share memory (the kernels read before they
    write, and two outputs would overwrite each other)."""
    def extent(v):
        n = sum((d - 1) * s for d, s in zip(v.shape, v.strides)) + 1 if all(v.shape) else 0
        return v.ptr, v.ptr + n * ITEMSIZE.get(v.dtype, 1)
    (a0, a1), (b0, b1) = extent(va), extent(vb)
    if a0 < b1 and b0 < a1:
        why = f"{op} writes both" if both_written else f"{op} writes `{b}` while it reads `{a}`"
        raise ArgumentError(op, b, f"overlaps `{a}` in memory: {why}")


def positive_float(op: str, name: str, value) -> float:
    """A number the kernels take as an f32 (eps, RoPE's base): finite and positive there too
    - 1e308 overflows an f32 and 1e-50 becomes 0 in it. Not a string ("1e-5" is not a
    number to a kernel library) and not a bool."""
    import struct
    if isinstance(value, (str, bytes, bool)) or type(value).__name__ in ("bool", "bool_"):      # numpy's too
        raise ArgumentError(op, name, f"must be a number, not {type(value).__name__}")
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise ArgumentError(op, name, f"must be a number, not {type(value).__name__}") from None
    if not (math.isfinite(f) and f > 0.0):
        raise ArgumentError(op, name, f"must be finite and positive, got {value!r}")
    try:
        f32 = struct.unpack("f", struct.pack("f", f))[0]
    except OverflowError:
        f32 = math.inf
    if not (math.isfinite(f32) and f32 > 0.0):
        raise ArgumentError(op, name, f"must be finite and positive as an f32 (the kernels' type: "
                                      f"1.4e-45 to 3.4e38), got {value!r}")
    return f


def flag(op: str, name: str, value) -> bool:
    """A yes / no option (RoPE's neox): a Python or numpy bool. Anything else is refused - the
    string "false" or a list is true to Python, and would choose the other pairing silently."""
    if isinstance(value, bool) or (type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_")):
        return bool(value)
    raise ArgumentError(op, name, f"must be True or False, not {type(value).__name__} {value!r}"[:200])


def int_range(op: str, name: str, value: int, low: int, high: int, why: str) -> int:
    if not low <= value <= high:
        raise ArgumentError(op, name, f"is {value}; it must be in [{low}, {high}] ({why})")
    return value


class _Interface:
    """Device memory as a dense run of `n` elements of `typestr` for the launch (the CUDA
    Array Interface), keeping the object it came from alive."""

    def __init__(self, owner, ptr: int, n: int, typestr: str, writable: bool):
        self.owner = owner
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": typestr, "data": (ptr, not writable),
                                         "strides": None, "version": 3}


def reinterpret(v: DeviceView, typestr: str, itemsize: int, writable: bool = False):
    """The same memory as another element type (Q4_K bytes as the u32 words a kernel loads),
    for the launch."""
    nbytes = math.prod(v.shape) * ITEMSIZE[v.dtype]
    if isinstance(v.obj, _numpy().ndarray):
        return v.obj.reshape(-1).view(typestr)
    return _Interface(v.obj, v.ptr, nbytes // itemsize, typestr, writable)


_TYPESTR = {"f32": "<f4", "f16": "<f2", "bf16": "<u2", "i32": "<i4", "u32": "<u4", "u8": "|u1"}


def span(v: DeviceView, writable: bool = False):
    """A strided view's memory from its first element to its last, as one dense run of its
    elements, for a kernel that takes the strides as arguments (the launch checks buffers
    as dense runs). `writable`: the kernel's parameter is `mut` (see _mut_run)."""
    n = sum((d - 1) * st for d, st in zip(v.shape, v.strides)) + 1 if all(v.shape) else 0
    np = _numpy()
    if isinstance(v.obj, np.ndarray):
        return _mut_run(np.lib.stride_tricks.as_strided(v.obj, shape=(n,), strides=(v.obj.dtype.itemsize,)),
                        writable)
    return _Interface(v.obj, v.ptr, n, _TYPESTR[v.dtype], writable)


def run_of(v: DeviceView, start: int, n: int, writable: bool = False):
    """Elements start .. start + n - 1 of a dense view's memory as one run: a part of each of
    a buffer's rows, for a kernel that takes the rows' stride (q, k and v of one projection).
    `writable`: the kernel's parameter is `mut` (see _mut_run)."""
    np = _numpy()
    if isinstance(v.obj, np.ndarray):
        return _mut_run(v.obj.reshape(-1)[start:start + n], writable)
    return _Interface(v.obj, v.ptr + start * ITEMSIZE[v.dtype], n, _TYPESTR[v.dtype], writable)


def _mut_run(a, writable: bool):
    """A numpy run (the simulator) for a `mut` kernel parameter that the op may not write -
    rope_append's q, k and v are `mut` because q_out may be q. An op checks what it writes
    with view(..., written=True), so a read-only array reaching here is only read: it goes
    as a copy, which the launch's writability check accepts (it refused the array itself,
    where the same call on the GPU ran)."""
    return a.copy() if writable and not a.flags.writeable else a


def _numpy():
    import numpy
    return numpy


def empty_words(like: DeviceView, nwords: int):
    """A new buffer of `nwords` 32-bit words for a kernel's u32 scratch (int32 for torch,
    whose uint32 tensors support few operations; the kernel is handed them as u32)."""
    return empty_like(like, (nwords,), "u32")


# Ember element name -> (torch dtype, numpy dtype) of an allocated output
_ALLOC = {"f32": ("float32", "float32"), "f16": ("float16", "float16"), "bf16": ("bfloat16", None),
          "u32": ("int32", "uint32")}


def empty_like(like: DeviceView, shape: tuple, dtype_name: str):
    """A new device tensor of the same library as `like` (torch or CuPy, else an ember
    DeviceArray) for an output the caller did not give."""
    torch_name, np_name = _ALLOC[dtype_name]
    lib = type(like.obj).__module__.split(".")[0]
    if lib == "torch":
        import torch
        return torch.empty(shape, dtype=getattr(torch, torch_name), device=like.obj.device)
    import numpy as np
    if np_name is None:
        import ml_dtypes
        np_dtype = ml_dtypes.bfloat16
    else:
        np_dtype = np.dtype(np_name)
    if lib == "cupy":
        import cupy
        return cupy.empty(shape, dtype=np_dtype)
    if lib == "numpy" and _SIMULATOR[0]:
        return np.zeros(shape, dtype=np_dtype)
    from ..runtime.cuda import DeviceArray
    return DeviceArray(shape, np_dtype, like.device or 0)
