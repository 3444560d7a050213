"""Compile time of inputs built to be large: `python -m bench scaling`.

Whole `ember compile` processes (cache off) of
- one expression of N terms, in the forms that made LLVM's code generator quadratic (a
  sum of `x[i + k]` with i a parameter, of `(a ^ k)`, of `x[thread_idx.x + k]` f16 loads,
  ...), at N = 5,000 and 20,000, also with `-p canonicalize` (no cse: LLVM's GVN runs);
- an import of a file of 91,000 one-line functions (4.7 MB) to call one of them, and the
  same file with a syntax error in the middle.
Wall time of the process (fastest of 2) and its peak memory; no GPU needed.
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FORMS = {
    "x[i + k], i a u32 parameter": ("x: *mut global f32, i: u32", lambda k: f"x[i + {k}u32]", "x[0] = {}"),
    "(a ^ k), a u32": ("x: *mut global u32, a: u32", lambda k: f"(a ^ {k}u32)", "x[0] = {}"),
    "x[thread_idx.x + k]": ("x: *mut global f32", lambda k: f"x[thread_idx.x + {k}u32]", "x[0] = {}"),
    "x[i * (k + 1)], i a u32 parameter": ("x: *mut global f32, i: u32", lambda k: f"x[i * {k + 1}u32]", "x[0] = {}"),
    "f32(h[thread_idx.x + k]), h f16": ("x: *mut global f16", lambda k: f"f32(x[thread_idx.x + {k}u32])",
                                        "x[0] = f16({})"),
}


def _run(args: list, cwd: str) -> tuple[float, float, int]:
    """(seconds, peak MiB, exit status) of the fastest of two runs."""
    best = None
    for _ in range(2):
        t0 = time.perf_counter()
        p = subprocess.Popen([sys.executable, "-m", "ember", *args], cwd=cwd, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, env=dict(os.environ, EMBER_NO_CACHE="1"))
        _, status, usage = os.wait4(p.pid, 0)
        secs = time.perf_counter() - t0
        mib = usage.ru_maxrss / 1024
        if best is None or secs < best[0]:
            best = (secs, mib, os.waitstatus_to_exitcode(status))
    return best


def main(out: str, quick: bool = False) -> int:
    from bench.report import save
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for name, (params, term, store) in FORMS.items():
            for n in ((5000,) if quick else (5000, 20000)):
                src = f"kernel k({params}) block(1) {{ {store.format(' + '.join(term(k) for k in range(n)))}; }}\n"
                Path(d, "sum.ember").write_text(src)
                for extra in ([], ["-p", "canonicalize"]):
                    secs, mib, rc = _run(["compile", "sum.ember", "-o", "sum.ptx", *extra], d)
                    rows.append({"input": f"{n:,} terms: {name}", "options": " ".join(extra) or "-O3",
                                 "seconds": round(secs, 2), "peak_mib": round(mib), "status": rc})
        lib = "".join(f"fn g{k}(x: f32) -> f32 {{ return x * 2.0 + {k % 97}.0; }}\n" for k in range(91000))
        Path(d, "lib.ember").write_text(lib)
        lines = lib.splitlines()
        lines[45000] = lines[45000].replace("return x", "return x +*")
        Path(d, "broken.ember").write_text("\n".join(lines) + "\n")
        for what, name in (("an import of 91,000 functions (4.7 MB), one called", "lib.ember"),
                           ("the same with a syntax error in function 45,000", "broken.ember")):
            Path(d, "use.ember").write_text(f'import "{name}";\nkernel k(x: *mut global f32) block(32) '
                                            "{ x[thread_idx.x] = g77(x[thread_idx.x]); }\n")
            secs, mib, rc = _run(["compile", "use.ember", "-o", "use.ptx"], d)
            rows.append({"input": what, "options": "-O3", "seconds": round(secs, 2), "peak_mib": round(mib),
                         "status": rc})
    result = {"date": datetime.date.today().isoformat(), "machine": platform.machine(),
              "cpus": os.cpu_count(), "python": platform.python_version(), "rows": rows}
    md = [f"# Compile time of large inputs ({result['date']}, {platform.machine()}, {os.cpu_count()} cores, "
          f"whole `ember compile` processes, cache off, fastest of 2)", "",
          "| input | options | s | peak MiB | exit |", "|---|---|---|---|---|"]
    md += [f"| {r['input']} | {r['options']} | {r['seconds']} | {r['peak_mib']} | {r['status']} |" for r in rows]
    save(out, "compile_scaling", result, "\n".join(md) + "\n")
    return 0
