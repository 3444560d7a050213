"""`ember compile`: its options, and the plan it runs - one job per (source, variant),
in this process or in `-j N` worker processes, with a progress line on a terminal."""

from __future__ import annotations

import gc
import os
import sys

from ..cli_support import UsageError, read_capped, stem
from ..output_files import check_output
from .job import BUILD_EMITS, EXTENSIONS, STAGE_EMITS, Job, run_job


def add_arguments(c, default_arch: str, arch_names: list, pass_help: str | None) -> None:
    c.add_argument("files", nargs="+", metavar="FILE", help="source files (.ember); `-` reads standard input")
    c.add_argument("-o", dest="output", metavar="OUT",
                   help="output file (`-` for standard output); a directory with several inputs or "
                        "variants, or when it is one or ends in /. Default: <input stem>[.<variant>]<extension> in the current directory")
    c.add_argument("--arch", dest="archs", action="append", metavar="sm_XX",
                   help=f"target GPU architecture (default {default_arch}); repeat it or list several "
                        f"(sm_80,sm_90) for --emit fatbin. One of: {', '.join(arch_names)}")
    c.add_argument("--ptx-version", metavar="X.Y",
                   help="PTX ISA version to emit (default: the lowest the target supports, raised "
                        "to what the kernels' instructions need, e.g. 8.0 for bulk copies)")
    c.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE[,VALUE...]",
                   help="bind a kernel const parameter (repeatable; `-D NAME` means NAME=1); a list of "
                        "values compiles one variant per combination of all -D lists")
    c.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="look for imports in DIR after the importing file's directory (repeatable, in "
                        "order; then the directories of EMBER_INCLUDE_PATH)")
    c.add_argument("-Werror", dest="werror", action="store_true",
                   help="treat warnings as errors (exit 1, no output written)")
    c.add_argument("-w", dest="no_warnings", action="store_true", help="print no warnings")
    c.add_argument("-lineinfo", "-g", dest="line_info", action="store_true",
                   help="write .file/.loc directives (the Ember source line of each instruction) into the "
                        "PTX, for Nsight Compute and compute-sanitizer; the same code otherwise (the "
                        "directives only; see docs/cli.md for the cost)")
    c.add_argument("--programmatic-launch", dest="programmatic_launch", action="store_const", const="wait",
                   default=False,
                   help="start every kernel without a griddep_wait of its own with griddep_wait(), so a runtime "
                        "may launch it as a programmatic dependent launch (its launch overlaps the end of the "
                        "kernel before it on the stream; sm_90+, docs/language.md)")
    c.add_argument("--programmatic-signal", dest="programmatic_launch", action="store_const", const="signal",
                   help="--programmatic-launch, with griddep_launch_dependents() before the wait: the next "
                        "kernel may launch while this one runs (for kernels of a few blocks an SM)")
    c.add_argument("--remarks", action="store_true",
                   help="print the optimisation remarks (R0001): where contiguous loads or stores were not "
                        "merged into 64/128-bit accesses, and the fact that was missing")
    c.add_argument("--color", choices=["auto", "always", "never"], default="auto",
                   help="colour the diagnostics: auto (default) when standard error is a terminal and "
                        "NO_COLOR is not set")
    c.add_argument("-k", "--kernel", dest="kernels", action="append", metavar="NAME[,NAME...]",
                   help="compile only these kernels of each file (repeatable; default all): the "
                        "others are neither checked nor written, so their const parameters need no value")
    c.add_argument("--variants", metavar="FILE",
                   help="compile one variant per line of FILE (`NAME=VALUE NAME=VALUE ...`; # comments), "
                        "each with the -D values")
    c.add_argument("--tuned", metavar="DEVICE",
                   help="compile one variant per configuration that the tuned tables next to FILE "
                        "(tuned/KERNEL.json, from `ember tune`) chose for the device whose name contains "
                        "DEVICE (e.g. H100), each with its shape's const values")
    c.add_argument("--list-outputs", action="store_true",
                   help="compile nothing: print each output this command would write and its const "
                        "values, one per line (OUTPUT<tab>NAME=VALUE<tab>...), for build systems")
    c.add_argument("-j", dest="jobs", type=int, default=1, metavar="N",
                   help="compile up to N outputs at once in worker processes (default 1)")
    c.add_argument("-O", dest="opt", type=int, default=3, choices=range(4), metavar="N",
                   help="optimization level 0..3 (default 3): Ember's pass pipeline and LLVM's -O")
    c.add_argument("--emit", default="ptx", choices=list(EXTENSIONS),
                   help="what to write (default ptx): a stage (typed AST, IR, optimized IR, LLVM IR, "
                        "optimized LLVM IR), PTX, a cubin (one --arch), a fatbin (a cubin per --arch and "
                        "the PTX of the lowest), or a C/C++ header embedding the image (see --image)")
    c.add_argument("--image", default="fatbin", choices=["fatbin", "cubin", "ptx"],
                   help="what --emit header embeds (default fatbin)")
    c.add_argument("--manifest", metavar="FILE.json",
                   help="also write a JSON manifest: per output its sha256, the files read, the const "
                        "values, and per kernel and arch its registers, spills and shared memory")
    c.add_argument("--no-cache", action="store_true",
                   help="neither read nor write the compile cache (EMBER_CACHE_DIR, default the user's "
                        "cache directory; `ember cache info`)")
    c.add_argument("--check", action="store_true",
                   help="assemble the PTX to a cubin (nvJitLink, or ptxas) and print each kernel's "
                        "registers, spills, stack and shared memory")
    c.add_argument("--validator", default="auto", choices=["auto", "nvjitlink", "ptxas"],
                   help="the assembler --check uses (default: nvJitLink if installed, else ptxas)")
    c.add_argument("--verify-diagnostics", action="store_true",
                   help="check the diagnostics against `// expected-error@+N {{text}}` (and "
                        "expected-warning, expected-no-diagnostics) annotations in the source; "
                        "exit 0 when they match exactly")
    c.add_argument("--time-stages", action="store_true",
                   help="print the time spent in each stage and pass to standard error")
    c.add_argument("--llvm-pipeline", default="cleanup", choices=["cleanup", "full"],
                   help="what LLVM runs after Ember's passes at -O1..3 (default cleanup: sroa, "
                        "instcombine, simplifycfg, loop rotation; full: LLVM's own -O pipeline, "
                        "about 15 ms slower and rarely better)")
    deps = c.add_argument_group("dependency files (as gcc and clang write them, for Make and Ninja's deps = gcc)")
    deps.add_argument("-M", dest="deps_only", action="store_const", const="all",
                      help="compile nothing: write the dependency rule (every file read: the source and "
                           "all its imports) to standard output, or to -MF's file")
    deps.add_argument("-MM", dest="deps_only", action="store_const", const="user",
                      help="the same without the standard library's files")
    deps.add_argument("-MD", dest="depfile_all", action="store_true",
                      help="also write a dependency file listing every file read (the source and all its "
                           "imports): OUT with its extension replaced by .d, or -MF's")
    deps.add_argument("-MMD", dest="depfile_user", action="store_true",
                      help="the same without the standard library's files")
    deps.add_argument("-MF", dest="depfile", metavar="FILE", help="the dependency file's name (one output only)")
    deps.add_argument("-MT", dest="dep_targets", action="append", metavar="TARGET", type=lambda t: ("raw", t),
                      help="the rule's target, as written (repeatable; default: the output file)")
    deps.add_argument("-MQ", dest="dep_targets", action="append", metavar="TARGET", type=lambda t: ("quote", t),
                      help="the same, with the characters special to Make quoted ($ as $$, spaces)")
    deps.add_argument("-MP", dest="dep_phony", action="store_true",
                      help="an empty rule for each import, so that deleting one does not stop Make")
    c.add_argument("-p", "--passes", metavar="PASS[,PASS...]",
                   help="run these Ember passes instead of the -O N pipeline (expand-math, last, shows the "
                        "math expansions in the IR; the PTX is the same without it)"
                        + (f". Passes: {pass_help}" if pass_help else ""))
    c.add_argument("--print-after-all", action="store_true",
                   help="print the IR after every pass to standard error")
    c.add_argument("--time-passes", action="store_true",
                   help="print each pass's time (and the verifier's, run after each) to standard error")


