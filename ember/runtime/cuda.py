"""The GPU: loading Ember programs and launching their kernels, on cuda.core (cuda-python's
object model: Device, Stream, Event, ObjectCode, Kernel, launch, graph builders, and
StridedMemoryView for DLPack / CUDA Array Interface buffers). `cuda` is imported only in
this package.

Streams. A launch goes on the stream it is given: an Ember `Stream`, a cuda.core `Stream`
or graph builder, any object with the `__cuda_stream__` protocol (a torch or CuPy
stream), or a raw stream handle (an int). Without one, a launch whose buffers include a
torch tensor goes on torch's current stream for that tensor's device, one with a CuPy array
on CuPy's current stream, and any other on the device's default stream.

Blocking. A launch with numpy arrays copies them in and back for `*mut` parameters, so it
waits for the kernel; a launch on device buffers only (DeviceArray, torch, CuPy, ...)
returns at once, as torch's and CuPy's own launches do (`sync=True` waits anyway).

Devices. `load(prog, device=1)` (or "cuda:1") loads on another GPU; every buffer of a
launch must live on the module's device.
"""

from __future__ import annotations

import ctypes
import functools
import math
import threading

import numpy as np

from ..abi import (Buffer, KernelTable, LaunchError, check_buffers, check_launch, elem_name_of_dtype,
                   host_groups, launch_shared_bytes, require_contiguous, scalar_bytes)
from . import tensor_maps
from .driver_api import CudaError, check as _check, driver as _driver
from .interop import borrow

_lock = threading.Lock()
_contexts: dict = {}


class NoGPUError(CudaError):
    """No CUDA driver or no GPU on this machine."""

    def __init__(self, detail: str):
        super().__init__(f"no NVIDIA GPU is usable here ({detail}). To run kernels without a GPU, "
                         "use the simulator: ember.runtime.load(prog, device=\"sim\") (or `ember run`)")


def _core():
    try:
        import cuda.core as core
    except ImportError as e:  # pragma: no cover - cuda-python is a dependency
        raise CudaError(f"cuda-python (cuda.core) is not installed: {e}") from e
    return core


def device_count() -> int:
    """The number of CUDA devices; NoGPUError without a driver library or a device."""
    try:
        drv = _driver()
        err, = drv.cuInit(0)[:1]
    except Exception as e:   # cuda-pathfinder: the driver library (libcuda) is not installed
        raise NoGPUError(f"the CUDA driver library could not be loaded: {e}") from None
    if err != drv.CUresult.CUDA_SUCCESS:
        _, name = drv.cuGetErrorName(err)
        raise NoGPUError(f"cuInit failed with {name.decode() if name else err}")
    err, n = drv.cuDeviceGetCount()
    if err != drv.CUresult.CUDA_SUCCESS or n == 0:
        raise NoGPUError("the CUDA driver reports no device")
    return int(n)


def device_ordinal(device) -> int:
    """0, 1, "cuda", "cuda:1", a cuda.core Device or a torch.device -> the ordinal."""
    if device is None or device == "cuda":
        return 0
    if isinstance(device, str) and device.startswith("cuda:") and device[5:].isdigit():
        return int(device[5:])
    if isinstance(device, bool):
        raise ValueError(f"device must be an ordinal or \"cuda:N\", not {device!r}")
    if isinstance(device, int):
        return device
    for attr in ("device_id", "index"):          # cuda.core.Device, torch.device
        v = getattr(device, attr, None)
        if isinstance(v, int):
            return v
    raise ValueError(f"device must be an ordinal, \"cuda\" or \"cuda:N\", not {device!r}")


