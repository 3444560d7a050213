"""The GPU: loading Ember programs and launching their kernels with cuda-python
(cuda.bindings.driver). `cuda` is imported only in this package."""

from __future__ import annotations

import ctypes
import threading

import numpy as np

from .args import (Buffer, KernelTable, LaunchError, check_buffers, check_launch, elem_name_of_typestr,
                   scalar_bytes)
from .interop import borrow

_lock = threading.Lock()
_context = None


class CudaError(RuntimeError):
    pass


def _driver():
    try:
        from cuda.bindings import driver
    except ImportError as e:  # pragma: no cover - cuda-python is a dependency
        raise CudaError(f"cuda-python is not installed: {e}") from e
    return driver


def _check(ret):
    drv = _driver()
    err, *rest = ret if isinstance(ret, tuple) else (ret,)
    if err != drv.CUresult.CUDA_SUCCESS:
        _, name = drv.cuGetErrorName(err)
        _, text = drv.cuGetErrorString(err)
        raise CudaError(f"{name.decode() if name else err}: {text.decode() if text else ''}")
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else tuple(rest)


class Context:
    """The primary context of one GPU, made current for the calling thread."""

    def __init__(self, ordinal: int = 0):
        drv = _driver()
        _check(drv.cuInit(0))
        self.device = _check(drv.cuDeviceGet(ordinal))
        self.ctx = _check(drv.cuDevicePrimaryCtxRetain(self.device))
        _check(drv.cuCtxSetCurrent(self.ctx))
        attr = drv.CUdevice_attribute
        major = _check(drv.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.device))
        minor = _check(drv.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.device))
        self.compute_capability = (major, minor)
        self.name = _check(drv.cuDeviceGetName(256, self.device)).split(b"\0")[0].decode()

    @property
    def arch(self) -> str:
        return f"sm_{self.compute_capability[0]}{self.compute_capability[1]}"

    def make_current(self) -> None:
        _check(_driver().cuCtxSetCurrent(self.ctx))

    def synchronize(self) -> None:
        _check(_driver().cuCtxSynchronize())


def context() -> Context:
    global _context
    with _lock:
        if _context is None:
            _context = Context()
        else:
            _context.make_current()
        return _context


def available() -> bool:
    """True when a CUDA driver and at least one GPU are present."""
    try:
        drv = _driver()
        err, = drv.cuInit(0)[:1]
        if err != drv.CUresult.CUDA_SUCCESS:
            return False
        err, n = drv.cuDeviceGetCount()
        return err == drv.CUresult.CUDA_SUCCESS and n > 0
    except Exception:
        return False


class DeviceArray:
    """A contiguous array in GPU memory (also usable by CuPy/PyTorch through
    `__cuda_array_interface__`)."""

    def __init__(self, shape, dtype):
        self.ctx = context()
        self.shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
        self.dtype = np.dtype(dtype)
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        self.ptr = int(_check(_driver().cuMemAlloc(max(self.nbytes, 1))))

    @classmethod
    def from_host(cls, a) -> "DeviceArray":
        a = np.ascontiguousarray(a)
        d = cls(a.shape, a.dtype)
        d.copy_from_host(a)
        return d

    def copy_from_host(self, a) -> None:
        a = np.ascontiguousarray(a, dtype=self.dtype)
        if a.nbytes != self.nbytes:
            raise ValueError(f"size mismatch: {a.nbytes} bytes into a {self.nbytes}-byte array")
        if self.nbytes:
            _check(_driver().cuMemcpyHtoD(self.ptr, a.ctypes.data, self.nbytes))

    def to_host(self) -> np.ndarray:
        out = np.empty(self.shape, dtype=self.dtype)
        if self.nbytes:
            self.ctx.synchronize()
            _check(_driver().cuMemcpyDtoH(out.ctypes.data, self.ptr, self.nbytes))
        return out

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False), "version": 3,
                "strides": None}

    def __del__(self):
        ptr = getattr(self, "ptr", None)
        if ptr:
            try:
                _driver().cuMemFree(ptr)
            except Exception:
                pass
            self.ptr = None


class Event:
    def __init__(self):
        self.ev = _check(_driver().cuEventCreate(0))

    def record(self, stream=0) -> None:
        _check(_driver().cuEventRecord(self.ev, getattr(stream, "handle", stream)))

    def elapsed_ms(self, later: "Event") -> float:
        _check(_driver().cuEventSynchronize(later.ev))
        return float(_check(_driver().cuEventElapsedTime(self.ev, later.ev)))


def copy_device(dst: DeviceArray, src: DeviceArray, stream=0) -> None:
    _check(_driver().cuMemcpyDtoDAsync(dst.ptr, src.ptr, min(dst.nbytes, src.nbytes),
                                       getattr(stream, "handle", stream)))


class Module(KernelTable):
    """A program loaded on the GPU; its kernels are attributes (`mod.rope(...)`)."""

    def __init__(self, program, image: bytes | None = None):
        self.ctx = context()
        self.program = program
        if image is None:
            image = _image_for(program, self.ctx)
        self.module = _check(_driver().cuModuleLoadData(image))
        self.kernels = {name: Kernel(self, info) for name, info in program.kernels.items()}


