"""The `ember` command.

    ember compile FILE... [-o OUT] [--arch sm_XX]... [-D NAME=VALUE[,VALUE...]]... [-I DIR]... [-O N] [-j N]
                  [--emit ast|ir|ir-opt|llvm|llvm-opt|ptx|cubin|fatbin|header] [--manifest F.json]
                  [-M|-MM|-MD|-MMD [-MF F] [-MT T] [-MQ T] [-MP]] [-Werror|-w] [-lineinfo|-g]
                  [--programmatic-launch|--programmatic-signal] [--no-cache] [--check] [--verify-diagnostics]
                  [--color auto|always|never]
    ember opt FILE.ir [-p PASS,...] [-O N]      parse IR, run passes, print IR
    ember run FILE --grid X[,Y,Z] [--kernel K] NAME=VALUE...   run a kernel in the simulator
    ember cache info|clear                      the compile cache
    ember explain CODE                          what a diagnostic code means
    ember completion bash|zsh|tcsh              a shell completion script
    ember --cmake-dir                           where find_package(Ember) finds Ember
    ember --version

Arguments may come from response files (`@FILE`, whitespace-separated, shell quoting, as
gcc's); options are never abbreviated (`-MM` is not `-MMD`).

Exit status: 0 success, 1 errors in the program (reported as diagnostics) or an output
or tool that fails, 2 usage errors, 70 an internal compiler error (a bug in Ember: please
report it), 141 standard output closed early.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys

from .cli_support import (EXIT_BROKEN_PIPE, EXIT_ERRORS, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, CommandError,
                          UsageError,
                          internal_error_text, parse_define, parse_pass_list, pass_times_text,
                          print_after_hook, read_source)


def _version() -> str:
    from . import __version__
    try:
        import llvmlite
        import llvmlite.binding as llvm
        llvm_v = ".".join(map(str, llvm.llvm_version_info))
        return f"ember {__version__} (llvmlite {llvmlite.__version__}, LLVM {llvm_v})"
    except Exception:  # pragma: no cover
        return f"ember {__version__}"


MAX_RESPONSE_DEPTH = 16      # response files within response files, as deep as gcc's and clang's go in practice


class _ArgumentParser(argparse.ArgumentParser):
    """argparse as a compiler driver reads its arguments: no abbreviated options, and
    response files (`@FILE`) split like a shell line, as gcc and clang split theirs."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def convert_arg_line_to_args(self, arg_line: str) -> list:
        import shlex
        try:
            return shlex.split(arg_line, comments=True)
        except ValueError as e:          # an unclosed quote
            self.error(f"in a response file: {e}: {arg_line.strip()}")

    def _read_args_from_files(self, arg_strings: list, depth: int = 0) -> list:
        """argparse's expansion of `@FILE`, each file read as a source is (cli_support.
        read_text_input: `@/dev/zero` read until memory ran out, exit 70) and the nesting
        bounded (a file that names itself recursed until Python's stack ran out)."""
        from .cli_support import read_text_input
        out = []
        for arg in arg_strings:
            if not arg or arg[0] not in self.fromfile_prefix_chars:
                out.append(arg)
                continue
            if depth >= MAX_RESPONSE_DEPTH:
                self.error(f"response files nested more than {MAX_RESPONSE_DEPTH} deep (at {arg}): does one name itself?")
            try:
                text = read_text_input(arg[1:], "response file")
            except UsageError as e:
                self.error(str(e))
            lines = [a for line in text.splitlines() for a in self.convert_arg_line_to_args(line)]
            out.extend(self._read_args_from_files(lines, depth + 1))
        return out


SUBCOMMANDS: dict = {}     # name -> its parser (usage errors print the command's own usage)


