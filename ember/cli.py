"""The `ember` command.

    ember compile FILE... [-o OUT] [--arch sm_XX] [-D NAME=VALUE]... [-O N]
                  [--emit ast|ir|ir-opt|llvm|llvm-opt|ptx] [--check] [--verify-diagnostics]
    ember opt FILE.ir [-p PASS,...] [-O N]      parse IR, run passes, print IR
    ember run FILE --grid X[,Y,Z] [--kernel K] NAME=VALUE...   run a kernel in the simulator
    ember --version

Exit status: 0 success, 1 errors in the program (reported as diagnostics), 2 usage
errors, 70 an internal compiler error (a bug in Ember: please report it).
"""

from __future__ import annotations

import argparse
import os
import sys

EXIT_OK, EXIT_ERRORS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 70
BUG_URL = "https://github.com/ember-compiler/ember/issues"

_EXTENSIONS = {"ast": ".ast", "ir": ".ir", "ir-opt": ".opt.ir", "llvm": ".ll", "llvm-opt": ".opt.ll", "ptx": ".ptx"}


class UsageError(Exception):
    pass


def _version() -> str:
    from . import __version__
    try:
        import llvmlite
        import llvmlite.binding as llvm
        llvm_v = ".".join(map(str, llvm.llvm_version_info))
        return f"ember {__version__} (llvmlite {llvmlite.__version__}, LLVM {llvm_v})"
    except Exception:  # pragma: no cover
        return f"ember {__version__}"


def _parser() -> argparse.ArgumentParser:
    from .targets import DEFAULT_ARCH, archs
    p = argparse.ArgumentParser(
        prog="ember",
        description="Ember: a compiler for GPU kernels (Ember source -> structured SSA IR -> LLVM -> PTX).",
        epilog="Exit status: 0 success, 1 errors in the program, 2 usage errors, "
               "70 internal compiler error. Run `ember COMMAND --help` for a command's options.")
    p.add_argument("--version", action="version", version=_version())
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    c = sub.add_parser("compile", help="compile Ember source files to PTX (or dump a stage)",
                       description="Compile Ember source to PTX. Needs no GPU and no CUDA install.")
    c.add_argument("files", nargs="+", metavar="FILE", help="source files (.ember); `-` reads standard input")
    c.add_argument("-o", dest="output", metavar="OUT",
                   help="output file (`-` for standard output); with several inputs, a directory. "
                        "Default: <input stem><stage extension> in the current directory")
    c.add_argument("--arch", default=DEFAULT_ARCH, metavar="sm_XX",
                   help=f"target GPU architecture (default {DEFAULT_ARCH}); one of: {', '.join(archs())}")
    c.add_argument("--ptx-version", metavar="X.Y",
                   help="PTX ISA version to emit (default: the lowest the target supports)")
    c.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE",
                   help="bind a kernel const parameter (repeatable); `-D NAME` means NAME=1")
    c.add_argument("-O", dest="opt", type=int, default=3, choices=range(4), metavar="N",
                   help="optimization level 0..3 (default 3): Ember's pass pipeline and LLVM's -O")
    c.add_argument("--emit", default="ptx", choices=list(_EXTENSIONS),
                   help="the stage to write (default ptx): typed AST, IR, optimized IR, LLVM IR, "
                        "optimized LLVM IR or PTX")
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
    deps.add_argument("-MD", dest="depfile_all", action="store_true",
                      help="also write a dependency file listing every file read (the source and all its "
                           "imports): OUT with its extension replaced by .d, or -MF's")
    deps.add_argument("-MMD", dest="depfile_user", action="store_true",
                      help="the same without the standard library's files")
    deps.add_argument("-MF", dest="depfile", metavar="FILE", help="the dependency file's name (one input only)")
    deps.add_argument("-MT", dest="dep_targets", action="append", metavar="TARGET",
                      help="the rule's target (repeatable; default: the output file)")
    deps.add_argument("-MP", dest="dep_phony", action="store_true",
                      help="an empty rule for each import, so that deleting one does not stop Make")
    _pass_options(c, pipeline_flag=False)

    r = sub.add_parser("run", help="run a kernel in the simulator (no GPU needed)",
                       description="Compile FILE and run one kernel in Ember's simulator, which checks "
                                   "bounds, races, uninitialized shared memory, barriers and shuffles. "
                                   "Buffers written by the kernel are printed (and saved with --out).",
                       epilog="ARGS are NAME=VALUE, one per kernel parameter: a number for scalars; for "
                              "buffers FILE.npy, or zeros:SHAPE, ones:SHAPE, arange:SHAPE, rand:SHAPE "
                              "(standard normal, seed 0) with SHAPE like 1024 or 4x256, in the "
                              "parameter's element type.")
    r.add_argument("file", metavar="FILE", help="source file (`-` reads standard input)")
    r.add_argument("args", nargs="*", metavar="NAME=VALUE", help="the kernel's arguments")
    r.add_argument("--kernel", metavar="NAME", help="the kernel to run (default: the only one)")
    r.add_argument("--grid", required=True, metavar="X[,Y,Z]", help="grid size in blocks")
    r.add_argument("--block", metavar="X[,Y,Z]", help="block size (default: the kernel's `block(...)`)")
    r.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE",
                   help="bind a kernel const parameter (repeatable)")
    r.add_argument("-O", dest="opt", type=int, default=3, choices=range(4), metavar="N",
                   help="run the IR after the -O N pipeline (default 3; -O0 runs it unoptimized)")
    r.add_argument("--step-limit", type=int, default=1_000_000, metavar="N",
                   help="stop any loop after N iterations with an error (default 1000000)")
    r.add_argument("--no-race-check", action="store_true", help="do not track data races (faster)")
    r.add_argument("--out", metavar="DIR", help="save each buffer the kernel writes as DIR/NAME.npy")

    o = sub.add_parser("opt", help="read IR text, run passes, print the IR",
                       description="Parse Ember IR, verify it, run passes (verifying after each), print it.")
    o.add_argument("file", metavar="FILE", help="an IR file (`-` reads standard input)")
    o.add_argument("-p", "--passes", default="", metavar="PASS[,PASS...]",
                   help="comma-separated pass names (default: none; the IR is only verified and printed)")
    o.add_argument("-O", dest="opt", type=int, choices=range(4), metavar="N",
                   help="run the -O N pipeline instead of --passes")
    o.add_argument("-o", dest="output", metavar="OUT", default="-", help="output file (default standard output)")
    _pass_options(o, pipeline_flag=True)
    return p


