"""`ember tune-space FILE`: the configurations a kernel's `tune [...]` declarations span,
which of them check (its static_asserts are the constraints) and why the others do not.
It reads the same declaration `ember.tune_space` and a tuner do."""

from __future__ import annotations

import json
import sys

from ..cli_support import EXIT_ERRORS, EXIT_OK, UsageError, parse_define, read_source


def add_arguments(p) -> None:
    p.add_argument("file", metavar="FILE", help="source file (`-` reads standard input)")
    p.add_argument("--kernel", metavar="NAME", help="only this kernel (default: every kernel with tuned parameters)")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE",
                   help="bind a const parameter; a bound parameter is fixed, not tuned (repeatable)")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="look for imports in DIR after the importing file's directory (repeatable)")
    p.add_argument("--arch", metavar="SM", help="the target the configurations are checked for")
    p.add_argument("--rejected", action="store_true", help="also list each configuration that does not check, with why")
    p.add_argument("--json", action="store_true", help="print the spaces as JSON")


def run(args) -> int:
    from ..diagnostics import CompileError
    from ..targets import archs
    from .space import tune_space
    if args.arch and args.arch not in archs():
        raise UsageError(f"unknown --arch `{args.arch}`; choose one of {', '.join(archs())}")
    source = read_source(args.file)
    warnings = []
    try:
        spaces = tune_space(source, arch=args.arch, kernel=args.kernel,
                            defines=dict(parse_define(d) for d in args.defines), include_dirs=args.include_dirs,
                            warnings=warnings)
    except CompileError as e:
        print(e.diagnostics.render(), file=sys.stderr)
        return EXIT_ERRORS
    for w in warnings:                      # as `ember compile` prints them (a -D no kernel has)
        print(w.render(), file=sys.stderr)
    if args.json:
        print(json.dumps({name: {"params": s.params, "admissible": s.admissible,
                                 "rejected": [{"config": c, "error": why} for c, why in s.rejected]}
                          for name, s in spaces.items()}, indent=1))
        return EXIT_OK
    if not spaces:
        print(f"{args.file}: no tuned parameters" + (f" in `{args.kernel}`" if args.kernel else "")
              + " (declare them `const BLOCK: u32 = 256 tune [128, 256, 512]`)")
    for name, s in spaces.items():
        total = len(s.admissible) + len(s.rejected)
        print(f"kernel {name}: {len(s.admissible)} of {total} configurations check")
        for param, values in s.params.items():
            print(f"  {param}: {', '.join(str(v) for v in values)}")
        for config in s.admissible:
            print("  ok       " + _config_text(config))
        if args.rejected:
            for config, why in s.rejected:
                print(f"  rejected {_config_text(config)}: {why}")
    return EXIT_OK


def _config_text(config: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in config.items())
