"""Compile time of kernels_src/rope.ember (HEAD_DIM=128, sm_90, -O3) on this CPU:

- warm: `ember.compile` in a process that has compiled once already (source -> PTX),
  median of 30, with the time per stage;
- cold: the whole `ember compile ... -o rope.ptx` process, median of 15 runs (after one
  run that fills lark's grammar cache and the OS file cache).

Writes compile_time.json and compile_time.md.
"""

from __future__ import annotations

import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROPE = ROOT / "kernels_src" / "rope.ember"
DEFINES = {"HEAD_DIM": 128}


def warm(n: int) -> dict:
    import ember
    ember.compile(ROPE, arch="sm_90", defines=DEFINES)
    totals, stages = [], {}
    for _ in range(n):
        t0 = time.perf_counter()
        prog = ember.compile(ROPE, arch="sm_90", defines=DEFINES)
        totals.append(time.perf_counter() - t0)
        for k, v in prog.timings.items():
            stages.setdefault(k, []).append(v)
    return {"median_ms": 1000 * statistics.median(totals), "min_ms": 1000 * min(totals),
            "stages_ms": {k: 1000 * statistics.median(v) for k, v in stages.items()}}


def cold(n: int) -> dict:
    with tempfile.TemporaryDirectory() as d:
        cmd = [sys.executable, "-m", "ember", "compile", str(ROPE), "-D", "HEAD_DIM=128", "--arch", "sm_90",
               "-o", os.path.join(d, "rope.ptx")]
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        subprocess.run(cmd, check=True, env=env)
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, env=env)
            times.append(time.perf_counter() - t0)
    return {"median_ms": 1000 * statistics.median(times), "min_ms": 1000 * min(times)}


def main(out_dir: str, quick: bool = False) -> int:
    import llvmlite

    import ember
    result = {
        "benchmark": "compile_time", "date": datetime.date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "ember": ember.__version__, "llvmlite": llvmlite.__version__,
        "kernel": "kernels_src/rope.ember (rope + rope_out), HEAD_DIM=128, sm_90, -O3",
        "warm": warm(5 if quick else 30),
        "cold": cold(3 if quick else 15),
    }
    w, c = result["warm"], result["cold"]
    lines = ["# Compile time: RoPE source -> PTX", "",
             f"{result['date']}, {result['machine']}, Ember {result['ember']}, llvmlite {result['llvmlite']}.",
             f"Kernel: {result['kernel']}.", "",
             "| measure | median | min |", "|---|---|---|",
             f"| warm, in process (`ember.compile`) | {w['median_ms']:.1f} ms | {w['min_ms']:.1f} ms |",
             f"| cold, whole `ember compile` process | {c['median_ms']:.1f} ms | {c['min_ms']:.1f} ms |",
             "", "Warm time per stage (median):", "", "| stage | ms |", "|---|---|"]
    for k, v in w["stages_ms"].items():
        lines.append(f"| {k} | {v:.2f} |")
    from bench.report import save
    save(out_dir, "compile_time", result, "\n".join(lines) + "\n")
    return 0