def _pass_options(p: argparse.ArgumentParser, pipeline_flag: bool) -> None:
    from .ir.passes import PASSES, PIPELINES
    if not pipeline_flag:
        p.add_argument("-p", "--passes", metavar="PASS[,PASS...]",
                       help="run these Ember passes instead of the -O N pipeline (expand-math is "
                            f"needed before lowering). Passes: {', '.join(sorted(PASSES))}")
    p.add_argument("--print-after-all", action="store_true",
                   help="print the IR after every pass to standard error")
    p.add_argument("--time-passes", action="store_true",
                   help="print each pass's time (and the verifier's, run after each) to standard error")
    if pipeline_flag:
        p.formatter_class = argparse.RawDescriptionHelpFormatter
        p.epilog = "pipelines:\n" + "\n".join(f"  -O{n}: {','.join(names)}" for n, names in PIPELINES.items())


def _pass_list(text: str | None) -> list[str] | None:
    from .ir.passes import PASSES
    if text is None:
        return None
    names = [n.strip() for n in text.split(",") if n.strip()]
    for n in names:
        if n not in PASSES:
            raise UsageError(f"unknown pass `{n}`; passes: {', '.join(sorted(PASSES))}")
    return names


def _print_after(args):
    """The after-pass hook for --print-after-all (None when not asked for)."""
    if not args.print_after_all:
        return None
    from .ir.printer import print_module

    def hook(name, module):
        print(f"// ----- IR after {name} -----", file=sys.stderr)
        print(print_module(module), file=sys.stderr, end="")
    return hook