class Context:
    """One GPU (its primary context, through cuda.core.Device), made current for the
    calling thread."""

    def __init__(self, ordinal: int = 0):
        n = device_count()
        if not 0 <= ordinal < n:
            raise CudaError(f"no CUDA device {ordinal}: this machine has {n} (0..{n - 1})")
        core = _core()
        self.ordinal = ordinal
        self.device = core.Device(ordinal)
        self.device.set_current()
        self.compute_capability = tuple(self.device.compute_capability)
        self.name = self.device.name

    @property
    def arch(self) -> str:
        return f"sm_{self.compute_capability[0]}{self.compute_capability[1]}"

    @functools.cached_property
    def max_shared_bytes(self) -> int:
        """The most shared memory a block may use once a kernel opts in (227 KB on an H100)."""
        d = _driver()
        dev = _check(d.cuDeviceGet(self.ordinal))
        attr = d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
        return int(_check(d.cuDeviceGetAttribute(attr, dev)))

    @functools.cached_property
    def sm_count(self) -> int:
        """The streaming multiprocessors (132 on an H100 SXM): how many blocks fill the GPU."""
        return sm_count(self.ordinal)

    @functools.cached_property
    def l2_bytes(self) -> int:
        """The L2 cache's size (50 MB on an H100): inputs a benchmark rotates through must
        exceed it, or a time measures L2, not memory."""
        d = _driver()
        dev = _check(d.cuDeviceGet(self.ordinal))
        return int(_check(d.cuDeviceGetAttribute(d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev)))

    def make_current(self) -> None:
        self.device.set_current()

    def synchronize(self) -> None:
        self.device.sync()

    @property
    def default_stream(self):
        return self.device.default_stream


def context(device=0) -> Context:
    """The Context of a device (an ordinal or "cuda:N"), made current."""
    ordinal = device_ordinal(device)
    with _lock:
        ctx = _contexts.get(ordinal)
        if ctx is None:
            ctx = _contexts[ordinal] = Context(ordinal)
        else:
            ctx.make_current()
        return ctx


def sm_count(device=0) -> int:
    """The streaming multiprocessors of a GPU, asked of the driver without making its
    context current (context() does: a worker of `ember tune` measuring on cuda:1 that asked
    cuda:0's count through it went on with cuda:0's context current)."""
    d = _driver()
    dev = _check(d.cuDeviceGet(device_ordinal(device)))
    return int(_check(d.cuDeviceGetAttribute(d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)))


def driver_version() -> str:
    """The CUDA driver's version ("13.0"): its JIT makes the SASS of the "driver" path."""
    v = int(_check(_driver().cuDriverGetVersion()))
    return f"{v // 1000}.{v % 1000 // 10}"


def available() -> bool:
    """True when a CUDA driver and at least one GPU are present."""
    try:
        device_count()
        return True
    except CudaError:
        return False


class DeviceArray:
    """A contiguous array in GPU memory (a cuda.core Buffer), usable by CuPy/PyTorch through
    `__cuda_array_interface__` and DLPack."""

    def __init__(self, shape, dtype, device=0):
        self.ctx = context(device)
        self.shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
        self.dtype = np.dtype(dtype)
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        self.buffer = self.ctx.device.allocate(max(self.nbytes, 1), stream=self.ctx.default_stream)
        self.ptr = int(self.buffer.handle)

    @classmethod
    def from_host(cls, a, device=0) -> "DeviceArray":
        a = np.ascontiguousarray(a)
        d = cls(a.shape, a.dtype, device)
        d.copy_from_host(a)
        return d

    def copy_from_host(self, a) -> None:
        a = np.ascontiguousarray(a, dtype=self.dtype)
        if a.nbytes != self.nbytes:
            raise ValueError(f"size mismatch: {a.nbytes} bytes into a {self.nbytes}-byte array")
        if self.nbytes:
            self.ctx.make_current()
            self.ctx.default_stream.sync()        # the allocation is stream-ordered
            _check(_driver().cuMemcpyHtoD(self.ptr, a.ctypes.data, self.nbytes))

    def to_host(self) -> np.ndarray:
        out = np.empty(self.shape, dtype=self.dtype)
        self.copy_to_host(out)
        return out

    def copy_to_host(self, out: np.ndarray, offset: int = 0) -> None:
        """Bytes [offset, offset + out.nbytes) of this array into the contiguous `out`."""
        if out.nbytes:
            self.ctx.synchronize()
            _check(_driver().cuMemcpyDtoH(out.ctypes.data, self.ptr + offset, out.nbytes))

    @property
    def __ember_device__(self) -> int:
        """The ordinal of the GPU the array lives on (ember.runtime.interop: what the CUDA
        Array Interface's pointer query gets wrong for pool memory)."""
        return self.ctx.ordinal

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False), "version": 3,
                "strides": None, "stream": None}


