"""Compile time on this CPU, Ember next to Triton and Numba-CUDA in the same run
(bench/compile_peers.py has their equivalent kernels; all three compile without a GPU):

- warm: in a process that has compiled the kernel once (the fastest of N compiles);
- cold: a whole fresh process that imports the compiler and compiles once (fastest of N);
  Ember's with the `ember compile` command (cache off: a miss), and a cache hit;
- Ember's stages for rope.ember (warm);
- scaling: generated kernels of 100 to 10,000 statements and if-nests 50 to 400 deep.

Everything runs with compiled bytecode (PYTHONDONTWRITEBYTECODE is cleared, the packages
are byte-compiled first): without it every process pays ~60 ms more. Writes
compile_time.json and compile_time.md.
"""

from __future__ import annotations

import datetime
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROPE = ROOT / "kernels_src" / "rope.ember"
RMSNORM = ROOT / "kernels_src" / "rmsnorm.ember"

# name -> (Ember source, defines, kernels (None: the whole file), the peers' kernel or None)
CASES = {
    "RMSNorm (one kernel)": (RMSNORM, {}, ["rmsnorm"], "rmsnorm"),
    "RoPE (one kernel, f32 fast sin/cos)": (ROPE, {"HEAD_DIM": 128, "FAST": True}, ["rope"], "rope"),
    "rope.ember (2 kernels, f64 trigonometry)": (ROPE, {"HEAD_DIM": 128}, None, None),
    "rmsnorm.ember (3 kernels + std/reduce)": (RMSNORM, {}, None, None),
}


def _env() -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), EMBER_NO_CACHE="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("EMBER_CACHE_DIR", None)
    return env


def _best_ms(times: list) -> float:
    """The fastest of the repetitions: on a shared machine other load only ever adds time
    (medians of one run moved by 1.5x between runs)."""
    return round(1000 * min(times), 1)


def _warm_ember(src, defines, kernels, n: int) -> tuple:
    import ember
    ember.compile(src, defines=defines, kernels=kernels, cache=False)
    times, stages = [], {}
    for _ in range(n):
        t0 = time.perf_counter()
        prog = ember.compile(src, defines=defines, kernels=kernels, cache=False)
        times.append(time.perf_counter() - t0)
        for k, v in prog.timings.items():
            stages.setdefault(k, []).append(v)
    return _best_ms(times), {k: _best_ms(v) for k, v in stages.items()}


def _cold(cmd: list, n: int, env: dict, cwd) -> float:
    subprocess.run(cmd, check=True, env=env, cwd=cwd, capture_output=True)     # fills OS caches
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, env=env, cwd=cwd, capture_output=True)
        times.append(time.perf_counter() - t0)
    return _best_ms(times)


def _ember_cold_command(src, defines, kernels, out: str) -> list:
    """The `ember compile` command (one kernel: `-k NAME`), as a build runs it."""
    args = [a for n, v in defines.items() for a in ("-D", f"{n}={str(v).lower()}")]
    args += [a for k in kernels or () for a in ("-k", k)]
    return [sys.executable, "-m", "ember", "compile", str(src), *args, "-o", out]


def _peer_warm(peer: str, kernel: str, n: int) -> float | None:
    from bench import compile_peers
    fn = compile_peers.triton_compile if peer == "triton" else compile_peers.numba_compile
    try:
        fn(kernel)
    except ImportError:
        return None
    times = []
    for _ in range(n):
        r = fn(kernel)
        times.append(r[0] if isinstance(r, tuple) else r)
    return _best_ms(times)