def _parser(full_help: bool = True) -> argparse.ArgumentParser:
    """The argument parser; `full_help` False leaves the pass list out of the help texts
    (naming the passes imports them all, which a cache hit must not pay for)."""
    from .targets import DEFAULT_ARCH, archs
    pass_help = None
    if full_help:
        from .ir.passes import PASSES
        pass_help = ", ".join(sorted(PASSES))
    p = _ArgumentParser(
        prog="ember", fromfile_prefix_chars="@",
        description="Ember: a compiler for GPU kernels (Ember source -> structured SSA IR -> LLVM -> PTX).",
        epilog="Exit status: 0 success, 1 errors in the program, 2 usage errors, "
               "70 internal compiler error. Run `ember COMMAND --help` for a command's options.")
    p.add_argument("--version", action=_VersionAction)
    p.add_argument("--cmake-dir", action=_CMakeDirAction)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    c = sub.add_parser("compile", help="compile Ember source files to PTX, cubins, fatbins or C headers",
                       description="Compile Ember source to PTX, a cubin, a fatbin or a C/C++ header. "
                                   "Needs no GPU and no CUDA install. Results are cached (ember cache info).")
    from .artifacts.command import add_arguments
    add_arguments(c, DEFAULT_ARCH, archs(), pass_help)

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
    r.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="look for imports in DIR after the importing file's directory (repeatable)")
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
                   help="comma-separated pass names (default: none; the IR is only verified and printed)"
                        + (f". Passes: {pass_help}" if pass_help else ""))
    o.add_argument("-O", dest="opt", type=int, choices=range(4), metavar="N",
                   help="run the -O N pipeline instead of --passes")
    o.add_argument("-o", dest="output", metavar="OUT", default="-", help="output file (default standard output)")
    _opt_pass_options(o, full_help)

    t = sub.add_parser("tune-space", help="list the configurations a kernel's `tune [...]` parameters span",
                       description="Read the const parameters FILE's kernels declare `tune [...]`, check "
                                   "every configuration of their values (the front end only: no GPU) and "
                                   "print those that check; the kernel's static_asserts are the "
                                   "constraints between parameters.")
    from .tuning.space_command import add_arguments as tune_space_arguments
    tune_space_arguments(t)

    u = sub.add_parser("tune", help="tune a kernel's `tune [...]` parameters on this GPU and write its table",
                       description="Compile every admissible configuration of KERNEL (ember tune-space), "
                                   "check each against the f64 reference on fresh random inputs (a wrong one "
                                   "is reported, never chosen), time the correct ones (CUDA graphs, inputs "
                                   "rotated beyond the L2, hopeless ones pruned early) at each shape bucket, "
                                   "and write the fastest per device and bucket to a tuned table.")
    from .tuning.command import add_arguments as tune_arguments
    tune_arguments(u)

    k = sub.add_parser("cache", help="show or clear the compile cache",
                       description="The compile cache holds PTX, cubins and fatbins by the content of "
                                   "everything that made them. Its directory is EMBER_CACHE_DIR, else the "
                                   "user's cache directory; EMBER_NO_CACHE=1 or `ember compile --no-cache` "
                                   "turn it off.")
    k.add_argument("action", choices=["info", "clear"], help="info: where it is and its size; clear: empty it")

    x = sub.add_parser("explain", help="explain a diagnostic code",
                       description="Print what a diagnostic code (E0201, S0004, W0001, ...) means.")
    x.add_argument("code", metavar="CODE", help="a code as diagnostics print it, e.g. E0201")

    m = sub.add_parser("completion", help="print a shell completion script",
                       description="Print a completion script for the shell, made from this command's "
                                   "own options (shtab): `eval \"$(ember completion bash)\"`, or save it "
                                   "where the shell loads completions.")
    m.add_argument("shell", choices=["bash", "zsh", "tcsh"], help="the shell")
    SUBCOMMANDS.update(sub.choices)
    return p


