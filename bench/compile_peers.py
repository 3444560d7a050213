"""The kernels the compile-time benchmark gives Triton and Numba-CUDA, equivalent to Ember's:
RMSNorm over one row per block (f32), and one RoPE kernel (f32, hardware sin/cos - Ember's
`rope` with FAST, HEAD_DIM 128, four heads per thread). Each compiles to PTX for sm_90
without a GPU: Triton through its own stages (its cubin stage, ptxas, is timed apart and
left out), Numba through NVVM (numba-cuda[cu13]).

Run as a script (`python -m bench.compile_peers triton|numba rmsnorm|rope`) it compiles
one kernel in a fresh process: the cold measurement."""

from __future__ import annotations

import os
import sys
import time

TARGET_CC = (9, 0)


# --- Triton ---------------------------------------------------------------------------

def _triton_kernels():
    import triton
    import triton.language as tl

    from bench.triton_kernels import _rmsnorm

    @triton.jit
    def rope(x, positions, num_heads, base, HEAD_DIM: tl.constexpr, HEADS_PER_PROGRAM: tl.constexpr):
        token = tl.program_id(1)
        pair = tl.arange(0, HEAD_DIM // 2)
        pos = tl.load(positions + token).to(tl.float32)
        inv_freq = tl.exp2(-(pair.to(tl.float32) / (HEAD_DIM // 2)) * tl.log2(base))
        angle = pos * inv_freq
        s = tl.sin(angle)
        c = tl.cos(angle)
        for k in tl.static_range(HEADS_PER_PROGRAM):
            head = tl.program_id(0) * HEADS_PER_PROGRAM + k
            row = (token * num_heads + head).to(tl.int64) * HEAD_DIM
            mask = head < num_heads
            x0 = tl.load(x + row + 2 * pair, mask=mask)
            x1 = tl.load(x + row + 2 * pair + 1, mask=mask)
            tl.store(x + row + 2 * pair, x0 * c - x1 * s, mask=mask)
            tl.store(x + row + 2 * pair + 1, x0 * s + x1 * c, mask=mask)

    return {
        "rmsnorm": (_rmsnorm, {"x": "*fp32", "gamma": "*fp32", "y": "*fp32", "cols": "i32", "eps": "fp32",
                               "BLOCK": "constexpr"}, {"BLOCK": 4096}),
        "rope": (rope, {"x": "*fp32", "positions": "*i32", "num_heads": "i32", "base": "fp32",
                        "HEAD_DIM": "constexpr", "HEADS_PER_PROGRAM": "constexpr"},
                 {"HEAD_DIM": 128, "HEADS_PER_PROGRAM": 4}),
    }


def triton_compile(kernel: str) -> tuple[float, float]:
    """(seconds to PTX, seconds in ptxas) for one compile; Triton's cache is bypassed."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia import compiler as nv
    from triton.compiler import ASTSource
    triton.knobs.compilation.always_compile = True
    fn, signature, constexprs = _triton_kernels()[kernel]
    spent = [0.0]
    original = nv.CUDABackend.make_cubin

    def timed_cubin(self, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - t0
    nv.CUDABackend.make_cubin = timed_cubin
    try:
        t0 = time.perf_counter()
        compiled = triton.compile(ASTSource(fn, signature, constexprs),
                                  target=GPUTarget("cuda", TARGET_CC[0] * 10 + TARGET_CC[1], 32))
        total = time.perf_counter() - t0
    finally:
        nv.CUDABackend.make_cubin = original
    assert ".entry" in compiled.asm["ptx"]
    return total - spent[0], spent[0]


# --- Numba-CUDA ---------------------------------------------------------------------------

def _numba_kernels():
    import math

    from numba import cuda, float32

    def rmsnorm(x, gamma, y, cols, eps):
        partial = cuda.shared.array(8, float32)
        row = cuda.blockIdx.x * cols
        t = cuda.threadIdx.x
        acc = float32(0.0)
        for i in range(t, cols, 256):
            v = x[row + i]
            acc += v * v
        for k in range(5):
            acc += cuda.shfl_xor_sync(0xFFFFFFFF, acc, 16 >> k)
        if t % 32 == 0:
            partial[t // 32] = acc
        cuda.syncthreads()
        total = float32(0.0)
        for w in range(8):
            total += partial[w]
        scale = float32(1.0) / math.sqrt(total / cols + eps)
        for i in range(t, cols, 256):
            y[row + i] = x[row + i] * scale * gamma[i]

    def rope(x, positions, num_heads, base):
        pair = cuda.threadIdx.x
        token = cuda.blockIdx.y
        pos = float32(positions[token])
        inv_freq = math.exp2(-(float32(pair) / float32(64)) * math.log2(base))
        angle = pos * inv_freq
        s = math.sin(angle)
        c = math.cos(angle)
        for k in range(4):
            head = cuda.blockIdx.x * 4 + k
            if head < num_heads:
                row = (token * num_heads + head) * 128
                x0 = x[row + 2 * pair]
                x1 = x[row + 2 * pair + 1]
                x[row + 2 * pair] = x0 * c - x1 * s
                x[row + 2 * pair + 1] = x0 * s + x1 * c

    return {
        "rmsnorm": (rmsnorm, "void(float32[:], float32[:], float32[:], int32, float32)"),
        "rope": (rope, "void(float32[:], int32[:], int32, float32)"),
    }


def numba_compile(kernel: str) -> float:
    """Seconds for one compile to PTX (fastmath, as the Ember and Triton kernels do)."""
    from numba import cuda
    fn, sig = _numba_kernels()[kernel]
    t0 = time.perf_counter()
    ptx, _ = cuda.compile_ptx(fn, sig, cc=TARGET_CC, fastmath=True)
    elapsed = time.perf_counter() - t0
    assert ".entry" in ptx
    return elapsed


if __name__ == "__main__":      # one cold compile
    peer, kernel = sys.argv[1], sys.argv[2]
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if peer == "triton":
        triton_compile(kernel)
    else:
        numba_compile(kernel)