class Stream:
    """A stream of one device (a cuda.core Stream). While a `Graph` captures it, launches
    given this stream are recorded into the graph."""

    def __init__(self, device=0):
        self.ctx = context(device)
        self.core = self.ctx.device.create_stream()
        self.handle = int(self.core.handle)
        self.capturing = None                 # the graph builder while a Graph captures

    def synchronize(self) -> None:
        self.core.sync()

    def __cuda_stream__(self):
        return (0, self.handle)


def _launch_target(stream, ctx: Context):
    """What cuda.core.launch takes for `stream` (see the module docstring)."""
    core = _core()
    if isinstance(stream, Stream):
        return stream.capturing or stream.core
    if stream is None:
        return ctx.default_stream
    if isinstance(stream, bool):
        raise LaunchError(f"stream must be a stream or a stream handle, not {stream!r}")
    if isinstance(stream, int):
        return core.Stream.from_handle(stream) if stream else ctx.default_stream
    if isinstance(stream, core.Stream) or type(stream).__name__ == "GraphBuilder":
        return stream
    if hasattr(stream, "__cuda_stream__"):          # torch, CuPy: wrapped (the stream stays theirs)
        return ctx.device.create_stream(stream)
    handle = getattr(stream, "cuda_stream", None)      # an older torch stream
    if isinstance(handle, int):
        return core.Stream.from_handle(handle) if handle else ctx.default_stream
    raise LaunchError(f"stream must be an Ember, cuda.core, torch or CuPy stream or a handle, "
                      f"not {type(stream).__name__}")


class Event:
    """A timing event (cuda.core Event)."""

    def __init__(self, device=0):
        core = _core()
        self.ctx = context(device)
        self.ev = self.ctx.device.create_event(core.EventOptions(timing_enabled=True))

    def record(self, stream=None) -> None:
        target = _launch_target(stream, self.ctx)
        if not hasattr(target, "record"):             # a foreign stream object: wrap its handle
            target = _core().Stream.from_handle(_stream_handle(target))
        target.record(self.ev)

    def elapsed_ms(self, later: "Event") -> float:
        later.ev.sync()
        return float(later.ev - self.ev)


def capturing(stream) -> bool:
    """Whether launches given `stream` (any stream a Kernel launch takes) are being recorded
    into a CUDA graph: an ember Stream inside Graph.capture, or a stream its library captures
    (torch.cuda.graph, CuPy's capture) - the driver's cuStreamIsCapturing. The legacy
    default stream (None, 0) is never captured."""
    if isinstance(stream, Stream):
        if stream.capturing is not None:
            return True
        handle = stream.handle
    elif stream is None or isinstance(stream, bool):
        return False
    elif isinstance(stream, int):
        handle = stream
    elif hasattr(stream, "__cuda_stream__"):
        handle = int(stream.__cuda_stream__()[1])
    else:
        handle = getattr(stream, "cuda_stream", None) or getattr(stream, "handle", None)
        handle = int(handle) if isinstance(handle, int) else 0
    if not handle:
        return False
    d = _driver()
    status = _check(d.cuStreamIsCapturing(handle))
    return status != d.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_NONE


def _stream_handle(s) -> int:
    if hasattr(s, "__cuda_stream__"):
        return int(s.__cuda_stream__()[1])
    return int(s.handle)


def copy_device(dst: DeviceArray, src: DeviceArray, stream=None) -> None:
    target = _launch_target(stream, dst.ctx)
    _check(_driver().cuMemcpyDtoDAsync(dst.ptr, src.ptr, min(dst.nbytes, src.nbytes), _stream_handle(target)))


# How PTX becomes SASS when a program is loaded: nvJitLink (relocatable code) or the
# driver's JIT (whole-program code); docs/sass_paths.md says why they differ.
SASS_PATHS = ("nvjitlink", "driver")


