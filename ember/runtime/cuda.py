"""The GPU: loading Ember programs and launching their kernels with cuda-python
(cuda.bindings.driver). `cuda` is imported only in this package."""

from __future__ import annotations

import ctypes
import threading

import numpy as np

from ..abi import (Buffer, KernelTable, LaunchError, check_buffers, check_launch, elem_name_of_typestr,
                   host_groups, require_contiguous, scalar_bytes)
from .interop import borrow

_lock = threading.Lock()
_context = None


class CudaError(RuntimeError):
    pass


class NoGPUError(CudaError):
    """No CUDA driver or no GPU on this machine."""

    def __init__(self, detail: str):
        super().__init__(f"no NVIDIA GPU is usable here ({detail}). To run kernels without a GPU, "
                         "use the simulator: ember.runtime.load(prog, device=\"sim\") (or `ember run`)")


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


def _init_driver(drv) -> None:
    """cuInit, turning a missing driver library or GPU into NoGPUError."""
    try:
        err, = drv.cuInit(0)[:1]
    except Exception as e:   # cuda-pathfinder: the driver library (libcuda) is not installed
        raise NoGPUError(f"the CUDA driver library could not be loaded: {e}") from None
    if err != drv.CUresult.CUDA_SUCCESS:
        _, name = drv.cuGetErrorName(err)
        raise NoGPUError(f"cuInit failed with {name.decode() if name else err}")
    err, n = drv.cuDeviceGetCount()
    if err != drv.CUresult.CUDA_SUCCESS or n == 0:
        raise NoGPUError("the CUDA driver reports no device")


class Context:
    """The primary context of one GPU, made current for the calling thread."""

    def __init__(self, ordinal: int = 0):
        drv = _driver()
        _init_driver(drv)
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
        _init_driver(_driver())
        return True
    except CudaError:
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

    def copy_to_host(self, out: np.ndarray, offset: int = 0) -> None:
        """Bytes [offset, offset + out.nbytes) of this array into the contiguous `out`."""
        if out.nbytes:
            self.ctx.synchronize()
            _check(_driver().cuMemcpyDtoH(out.ctypes.data, self.ptr + offset, out.nbytes))

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
    """A cubin for this GPU from nvJitLink when available, through the compile cache (the
    driver's PTX JIT otherwise)."""
    major, _ = ctx.compute_capability
    target_sm = int("".join(ch for ch in program.arch[3:] if ch.isdigit()))
    if target_sm > major * 10 + ctx.compute_capability[1]:
        raise CudaError(f"{program.name} was compiled for {program.arch}, but this GPU is {ctx.arch}")
    try:
        from ..build.binaries import cubin
        from ..build.validate import nvjitlink_available
        from ..cache import Cache, disabled_by_environment
        if nvjitlink_available():
            arch = ctx.arch if not program.arch.endswith("a") else program.arch
            return cubin(program.ptx, arch, None if disabled_by_environment() else Cache())[0]
    except Exception:
        pass
    return program.ptx.encode() + b"\0"


class Kernel:
    def __init__(self, module: Module, info):
        self.module = module
        self.info = info
        self.name = info.name
        self.function = _check(_driver().cuModuleGetFunction(module.module, info.name.encode()))
        self.shared_bytes = getattr(info, "dynamic_shared", 0)
        if self.shared_bytes:   # above 48 KB: the kernel opts in to this much dynamic shared memory
            d = _driver()
            _check(d.cuFuncSetAttribute(self.function,
                                        d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        self.shared_bytes))

    def __call__(self, *args, grid, block=None, stream=0, sync: bool = True):
        """Launch. Buffers: DeviceArray, any __cuda_array_interface__ / DLPack CUDA array
        (borrowed), or numpy arrays (copied in, and back out for `*mut` parameters)."""
        launch = self.prepare(*args, grid=grid, block=block)
        launch(stream)
        if launch.staged or sync:
            self.module.ctx.synchronize()
        for host, dev, offset in launch.staged:
            dev.copy_to_host(host, offset)

    def prepare(self, *args, grid, block=None) -> "Launch":
        """Check and pack the arguments once; the result launches with no further checks
        (for hot loops and CUDA graph capture)."""
        info = self.info
        if len(args) != len(info.params):
            raise LaunchError(f"{info.name} takes {len(info.params)} arguments "
                              f"({', '.join(p.name for p in info.params)}), got {len(args)}")
        grid, block = check_launch(info, grid, block)
        bound, staged, keep, host = [None] * len(args), [], [], {}
        for i, (p, a) in enumerate(zip(info.params, args)):
            if p.is_pointer:
                buf = borrow(a)
                if buf is None and isinstance(a, np.ndarray):
                    require_contiguous(info, p, a)
                    host[i] = a
                    continue
                if buf is None:
                    raise LaunchError(f"{info.name}: `{p.name}` needs a device buffer or a numpy array, "
                                      f"got {type(a).__name__}")
                bound[i] = buf
            else:
                bound[i] = scalar_bytes(a, p.type, info.name, p.name)
        # numpy arrays are copied to the GPU; overlapping ones as one allocation holding
        # their union, so the kernel sees them aliased as it sees overlapping device buffers.
        for g in host_groups(host):
            d = DeviceArray((g.nbytes,), np.uint8)
            d.copy_from_host(g.host_view())
            keep.append(d)
            for (pos, off), a in zip(g.members, g.arrays):
                p = info.params[pos]
                bound[pos] = Buffer(d.ptr + off, a.nbytes, elem_name_of_typestr(a.dtype.str),
                                    not a.flags.writeable, True, owner=d)
                if p.type.mut:
                    staged.append((a, d, off))
        bound = list(zip(info.params, bound))
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
        _check(_driver().cuLaunchKernel(self.kernel.function, *self.grid, *self.block, self.kernel.shared_bytes,
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
           "Kernel", "Launch", "load", "load_ptx", "copy_device", "CudaError", "NoGPUError"]