def run(args) -> int:
    from .. import targets
    from . import variants
    archs = _archs(args.archs or [targets.DEFAULT_ARCH], args.ptx_version)
    if len(archs) > 1 and not (args.emit == "fatbin" or (args.emit == "header" and args.image == "fatbin")):
        raise UsageError(f"several --arch values make a fatbin (--emit fatbin, or --emit header with "
                         f"--image fatbin); --emit {args.emit} takes one")
    if args.jobs < 1:
        raise UsageError("-j takes a positive number of worker processes")
    rows, uses = None, None
    if args.tuned is not None:
        if len(args.files) != 1 or args.variants:
            raise UsageError("--tuned takes one source file and no --variants")
        from .tuned import tuned_rows
        rows, uses = tuned_rows(args.files[0], _kernel_names(args.kernels), args.tuned)
    matrix, varying = variants.expand(args.defines, args.variants, rows)
    options = job_options(args, archs)
    jobs = _plan(args, matrix, varying, options)
    if args.list_outputs:
        for job in jobs:
            print("\t".join([job.output, *(f"{n}={v}" for n, v in job.defines.items())]))
        return 0
    _check_depfile_options(args, jobs)
    if args.manifest and args.emit in STAGE_EMITS:
        raise UsageError(f"--manifest describes built outputs (--emit {', '.join(BUILD_EMITS)}), not --emit {args.emit}")
    if args.manifest:           # every output path checked before any is written
        check_output(args.manifest, args.files, "the manifest")
    serial = args.jobs == 1 or len(jobs) == 1 or any("-" in (j.output, j.depfile) for j in jobs) or \
        args.print_after_all or args.time_passes or args.time_stages
    if not serial and options["cache_dir"] is not None:
        _cache_for_workers(options)
    results = _run_serial(jobs) if serial else _run_parallel(jobs, args.jobs)
    status = max(r.status for r in results)
    if args.manifest:
        from . import manifest
        records = [r.record for r in results if r.record is not None]
        if uses is not None:
            manifest.add_tuned_for(records, rows, uses)
        manifest.write(args.manifest, records, inputs=list(args.files) + [f for r in records for f in r["reads"]])
    return status


