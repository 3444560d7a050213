"""One output of `ember compile`: a source, its const values and where the result goes.
`run_job` does the whole of it (compile for each arch, assemble, package, write the
output and its dependency file) in this process or in a worker of `-j N`, and returns
what it has to say instead of printing it, so that messages come out in job order."""

from __future__ import annotations

import io
import os

from ..cli_support import (EXIT_ERRORS, EXIT_INTERNAL, EXIT_OK, CommandError, internal_error_text,
                           pass_times_text, print_after_hook, read_source, stem)
from ..output_files import write_output
from ..records import record

STAGE_EMITS = ("ast", "ir", "ir-opt", "llvm", "llvm-opt")
BUILD_EMITS = ("ptx", "cubin", "fatbin", "header")
EXTENSIONS = {"ast": ".ast", "ir": ".ir", "ir-opt": ".opt.ir", "llvm": ".ll", "llvm-opt": ".opt.ll",
              "ptx": ".ptx", "cubin": ".cubin", "fatbin": ".fatbin", "header": ".h"}


@record
class Job:
    source: str                    # a path, or "-" (then `text` holds standard input)
    defines: dict                  # NAME -> VALUE text
    output: str                    # a path, or "-"
    options: dict                  # the command's options (see command.job_options)
    text: str | None = None
    depfile: str | None = None     # where the dependency file goes (None: none)


@record
class Result:
    status: int = EXIT_OK
    err: str = ""                  # diagnostics, errors and --check reports, for standard error
    record: dict | None = None     # the manifest's entry for the output


def run_job(job: Job) -> Result:
    """Build one output; never raises (an internal error becomes exit status 70)."""
    result = Result()
    try:
        _build(job, result)
    except CommandError as e:
        result.status, result.err = e.status, result.err + f"ember: error: {e}\n"
    except (KeyboardInterrupt, BrokenPipeError):
        raise
    except Exception as e:                       # a bug in Ember, reported as one
        result.status, result.err = EXIT_INTERNAL, result.err + internal_error_text(e)
    return result


def _source(job: Job):
    from ..source import SourceFile
    if job.source == "-":
        return SourceFile("<stdin>", job.text or "")
    return read_source(job.source)


def _build(job: Job, result: Result) -> None:
    from .. import driver
    from ..diagnostics import CompileError
    o = job.options
    source = _source(job)
    emit = o["emit"]
    if o["verify_diagnostics"]:
        result.status, result.err = _verify_diagnostics(source, job)
        return
    store = _store(o)
    color = o.get("color", False)
    progs = []
    for arch in o["archs"]:
        try:
            prog = driver.compile(source, arch=arch, defines=job.defines, opt=o["opt"], kernels=o["kernels"],
                                  ptx_version=o["ptx_version"], passes=o["passes"],
                                  after_pass=print_after_hook(o["print_after_all"]), llvm_pipeline=o["llvm_pipeline"],
                                  stop_after="ast" if o.get("deps_only") else
                                  emit if emit in STAGE_EMITS and not o["check"] else None,
                                  cache=store if store is not None else False,
                                  include_dirs=o.get("include_dirs", ()), line_info=o.get("line_info", False),
                                  remarks=o.get("remarks", False),
                                  programmatic_launch=o.get("programmatic_launch", False))
        except CompileError as e:
            n = len(e.diagnostics.errors)
            result.err += e.diagnostics.render(color) + "\n" + \
                f"ember: {n} error{'s' if n != 1 else ''} in {source.name}\n"
            result.status = EXIT_ERRORS
            return
        if not progs and not o.get("no_warnings"):
            if o.get("werror") and prog.warnings:
                from ..diagnostics import Diagnostic
                for w in prog.warnings:
                    result.err += Diagnostic("error", w.code, w.message + " [-Werror]", w.span, w.label, w.help,
                                             w.notes).render(color) + "\n"
                n = len(prog.warnings)
                result.err += f"ember: {n} warning{'s' if n != 1 else ''} treated as error{'s' if n != 1 else ''} " \
                              f"(-Werror) in {source.name}\n"
                result.status = EXIT_ERRORS
                return
            result.err += "".join(w.render(color) + "\n" for w in prog.warnings)
        if not progs:
            result.err += "".join(r.render(color) + "\n" for r in prog.remarks)
        progs.append(prog)
        if o.get("deps_only"):
            _write_depfile(job, prog.sources)
            return
    data, resources = _product(emit, progs, o, store, job)
    write_output(job.output, data, inputs=progs[0].sources)
    if job.depfile is not None:
        _write_depfile(job, progs[0].sources)
    if o["check"]:
        result.status = max(result.status, _check(progs, o, result))
    if o["time_passes"]:
        result.err += pass_times_text(progs[0].timings)
    if o["time_stages"]:
        for stage, secs in progs[0].timings.items():
            result.err += f"  {stage:24s} {secs * 1000:8.2f} ms\n"
    if o["manifest"]:
        from .manifest import record
        result.record = record(job, progs, data, resources)