def _report_pass_times(timings: dict) -> None:
    passes = [(k[5:], v) for k, v in timings.items() if k.startswith("pass:")]
    passes.append(("(verifier)", timings.get("verify", 0.0)))
    total = sum(v for _, v in passes)
    print("===-- Ember pass timings --===", file=sys.stderr)
    for name, secs in passes:
        share = 100 * secs / total if total else 0.0
        print(f"  {name:16s} {secs * 1000:8.2f} ms  {share:5.1f}%", file=sys.stderr)
    print(f"  {'total':16s} {total * 1000:8.2f} ms", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        parser = _parser()
        try:
            args, extra = parser.parse_known_args(argv)
            if extra and getattr(args, "command", None) == "run":
                # NAME=VALUE arguments may come after options
                args.args += [e for e in extra if "=" in e and not e.startswith("-")]
                extra = [e for e in extra if not ("=" in e and not e.startswith("-"))]
            if extra:
                parser.error(f"unrecognized arguments: {' '.join(extra)}")
        except SystemExit as e:   # argparse: --help/--version (0) or usage error (2)
            return int(e.code or 0)
        if args.command is None:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        if args.command == "compile":
            return _compile(args)
        if args.command == "opt":
            return _opt(args)
        if args.command == "run":
            return _run(args)
        return EXIT_USAGE
    except UsageError as e:
        print(f"ember: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as e:  # never a traceback for users
        return _internal(e)


def _internal(e: BaseException) -> int:
    from .diagnostics import InternalError
    if os.environ.get("EMBER_DEBUG"):
        import traceback
        traceback.print_exc()
    if isinstance(e, InternalError):
        msg = str(e)
    else:
        msg = f"internal compiler error: {type(e).__name__}: {e}"
    print(f"ember: {msg}\nember: this is a bug in Ember, not in your program; please report it at {BUG_URL} "
          "(set EMBER_DEBUG=1 for a traceback)", file=sys.stderr)
    return EXIT_INTERNAL


def _defines(items: list[str]) -> dict:
    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        name = name.strip()
        if not name.isidentifier():
            raise UsageError(f"-D expects NAME=VALUE, got `{item}`")
        out[name] = value if eq else "1"
    return out


def _read(path: str):
    from .source import SourceFile
    if path == "-":
        return SourceFile("<stdin>", sys.stdin.read())
    try:
        with open(path, encoding="utf-8") as f:
            return SourceFile(path, f.read(), os.path.abspath(path))
    except FileNotFoundError:
        raise UsageError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"{path} is a directory") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not UTF-8 text") from None
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror}") from None


def _outputs(files: list[str], output: str | None, ext: str) -> list[str]:
    if output is not None and len(files) > 1:
        if output == "-":
            return ["-"] * len(files)
        if os.path.exists(output) and not os.path.isdir(output):
            raise UsageError(f"-o {output}: with several inputs -o names a directory, and {output} is a file")
        try:
            os.makedirs(output, exist_ok=True)
        except OSError as e:
            raise UsageError(f"cannot create the output directory {output}: {e.strerror}") from None
        outs = [os.path.join(output, _stem(f) + ext) for f in files]
    elif output is not None:
        outs = [output]
    else:
        outs = ["-" if f == "-" else _stem(f) + ext for f in files]
    seen: dict[str, str] = {}
    for f, out in zip(files, outs):
        if out != "-" and out in seen and seen[out] != f:
            raise UsageError(f"{seen[out]} and {f} would both be written to {out}; "
                             "compile them separately, or with -o naming different files")
        seen.setdefault(out, f)
    return outs


def _stem(path: str) -> str:
    base = os.path.basename(path)
    return base[:-6] if base.endswith(".ember") else os.path.splitext(base)[0]


def _write(path: str, text: str) -> None:
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror}") from None


def _compile(args) -> int:
    from . import driver
    from .diagnostics import CompileError
    from . import targets
    try:
        targets.resolve(args.arch, args.ptx_version)
    except targets.TargetError as e:
        raise UsageError(str(e)) from None
    defines = _defines(args.defines)
    outputs = _outputs(args.files, args.output, _EXTENSIONS[args.emit])
    _depfile_options(args)
    passes = _pass_list(args.passes)
    status = EXIT_OK
    for path, out in zip(args.files, outputs):
        source = _read(path)
        if args.verify_diagnostics:
            status = max(status, _verify_diagnostics(source, args, defines))
            continue
        try:
            prog = driver.compile(source, arch=args.arch, defines=defines, opt=args.opt,
                                  ptx_version=args.ptx_version, passes=passes,
                                  after_pass=_print_after(args), llvm_pipeline=args.llvm_pipeline,
                                  stop_after=None if args.check or args.emit == "ptx" else args.emit)
        except driver.PipelineError as e:
            raise UsageError(str(e)) from None
        except CompileError as e:
            print(e.diagnostics.render(), file=sys.stderr)
            n = len(e.diagnostics.errors)
            print(f"ember: {n} error{'s' if n != 1 else ''} in {source.name}", file=sys.stderr)
            status = max(status, EXIT_ERRORS)
            continue
        for w in prog.warnings:
            print(w.render(), file=sys.stderr)
        _write(out, prog.stage(args.emit))
        _write_depfile(args, path, out, prog.sources)
        if args.check:
            status = max(status, _check(prog, args, sys.stderr if out == "-" else sys.stdout))
        if args.time_passes:
            _report_pass_times(prog.timings)
        if args.time_stages:
            for stage, secs in prog.timings.items():
                print(f"  {stage:24s} {secs * 1000:8.2f} ms", file=sys.stderr)
    return status