def _generated(kind: str, n: int) -> str:
    head = "kernel k(x: *mut global f32, n: u32) block(32) {\nlet t = u64(thread_idx.x) * 1024;\n"
    if kind == "statements":
        body = "var a = x[t];\n" + "".join(f"a = a * 1.0001 + x[t + {j % 1000}u64];\nx[t + {j % 997}u64] = a;\n"
                                           for j in range(n // 2))
    else:
        body = "let i = thread_idx.x;\n" + "".join(f"if i < n - {j}u32 {{\nx[t + {j}u64] = 1.0;\n"
                                                   for j in range(n)) + "}\n" * n
    return head + body + "}\n"


def _scaling() -> dict:
    import ember
    out = {}
    for kind, sizes in (("statements", [100, 1000, 2000, 5000, 10000]), ("nesting", [50, 100, 200, 400])):
        rows = []
        for n in sizes:
            src = _generated(kind, n)
            dt = math.inf
            for _ in range(3 if n <= 2000 else 2):
                t0 = time.perf_counter()
                ember.compile(src, cache=False)
                dt = min(dt, time.perf_counter() - t0)
            rows.append({"size": n, "ms": round(1000 * dt, 1), "us_per_unit": round(1e6 * dt / n)})
        out[kind] = rows
    return out


def main(out_dir: str, quick: bool = False) -> int:
    import llvmlite

    import ember
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "ember")], check=False,
                   capture_output=True)
    n_warm, n_cold = (3, 2) if quick else (20, 7)
    env = _env()
    cases = []
    with tempfile.TemporaryDirectory() as d:
        for name, (src, defines, kernels, peer) in CASES.items():
            warm, stages = _warm_ember(src, defines, kernels, n_warm)
            row = {"case": name, "ember_warm_ms": warm,
                   "ember_cold_ms": _cold(_ember_cold_command(src, defines, kernels, os.path.join(d, "o.ptx")),
                                          n_cold, env, d),
                   "stages_ms": stages}
            # a cache hit of the same command, as a whole process
            hit_env = dict(env, EMBER_CACHE_DIR=os.path.join(d, "cache"))
            hit_env.pop("EMBER_NO_CACHE")
            row["ember_cache_hit_process_ms"] = _cold(_ember_cold_command(src, defines, kernels,
                                                                           os.path.join(d, "o.ptx")),
                                                      n_cold, hit_env, d)
            if peer is not None:
                for p in ("triton", "numba"):
                    row[f"{p}_warm_ms"] = _peer_warm(p, peer, n_warm)
                    row[f"{p}_cold_ms"] = _cold([sys.executable, "-m", "bench.compile_peers", p, peer],
                                                n_cold, dict(env, PYTHONPATH=str(ROOT)), ROOT)
            cases.append(row)
    hits = []
    with tempfile.TemporaryDirectory() as store:
        ember.compile(ROPE, defines={"HEAD_DIM": 128}, cache=store)
        for _ in range(50):
            t0 = time.perf_counter()
            assert ember.compile(ROPE, defines={"HEAD_DIM": 128}, cache=store).cached
            hits.append(time.perf_counter() - t0)
    result = {
        "benchmark": "compile_time", "date": datetime.date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "ember": ember.__version__, "llvmlite": llvmlite.__version__,
        "peers": _peer_versions(), "target": "sm_90, -O3 (Ember), default options (Triton, Numba)",
        "cases": cases, "cache_hit_in_process_ms": round(1000 * min(hits), 3),
        # the machine's speed in this run (a shared VM's varies by 1.5x between runs)
        "python_start_ms": _cold([sys.executable, "-c", "pass"], n_cold, env, ROOT),
        "scaling": _scaling(),
    }
    from bench.report import save
    save(out_dir, "compile_time", result, markdown(result))
    return 0


def _peer_versions() -> dict:
    from importlib import metadata
    out = {}
    for dist in ("triton", "numba-cuda", "numba"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def _ms(v) -> str:
    return "-" if v is None else f"{v:.1f}"


def markdown(r: dict) -> str:
    peers = ", ".join(f"{k} {v}" for k, v in r["peers"].items() if v)
    lines = ["# Compile time: Ember, Triton and Numba-CUDA, source to PTX", "",
             f"{r['date']}, {r['machine']}, Ember {r['ember']} (llvmlite {r['llvmlite']}), {peers}; "
             f"{r['target']}. One run; the fastest of several repetitions; compiled bytecode.", "",
             "warm: in a process that compiled the kernel before; cold: a fresh process (imports "
             "included). Triton's times leave out its cubin stage (ptxas); its cache is bypassed. "
             f"A bare `python -c pass` took {_ms(r.get('python_start_ms'))} ms in this run: compare runs "
             "on this shared machine by it and by the peers' columns.", "",
             "| kernel | Ember warm | Triton warm | Numba warm | Ember cold | Triton cold | Numba cold |"
             " Ember cache hit (process) |",
             "|---|---|---|---|---|---|---|---|"]
    for c in r["cases"]:
        lines.append(f"| {c['case']} | {_ms(c['ember_warm_ms'])} | {_ms(c.get('triton_warm_ms'))} | "
                     f"{_ms(c.get('numba_warm_ms'))} | {_ms(c['ember_cold_ms'])} | {_ms(c.get('triton_cold_ms'))} | "
                     f"{_ms(c.get('numba_cold_ms'))} | {_ms(c.get('ember_cache_hit_process_ms'))} |")
    lines += ["", "(milliseconds; Ember's cold times and cache hits are `ember compile` processes - with "
              "`-k NAME` for one kernel - and the peers' a `python -m bench.compile_peers` process each)", "",
              f"A cache hit in process (`ember.compile` of rope.ember): {r['cache_hit_in_process_ms']} ms.", "",
              "Ember's stages, rope.ember warm (ms):", "", "| stage | ms |", "|---|---|"]
    stages = next(c for c in r["cases"] if c["case"].startswith("rope.ember"))["stages_ms"]
    lines += [f"| {k} | {v:.2f} |" for k, v in stages.items()]
    lines += ["", "Scaling (generated kernels; fastest of 2-3 compiles):", "", "| kind | size | ms | us per unit |",
              "|---|---|---|---|"]
    for kind, rows in r["scaling"].items():
        lines += [f"| {kind} | {x['size']} | {x['ms']:.0f} | {x['us_per_unit']} |" for x in rows]
    return "\n".join(lines) + "\n"