def _opt_pass_options(p: argparse.ArgumentParser, full_help: bool) -> None:
    p.add_argument("--print-after-all", action="store_true",
                   help="print the IR after every pass to standard error")
    p.add_argument("--time-passes", action="store_true",
                   help="print each pass's time (and the verifier's, run after each) to standard error")
    if full_help:
        from .ir.passes import PIPELINES
        p.formatter_class = argparse.RawDescriptionHelpFormatter
        p.epilog = "pipelines:\n" + "\n".join(f"  -O{n}: {','.join(names) or '(none)'}" for n, names in PIPELINES.items())


class _VersionAction(argparse.Action):
    """--version, with LLVM's version loaded only when asked for."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, help="print Ember's, llvmlite's and LLVM's versions")

    def __call__(self, parser, namespace, values, option_string=None):
        print(_version())
        parser.exit()


class _CMakeDirAction(argparse.Action):
    """--cmake-dir: the directory holding EmberConfig.cmake."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0,
                         help="print the directory of Ember's CMake package, for "
                              "`cmake -DEmber_DIR=$(ember --cmake-dir)` and find_package(Ember)")

    def __call__(self, parser, namespace, values, option_string=None):
        from .artifacts.cmake import config_dir
        print(config_dir())
        parser.exit()


def _explain(code: str) -> int:
    from .diagnostic_codes import CODES
    import textwrap
    key = code.strip().upper()
    if key not in CODES:
        close = [c for c in CODES if c[1:] == key.lstrip("ESW")] or [c for c in CODES if c.startswith(key[:3])]
        raise UsageError(f"no diagnostic code `{code}`" + (f"; did you mean {', '.join(close[:4])}?" if close else
                                                           "; codes look like E0201, S0004, W0001"))
    title, meaning = CODES[key]
    kind = {"E": "error", "S": "error found by the simulator", "W": "warning"}[key[0]]
    print(f"{key}: {title} ({kind})\n")
    print(textwrap.fill(meaning, 88))
    return EXIT_OK