def _image_for(program, ctx: Context) -> bytes:
    """A cubin for this GPU from nvJitLink when available (the driver's PTX JIT otherwise)."""
    major, _ = ctx.compute_capability
    target_sm = int("".join(ch for ch in program.arch[3:] if ch.isdigit()))
    if target_sm > major * 10 + ctx.compute_capability[1]:
        raise CudaError(f"{program.name} was compiled for {program.arch}, but this GPU is {ctx.arch}")
    try:
        from ..lowering.validate import nvjitlink_available, validate
        if nvjitlink_available():
            return validate(program.ptx, ctx.arch if not program.arch.endswith("a") else program.arch,
                            "nvjitlink").cubin
    except Exception:
        pass
    return program.ptx.encode() + b"\0"


class Kernel:
    def __init__(self, module: Module, info):
        self.module = module
        self.info = info
        self.name = info.name
        self.function = _check(_driver().cuModuleGetFunction(module.module, info.name.encode()))

    def __call__(self, *args, grid, block=None, stream=0, sync: bool = True):
        """Launch. Buffers: DeviceArray, any __cuda_array_interface__ / DLPack CUDA array
        (borrowed), or numpy arrays (copied in, and back out for `*mut` parameters)."""
        launch = self.prepare(*args, grid=grid, block=block)
        launch(stream)
        if launch.staged or sync:
            self.module.ctx.synchronize()
        for host, dev in launch.staged:
            host[...] = dev.to_host().reshape(host.shape)

    def prepare(self, *args, grid, block=None) -> "Launch":
        """Check and pack the arguments once; the result launches with no further checks
        (for hot loops and CUDA graph capture)."""
        info = self.info
        if len(args) != len(info.params):
            raise LaunchError(f"{info.name} takes {len(info.params)} arguments "
                              f"({', '.join(p.name for p in info.params)}), got {len(args)}")
        grid, block = check_launch(info, grid, block)
        bound, staged, keep = [], [], []
        for p, a in zip(info.params, args):
            if p.is_pointer:
                buf = borrow(a)
                if buf is None and isinstance(a, np.ndarray):
                    d = DeviceArray.from_host(a)
                    keep.append(d)
                    buf = Buffer(d.ptr, d.nbytes, elem_name_of_typestr(a.dtype.str), False,
                                 a.flags.c_contiguous, owner=d)
                    if p.type.mut:
                        if not a.flags.writeable:
                            raise LaunchError(f"{info.name}: `{p.name}` is written but the array is read-only")
                        staged.append((a, d))
                elif buf is None:
                    raise LaunchError(f"{info.name}: `{p.name}` needs a device buffer or a numpy array, "
                                      f"got {type(a).__name__}")
                bound.append((p, buf))
            else:
                bound.append((p, scalar_bytes(a, p.type, info.name, p.name)))
        check_buffers(info, bound)
        values = []
        for p, b in bound:
            if isinstance(b, Buffer):
                values.append(ctypes.c_uint64(b.ptr))
            else:
                buf = ctypes.create_string_buffer(b, len(b))
                values.append(buf)
        return Launch(self, grid, block, values, staged, keep)


class Launch:
    """A kernel launch with packed arguments; calling it enqueues the kernel."""

    def __init__(self, kernel: Kernel, grid, block, values, staged, keep):
        self.kernel = kernel
        self.grid, self.block = grid, block
        self.values = values          # keeps the packed argument storage alive
        self.staged = staged
        self.keep = keep
        self.ptrs = (ctypes.c_void_p * max(len(values), 1))(*[ctypes.addressof(v) for v in values])
        self.address = ctypes.addressof(self.ptrs)

    def __call__(self, stream=0) -> None:
        _check(_driver().cuLaunchKernel(self.kernel.function, *self.grid, *self.block, 0,
                                        getattr(stream, "handle", stream), self.address, 0))


class Stream:
    def __init__(self):
        context()
        self.handle = _check(_driver().cuStreamCreate(0))

    def synchronize(self) -> None:
        _check(_driver().cuStreamSynchronize(self.handle))


class Graph:
    """A CUDA graph captured from a stream: `with Graph.capture(stream) as g: ...`, then
    `g.launch(stream)` replays everything enqueued inside the block."""

    def __init__(self, stream: Stream):
        self.stream = stream
        self.exec = None

    @classmethod
    def capture(cls, stream: Stream) -> "Graph":
        return cls(stream)

    def __enter__(self) -> "Graph":
        drv = _driver()
        _check(drv.cuStreamBeginCapture(self.stream.handle,
                                        drv.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL))
        return self

    def __exit__(self, *exc) -> None:
        drv = _driver()
        graph = _check(drv.cuStreamEndCapture(self.stream.handle))
        if exc[0] is None:
            self.exec = _check(drv.cuGraphInstantiate(graph, 0))

    def launch(self) -> None:
        _check(_driver().cuGraphLaunch(self.exec, self.stream.handle))


class _PtxProgram:
    """Hand-written PTX with signatures, loadable like a compiled Program."""

    def __init__(self, name, arch, ptx, kernels):
        self.name, self.arch, self.ptx, self.kernels = name, arch, ptx, kernels


def load_ptx(ptx: str, kernels: dict, arch: str = "sm_80", name: str = "<ptx>") -> Module:
    """Load PTX that Ember did not compile; `kernels` maps entry names to KernelInfo."""
    return Module(_PtxProgram(name, arch, ptx, kernels))


def load(program) -> Module:
    return Module(program)


__all__ = ["Context", "context", "available", "DeviceArray", "Event", "Stream", "Graph", "Module",
           "Kernel", "Launch", "load", "load_ptx", "copy_device", "CudaError"]
