"""Simulator speed on this CPU: RMSNorm (kernels_src/rmsnorm.ember, f32) over 64 rows x
4096 columns with 256 threads per block (one launch of 64 blocks = 16384 simulated
threads), with every check on (bounds, races, uninitialized shared reads, barriers,
shuffles) and with race tracking off. Median of 5 launches after one warm-up; the result
is checked against the f64 reference.

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
    result = {"benchmark": "sim_speed", "date": datetime.date.today().isoformat(),
              "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
                         f"numpy {np.__version__}",
              "ember": ember.__version__, "kernel": "rmsnorm f32, 64 rows x 4096, block 256",
              "max_abs_err_vs_f64": err, "timings": timings}
    lines = ["# Simulator speed: RMSNorm 64 x 4096, 256 threads per block", "",
             f"{result['date']}, {result['machine']}, Ember {result['ember']}.",
             f"One launch of 64 blocks (16384 simulated threads); max |error| vs f64 {err:.2g}.", "",
             "| checks | median | min |", "|---|---|---|"]
    for label, t in timings.items():
        lines.append(f"| {label} | {t['median_s']:.3f} s | {t['min_s']:.3f} s |")
    from bench.report import save
    save(out_dir, "sim_speed", result, "\n".join(lines) + "\n")
    return 0