class Module(KernelTable):
    """A program loaded on a GPU; its kernels are attributes (`mod.rope(...)`)."""

    def __init__(self, program, image: bytes | None = None, device=0, sass_path: str = "nvjitlink"):
        core = _core()
        self.ctx = context(device)
        self.program = program
        if sass_path not in SASS_PATHS:
            raise ValueError(f"sass_path must be one of {', '.join(SASS_PATHS)}, not {sass_path!r}")
        if image is None:
            image, kind = _image_for(program, self.ctx, sass_path)
        else:
            kind = "cubin"
        self.sass_path = "driver" if kind == "ptx" else sass_path
        if kind == "cubin":
            self.code = core.ObjectCode.from_cubin(image)
        else:      # bytes, NUL-terminated for the driver: cuda.core reads a str as a file's path
            text = image.encode() if isinstance(image, str) else bytes(image)
            self.code = core.ObjectCode.from_ptx(text if text.endswith(b"\0") else text + b"\0")
        self.kernels = {name: Kernel(self, info) for name, info in program.kernels.items()}


def _image_for(program, ctx: Context, sass_path: str = "nvjitlink") -> tuple:
    """What the GPU loads: through "nvjitlink" a cubin for this GPU from nvJitLink (the PTX
    compiled as relocatable code), through the compile cache; through "driver" the PTX,
    which the driver's JIT compiles as a whole program - the other SASS, faster for some
    kernels and slower for others (docs/sass_paths.md; `ember tune` measures both and its
    tables say which). Without nvJitLink the driver's JIT is used. (bytes or text, "cubin"
    or "ptx")."""
    major, minor = ctx.compute_capability
    target_sm = int("".join(ch for ch in program.arch[3:] if ch.isdigit()))
    if target_sm > major * 10 + minor:
        raise CudaError(f"{program.name} was compiled for {program.arch}, but this GPU is {ctx.arch}")
    if sass_path == "driver":
        return program.ptx, "ptx"
    try:
        from ..artifacts.binaries import cubin
        from ..artifacts.validate import nvjitlink_available
        from ..cache import Cache, disabled_by_environment
        if nvjitlink_available():
            arch = ctx.arch if not program.arch.endswith("a") else program.arch
            return cubin(program.ptx, arch, None if disabled_by_environment() else Cache())[0], "cubin"
    except Exception:
        pass
    return program.ptx, "ptx"


