"""Host time of one launch through Ember's runtime (cuda.core's launch, arguments packed
once by Kernel.prepare) against a bare cuLaunchKernel through cuda.bindings with the same
packed parameters: `python -m bench launch` (GPU). What the runtime's move onto cuda.core
costs a hot loop that launches from Python (CUDA graphs, which the benchmarks use, replay
without either)."""

from __future__ import annotations

import ctypes
import datetime
import statistics
import time

import numpy as np

SRC = "kernel tiny(x: *mut global f32, n: u32) block(32) { if thread_idx.x < n { x[thread_idx.x] = 1.0; } }\n"


def main(out: str, quick: bool = False) -> int:
    import ember
    from bench.report import save
    from cuda.bindings import driver as drv
    from ember.runtime import cuda
    ctx = cuda.context()
    mod = cuda.load(ember.compile(SRC, arch=ctx.arch))
    x = cuda.DeviceArray.from_host(np.zeros(32, np.float32))
    stream = cuda.Stream()
    launch = mod.tiny.prepare(x, 32, grid=1)
    n = 2000 if quick else 20000
    # the bare driver call: the same function, parameters packed by hand
    values = [ctypes.c_uint64(x.ptr), ctypes.c_uint32(32)]
    ptrs = (ctypes.c_void_p * 2)(*[ctypes.addressof(v) for v in values])
    kernel = mod.tiny.function
    cufunc = drv.cuKernelGetFunction(kernel.handle)[1]

    def bare():
        drv.cuLaunchKernel(cufunc, 1, 1, 1, 32, 1, 1, 0, stream.handle, ctypes.addressof(ptrs), 0)

    def ember_launch():
        launch(stream)

    rows = []
    for name, fn in (("cuLaunchKernel (cuda.bindings)", bare), ("Ember Launch (cuda.core launch)", ember_launch)):
        per = []
        for _ in range(5):
            for _ in range(100):
                fn()
            stream.synchronize()
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            per.append((time.perf_counter() - t0) / n * 1e6)
            stream.synchronize()
        rows.append({"path": name, "us_per_launch": round(statistics.median(per), 2)})
    result = {"date": datetime.date.today().isoformat(), "device": ctx.name, "launches": n, "rows": rows}
    md = [f"# Host time per launch ({result['date']}, {ctx.name}, median of 5 x {n})", "",
          "| path | us per launch |", "|---|---|"] + [f"| {r['path']} | {r['us_per_launch']} |" for r in rows]
    save(out, "launch_overhead", result, "\n".join(md) + "\n")
    return 0
