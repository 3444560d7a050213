"""The simulator: runs a kernel's IR on the CPU, exactly, with checks a GPU does not make.

    import ember, ember.sim
    prog = ember.compile("kernels_src/rope.ember", defines={"HEAD_DIM": 128})
    mod = ember.sim.load(prog)
    mod.rope(x, positions, 28, 1e6, grid=(7, 1))      # same call as on the GPU

Threads of a block run in lockstep as numpy lanes with masks for divergent control flow;
barriers, warp shuffles and votes are exact per 32-lane warp; shared memory is per block;
arithmetic follows the language's semantics bit for bit (ember.ir.semantics). Reported,
with the source line and the thread: out-of-bounds and misaligned accesses, reads of
uninitialized shared memory, data races, divergent barriers, shuffles from inactive
lanes, and loops past the step limit (all raise ember.sim.SimError).
"""

from .errors import SimError
from ..ir.interp import StepLimitExceeded
from .launch import SimKernel, SimModule, load, load_module

__all__ = ["load", "load_module", "SimModule", "SimKernel", "SimError", "StepLimitExceeded"]
