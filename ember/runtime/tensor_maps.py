"""Tensor maps on the host: the CUtensorMap a `tensormap<T, [box], swizzle(S)>` kernel
parameter receives, encoded by the driver (cuTensorMapEncodeTiled, through cuda-python)
from the tensor the launch is given - a torch / CuPy / any DLPack or CUDA-array-interface
device array, or a numpy array (copied in, with its strides, and back out) - after the
checks of ember.abi.check_tensor, each naming the parameter.

A CUtensorMap is 128 bytes passed by value (a grid constant), which cuda.core's launch
does not pack: a kernel with tensor maps is launched through the driver's cuLaunchKernel
with its argument pointers (`launch_raw`)."""

from __future__ import annotations

import ctypes

import numpy as np

from ..abi import LaunchError, Tensor, check_tensor, host_tensor
from ..records import replace
from .driver_api import check, driver
from .interop import tensor

TENSOR_MAP_BYTES = 128

_DATA_TYPES = {"u8": "UINT8", "i8": "UINT8", "u16": "UINT16", "i16": "UINT16", "u32": "UINT32", "i32": "INT32",
               "u64": "UINT64", "i64": "INT64", "f16": "FLOAT16", "bf16": "BFLOAT16", "f32": "FLOAT32",
               "f64": "FLOAT64"}
_SWIZZLES = {0: "NONE", 32: "32B", 64: "64B", 128: "128B"}


class _Map(ctypes.Structure):
    """The 128 bytes of a CUtensorMap, 64-byte aligned as the driver wants them."""
    _align_ = 64
    _fields_ = [("bytes", ctypes.c_uint8 * TENSOR_MAP_BYTES)]


def encode(ty, t: Tensor) -> _Map:
    """cuTensorMapEncodeTiled for a tensor map type and a checked tensor: dimensions, strides
    and the box innermost first, as the driver numbers them; elements outside the tensor
    read as zeros; L2 promotion of 128 bytes."""
    d = driver()
    rank = ty.rank
    u64, u32 = d.cuuint64_t, d.cuuint32_t
    tmap = check(d.cuTensorMapEncodeTiled(
        getattr(d.CUtensorMapDataType, f"CU_TENSOR_MAP_DATA_TYPE_{_DATA_TYPES[ty.elem.name]}"), rank, t.ptr,
        [u64(int(x)) for x in reversed(t.shape)], [u64(int(x)) for x in reversed(t.strides[:-1])],
        [u32(int(x)) for x in reversed(ty.box)], [u32(1)] * rank,
        d.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        getattr(d.CUtensorMapSwizzle, f"CU_TENSOR_MAP_SWIZZLE_{_SWIZZLES[ty.swizzle]}"),
        d.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
        d.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE))
    out = _Map()
    ctypes.memmove(ctypes.addressof(out), tmap.getPtr(), TENSOR_MAP_BYTES)
    return out


def bind(kernel, p, a, ordinal: int, keep: list, after: list, device_array) -> _Map:
    """The encoded map for argument `a` of parameter p. A numpy array is copied to the GPU
    (a `device_array`: ember.runtime.cuda.DeviceArray) with its strides (its padded rows
    too) and, after the launch, back (`after`)."""
    t = tensor(a, p)
    if t is None:
        t, host, laid = host_tensor(kernel, p, a, "a device tensor or a numpy array")
        dev = device_array((host.nbytes,), np.uint8, ordinal)
        dev.copy_from_host(host)
        keep.append(dev)
        t = replace(t, ptr=dev.ptr)
        if a.flags.writeable:
            after.append(lambda: (dev.copy_to_host(host, 0), a.__setitem__(Ellipsis, laid)))
    elif t.device is not None and t.device != ordinal:
        raise LaunchError(f"{kernel.name}: `{p.name}` lives on cuda:{t.device}, but the kernel is loaded on "
                          f"cuda:{ordinal}")
    check_tensor(kernel, p, t)
    keep.append(t.owner)
    return encode(p.type, t)


def launch_raw(kernel, grid, block, shared: int, stream, values: list) -> None:
    """cuLaunchKernel with a pointer to each argument's bytes (ctypes values and maps)."""
    d = driver()
    func = check(d.cuKernelGetFunction(kernel.function.handle))
    handle = getattr(stream, "handle", None)
    if handle is None and hasattr(stream, "stream"):          # a cuda.core graph builder: its stream
        handle = stream.stream.handle
    args = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
    check(d.cuLaunchKernel(func, *grid, *block, shared, int(handle), ctypes.addressof(args), 0))