def _cache_for_workers(options: dict) -> None:
    """Workers would each warn about a cache they cannot write: the command finds out
    once, says so once, and has them only read it."""
    from ..cache import Cache, _report_unwritable
    why = Cache(options["cache_dir"]).writable()
    if why is not None:
        _report_unwritable(options["cache_dir"], why)
        options["cache_read_only"] = True


def _archs(given: list, ptx_version) -> list:
    from .. import targets
    archs: list = []
    for item in given:
        for arch in item.split(","):
            arch = arch.strip()
            try:
                targets.resolve(arch, ptx_version)
            except targets.TargetError as e:
                raise UsageError(str(e)) from None
            if arch not in archs:
                archs.append(arch)
    return archs


def job_options(args, archs: list) -> dict:
    """The options every job reads (a plain dict: it goes to worker processes)."""
    from .. import targets
    from ..cache import default_dir, disabled_by_environment
    old = [a for a in archs if targets.resolve(a, args.ptx_version).sm < 90]
    if args.programmatic_launch and old:
        flag = "--programmatic-signal" if args.programmatic_launch == "signal" else "--programmatic-launch"
        raise UsageError(f"{flag} needs sm_90 or newer (griddepcontrol); --arch {old[0]} is older")
    passes = None
    if args.passes is not None:
        from ..cli_support import parse_pass_list
        passes = parse_pass_list(args.passes)
    return {
        "emit": args.emit, "archs": archs, "ptx_version": args.ptx_version, "opt": args.opt,
        "kernels": _kernel_names(args.kernels),
        "llvm_pipeline": args.llvm_pipeline, "passes": passes, "image": args.image,
        # --time-stages and --time-passes time a compile: not a cache lookup
        "cache_dir": None if args.no_cache or disabled_by_environment() or args.time_stages or args.time_passes
        else default_dir(),
        "check": args.check, "validator": args.validator, "manifest": bool(args.manifest),
        "verify_diagnostics": args.verify_diagnostics, "time_stages": args.time_stages,
        "time_passes": args.time_passes, "print_after_all": args.print_after_all,
        "depfile_user": (args.depfile_user and not args.depfile_all) or args.deps_only == "user",
        "dep_targets": args.dep_targets, "dep_phony": args.dep_phony, "deps_only": bool(args.deps_only),
        "include_dirs": [os.path.abspath(d) for d in args.include_dirs],
        "werror": args.werror, "no_warnings": args.no_warnings, "line_info": args.line_info,
        "color": _color(args.color), "remarks": args.remarks, "programmatic_launch": args.programmatic_launch,
    }


def _color(choice: str) -> bool:
    """Coloured diagnostics: always, never, or (auto) on a terminal unless NO_COLOR is set
    (no-color.org) or the terminal is dumb."""
    if choice != "auto":
        return choice == "always"
    return sys.stderr.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def _kernel_names(items: list | None) -> list | None:
    if items is None:
        return None
    names = [n.strip() for item in items for n in item.split(",")]
    bad = [n for n in names if not n.isidentifier()]
    if bad:
        raise UsageError(f"-k expects kernel names, got `{bad[0]}`")
    return sorted(set(names))


