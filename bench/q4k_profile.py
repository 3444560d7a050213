"""Launch the Q4_K GEMV kernels of bench/q4k_ab.py once each at 14336 x 4096, M = 1, for a
profiler: `ncu --set full python -m bench.q4k_profile` (or a metric list) shows where a
kernel's time goes (issue slots, stall reasons, DRAM throughput). Each kernel is launched
on a fresh copy of the weights, so each reads them from DRAM; nothing is timed here."""

from __future__ import annotations

from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
N, K = 14336, 4096
WARPS = 4


def main() -> int:
    import torch

    import ember
    from bench.gpu_timing import ember_on_torch_stream
    from ember.reference import q4k as R
    from ember.runtime import cuda
    arch = cuda.context().arch
    rng = np.random.default_rng(7)
    w_host = R.random_q4k(rng, N, K)
    x_host = rng.standard_normal((1, K)).astype(np.float32)
    x = torch.from_numpy(x_host).cuda()
    y = torch.zeros(1, N, device="cuda")

    def fresh_w():
        return torch.from_numpy(w_host).cuda().view(torch.uint32)

    def launch(source, defines, kernel, *args, grid):
        mod = cuda.load(ember.compile(ROOT / "kernels_src" / source, arch=arch, defines=defines, kernels=[kernel]))
        fn = getattr(mod, kernel)
        for _ in range(3):
            ember_on_torch_stream(fn.prepare(*args, grid=grid))()
        torch.cuda.synchronize()

    for rows in (1, 2, 4):
        launch("q4k_gemv.ember", {"M": 1, "WARPS": WARPS, "ROWS": rows}, "q4k_gemv", fresh_w(), x, y, N, K,
               grid=(N + WARPS * rows - 1) // (WARPS * rows))
    blocks = K // 32
    aq = torch.zeros(blocks * 8, dtype=torch.int32, device="cuda").view(torch.uint32)
    ads = torch.zeros(blocks, dtype=torch.int32, device="cuda").view(torch.uint32)
    launch("q4k_dp4a.ember", {"M": 1, "WARPS": WARPS}, "quantize_q8_1", x, aq, ads, blocks,
           grid=(blocks + WARPS - 1) // WARPS)
    launch("q4k_dp4a.ember", {"M": 1, "WARPS": WARPS, "UNROLL": 1, "ROWS": 2}, "q4k_q8_gemv", fresh_w(), aq, ads, y, N, K,
           grid=(N + WARPS * 2 - 1) // (WARPS * 2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