def _depfile_options(args) -> None:
    wants = args.depfile_all or args.depfile_user
    if not wants and (args.depfile or args.dep_targets or args.dep_phony):
        raise UsageError("-MF, -MT and -MP go with -MD or -MMD")
    if wants and args.depfile and len(args.files) > 1:
        raise UsageError("-MF names one dependency file: with several inputs leave it out "
                         "(each output gets its own .d)")
    if wants and args.verify_diagnostics:
        raise UsageError("--verify-diagnostics writes no output to have dependencies")


def _write_depfile(args, source: str, out: str, sources: list) -> None:
    from . import depfile
    if not (args.depfile_all or args.depfile_user):
        return
    name = args.depfile or (_stem(source) + ".d" if out == "-" else os.path.splitext(out)[0] + ".d")
    targets = args.dep_targets or [out if out != "-" else _stem(source) + _EXTENSIONS[args.emit]]
    deps = depfile.dependencies(sources, user_only=args.depfile_user and not args.depfile_all)
    _write(name, depfile.rule(targets, deps, os.getcwd(), phony=args.dep_phony))


def _check(prog, args, stream) -> int:
    from .lowering.validate import ValidationError, ValidatorUnavailable, validate
    try:
        v = validate(prog.ptx, prog.arch, args.validator)
    except ValidatorUnavailable as e:
        raise UsageError(str(e)) from None
    except ValidationError as e:
        print(f"{prog.name}: error[E0902]: the PTX does not assemble for {e.arch}:\n{e.log}", file=sys.stderr)
        return EXIT_INTERNAL
    print(f"{prog.name}: valid PTX {prog.ptx_version} for {v.arch} ({v.tool})", file=stream)
    for name in prog.kernels:
        res = v.kernels.get(name)
        if res is not None:
            print(f"  {name}: {res.summary()}", file=stream)
    return EXIT_OK


def _verify_diagnostics(source, args, defines) -> int:
    from . import driver
    from .diagnostics import CompileError
    from .verify_diagnostics import check_expectations
    try:
        prog = driver.compile(source, arch=args.arch, defines=defines, opt=args.opt, ptx_version=args.ptx_version)
        diags = prog.warnings
    except CompileError as e:
        diags = e.diagnostics.items
    problems = check_expectations(source, diags)
    for p in problems:
        print(p, file=sys.stderr)
    return EXIT_ERRORS if problems else EXIT_OK


def _dims(text: str, what: str) -> tuple:
    try:
        dims = tuple(int(x) for x in text.replace("x", ",").split(","))
    except ValueError:
        raise UsageError(f"{what} must be integers like 64 or 4,2, got `{text}`") from None
    if not dims or any(d <= 0 for d in dims):
        raise UsageError(f"{what} must be positive, got `{text}`")
    return dims


# `ember run` buffers are made in host memory: refuse sizes that cannot be meant.
MAX_RUN_BUFFER_BYTES = 1 << 30


def _run_arg(param, value: str):
    import numpy as np

    from . import values
    from .ir import semantics as S
    t = param.type
    if not param.is_pointer:
        try:
            return values.parse_scalar(value, t)
        except ValueError as e:
            raise UsageError(f"`{param.name}` is `{t}`: `{value}` is not a valid value: {e}") from None
    if value.endswith(".npy"):
        try:
            a = np.load(value, allow_pickle=False)
        except FileNotFoundError:
            raise UsageError(f"`{param.name}`: no such file: {value}") from None
        except Exception as e:   # not an .npy file, a pickled object, a truncated file, ...
            raise UsageError(f"`{param.name}`: cannot load {value} as a numpy array: {e}") from None
        if not isinstance(a, np.ndarray) or a.dtype.kind not in "biuf":
            raise UsageError(f"`{param.name}`: {value} does not hold a numeric array")
        return np.ascontiguousarray(a)
    kind, _, shape_text = value.partition(":")
    if kind not in ("zeros", "ones", "arange", "rand") or not shape_text:
        raise UsageError(f"`{param.name}`: expected FILE.npy, zeros:SHAPE, ones:SHAPE, arange:SHAPE or "
                         f"rand:SHAPE, got `{value}`")
    shape = _dims(shape_text, f"the shape of `{param.name}`")
    dt = S.dtype(t.pointee)
    n = 1
    for d in shape:
        n *= d
    nbytes = n * np.dtype(dt).itemsize
    if nbytes > MAX_RUN_BUFFER_BYTES:
        raise UsageError(f"`{param.name}`: {value} would take {nbytes} bytes; `ember run` makes buffers of "
                         f"at most {MAX_RUN_BUFFER_BYTES >> 30} GiB")
    if kind == "zeros":
        a = np.zeros(n)
    elif kind == "ones":
        a = np.ones(n)
    elif kind == "arange":
        a = np.arange(n)
    else:
        a = np.random.default_rng(0).standard_normal(n)
    return a.astype(dt).reshape(shape)


