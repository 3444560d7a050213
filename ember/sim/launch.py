"""Launching a kernel in the simulator, with the same calling convention as the GPU:

    mod = ember.sim.load(prog)            # or ember.runtime.load(prog, device="sim")
    mod.rope(x, positions, 28, 1e6, grid=(7, 1))

Buffers are numpy arrays (copied in, and back out for `*mut` parameters); arguments go
through the same checks as a GPU launch. Blocks run in batches: all threads of a batch
are lanes of one interpreter, in lockstep.
"""

from __future__ import annotations

import numpy as np

from ..ir import semantics as S
from ..ir.core import Function, Module
from ..abi import (Buffer, KernelTable, LaunchError, check_buffers, check_launch, elem_name_of_dtype, host_groups,
                  host_tensor, launch_shared_bytes, require_contiguous, scalar_bytes)
from .errors import SimError
from ..ir.interp import Interpreter
from .cluster import exits
from .machine import SimMachine
from .memory import Memory, Ptr
from .tensor_copy import SimTensorMap

DEFAULT_MAX_LANES = 1 << 15
DEFAULT_STEP_LIMIT = 1_000_000
# Host memory the simulator may use for per-thread and shared arrays of one batch of
# blocks; batches shrink to fit, and a kernel whose single block does not fit is refused.
MEMORY_BUDGET = 2 << 30
# Bytes of host memory per byte of a shared array: the data, its initialization bit and
# the race-tracking state (writer, reader, their epochs and release counts, and a flag).
SHARED_COST = 1 + 1 + 6 * 8 + 1


