"""Simulator speed on this CPU: RMSNorm (kernels_src/rmsnorm.ember, f32) over 64 rows x
4096 columns with 256 threads per block (one launch of 64 blocks = 16384 simulated
threads), with every check on (bounds, races, uninitialized shared reads, barriers,
shuffles) and with race tracking off; and a tensor-core kernel, the mma.sync GEMM
(kernels_src/gemm_bf16.ember: ldmatrix, mma, cp.async rings) at 128 x 128 x 256, one block
of 256 threads, every check on. Median of 5 launches after one warm-up (2 with --quick);
each result checked against the f64 reference.

Writes sim_speed.json and sim_speed.md.
"""

from __future__ import annotations

import datetime
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def main(out_dir: str, quick: bool = False) -> int:
    import ember
    from ember.reference.rmsnorm import rmsnorm
    from ember.sim import load
    rows, cols, eps = 64, 4096, 1e-6
    mod = load(ember.compile(ROOT / "kernels_src" / "rmsnorm.ember", defines={"BLOCK": 256}))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, cols).astype(np.float32)
    ref = rmsnorm(x, gamma, eps)
    timings = {}
    for label, races in (("all checks", True), ("no race tracking", False)):
        times = []
        for _ in range(2 if quick else 6):
            y = np.zeros_like(x)
            t0 = time.perf_counter()
            mod.rmsnorm(x, gamma, y, cols, eps, grid=rows, check_races=races)
            times.append(time.perf_counter() - t0)
            err = float(np.abs(y - ref).max())
            assert err < 1e-5, err
        timings[label] = {"median_s": statistics.median(times[1:]), "min_s": min(times[1:])}
    gemm = _gemm_timing(quick)
    result = {"benchmark": "sim_speed", "date": datetime.date.today().isoformat(),
              "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
                         f"numpy {np.__version__}",
              "ember": ember.__version__, "kernel": "rmsnorm f32, 64 rows x 4096, block 256",
              "max_abs_err_vs_f64": err, "timings": timings, "tensor_cores": gemm}
    lines = ["# Simulator speed: RMSNorm 64 x 4096, 256 threads per block; the mma.sync GEMM", "",
             f"{result['date']}, {result['machine']}, Ember {result['ember']}.",
             f"RMSNorm: one launch of 64 blocks (16384 simulated threads); max |error| vs f64 {err:.2g}.", "",
             "| checks | median | min |", "|---|---|---|"]
    for label, t in timings.items():
        lines.append(f"| {label} | {t['median_s']:.3f} s | {t['min_s']:.3f} s |")
    lines += ["", f"Tensor cores: {gemm['kernel']}; max |error| vs f64 {gemm['max_abs_err_vs_f64']:.2g}.", "",
              "| checks | median | min |", "|---|---|---|",
              f"| all checks | {gemm['median_s']:.3f} s | {gemm['min_s']:.3f} s |"]
    from bench.report import save
    save(out_dir, "sim_speed", result, "\n".join(lines) + "\n")
    return 0


def _gemm_timing(quick: bool) -> dict:
    """gemm_bf16 (mma.sync) at 128 x 128 x 256 in the simulator, every check on."""
    import ember
    from ember.reference.gemm import bf16_bits, bf16_values, linear
    from ember.sim import load
    m = n = 128
    k = 256
    kern = load(ember.compile(ROOT / "kernels_src" / "gemm_bf16.ember")).gemm_bf16
    rng = np.random.default_rng(1)
    a, w = bf16_values(rng.standard_normal((m, k))), bf16_values(rng.standard_normal((n, k)))
    ref = linear(a, w)
    times = []
    for _ in range(3 if quick else 6):
        c = np.zeros(m * n, np.float32)
        t0 = time.perf_counter()
        kern(bf16_bits(a), bf16_bits(w), c, m, n, k, grid=(1, 1))
        times.append(time.perf_counter() - t0)
        err = float(np.abs(c.reshape(m, n) - ref).max())
        assert err <= 1e-6 * np.abs(ref).max() * np.sqrt(k), err
    return {"kernel": f"gemm_bf16 (mma.sync, ldmatrix, cp.async) {m} x {n} x {k}, one block",
            "median_s": statistics.median(times[1:]), "min_s": min(times[1:]), "max_abs_err_vs_f64": err}