def _run_arguments(items: list[str]) -> dict:
    given: dict[str, str] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.isidentifier():
            raise UsageError(f"arguments are NAME=VALUE with a parameter's name, got `{item}`")
        if key in given:
            raise UsageError(f"`{key}` is given twice ({key}={given[key]} and {item})")
        given[key] = value
    return given


def _run(args) -> int:
    import numpy as np

    from . import driver
    from .diagnostics import CompileError
    from .abi import LaunchError
    from .sim import SimError, StepLimitExceeded, load
    if args.step_limit <= 0:
        raise UsageError(f"--step-limit must be positive, got {args.step_limit}")
    if args.out:
        if os.path.exists(args.out) and not os.path.isdir(args.out):
            raise UsageError(f"--out {args.out}: names a file; --out takes a directory")
        try:
            os.makedirs(args.out, exist_ok=True)
        except OSError as e:
            raise UsageError(f"--out {args.out}: cannot create the directory: {e.strerror}") from None
    grid = _dims(args.grid, "--grid")
    block = _dims(args.block, "--block") if args.block else None
    given = _run_arguments(args.args)
    source = _read(args.file)
    try:
        # The simulator runs the optimized IR: no lowering, so no PTX is needed.
        prog = driver.compile(source, defines=_defines(args.defines), opt=args.opt, stop_after="ir-opt",
                              kernels=[args.kernel] if args.kernel else None)
    except CompileError as e:
        print(e.diagnostics.render(), file=sys.stderr)
        return EXIT_ERRORS
    name = args.kernel or (next(iter(prog.kernels)) if len(prog.kernels) == 1 else None)
    if name is None:
        raise UsageError(f"choose a kernel with --kernel: {', '.join(prog.kernels)}")
    info = prog.kernels[name]
    unknown = set(given) - {p.name for p in info.params}
    missing = [p.name for p in info.params if p.name not in given]
    if unknown or missing:
        raise UsageError(f"`{name}` takes {', '.join(p.name for p in info.params)}"
                         + (f"; missing {', '.join(missing)}" if missing else "")
                         + (f"; unknown {', '.join(sorted(unknown))}" if unknown else ""))
    values = [_run_arg(p, given[p.name]) for p in info.params]
    try:
        load(prog).kernels[name](*values, grid=grid, block=block,
                                 step_limit=args.step_limit, check_races=not args.no_race_check)
    except (SimError, StepLimitExceeded) as e:
        print(e.diagnostic.render(), file=sys.stderr)
        return EXIT_ERRORS
    except LaunchError as e:
        raise UsageError(str(e)) from None
    for p, v in zip(info.params, values):
        if p.is_pointer and p.type.mut:
            with np.printoptions(threshold=8, edgeitems=4, precision=6):
                print(f"{p.name}: {v.shape} {p.type.pointee} {v.reshape(-1)}")
            if args.out:
                try:
                    np.save(os.path.join(args.out, f"{p.name}.npy"), v)
                except OSError as e:
                    raise UsageError(f"cannot write {os.path.join(args.out, p.name + '.npy')}: "
                                     f"{e.strerror}") from None
    return EXIT_OK


def _opt(args) -> int:
    from .ir.parser import IRSyntaxError, parse_module
    from .ir.passes import PIPELINES, PassFailed, run_passes
    from .ir.printer import print_module
    from .ir.verifier import VerifyError, verify_module
    source = _read(args.file)
    try:
        m = parse_module(source.text, source.name)
    except IRSyntaxError as e:
        line, col = e.span.line_col
        print(f"{source.name}:{line}:{col}: error[E0001]: {e}", file=sys.stderr)
        return EXIT_ERRORS
    try:
        verify_module(m)
    except VerifyError as e:
        print(f"{source.name}: error: the IR does not verify:\n{e}", file=sys.stderr)
        return EXIT_ERRORS
    names = PIPELINES[args.opt] if args.opt is not None else _pass_list(args.passes)
    timings: dict = {}
    try:
        run_passes(m, names, after=_print_after(args), timings=timings)
    except PassFailed as e:
        return _internal(e)
    _write(args.output, print_module(m))
    if args.time_passes:
        _report_pass_times(timings)
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
