"""Borrowing device buffers from other libraries without copies: objects exposing
`__cuda_array_interface__` (CuPy, Numba, PyTorch) or DLPack (`__dlpack__`)."""

from __future__ import annotations

import ctypes

from ..abi import Buffer, LaunchError, elem_name_of_typestr

_DL_CUDA, _DL_CUDA_MANAGED = 2, 13
_DL_CODES = {(0, 8): "i8", (0, 16): "i16", (0, 32): "i32", (0, 64): "i64", (1, 8): "u8", (1, 16): "u16",
             (1, 32): "u32", (1, 64): "u64", (2, 16): "f16", (2, 32): "f32", (2, 64): "f64", (4, 16): "bf16",
             (6, 8): "u8"}


def _contiguous(shape, strides, itemsize) -> bool:
    if strides is None:
        return True
    expected = itemsize
    for dim, stride in zip(reversed(shape), reversed(strides)):
        if dim != 1 and stride != expected:
            return False
        expected *= dim
    return True


def from_cuda_array_interface(obj) -> Buffer:
    cai = obj.__cuda_array_interface__
    ptr, readonly = cai["data"]
    shape = tuple(cai["shape"])
    elem = elem_name_of_typestr(cai["typestr"])
    itemsize = int(cai["typestr"][2:])
    n = 1
    for d in shape:
        n *= d
    strides = cai.get("strides")
    return Buffer(int(ptr or 0), n * itemsize, elem, bool(readonly),
                  _contiguous(shape, strides, itemsize), owner=obj)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                             ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor)))]


def from_dlpack(obj) -> Buffer:
    dev_type, _ = obj.__dlpack_device__()
    if dev_type not in (_DL_CUDA, _DL_CUDA_MANAGED):
        raise LaunchError("a DLPack argument must live on a CUDA device")
    capsule = obj.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    managed = ctypes.cast(get(capsule, b"dltensor"), ctypes.POINTER(_DLManagedTensor)).contents
    t = managed.dl_tensor
    shape = tuple(t.shape[i] for i in range(t.ndim))
    itemsize = t.dtype.bits // 8
    strides = None if not t.strides else tuple(t.strides[i] * itemsize for i in range(t.ndim))
    n = 1
    for d in shape:
        n *= d
    elem = _DL_CODES.get((t.dtype.code, t.dtype.bits)) if t.dtype.lanes == 1 else None
    buf = Buffer((t.data or 0) + t.byte_offset, n * itemsize, elem, False, _contiguous(shape, strides, itemsize),
                 owner=(obj, capsule))
    # We only borrow the memory while `obj` is alive; release the DLPack wrapper now.
    rename = ctypes.pythonapi.PyCapsule_SetName
    rename.argtypes = [ctypes.py_object, ctypes.c_char_p]
    rename(capsule, b"used_dltensor")
    if managed.deleter:
        managed.deleter(ctypes.pointer(managed))
    return buf


def borrow(obj) -> Buffer | None:
    """A Buffer for a device array object, or None if it is not one."""
    try:
        has_cai = hasattr(obj, "__cuda_array_interface__")
    except (TypeError, ValueError, RuntimeError):
        has_cai = False     # e.g. a torch bf16 tensor: its interface raises; DLPack carries bf16
    if has_cai:
        return from_cuda_array_interface(obj)
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        try:
            dev_type, _ = obj.__dlpack_device__()
        except Exception:
            return None
        if dev_type in (_DL_CUDA, _DL_CUDA_MANAGED):
            return from_dlpack(obj)
    return None