def _cache_command(args) -> int:
    from .cache import Cache, default_dir
    store = Cache(default_dir())
    if args.action == "clear":
        n, kept, why = store.clear()
        print(f"removed {n} entr{'y' if n == 1 else 'ies'} from {store.dir}")
        if kept:
            raise CommandError(f"could not remove {kept} entr{'y' if kept == 1 else 'ies'} from {store.dir}: {why}")
        return EXIT_OK
    info = store.info()
    print(f"directory: {info['directory']}\nentries:   {info['entries']}\nsize:      {info['bytes']} bytes")
    return EXIT_OK


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Python warnings (an unwritable cache) as `ember` prints its own."""
    sys.stderr.write(f"ember: warning: {message}\n")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    import warnings
    warnings.showwarning = _show_warning
    try:
        parser = _parser(full_help=any(a in ("-h", "--help") for a in argv))
        try:
            args, extra = parser.parse_known_args(argv)
            command = getattr(args, "command", None)
            if extra and command == "run":
                # NAME=VALUE arguments may come after options
                args.args += [e for e in extra if "=" in e and not e.startswith("-")]
                extra = [e for e in extra if not ("=" in e and not e.startswith("-"))]
            if extra:            # the command's own usage, as clang prints the driver's
                SUBCOMMANDS.get(command, parser).error(f"unrecognized arguments: {' '.join(extra)}")
        except SystemExit as e:   # argparse: --help/--version (0) or usage error (2)
            return int(e.code or 0)
        if args.command is None:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        if args.command == "compile":
            from .artifacts.command import run as compile_command
            return compile_command(args)
        if args.command == "cache":
            return _cache_command(args)
        if args.command == "opt":
            return _opt(args)
        if args.command == "run":
            return _run(args)
        if args.command == "explain":
            return _explain(args.code)
        if args.command == "tune":
            from .tuning.command import run as tune_command
            return tune_command(args)
        if args.command == "tune-space":
            from .tuning.space_command import run as tune_space_command
            return tune_space_command(args)
        if args.command == "completion":
            import shtab
            print(shtab.complete(_parser(full_help=True), args.shell), end="")
            return EXIT_OK
        return EXIT_USAGE
    except CommandError as e:
        print(f"ember: error: {e}", file=sys.stderr)
        return e.status
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:     # standard output closed early (`ember ... -o - | head`): end quietly
        return EXIT_BROKEN_PIPE
    except Exception as e:  # never a traceback for users
        return _internal(e)


def entry() -> None:
    """The `ember` command (and `python -m ember`): `main()`, then exit without the
    interpreter's teardown, which only frees memory - the modules and, after a compile, the
    IR (30 ms of a 200 ms compile). Every output is written and closed by then.

    The cyclic garbage collector is off in this process: a compile's IR is reference cycles
    throughout, and the collection that followed it (traced the whole IR, freed it, 30 ms)
    is work the exit throws away. What runs longer turns it back on: a build of several
    outputs collects between them, `-j N` workers and `ember run` (the simulator) run with it."""
    gc.disable()
    status = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):      # a closed pipe: nothing more to say
        pass
    os._exit(status)


def _internal(e: BaseException) -> int:
    sys.stderr.write(internal_error_text(e))
    return EXIT_INTERNAL


def _defines(items: list[str]) -> dict:
    return dict(parse_define(item) for item in items)


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
        if isinstance(a, np.ndarray) and a.dtype.kind == "V" and a.dtype.itemsize == 2 and t.pointee.name == "bf16":
            import ml_dtypes          # np.save writes an ml_dtypes.bfloat16 array as 2-byte voids
            a = a.view(ml_dtypes.bfloat16)
        if not isinstance(a, np.ndarray) or (a.dtype.kind not in "biuf" and a.dtype.name != "bfloat16"):
            raise UsageError(f"`{param.name}`: {value} does not hold a numeric array")
        return np.ascontiguousarray(a)
    kind, _, shape_text = value.partition(":")
    if kind not in ("zeros", "ones", "arange", "rand") or not shape_text:
        raise UsageError(f"`{param.name}`: expected FILE.npy, zeros:SHAPE, ones:SHAPE, arange:SHAPE or "
                         f"rand:SHAPE, got `{value}`")
    shape = _dims(shape_text, f"the shape of `{param.name}`")
    if t.pointee.name == "bf16":          # bf16 buffers are ml_dtypes.bfloat16 arrays
        import ml_dtypes
        dt = ml_dtypes.bfloat16
    else:
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
    gc.enable()             # a simulation makes garbage for as long as it runs (see entry())
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
    source = read_source(args.file)
    try:
        # The simulator runs the optimized IR: no lowering, so no PTX is needed.
        prog = driver.compile(source, defines=_defines(args.defines), opt=args.opt, stop_after="ir-opt",
                              kernels=[args.kernel] if args.kernel else None, include_dirs=args.include_dirs)
    except CompileError as e:
        print(e.diagnostics.render(), file=sys.stderr)
        return EXIT_ERRORS
    for w in prog.warnings:                 # as `ember compile` prints them (a -D no kernel has)
        print(w.render(), file=sys.stderr)
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
                import io

                from .output_files import write_output
                data = io.BytesIO()
                np.save(data, v)
                write_output(os.path.join(args.out, f"{p.name}.npy"), data.getvalue(), inputs=[args.file])
    return EXIT_OK


def _opt(args) -> int:
    from .ir.parser import IRSyntaxError, parse_module
    from .ir.passes import PIPELINES, PassFailed, run_passes
    from .ir.printer import print_module
    from .ir.verifier import VerifyError, verify_module
    source = read_source(args.file)
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
    names = PIPELINES[args.opt] if args.opt is not None else parse_pass_list(args.passes)
    timings: dict = {}
    try:
        run_passes(m, names, after=print_after_hook(args.print_after_all), timings=timings)
    except PassFailed as e:
        return _internal(e)
    from .output_files import write_output
    write_output(args.output, print_module(m), inputs=[args.file])
    if args.time_passes:
        sys.stderr.write(pass_times_text(timings))
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