def _plan(args, matrix: list, varying: list, options: dict) -> list:
    from .variants import suffix
    ext = EXTENSIONS[args.emit]
    stdin = read_capped(sys.stdin, "standard input") if "-" in args.files else None
    names = [(f, v, stem(f) + suffix(v, varying) + ext) for f in args.files for v in matrix]
    # several outputs, or -o naming a directory (an existing one, or one ending in /): -o is a directory
    several = len(names) > 1 or (args.output not in (None, "-") and (
        args.output.endswith(("/", os.sep)) or os.path.isdir(args.output)))
    if args.output is not None and several and args.output != "-":
        if os.path.exists(args.output) and not os.path.isdir(args.output):
            raise UsageError(f"-o {args.output}: with several inputs or variants -o names a directory, "
                             f"and {args.output} is a file")
        try:
            os.makedirs(args.output, exist_ok=True)
        except OSError as e:
            raise UsageError(f"cannot create the output directory {args.output}: {e.strerror}") from None
    if args.output == "-" and len(names) > 1:
        raise UsageError(f"-o - writes one output to standard output; this command makes {len(names)} "
                         f"({len(args.files)} input(s) x {len(matrix)} variant(s)): give -o a directory")
    jobs, seen = [], {}
    for f, v, name in names:
        if args.output is None:
            out = "-" if f == "-" and len(names) == 1 else name
        elif args.output == "-":
            out = "-"
        else:
            out = os.path.join(args.output, name) if several else args.output
        if out != "-" and seen.get(out, (f, v)) != (f, v):
            raise UsageError(f"{seen[out][0]} and {f} would both be written to {out}; "
                             "compile them separately, or with -o naming different files")
        seen[out] = (f, v)
        check_output(out, [f])
        jobs.append(Job(f, v, out, options, stdin if f == "-" else None, _depfile_name(args, f, out, name)))
    return jobs


def _depfile_name(args, source: str, out: str, name: str) -> str | None:
    if args.deps_only:
        return args.depfile or "-"
    if not (args.depfile_all or args.depfile_user):
        return None
    if args.depfile:
        return args.depfile
    return os.path.splitext(name if out == "-" else out)[0] + ".d"


def _check_depfile_options(args, jobs: list) -> None:
    wants = args.depfile_all or args.depfile_user or args.deps_only
    if not wants and (args.depfile or args.dep_targets or args.dep_phony):
        raise UsageError("-MF, -MT, -MQ and -MP go with -M, -MM, -MD or -MMD")
    if args.deps_only and (args.depfile_all or args.depfile_user):
        raise UsageError("-M and -MM write only the dependencies; -MD and -MMD write them beside a compile: "
                         "give one kind")
    if args.deps_only and args.depfile is None and len(jobs) > 1:
        pass          # several rules on standard output, one after the other (as gcc -M a.c b.c)
    if wants and args.depfile and len(jobs) > 1:
        raise UsageError("-MF names one dependency file: with several inputs or variants leave it out "
                         "(each output gets its own .d)")
    if wants and args.verify_diagnostics:
        raise UsageError("--verify-diagnostics writes no output to have dependencies")
    for job in jobs:
        if job.depfile is not None:
            check_output(job.depfile, [job.source], "the dependency file")
            if job.output != "-" and os.path.realpath(job.depfile) == os.path.realpath(job.output) and \
                    (not os.path.exists(job.output) or os.path.isfile(job.output)):
                raise UsageError(f"the dependency file and the output are both {job.output}")


def _show(job: Job, result) -> None:
    if result.err:
        sys.stderr.write(result.err)


class _Progress:
    """`[k/n] file` on one terminal line, rewritten as outputs finish; nothing when standard
    error is not a terminal (a log, a CI run) or for a single output."""

    def __init__(self, total: int):
        self.total = total
        self.on = total > 1 and sys.stderr.isatty()

    def done(self, k: int, job: Job) -> None:
        if self.on:
            sys.stderr.write(f"\r\x1b[K[{k}/{self.total}] {job.output}")
            sys.stderr.flush()

    def clear(self) -> None:
        if self.on:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def _run_serial(jobs: list) -> list:
    progress = _Progress(len(jobs))
    results = []
    for k, job in enumerate(jobs, 1):
        if k > 1:
            gc.collect()        # the last job's IR (the `ember` command runs without the collector)
        result = run_job(job)
        progress.clear()
        _show(job, result)
        progress.done(k, job)
        results.append(result)
    progress.clear()
    return results


def _run_parallel(jobs: list, workers: int) -> list:
    """Workers build; this process prints each job's messages in job order."""
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    progress = _Progress(len(jobs))
    results: list = [None] * len(jobs)
    shown = 0
    with ProcessPoolExecutor(max_workers=min(workers, len(jobs)), initializer=gc.enable) as pool:
        pending = {pool.submit(run_job, job): i for i, job in enumerate(jobs)}
        finished = 0
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                results[pending.pop(fut)] = fut.result()
                finished += 1
            progress.clear()
            while shown < len(jobs) and results[shown] is not None:
                _show(jobs[shown], results[shown])
                shown += 1
            progress.done(finished, jobs[min(shown, len(jobs) - 1)])
    progress.clear()
    return results
