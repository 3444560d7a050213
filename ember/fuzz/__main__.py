"""`python -m ember.fuzz`: differential fuzzing of Ember's passes and lowering.

    python -m ember.fuzz run --count 5000 [--start 0] [--jobs 2] [--no-ptx]
        generate programs start..start+count-1 (by seed), check each (the simulator before
        and after every pass and the -O3 pipeline; PTX at -O0 and -O3 validated); exit 1 on
        any disagreement, printing the seed and where
    python -m ember.fuzz show SEED
        print program SEED
    python -m ember.fuzz corpus --count 500 --out FILE [--start N] [--append] [--containing TEXT]
        check programs and save them with their simulator results (gzip JSON lines); with
        --containing, only the programs of those seeds whose source contains TEXT (a new
        feature's programs for the GPU corpus: --containing "shared ring")
    python -m ember.fuzz refresh FILE
        re-simulate the stored programs of a corpus and rewrite their digests (after an
        intended change of results); prints every program whose digest moved
    python -m ember.fuzz gpu FILE [--limit N] [--opt 3,0] [--large]
        run a corpus on the GPU and compare with the simulator's results; --large: every
        program through the compiler's large-function path (ember.fuzz.large)
    python -m ember.fuzz cli --count 10000 [--start 0] [--jobs 2]
        mutate programs and command lines; every `ember compile`/`ember run` must end with
        exit status 0, 1 or 2, no traceback, within the time limit
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time

from . import corpus as C
from .progen import from_seed
from .workers import check_seed as _check_one, parallel_map as _map


def cmd_run(a) -> int:
    t0 = time.time()
    failures, runs = [], 0
    seeds = range(a.start, a.start + a.count)
    for done, (seed, problems, n, _) in enumerate(_map(_check_one, [(s, not a.no_ptx) for s in seeds], a.jobs), 1):
        runs += n
        if problems:
            failures.append(seed)
            where, detail = problems[0]
            print(f"seed {seed}: {where}: {detail.splitlines()[0][:300]}", flush=True)
        if done % 250 == 0 or done == a.count:
            print(f"[{done}/{a.count}] {len(failures)} failing, {runs} simulations, "
                  f"{time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    print(f"{a.count} programs (seeds {a.start}..{a.start + a.count - 1}), {runs} simulations, "
          f"{'PTX validated at -O0 and -O3, ' if not a.no_ptx else ''}{len(failures)} disagreements, "
          f"{time.time() - t0:.0f} s")
    if failures:
        print(f"reproduce: python -m ember.fuzz show {failures[0]}")
    return 1 if failures else 0


def cmd_show(a) -> int:
    p = from_seed(a.seed)
    print(p.source, end="")
    print(f"// grid {p.grid}, block {p.block}, {p.slots} output slots per thread, input seed {p.input_seed}")
    return 0


def cmd_corpus(a) -> int:
    entries = []
    seeds = [s for s in range(a.start, a.start + a.count) if a.containing is None or a.containing in from_seed(s).source]
    for seed, problems, _, report in _map(_check_one, [(s, True) for s in seeds], a.jobs):
        if problems:
            print(f"seed {seed} disagrees ({problems[0][0]}); not added", file=sys.stderr)
            continue
        entries.append(C.entry(seed, report.program, report.reference))
    new = len(entries)
    if a.append:
        entries = C.read(a.out) + entries
    C.write(a.out, entries)
    print(f"{new} programs written to {a.out}" + (f" ({len(entries)} in all)" if a.append else ""))
    return 0 if new == len(seeds) else 1


def cmd_refresh(a) -> int:
    from .differential import reference
    entries, changed = C.refresh(C.read(a.corpus), reference)
    for seed, names in changed:
        print(f"seed {seed}: {', '.join(names)} changed")
    C.write(a.corpus, entries)
    print(f"{len(entries)} programs re-simulated, {len(changed)} changed, written to {a.corpus}")
    return 0


def cmd_gpu(a) -> int:
    from ember.runtime import cuda
    try:
        cuda.context(0)
    except cuda.NoGPUError as e:
        print(f"python -m ember.fuzz gpu: {e}", file=sys.stderr)
        return 2
    entries = C.read(a.corpus)
    if a.seeds:
        wanted = {int(x) for x in a.seeds.split(",")}
        entries = [e for e in entries if e["seed"] in wanted]
    entries = entries[: a.limit]
    levels = [int(x) for x in a.opt.split(",")]
    t0 = time.time()

    def failed(e, opt, program, outputs, problem):
        print(f"seed {e['seed']} -O{opt}: {problem}", flush=True)
        _explain(program, outputs, a.dump and os.path.join(a.dump, f"seed{e['seed']}_O{opt}.npz"))

    from .large import forced
    with forced() if a.large else contextlib.nullcontext():
        failures = C.run_on_gpu(entries, levels, on_failure=failed)
    ints_only = sum(1 for e in entries if not set(e["types"]) & {"f16", "bf16", "f32", "f64"})
    ctx = cuda.context(0)                  # the GPU run_on_gpu ran on
    summary = (f"{len(entries)} programs ({ints_only} integer-only, {len(entries) - ints_only} with floats) "
               f"x -O{','.join(map(str, levels))}{' (large-function path)' if a.large else ''} on {ctx.name} "
               f"({ctx.arch}): {len(failures)} disagree with the simulator, {time.time() - t0:.0f} s")
    print(summary)
    if a.out:
        import json
        with open(a.out, "w") as f:
            json.dump({"summary": summary, "failures": failures}, f, indent=1)
    return 1 if failures else 0


def _explain(program, gpu: dict, dump: str | None) -> None:
    """Re-simulate a program whose GPU results differ and show the first differing elements."""
    import numpy as np

    from .differential import reference, same
    ref = reference(program)
    for name, want in ref.items():
        ok = same(want, gpu[name], name[4:])
        for k in np.nonzero(~ok)[0][:4]:
            thread, slot = divmod(int(k), program.slots)
            print(f"    {name}[{k}] thread {thread} slot {slot}: simulator {want[k]!r}, GPU {gpu[name][k]!r}")
    if dump:
        os.makedirs(os.path.dirname(dump), exist_ok=True)
        np.savez(dump, **{f"sim_{k}": v for k, v in ref.items()}, **{f"gpu_{k}": v for k, v in gpu.items()})


def cmd_cli(a) -> int:
    from . import cli_fuzz
    t0 = time.time()
    failures, statuses = [], {}
    seeds = range(a.start, a.start + a.count)
    for done, (seed, code, problem, argv) in enumerate(_map(cli_fuzz.check_seed, list(seeds), a.jobs), 1):
        statuses[code] = statuses.get(code, 0) + 1
        if problem:
            failures.append(seed)
            print(f"seed {seed}: ember {' '.join(argv)[:200]}: {problem[:400]}", flush=True)
        if done % 500 == 0 or done == a.count:
            print(f"[{done}/{a.count}] {len(failures)} failing, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    print(f"{a.count} command lines (seeds {a.start}..{a.start + a.count - 1}): exit statuses "
          f"{dict(sorted(statuses.items()))}, {len(failures)} problems, {time.time() - t0:.0f} s")
    if failures:
        print(f"reproduce: python -m ember.fuzz cli --start {failures[0]} --count 1 --jobs 1")
    return 1 if failures else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m ember.fuzz", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="check generated programs")
    r.add_argument("--count", type=int, default=1000)
    r.add_argument("--start", type=int, default=0)
    r.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    r.add_argument("--no-ptx", action="store_true", help="skip compiling and validating PTX")
    s = sub.add_parser("show", help="print one program")
    s.add_argument("seed", type=int)
    c = sub.add_parser("corpus", help="write a corpus of checked programs with their simulator results")
    c.add_argument("--count", type=int, default=500)
    c.add_argument("--start", type=int, default=0)
    c.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    c.add_argument("--out", required=True)
    c.add_argument("--append", action="store_true", help="add to the corpus in --out instead of replacing it")
    c.add_argument("--containing", metavar="TEXT", help="only the programs whose source contains TEXT")
    rf = sub.add_parser("refresh", help="recompute a corpus's simulator digests from its stored programs")
    rf.add_argument("corpus")
    g = sub.add_parser("gpu", help="run a corpus on the GPU against its simulator results")
    g.add_argument("corpus")
    g.add_argument("--limit", type=int, default=None)
    g.add_argument("--opt", default="3,0", help="comma-separated -O levels (default 3,0)")
    g.add_argument("--out", help="write a JSON report here")
    g.add_argument("--seeds", help="only these comma-separated seeds")
    g.add_argument("--dump", help="save the simulator's and the GPU's outputs of failing programs here (.npz)")
    g.add_argument("--large", action="store_true",
                   help="compile every program through the large-function path (cut blocks, codegen -O0)")
    cl = sub.add_parser("cli", help="mutation-fuzz the ember command")
    cl.add_argument("--count", type=int, default=1000)
    cl.add_argument("--start", type=int, default=0)
    cl.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = p.parse_args(argv)
    return {"run": cmd_run, "show": cmd_show, "corpus": cmd_corpus, "refresh": cmd_refresh, "gpu": cmd_gpu, "cli": cmd_cli}[a.command](a)


if __name__ == "__main__":
    sys.exit(main())