class SimKernel:
    def __init__(self, module: Module, fn: Function, info, arch: str | None = None):
        from ..targets import resolve
        self.module = module
        self.fn = fn
        self.info = info
        self.name = info.name
        # what a block may use on the program's target (a bare IR module: no limit)
        self.shared_limit = resolve(arch).max_shared_bytes if arch else None
        names = {op.name for f in module.functions for op in f.walk()}
        # ordinary shared writes need tracking: the copy engine and the tensor cores read through the async proxy
        self.bulk_stores = bool(names & {"mem.cp_async_bulk_store", "mem.tma_store", "gpu.wgmma", "gpu.wgmma_rs"})
        self.tma_stores = "mem.tma_store" in names

    def __call__(self, *args, grid, block=None, stream=None, sync: bool | None = None,
                 step_limit: int = DEFAULT_STEP_LIMIT, check_races: bool = True, max_lanes: int = DEFAULT_MAX_LANES):
        """Run the kernel: the same arguments as a GPU launch. `stream` and `sync` are
        accepted for one calling convention and change nothing: the simulator runs the
        kernel to its end before returning."""
        info = self.info
        if len(args) != len(info.params):
            raise LaunchError(f"{info.name} takes {len(info.params)} arguments "
                              f"({', '.join(p.name for p in info.params)}), got {len(args)}")
        grid, block = check_launch(info, grid, block)
        host, scalars, maps = {}, {}, {}
        for i, (p, a) in enumerate(zip(info.params, args)):
            if p.type.is_tensormap:
                maps[i] = sim_tensor_map(info, p, a)
            elif p.is_pointer:
                if not isinstance(a, np.ndarray):
                    raise LaunchError(f"{info.name}: `{p.name}` needs a numpy array in the simulator, "
                                      f"got {type(a).__name__}")
                require_contiguous(info, p, a)
                host[i] = a
            else:
                scalars[i] = scalar_bytes(a, p.type, info.name, p.name)
        # Overlapping arrays become one simulated allocation (their union), so the kernel
        # sees them aliased as it would see overlapping device buffers; each allocation
        # starts 256-byte aligned, like a device allocation.
        groups = host_groups(host)
        memories, bound = {}, {}
        for gi, g in enumerate(groups):
            names = [info.params[pos].name for pos, _ in g.members]
            written = any(info.params[pos].type.mut for pos, _ in g.members)
            # Read-only buffers cannot take part in a race (nothing writes them during the
            # kernel: launches refuse overlaps), so only written ones are tracked.
            union = Memory(names[0], "global", 1, g.nbytes, g.host_view().copy().reshape(1, -1), track=written)
            for (pos, off), a in zip(g.members, g.arrays):
                p = info.params[pos]
                mem = union.view(p.name, off, a.nbytes, p.type.pointee)
                mem.aliases = [n for n in dict.fromkeys(names) if n != p.name]
                memories[pos] = mem
                bound[pos] = Buffer((gi + 1) << 40 | off, a.nbytes, elem_name_of_dtype(a.dtype),
                                    not a.flags.writeable, True, owner=a)
        check_buffers(info, [(p, bound.get(i, scalars.get(i))) for i, p in enumerate(info.params)])
        values = []
        for i, p in enumerate(info.params):
            if i in memories:
                values.append(memories[i])
            elif i in maps:
                values.append(maps[i])
            else:
                t = p.type
                b = scalars[i]
                bits = np.frombuffer(b, dtype=S.bits_dtype(t) if t.is_float or t.bits < 8 else S.dtype(t))[0]
                scalars[i] = S.from_bits(np.array([bits], dtype=np.uint64), t)[0] if t.is_float else \
                    np.array([bits]).astype(S.dtype(t))[0]
                values.append(None)
        tables = {g.name: Memory(g.name, "const", 1, len(g.values) * g.elem.nbytes,
                                 _table_bytes(g), track=False, elem=g.elem) for g in self.module.globals}
        T = block[0] * block[1] * block[2]
        nblocks = grid[0] * grid[1] * grid[2]
        local, shared = footprint(self.module, self.fn)
        # a shared array sized at launch: checked as the GPU's launch checks it
        shared += launch_shared_bytes(info, args, self.shared_limit) - info.dynamic_shared
        per_block = T * local + SHARED_COST * shared
        if per_block > MEMORY_BUDGET:
            raise SimError("S0008", f"simulating one block of `{info.name}` needs {per_block / 2**30:.1f} GiB of "
                           f"host memory ({local} bytes of per-thread arrays x {T} threads, {shared} bytes of "
                           f"shared arrays); the simulator's limit is {MEMORY_BUDGET >> 30} GiB",
                           None, notes=["simulate with fewer threads per block, or smaller arrays"])
        per_batch = max(1, min(nblocks, max_lanes // T, MEMORY_BUDGET // max(per_block, 1)))
        cluster = tuple(info.cluster) if getattr(info, "cluster", None) else None
        if cluster:        # whole clusters per batch: along x they are consecutive blocks
            size = cluster[0] * cluster[1] * cluster[2]
            per_batch = max(size, per_batch // size * size) if cluster[1:] == (1, 1) else nblocks
            if per_batch * per_block > MEMORY_BUDGET:
                raise SimError("S0008", f"simulating `{info.name}` needs {per_batch} blocks at once (whole clusters "
                               f"of {cluster}: {per_batch * per_block / 2**30:.1f} GiB); the simulator's limit is "
                               f"{MEMORY_BUDGET >> 30} GiB", None,
                               notes=["clusters along x alone are simulated a few at a time; smaller grids or "
                                      "blocks fit"])
        for start in range(0, nblocks, per_batch):
            ids = np.arange(start, min(start + per_batch, nblocks))
            machine = SimMachine(grid, block, ids, tables, check_races, cluster)
            machine.proxy = self.bulk_stores
            machine.programmatic = bool(getattr(info, "programmatic", False))
            lanes = machine.lanes
            lane_args = []
            for i, (p, v) in enumerate(zip(info.params, values)):
                if isinstance(v, Memory):
                    lane_args.append(Ptr.to(v, lanes, p.type.pointee))
                elif isinstance(v, SimTensorMap):
                    lane_args.append(np.full(lanes, v, dtype=object))
                else:
                    lane_args.append(np.full(lanes, scalars[i], dtype=S.dtype(p.type)))
            Interpreter(self.module, lanes, machine, step_limit).call(self.fn, lane_args)
            if cluster:
                exits(machine)
        for g in groups:
            view = g.host_view()
            for (pos, off), a in zip(g.members, g.arrays):
                if info.params[pos].type.mut:
                    view[off:off + a.nbytes] = memories[pos].data.reshape(-1)
        for i, m in maps.items():         # what TMA stores wrote
            if self.tma_stores and args[i].flags.writeable:
                args[i][...] = _strided(m.mem, args[i])


def sim_tensor_map(info, p, a) -> SimTensorMap:
    """The simulator's tensor map for parameter p: a numpy array, checked as a GPU launch
    checks a tensor (its layout is the array's, its bytes a contiguous copy)."""
    t, buf, _ = host_tensor(info, p, a, "a numpy array in the simulator")
    mem = Memory(p.name, "global", 1, buf.nbytes, buf.reshape(1, -1), track=False, elem=p.type.elem)
    return SimTensorMap(mem, t.shape, t.strides, p.type)


def _strided(mem: Memory, a: np.ndarray) -> np.ndarray:
    """The array as laid out in the tensor map's memory."""
    return np.ndarray(a.shape, a.dtype, buffer=mem.data.reshape(-1), strides=a.strides)


def footprint(module: Module, fn: Function) -> tuple[int, int]:
    """Bytes of per-thread arrays (per thread) and of shared arrays (per block) the kernel
    may hold at once: every allocation it and the functions it calls make (once per call)."""
    seen: dict[str, tuple[int, int]] = {}

    def of(f: Function) -> tuple[int, int]:
        if f.name in seen:
            return seen[f.name]
        seen[f.name] = (0, 0)        # recursion is rejected by the checker; be safe anyway
        local = shared = 0
        for op in f.walk():
            if op.name in ("mem.alloca", "mem.shared"):
                n = op.attrs["length"] * op.results[0].type.pointee.nbytes
                if op.name == "mem.alloca":
                    local += n
                else:
                    shared += n
            elif op.name == "func.call":
                callee = module.get(op.attrs["callee"])
                if callee is not None:
                    cl, cs = of(callee)
                    local, shared = local + cl, shared + cs
        seen[f.name] = (local, shared)
        return local, shared

    return of(fn)


def _table_bytes(g) -> np.ndarray:
    if g.elem.is_float:
        vals = S.from_bits(np.array(g.values, dtype=np.uint64), g.elem)
        return np.ascontiguousarray(vals.astype(S.dtype(g.elem))).view(np.uint8).reshape(1, -1).copy()
    return np.array(g.values, dtype=S.dtype(g.elem)).view(np.uint8).reshape(1, -1).copy()


class SimModule(KernelTable):
    """A compiled program (or a bare IR module) loaded in the simulator."""

    def __init__(self, program=None, module: Module | None = None, kernels: dict | None = None):
        self.program = program
        self.module = module if module is not None else program.ir
        infos = kernels if kernels is not None else program.kernels
        arch = getattr(program, "arch", None)
        self.kernels = {name: SimKernel(self.module, self.module.get(name), info, arch)
                        for name, info in infos.items()}


def load(program) -> SimModule:
    return SimModule(program)


def load_module(module: Module, kernels: dict) -> SimModule:
    """Simulate a bare IR module (e.g. before or after some pass); `kernels` maps kernel
    names to their KernelInfo (signature and block size)."""
    return SimModule(None, module, kernels)
