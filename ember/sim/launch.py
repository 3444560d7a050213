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
from ..runtime.args import (Buffer, KernelTable, LaunchError, check_buffers, check_launch, elem_name_of_typestr,
                            scalar_bytes)
from .interp import Interpreter
from .machine import SimMachine
from .memory import Memory, Ptr

DEFAULT_MAX_LANES = 1 << 15
DEFAULT_STEP_LIMIT = 1_000_000


class SimKernel:
    def __init__(self, module: Module, fn: Function, info):
        self.module = module
        self.fn = fn
        self.info = info
        self.name = info.name

    def __call__(self, *args, grid, block=None, step_limit: int = DEFAULT_STEP_LIMIT,
                 check_races: bool = True, max_lanes: int = DEFAULT_MAX_LANES):
        info = self.info
        if len(args) != len(info.params):
            raise LaunchError(f"{info.name} takes {len(info.params)} arguments "
                              f"({', '.join(p.name for p in info.params)}), got {len(args)}")
        grid, block = check_launch(info, grid, block)
        bound, mems, scalars = [], {}, {}
        for p, a in zip(info.params, args):
            if p.is_pointer:
                if not isinstance(a, np.ndarray):
                    raise LaunchError(f"{info.name}: `{p.name}` needs a numpy array in the simulator, "
                                      f"got {type(a).__name__}")
                buf = Buffer(a.ctypes.data, a.nbytes, elem_name_of_typestr(a.dtype.str),
                             not a.flags.writeable, a.flags.c_contiguous, owner=a)
                bound.append((p, buf))
            else:
                raw = scalar_bytes(a, p.type, info.name, p.name)
                bound.append((p, raw))
        check_buffers(info, bound)
        values = []
        for p, b in bound:
            if isinstance(b, Buffer):
                a = b.owner
                data = np.frombuffer(np.ascontiguousarray(a).tobytes(), dtype=np.uint8).copy().reshape(1, -1)
                # Read-only buffers cannot take part in a race (nothing writes them during
                # the kernel: launches refuse overlaps), so only `*mut` ones are tracked.
                mem = Memory(p.name, "global", 1, a.nbytes, data, track=p.type.mut, elem=p.type.pointee)
                mems[p.name] = (mem, a)
                values.append(mem)
            else:
                t = p.type
                bits = np.frombuffer(b, dtype=S.bits_dtype(t) if t.is_float or t.bits < 8 else S.dtype(t))[0]
                scalars[p.name] = S.from_bits(np.array([bits], dtype=np.uint64), t)[0] if t.is_float else \
                    np.array([bits]).astype(S.dtype(t))[0]
                values.append(None)
        tables = {g.name: Memory(g.name, "const", 1, len(g.values) * g.elem.nbytes,
                                 _table_bytes(g), track=False, elem=g.elem) for g in self.module.globals}
        T = block[0] * block[1] * block[2]
        nblocks = grid[0] * grid[1] * grid[2]
        per_batch = max(1, min(nblocks, max_lanes // T))
        for start in range(0, nblocks, per_batch):
            ids = np.arange(start, min(start + per_batch, nblocks))
            machine = SimMachine(grid, block, ids, tables, check_races)
            lanes = machine.lanes
            lane_args = []
            for p, v in zip(info.params, values):
                if isinstance(v, Memory):
                    lane_args.append(Ptr.to(v, lanes, p.type.pointee))
                else:
                    lane_args.append(np.full(lanes, scalars[p.name], dtype=S.dtype(p.type)))
            Interpreter(self.module, lanes, machine, step_limit).call(self.fn, lane_args)
        for p in info.params:
            if p.is_pointer and p.type.mut:
                mem, a = mems[p.name]
                a.reshape(-1).view(np.uint8)[:] = mem.data.reshape(-1)


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
        self.kernels = {name: SimKernel(self.module, self.module.get(name), info) for name, info in infos.items()}


def load(program) -> SimModule:
    return SimModule(program)


def load_module(module: Module, kernels: dict) -> SimModule:
    """Simulate a bare IR module (e.g. before or after some pass); `kernels` maps kernel
    names to their KernelInfo (signature and block size)."""
    return SimModule(None, module, kernels)
