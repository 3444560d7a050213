"""python -m bench revision --rev REV --kernel KERNEL [--shape BUCKET ...] [--rounds N] [--out DIR]

A kernel of kernels_src/ at a git revision against the working tree's, on this GPU, in one
run: the question an edit of a kernel asks before its tables are retuned. Each bucket (by
default every bucket of the kernel's workload) is measured as `ember tune` measures a
configuration - checked against the f64 reference on fresh random inputs, then timed in
CUDA graphs with inputs rotated beyond the L2, SASS through nvJitLink - at the configuration
the revision's tuned table holds for this GPU (the kernel's defaults where it holds none), the
two sides in interleaved rounds; the median round of each is reported.

The revision's kernels_src/ and ember/std/ are taken with `git archive` into a temporary
directory, and the old kernels' `std/` imports are pointed at that old standard library, so
the old side is the old code whole, not the old kernel over today's library."""

from __future__ import annotations

import io
import json
import os
import re
import statistics
import subprocess
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_STD_IMPORT = re.compile(r'(import\s+")std/')


class RevisionError(RuntimeError):
    """The revision's sources could not be taken (not a git checkout, an unknown revision)."""


def old_sources(rev: str, into: Path, repo: Path = REPO) -> Path:
    """kernels_src/ and ember/std/ as they were at `rev`, under `into`, each `.ember` file's
    `std/` imports rewritten to the old standard library beside them (a relative path).
    Returns the old kernels_src/."""
    run = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", rev, "kernels_src", "ember/std"],
                         capture_output=True)
    if run.returncode != 0:
        raise RevisionError(f"git archive {rev}: {run.stderr.decode(errors='replace').strip() or 'failed'}")
    with tarfile.open(fileobj=io.BytesIO(run.stdout)) as tar:
        if hasattr(tarfile, "data_filter"):          # Python 3.10.12+, 3.11.4+
            tar.extractall(into, filter="data")
        else:                                        # git archive's own output: no links out, no devices
            tar.extractall(into)
    std = into / "ember" / "std"
    for path in sorted(into.rglob("*.ember")):
        to_std = os.path.relpath(std, path.parent).replace(os.sep, "/")
        text = path.read_text(encoding="utf-8")
        new = _STD_IMPORT.sub(lambda m: m.group(1) + ("" if to_std == "." else to_std + "/"), text)
        if new != text:
            path.write_text(new, encoding="utf-8")
    return into / "kernels_src"


def table_config(table_path: Path, device_key: str, bucket: str) -> dict | None:
    """The configuration a tuned table holds for this device and bucket, or None."""
    if not table_path.is_file():
        return None
    entry = json.loads(table_path.read_text()).get("devices", {}).get(device_key, {}).get(bucket)
    return dict(entry["config"]) if entry and entry.get("config") is not None else None


def measure(kernel: str, buckets: list, rounds: int, old_src: Path) -> dict:
    """Both sides of every bucket on GPU 0 (the tuner's measurement, nvJitLink)."""
    from ember.records import replace
    from ember.runtime import cuda
    from ember.shipped import KERNELS_SRC
    from ember.tuning.runner import FULL, _Bench, device_key
    from ember.tuning.workloads import tuning_arch, workload
    ctx = cuda.context(0)
    arch = tuning_arch(kernel, ctx.arch)
    key = device_key(0)                                 # the tables' name for this GPU
    rows = []
    for bucket in buckets:
        new = workload(kernel, bucket)
        old = replace(new, source=old_src / new.source.relative_to(KERNELS_SRC))    # the same inputs
        config = table_config(old_src / "tuned" / f"{kernel}.json", key, bucket)
        benches = {"old": _Bench(old, kernel, arch, 0, FULL), "new": _Bench(new, kernel, arch, 0, FULL)}
        times: dict = {"old": [], "new": []}
        problem = None
        for r in range(rounds):
            for side in ("old", "new") if r % 2 == 0 else ("new", "old"):
                m = benches[side].measure(config or {}, "nvjitlink", always_time=True)
                if m["state"] != "timed":
                    problem = f"{side}: {m['state']} {m.get('error', '')}"
                    break
                times[side].append(m["us"])
            if problem:
                break
        row = {"bucket": bucket, "config": config, "old_us": times["old"], "new_us": times["new"], "problem": problem}
        if not problem:
            row["old_median_us"] = statistics.median(times["old"])
            row["new_median_us"] = statistics.median(times["new"])
            row["new_over_old"] = round(row["new_median_us"] / row["old_median_us"], 4)
        rows.append(row)
        print(f"{kernel} {bucket}: " + (problem or f"{row['old_median_us']:.3f} -> {row['new_median_us']:.3f} us "
                                         f"({row['new_over_old']:.3f}x)"), flush=True)
    return {"device": ctx.name, "arch": arch, "rows": rows}