class Kernel:
    def __init__(self, module: Module, info):
        self.module = module
        self.info = info
        self.name = info.name
        self.function = module.code.get_kernel(info.name)
        self.shared_bytes = getattr(info, "dynamic_shared", 0)
        # above 48 KB the kernel opts in to its dynamic shared memory; a kernel with a shared
        # array sized at launch, to all the device allows (each launch checks its own size)
        opt_in = module.ctx.max_shared_bytes if getattr(info, "sized_shared", None) else self.shared_bytes
        if opt_in:
            d = _driver()
            attr = d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            _check(d.cuKernelSetAttribute(attr, opt_in, self.function.handle, module.ctx.ordinal))
        if math.prod(getattr(info, "cluster", None) or (1,)) > 8:
            # a cluster past the portable 8 blocks (up to 16 on an H100 or H200) runs only
            # where the kernel opts in
            d = _driver()
            attr = d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
            _check(d.cuKernelSetAttribute(attr, 1, self.function.handle, module.ctx.ordinal))

    def max_active_clusters(self, grid, block=None) -> int:
        """How many of this kernel's thread-block clusters (its `cluster(...)` dimensions) the
        GPU holds at once for a launch of `grid` (cuOccupancyMaxActiveClusters): 0 where one
        cluster cannot be scheduled at all - a size past what the GPU allows (the non-portable
        16 blocks, which the H100 and H200 take), or its blocks' shared memory past what a GPC
        holds - so that a caller can take another kernel instead of a failing launch."""
        if getattr(self.info, "sized_shared", None):
            raise LaunchError(f"{self.name}: max_active_clusters takes kernels without shared arrays sized at launch")
        grid, block = check_launch(self.info, grid, block)
        config = _launch_config(_core(), grid, block, self.shared_bytes, False)
        try:
            return int(self.function.occupancy.max_active_clusters(config,
                                                                   stream=self.module.ctx.device.default_stream))
        except (TypeError, AttributeError, ValueError):
            raise                    # a call cuda.core does not take: a bug here, not the GPU's answer
        except Exception:            # noqa: BLE001 - the driver's error (cuda.core's CUDAError, not
            return 0                 # exported): it refuses the size, none can run

    def __call__(self, *args, grid, block=None, stream=None, sync: bool | None = None):
        """Launch. Buffers: DeviceArray, any DLPack / __cuda_array_interface__ CUDA array
        (borrowed), or numpy arrays (copied in, and back out for `*mut` parameters). `stream`:
        see the module docstring; `sync`: wait for the kernel (default: only when numpy
        arrays are copied back)."""
        launch = self.prepare(*args, grid=grid, block=block)
        if stream is None:
            stream = caller_stream(args)
        launch(stream)
        if launch.staged or launch.after or sync:
            self.module.ctx.synchronize()
        for host, dev, offset in launch.staged:
            dev.copy_to_host(host, offset)
        for step in launch.after:          # numpy arrays given for tensor maps
            step()

    def prepare(self, *args, grid, block=None) -> "Launch":
        """Check and pack the arguments once; the result launches with no further checks
        (for hot loops and CUDA graph capture)."""
        info = self.info
        if len(args) != len(info.params):
            raise LaunchError(f"{info.name} takes {len(info.params)} arguments "
                              f"({', '.join(p.name for p in info.params)}), got {len(args)}")
        grid, block = check_launch(info, grid, block)
        bound, staged, keep, host, after, maps = [None] * len(args), [], [], {}, [], {}
        ordinal = self.module.ctx.ordinal
        for i, (p, a) in enumerate(zip(info.params, args)):
            if p.type.is_tensormap:
                maps[i] = tensor_maps.bind(info, p, a, ordinal, keep, after, DeviceArray)
            elif p.is_pointer:
                buf = borrow(a)
                if buf is None and isinstance(a, np.ndarray):
                    require_contiguous(info, p, a)
                    host[i] = a
                    continue
                if buf is None:
                    raise LaunchError(f"{info.name}: `{p.name}` needs a device buffer or a numpy array, "
                                      f"got {type(a).__name__}")
                if buf.device is not None and buf.device != ordinal:
                    raise LaunchError(f"{info.name}: `{p.name}` lives on cuda:{buf.device}, but the kernel is "
                                      f"loaded on cuda:{ordinal} (ember.runtime.load(prog, device={buf.device}))")
                bound[i] = buf
            else:
                bound[i] = scalar_bytes(a, p.type, info.name, p.name)
        # numpy arrays are copied to the GPU; overlapping ones as one allocation holding
        # their union, so the kernel sees them aliased as it sees overlapping device buffers.
        for g in host_groups(host):
            d = DeviceArray((g.nbytes,), np.uint8, ordinal)
            d.copy_from_host(g.host_view())
            keep.append(d)
            for (pos, off), a in zip(g.members, g.arrays):
                p = info.params[pos]
                bound[pos] = Buffer(d.ptr + off, a.nbytes, elem_name_of_dtype(a.dtype),
                                    not a.flags.writeable, True, owner=d)
                if p.type.mut:
                    staged.append((a, d, off))
        bound = list(zip(info.params, bound))
        check_buffers(info, bound)
        values = [maps[i] if i in maps else ctypes.c_uint64(b.ptr) if isinstance(b, Buffer) else _scalar_value(b)
                  for i, (_, b) in enumerate(bound)]
        shared = launch_shared_bytes(info, args, self.module.ctx.max_shared_bytes)
        return Launch(self, grid, block, values, staged, keep, shared, after, raw=bool(maps))


_BY_SIZE = {1: ctypes.c_uint8, 2: ctypes.c_uint16, 4: ctypes.c_uint32, 8: ctypes.c_uint64}


def _scalar_value(raw: bytes):
    """A scalar's bytes (little-endian, as abi.scalar_bytes packs them) as the ctypes value of
    the same size, which cuda.core passes bit for bit."""
    return _BY_SIZE[len(raw)].from_buffer_copy(raw)


def caller_stream(args):
    """The stream the caller's library would run on: torch's current stream for the device of
    the first torch tensor among the arguments, else CuPy's current stream when a CuPy array
    is among them (a handle: 0 is the device's default stream), else None."""
    for a in args:
        mod = type(a).__module__
        if mod.startswith("torch") and getattr(a, "is_cuda", False):
            import torch
            return torch.cuda.current_stream(a.device)
        if mod.startswith("cupy"):
            import cupy
            with cupy.cuda.Device(a.device.id):
                return int(cupy.cuda.get_current_stream().ptr)
    return None


