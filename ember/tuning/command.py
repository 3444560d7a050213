"""`ember tune KERNEL`: tune a kernel of kernels_src/ on this machine's GPU and write (or
update) its tuned table; `ember tune --list` names the kernels it can tune and their
shape buckets (no GPU needed)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..cli_support import EXIT_ERRORS, EXIT_OK, UsageError


def add_arguments(p) -> None:
    p.add_argument("kernel", nargs="?", metavar="KERNEL", help="a kernel with a workload (see --list)")
    p.add_argument("--shape", action="append", default=[], metavar="SHAPE",
                   help="a shape bucket, as --list prints them (repeatable; default: the kernel's buckets)")
    p.add_argument("--device", type=int, action="append", metavar="N",
                   help="a GPU to tune on (repeatable; default: every GPU of the host, the shapes shared "
                        "out among them and measured at once)")
    p.add_argument("-o", dest="output", metavar="TABLE",
                   help="the table to write or update (default kernels_src/tuned/KERNEL.json)")
    p.add_argument("-j", dest="jobs", type=int, default=min(8, os.cpu_count() or 1), metavar="N",
                   help="compile configurations in N worker processes (default: up to 8)")
    p.add_argument("--quick", action="store_true",
                   help="time 3 rounds of 20 launches instead of 5 of 100 (a first look, not for tables you ship)")
    p.add_argument("--list", action="store_true", help="list the kernels `ember tune` can tune, with their buckets")
    p.add_argument("--restamp", action="store_true",
                   help="no GPU needed: keep KERNEL's table (-o TABLE) after an edit of its source that left the code "
                        "it measured unchanged - every entry's configuration must compile to the PTX it was measured "
                        "with (its recorded hash); on a current table, record the hashes entries lack")


def run(args) -> int:
    """The command; a kernel source that does not compile is reported as the compiler
    reports it (exit 1), not as an internal error."""
    from ..diagnostics import CompileError
    try:
        return _run(args)
    except CompileError as e:
        print(e.diagnostics.render(), file=sys.stderr)
        return EXIT_ERRORS


def _run(args) -> int:
    from . import table as T
    from .workloads import WORKLOADS, source_of
    if args.list:
        for name, (_, source, buckets) in WORKLOADS.items():
            print(f"{name} ({source}): {', '.join(buckets)}")
        return EXIT_OK
    if not args.kernel:
        raise UsageError("name a KERNEL to tune (ember tune --list names them)")
    if args.restamp:
        return _restamp(args)
    if args.jobs < 1:
        raise UsageError(f"-j must be at least 1, got {args.jobs}")
    shapes = args.shape or None
    source = source_of(args.kernel)
    out = Path(args.output) if args.output else source.parent / "tuned" / f"{args.kernel}.json"
    if out.exists() and not out.is_file():
        raise UsageError(f"-o {out}: not a regular file")
    from ..runtime import cuda
    if not cuda.available():
        raise UsageError("ember tune needs a CUDA GPU (none found); `ember tune-space` lists the space without one")
    from .runner import FULL, tune
    timing = {"warmup": 5, "rounds": 3, "iters": 20} if args.quick else FULL
    count = cuda.device_count()
    bad = [d for d in args.device or [] if not 0 <= d < count]
    if bad:
        raise UsageError(f"--device {bad[0]}: this machine has {count} GPU{'s' if count != 1 else ''} (0..{count - 1})")
    twice = [d for i, d in enumerate(args.device or []) if d in (args.device or [])[:i]]
    if twice:
        raise UsageError(f"--device {twice[0]} is named twice: two processes would time on one GPU at once, and "
                         "each would slow the other's kernels")
    failures = []
    new = tune(args.kernel, shapes, args.device, args.jobs, sys.stderr, timing, failures)
    lines, chose_all = summary(args.kernel, new)
    if any(new["devices"].values()):
        old, kept_lines = _old_entries(args.kernel, out, new, source)
        out.parent.mkdir(parents=True, exist_ok=True)
        T.write(out, T.merge(old, new))
        print("\n".join(lines + kept_lines))
        print(f"wrote {out}")
    for key, shape, error in failures:
        print(f"ember tune: {args.kernel} {shape} on {key} could not be measured: {error}"
              f"{'' if os.environ.get('EMBER_DEBUG') else ' (EMBER_DEBUG=1 for a traceback)'}", file=sys.stderr)
    if failures:
        measured = sum(len(b) for b in new["devices"].values())
        print(f"ember tune: {len(failures)} of {len(failures) + measured} buckets not measured; "
              f"{'the others were written' if measured else 'nothing written'}", file=sys.stderr)
    return EXIT_OK if chose_all and not failures else EXIT_ERRORS


def _old_entries(kernel: str, out: Path, new: dict, source) -> tuple[dict | None, list]:
    """The table at `out` to merge the new measurements into, and what was said of it. A
    table made from other source keeps the entries whose code the edit left alone
    (restamp.still_measured) - those the new measurements do not replace - and names the
    ones it drops, so that a retune of the changed buckets does not silently lose the others."""
    from . import table as T
    from .restamp import entries, still_measured
    old = T.read(out) if out.is_file() else None
    if old is None or old.get("kernel") != new.get("kernel") or old.get("source_hash") == new["source_hash"]:
        return old, []
    kept, dropped = still_measured(kernel, old, source)
    remeasured = {(d, b) for d, buckets in new["devices"].items() for b in buckets}
    dropped = [f"{d}, {b}" for d, b in dropped if (d, b) not in remeasured]
    count = sum(1 for d, buckets in kept.items() for b in buckets if (d, b) not in remeasured)
    lines = [f"{kernel}: kept {entries(count)} of {out} whose code the edit left alone"]
    if dropped:
        lines.append(f"{kernel}: dropped {len(dropped)} stale entr{'y' if len(dropped) == 1 else 'ies'} (the edit "
                     f"changed their code, or it cannot be checked); retune them: " + "; ".join(dropped))
    return {**new, "devices": kept}, lines


def _restamp(args) -> int:
    from . import table as T
    from .restamp import restamp
    from .workloads import source_of
    if args.shape or args.device or args.quick:
        raise UsageError("--restamp measures nothing: it takes no --shape, --device or --quick")
    source = source_of(args.kernel)
    path = Path(args.output) if args.output else source.parent / "tuned" / f"{args.kernel}.json"
    if not path.is_file():
        raise UsageError(f"--restamp: no table {path} (`ember tune {args.kernel}` makes it)")
    result = restamp(args.kernel, T.read(path), source)
    print("\n".join(result.lines))
    if result.table is not None:
        T.write(path, result.table)
        print(f"wrote {path}")
    return EXIT_OK if result.ok else EXIT_ERRORS


def summary(kernel: str, table: dict) -> tuple[list, bool]:
    """A line per device and bucket of a table `tune` made, and whether every bucket found a
    correct configuration (one where none passed the reference check is an error: its entry
    records what was tried and what was wrong, and no configuration)."""
    lines, chose_all = [], True
    for dev, buckets in table["devices"].items():
        for bucket, e in buckets.items():
            counts = f"{e['tried']} tried, {e['pruned']} pruned" + (f", {len(e['wrong'])} WRONG" if e["wrong"] else "")
            if e["config"] is None:
                chose_all = False
                failed = f", {len(e['failed'])} failed to build or run" if e["failed"] else ""
                worst = max((w["error"] for w in e["wrong"]), default=None)
                lines.append(f"{kernel} {bucket} on {dev}: no configuration passed the reference check ({counts}"
                             f"{failed}" + (f"; errors up to {worst:.3g}" if worst is not None else "") + ")")
                continue
            chosen = " ".join(f"{k}={v}" for k, v in e["config"].items()) + f" through {e['sass_path']}"
            default = f"{e['default_us']} us" if e.get("default_us") is not None else "does not check here"
            lines.append(f"{kernel} {bucket} on {dev}: {chosen} {e['us']} us (default {default}; {counts})")
    return lines, chose_all