def _store(o: dict):
    if o["cache_dir"] is None:
        return None
    from ..cache import Cache
    return Cache(o["cache_dir"], read_only=o.get("cache_read_only", False))


def _product(emit: str, progs: list, o: dict, store, job: Job) -> tuple:
    """The output's bytes, and each arch's kernel resources when the PTX was assembled
    (arch -> kernel name -> KernelResources)."""
    if emit in STAGE_EMITS:
        return progs[0].stage(emit), {}
    if emit == "ptx" and not o["manifest"]:
        return progs[0].ptx, {}          # (before importing the assembler's modules: 1-2 ms)
    from . import binaries
    from .validate import ValidationError
    resources: dict = {}
    cubins = []
    for prog in progs:
        try:
            cubin, res = binaries.cubin(prog.ptx, prog.arch, store)
        except ValidationError as e:
            raise RuntimeError(f"the PTX of {prog.name} does not assemble for {e.arch} "
                               f"(error[E0902]):\n{e.log}") from None
        cubins.append((prog.arch, cubin))
        resources[prog.arch] = res
    if emit == "ptx":
        return progs[0].ptx, resources
    if emit == "cubin":
        return cubins[0][1], resources
    lowest = min(progs, key=lambda p: _sm(p.arch))
    image_kind = "fatbin" if emit == "fatbin" else o["image"]
    if image_kind == "fatbin":
        image = binaries.fatbin(cubins, lowest.arch, lowest.ptx, store)
    elif image_kind == "cubin":
        image = cubins[0][1]
    else:
        image = progs[0].ptx.encode() + b"\0"
    if emit == "fatbin":
        return image, resources
    from .header import c_identifier, render
    prefix = c_identifier(stem(job.output if job.output != "-" else job.source))
    kernels = list(progs[0].kernels.values())
    shared = {k.name: max(r[k.name].shared for r in resources.values() if k.name in r) for k in kernels
              if any(k.name in r for r in resources.values())}
    about = [f"from {os.path.basename(job.source) if job.source != '-' else '<stdin>'}"
             + (" with " + " ".join(f"{n}={v}" for n, v in job.defines.items()) if job.defines else ""),
             f"for {', '.join(p.arch for p in progs)}" + (
                 f" (cubins; PTX for {lowest.arch})" if image_kind == "fatbin" else f" ({image_kind})")]
    return render(prefix, image, image_kind, kernels, shared, about), resources


def _sm(arch: str) -> tuple:
    digits = "".join(c for c in arch[3:] if c.isdigit())
    return int(digits), arch


def _write_depfile(job: Job, sources: list) -> None:
    from .. import depfile
    o = job.options
    given = o["dep_targets"] or [("quote", job.output if job.output != "-" else
                                  stem(job.source) + EXTENSIONS[o["emit"]])]
    targets = [depfile.escape(t) if how == "quote" else t for how, t in given]     # -MQ quotes, -MT not
    deps = depfile.dependencies(sources, user_only=o["depfile_user"])
    write_output(job.depfile, depfile.rule(targets, deps, os.getcwd(), phony=o["dep_phony"]), inputs=sources)


def _check(progs: list, o: dict, result: Result) -> int:
    from .validate import ValidationError, validate
    stream = io.StringIO()
    for prog in progs:
        try:
            v = validate(prog.ptx, prog.arch, o["validator"])
        except ValidationError as e:
            result.err += f"{prog.name}: error[E0902]: the PTX does not assemble for {e.arch}:\n{e.log}\n"
            return EXIT_INTERNAL
        print(f"{prog.name}: valid PTX {prog.ptx_version} for {v.arch} ({v.tool})", file=stream)
        for name in prog.kernels:
            res = v.kernels.get(name)
            if res is not None:
                print(f"  {name}: {res.summary()}", file=stream)
    result.err += stream.getvalue()      # a report, like ptxas -v and nvcc --resource-usage: on stderr
    return EXIT_OK


def _verify_diagnostics(source, job: Job) -> tuple:
    from .. import driver
    from ..diagnostics import CompileError
    from ..verify_diagnostics import check_expectations
    o = job.options
    try:
        prog = driver.compile(source, arch=o["archs"][0], defines=job.defines, opt=o["opt"],
                              ptx_version=o["ptx_version"], cache=False)
        diags = prog.warnings
    except CompileError as e:
        diags = e.diagnostics.items
    problems = check_expectations(source, diags)
    return (EXIT_ERRORS if problems else EXIT_OK), "".join(p + "\n" for p in problems)