def markdown(result: dict) -> str:
    lines = [f"# {result['kernel']} at {result['rev']} against the working tree",
             "",
             f"{result['date']}, {result['device']} ({result['arch']}), SASS through nvJitLink; `ember tune`'s "
             f"measurement (f64 check, CUDA graphs, inputs rotated beyond the L2), {result['rounds']} interleaved "
             "rounds, the median; each bucket at the configuration the revision's table holds for this GPU "
             "(`-`: the defaults).",
             "",
             "| bucket | configuration | at the revision, us | working tree, us | tree / revision |",
             "|---|---|---|---|---|"]
    for r in result["rows"]:
        cfg = " ".join(f"{k}={v}" for k, v in (r["config"] or {}).items()) or "-"
        if r["problem"]:
            lines.append(f"| {r['bucket']} | {cfg} | {r['problem']} | | |")
        else:
            lines.append(f"| {r['bucket']} | {cfg} | {r['old_median_us']:.3f} | {r['new_median_us']:.3f} | "
                         f"{r['new_over_old']:.3f} |")
    return "\n".join(lines) + "\n"


def main(out_dir: str, rev: str, kernel: str, shapes: list | None = None, rounds: int = 3) -> int:
    import datetime
    from ember.tuning.workloads import buckets_of
    buckets = shapes or buckets_of(kernel)
    with tempfile.TemporaryDirectory(prefix="ember-revision-") as tmp:
        old_src = old_sources(rev, Path(tmp))
        result = measure(kernel, buckets, rounds, old_src)
    result.update(kernel=kernel, rev=rev, rounds=rounds, date=datetime.date.today().isoformat())
    from .report import save
    save(out_dir, f"revision_ab_{kernel}", result, markdown(result))    # _h200 on an H200
    return 1 if any(r["problem"] for r in result["rows"]) else 0


def command(args) -> int:
    """`python -m bench revision`: its arguments checked before anything runs (exit 2 and
    one line on standard error for each kind of mistake), then main()."""
    import sys
    from ember.cli_support import UsageError
    from ember.runtime import cuda
    from ember.tuning.workloads import buckets_of, workload

    def fail(message: str) -> int:
        print(f"bench: error: {message}", file=sys.stderr)
        return 2
    if not args.rev or not args.kernel:
        return fail("python -m bench revision needs --rev REV and --kernel KERNEL")
    if args.rounds < 1:
        return fail(f"--rounds {args.rounds}: at least 1")
    try:
        known = buckets_of(args.kernel)
        buckets = args.shape or known
        for b in buckets:
            if b not in known:
                workload(args.kernel, b)            # a shape of the kernel's, or UsageError
    except UsageError as e:
        return fail(str(e))
    if not cuda.available():
        return fail("python -m bench revision needs a CUDA GPU (none found)")
    try:
        return main(args.out, args.rev, args.kernel, buckets, args.rounds)
    except RevisionError as e:
        return fail(str(e))