def _launch_config(core, grid, block, shared_bytes: int, programmatic: bool):
    """The launch's configuration. A kernel proven to wait for the kernel before it on the
    stream before it touches global memory (KernelInfo.programmatic: griddep_wait, sm_90)
    is a programmatic dependent launch: it may start while that kernel finishes, and on a
    stream being captured the graph keeps the same programmatic edge. (A cuda.core too old
    to have the option launches it plainly, where its wait returns at once.)"""
    if programmatic:
        try:
            return core.LaunchConfig(grid=grid, block=block, shmem_size=shared_bytes,
                                     programmatic_stream_serialization=True)
        except TypeError:
            pass
    return core.LaunchConfig(grid=grid, block=block, shmem_size=shared_bytes)


class Launch:
    """A kernel launch with packed arguments; calling it enqueues the kernel (as a
    programmatic dependent launch where the kernel's info allows: `_launch_config`)."""

    def __init__(self, kernel: Kernel, grid, block, values, staged, keep, shared_bytes: int, after=(),
                 raw: bool = False):
        core = _core()
        self.kernel = kernel
        self.grid, self.block = grid, block
        self.values = values          # keeps the packed argument storage alive
        self.staged = staged
        self.keep = keep
        self.after = list(after)
        self.shared_bytes = shared_bytes
        self.raw = raw                # tensor maps: launched through the driver (ember.runtime.tensor_maps)
        # (a launch with tensor maps goes through the driver's plain cuLaunchKernel)
        self.programmatic = (kernel.info.programmatic and kernel.module.ctx.compute_capability >= (9, 0)
                             and not raw)
        self.config = _launch_config(core, grid, block, shared_bytes, self.programmatic)
        self._launch = core.launch

    def __call__(self, stream=None) -> None:
        target = _launch_target(stream, self.kernel.module.ctx)
        if self.raw:
            tensor_maps.launch_raw(self.kernel, self.grid, self.block, self.shared_bytes, target, self.values)
            return
        self._launch(target, self.config, self.kernel.function, *self.values)


class Graph:
    """A CUDA graph (a cuda.core graph builder) of what is launched on a Stream inside
    `with Graph.capture(stream) as g: ...`; `g.launch()` replays it on that stream."""

    def __init__(self, stream: Stream):
        if not isinstance(stream, Stream):
            raise TypeError("Graph.capture takes an ember.runtime.cuda.Stream")
        self.stream = stream
        self.graph = None
        self._builder = None

    @classmethod
    def capture(cls, stream: Stream) -> "Graph":
        return cls(stream)

    def __enter__(self) -> "Graph":
        self._builder = self.stream.core.create_graph_builder().begin_building("thread_local")
        self.stream.capturing = self._builder
        return self

    def __exit__(self, *exc) -> None:
        self.stream.capturing = None
        builder = self._builder.end_building()
        if exc[0] is None:
            self.graph = builder.complete()

    def launch(self) -> None:
        """Replay the captured work on the stream it was captured from."""
        self.graph.launch(self.stream.core)


class _PtxProgram:
    """Hand-written PTX with signatures, loadable like a compiled Program."""

    def __init__(self, name, arch, ptx, kernels):
        self.name, self.arch, self.ptx, self.kernels = name, arch, ptx, kernels


def load_ptx(ptx: str, kernels: dict, arch: str = "sm_80", name: str = "<ptx>", device=0) -> Module:
    """Load PTX that Ember did not compile; `kernels` maps entry names to KernelInfo."""
    return Module(_PtxProgram(name, arch, ptx, kernels), device=device)


def load(program, device=0, sass_path: str = "nvjitlink") -> Module:
    """Load a compiled program on a GPU (an ordinal or "cuda:N"), its SASS made through
    `sass_path` ("nvjitlink", the default, or "driver"; see docs/sass_paths.md)."""
    return Module(program, device=device, sass_path=sass_path)


__all__ = ["Context", "context", "available", "device_count", "sm_count", "DeviceArray", "Event", "Stream", "Graph",
           "Module", "Kernel", "Launch", "load", "load_ptx", "copy_device", "CudaError", "NoGPUError", "SASS_PATHS",
           "driver_version"]
