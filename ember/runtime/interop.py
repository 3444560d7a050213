"""Borrowing device buffers from other libraries without copies: any object with DLPack
(`__dlpack__`, up to v1.0) or the CUDA Array Interface (v3) - PyTorch, CuPy, Numba, JAX,
cuda.core Buffers - read through cuda.core's StridedMemoryView. An object on the host
(a numpy array) is not borrowed: the launch copies it."""

from __future__ import annotations

from ..abi import Buffer, LaunchError, Tensor, elem_name_of_dtype


def _is_device_array(obj) -> bool:
    """Does `obj` offer device memory? (Asked before viewing it: viewing a host array
    would be a needless export, and a CPU DLPack device is not ours to launch on.)"""
    try:
        if hasattr(obj, "__cuda_array_interface__"):
            return True
    except (TypeError, ValueError, RuntimeError):   # a torch bf16 tensor's interface raises
        pass
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        try:
            kind, _ = obj.__dlpack_device__()
        except Exception:
            return False
        return int(kind) in (2, 3, 13)         # kDLCUDA, kDLCUDAHost (pinned), kDLCUDAManaged
    return False


def borrow(obj) -> Buffer | None:
    """A Buffer for a device array object, or None if it is not one."""
    if not _is_device_array(obj):
        return None
    from cuda.core.utils import StridedMemoryView
    try:
        view = StridedMemoryView.from_any_interface(obj, stream_ptr=-1)   # the launch orders itself
    except Exception as e:
        raise LaunchError(f"cannot borrow a {type(obj).__name__}: {e}") from None
    try:
        dtype = view.dtype
    except Exception:        # a narrow type numpy cannot name (bf16 without ml_dtypes)
        dtype = None
    elem = elem_name_of_dtype(dtype) if dtype is not None else None
    itemsize = dtype.itemsize if dtype is not None else 1
    n = 1
    for d in view.shape:
        n *= d
    return Buffer(int(view.ptr), n * itemsize, elem, bool(view.readonly),
                  _contiguous(view.shape, view.strides), owner=(obj, view), device=_device_of(obj, view))


def tensor(obj, p) -> Tensor | None:
    """The address, shape and byte strides of a device array (for a tensor map), or None
    if it is not one."""
    if not _is_device_array(obj):
        return None
    from cuda.core.utils import StridedMemoryView
    try:
        view = StridedMemoryView.from_any_interface(obj, stream_ptr=-1)
    except Exception as e:
        raise LaunchError(f"cannot borrow a {type(obj).__name__} for `{p.name}`: {e}") from None
    try:
        dtype = view.dtype
    except Exception:
        dtype = None
    elem = elem_name_of_dtype(dtype) if dtype is not None else None
    es = dtype.itemsize if dtype is not None else p.type.elem.nbytes
    shape = tuple(int(d) for d in view.shape)
    if view.strides is None:
        strides, step = [], es
        for d in reversed(shape):
            strides.insert(0, step)
            step *= d
    else:
        strides = [int(s) * es for s in view.strides]
    return Tensor(int(view.ptr), shape, tuple(strides), elem, owner=(obj, view), device=_device_of(obj, view))


def _device_of(obj, view) -> int | None:
    """The GPU `obj` lives on. The view's device comes from the pointer's
    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL where `obj` offers the CUDA Array Interface, which
    said 0 for memory a stream-ordered pool of cuda:1 allocated (two H200s, driver 13.0):
    a runtime DeviceArray (always pool memory) on another GPU than the first was refused
    its own kernels ("lives on cuda:0"), and `ember tune` on several GPUs failed. So the
    object's own word comes first: a DeviceArray's (`__ember_device__`), then DLPack's
    device (torch and CuPy say it; their pools - torch's cudaMallocAsync backend, CuPy's
    MemoryAsyncPool - are stream-ordered too)."""
    own = getattr(obj, "__ember_device__", None)
    if own is not None:
        return own
    try:
        kind, ordinal = obj.__dlpack_device__()
        if int(kind) in (2, 13):               # kDLCUDA, kDLCUDAManaged
            return int(ordinal)
    except Exception:       # noqa: BLE001 - no DLPack, or an object that cannot say
        pass
    return view.device_id if view.device_id >= 0 else None


def _contiguous(shape, strides) -> bool:
    """C order: strides (in elements, or None for C order) that step through memory densely."""
    if strides is None:
        return True
    expected = 1
    for dim, stride in zip(reversed(shape), reversed(strides)):
        if dim != 1 and stride != expected:
            return False
        expected *= dim
    return True
