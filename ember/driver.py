"""The compiler pipeline, stage by stage:

    source --parse--> AST --check--> typed AST --irgen--> IR --passes--> IR (opt)
        --lower--> LLVM IR --llvm -O--> LLVM IR (opt) --codegen--> PTX [--validate--> cubin]

`compile()` returns a `Program` with the PTX, the text of every stage (computed when
asked for), each kernel's signature and launch metadata, warnings and stage timings.
Errors in the program raise `CompileError` carrying every diagnostic; a failure inside
Ember raises `InternalError` naming the stage.
"""

from __future__ import annotations

import gc
import os
import time
from typing import Any

from .diagnostics import CompileError, Diagnostic, Diagnostics, InternalError
from .ir.types import PtrType, Type
from .records import field, record, replace
from .source import SourceFile

STAGES = ("ast", "ir", "ir-opt", "llvm", "llvm-opt", "ptx")

# Called with every Program that reaches PTX (the test suite validates them all).
compile_hooks: list = []


@record(frozen=True)
class ParamInfo:
    name: str
    type: Type

    @property
    def is_pointer(self) -> bool:
        return isinstance(self.type, PtrType)


@record(frozen=True)
class KernelInfo:
    """What a launcher needs to know about one kernel."""

    name: str
    params: tuple
    block: tuple | None          # fixed block size (from `block(...)`), else None
    consts: dict = field(default_factory=dict)   # const parameters and their bound values
    dynamic_shared: int = 0      # bytes of dynamic shared memory each launch must give
                                 # (ember.ir.analysis.shared; known once the IR is optimized)
    sized_shared: tuple | None = None   # a shared array sized at launch: (index of the parameter
                                        # giving its length, bytes per element, its name); a
                                        # launch gives dynamic_shared + length x bytes
    cluster: tuple | None = None        # blocks per cluster (x, y, z): the grid is a multiple
    tunables: dict = field(default_factory=dict)   # const parameter -> the values it may be tuned over
    programmatic: bool = False          # it waits (griddep_wait) before it touches global memory, as
                                        # proven on its IR (ember.ir.analysis.grid_dependency): the
                                        # runtime launches it as a programmatic dependent launch

    def signature(self) -> str:
        ps = ", ".join(f"{p.name}: {p.type}" for p in self.params)
        s = f"kernel {self.name}({ps})"
        return s + (f" block({', '.join(map(str, self.block))})" if self.block else "")


@record
class Program:
    name: str
    arch: str
    ptx_version: str
    opt: int
    ptx: str
    kernels: dict                      # name -> KernelInfo
    warnings: list                     # [Diagnostic]
    timings: dict                      # stage -> seconds
    _ir: Any = field(default=None, repr=False)
    _stages: dict = field(default_factory=dict, repr=False)
    sources: list = field(default_factory=list)   # every file read: the source, then its imports
    cached: bool = False               # taken from the compile cache (ember.cache)
    remarks: list = field(default_factory=list)   # optimisation remarks (compile(remarks=True))
    _full: Any = field(default=None, repr=False)  # () -> Program: the compile a cache hit skipped

    @property
    def ir(self):
        """The optimized Ember IR (ember.ir.core.Module); a cache hit compiles it on demand."""
        if self._ir is None and self._full is not None:
            self._ir = self._full().ir
        return self._ir

    def stage(self, name: str) -> str:
        """The text of one stage: ast, ir, ir-opt, llvm, llvm-opt or ptx."""
        if name not in STAGES:
            raise KeyError(f"unknown stage `{name}`; stages: {', '.join(STAGES)}")
        v = self._stages.get(name)
        if v is None:                  # a cache hit keeps only the PTX
            v = self._full().stage(name)
        if callable(v):
            v = v()
        self._stages[name] = v
        return v

    @property
    def stages(self) -> dict:
        return {s: self.stage(s) for s in STAGES}

    def validate(self, arch: str | None = None, tool: str = "auto"):
        """Assemble the PTX to a cubin (nvJitLink or ptxas); returns a Validation. Raises
        ValueError for an arch Ember does not know or one older than the PTX's target, and
        artifacts.validate.ValidationError when the PTX does not assemble."""
        from . import targets
        from .artifacts.validate import validate
        if tool not in ("auto", "nvjitlink", "ptxas"):
            raise ValueError(f"tool must be auto, nvjitlink or ptxas, not {tool!r}")
        arch = arch or self.arch
        try:
            target = targets.resolve(arch, None)
        except targets.TargetError as e:
            raise ValueError(str(e)) from None
        if target.sm < targets.resolve(self.arch, None).sm:
            raise ValueError(f"the PTX targets {self.arch}; it cannot be assembled for the older {arch}")
        return validate(self.ptx, arch, tool)


def load_source(source_or_path, name: str | None = None) -> SourceFile:
    """A path (os.PathLike, or a str ending in .ember without newlines) or source text."""
    if isinstance(source_or_path, (bytes, bytearray, memoryview)):
        raise TypeError("source must be text (str), a path or a SourceFile, not bytes: decode it first "
                        "(data.decode('utf-8'))")
    if not isinstance(source_or_path, (str, os.PathLike)):
        raise TypeError(f"source must be text (str), a path (str ending in .ember, or os.PathLike) or a "
                        f"SourceFile, not {type(source_or_path).__name__}")
    if isinstance(source_or_path, os.PathLike) or (
            isinstance(source_or_path, str) and "\n" not in source_or_path
            and source_or_path.endswith(".ember")):
        path = os.fspath(source_or_path)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        return SourceFile(name or path, text, os.path.abspath(path))
    return SourceFile(name or "<source>", source_or_path)


def _names(value, what: str, example: str) -> list | None:
    """A list of names given to the API: None, or an iterable of str (a lone str is
    refused, not read one character at a time)."""
    if value is None:
        return None
    if isinstance(value, str):
        raise TypeError(f"{what} must be a list of names, not a str: write {what}=[{value!r}]")
    try:
        items = list(value)
    except TypeError:
        raise TypeError(f"{what} must be a list of names (like {example}), not {type(value).__name__}") from None
    bad = [x for x in items if not isinstance(x, str)]
    if bad:
        raise TypeError(f"{what} must hold names (str), not {type(bad[0]).__name__} {bad[0]!r}")
    return items


def define_text(value) -> str:
    """A const value as `-D NAME=VALUE` spells it: `true` / `false` for a bool (Python's
    str gives `True`, which no const parameter takes), the text of anything else."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _define_values(defines) -> dict:
    """The const values given to the API as NAME -> text (what `-D NAME=VALUE` gives)."""
    if defines is None:
        return {}
    if not isinstance(defines, dict):
        raise TypeError(f"defines must be a dict of NAME -> value, not {type(defines).__name__}")
    out = {}
    for k, v in defines.items():
        if not isinstance(k, str) or not k.isidentifier():
            raise TypeError(f"defines: the name {k!r} is not a const parameter name (a str identifier)")
        if isinstance(v, (str, int, float)):        # bool among them
            out[k] = define_text(v)
        elif hasattr(v, "dtype") and getattr(v, "shape", None) == ():     # a numpy scalar
            out[k] = define_text(v.item())
        else:
            raise TypeError(f"defines: the value of {k} must be a str, int, float or bool (a type is "
                            f"written as its name, \"f32\"), not {type(v).__name__}")
    return out


def compile(source_or_path, arch: str = "sm_90", defines: dict | None = None, opt: int = 3,
            ptx_version: str | None = None, name: str | None = None,
            passes: list[str] | None = None, stop_after: str | None = None,
            after_pass=None, llvm_pipeline: str = "cleanup", kernels=None, cache=None,
            include_dirs=(), line_info: bool = False, remarks: bool = False,
            programmatic_launch: bool | str = False) -> Program:
    """Compile Ember source to PTX. See the module docstring for the stages.

    defines: values for kernels' const parameters ({"HEAD_DIM": 128}).
    passes: the Ember pass list (default: the -O level's pipeline).
    stop_after: a stage name; later stages are not run (their text is empty).
    after_pass: called as after_pass(pass_name, module) after each pass.
    llvm_pipeline: what LLVM runs after Ember's passes at -O1..3: "cleanup" (a few passes;
        Ember's passes did the rest) or "full" (LLVM's own -O pipeline).
    kernels: names of the kernels to compile (default: all); the others are not checked, nor
        the functions only they call (a const without a value, a newer target, stops no other).
    line_info: `.file`/`.loc` directives in the PTX (ember.lowering.line_info; `-lineinfo`).
    remarks: collect the optimisation remarks of the passes (`Program.remarks`, `--remarks`):
        what they could have done and did not, and the missing fact (never cached).
    programmatic_launch: start every kernel that has no griddep_wait of its own with
        griddep_wait() (sm_90+; `--programmatic-launch`), so the runtime launches it as a
        programmatic dependent launch of the kernel before it on the stream; True or "wait"
        for the wait alone, "signal" for griddep_launch_dependents() before it, which lets
        the next kernel launch while this one runs (ember.ir.analysis.grid_dependency says
        when each pays).
    include_dirs: directories an import is looked for in after the importing file's own
        (`-I DIR`; then EMBER_INCLUDE_PATH's), see ember.import_paths.
    cache: the compile cache (ember.cache) for a compile to PTX with the default pipeline:
        None uses the default one (EMBER_CACHE_DIR or the user's cache directory; off when
        EMBER_NO_CACHE=1), False none, or a `Cache` or directory. A hit keeps the PTX and
        the kernels' signatures; any other stage (and `ir`) is compiled when first asked for.
    """
    # The IR is reference cycles throughout: the cyclic collector would trace it again and
    # again while the compile allocates (a third of the time of a 5,000-statement kernel)
    # and find nothing to free until the compile ends. It runs when the compile returns.
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        return _compile(source_or_path, arch, defines, opt, ptx_version, name, passes, stop_after,
                        after_pass, llvm_pipeline, kernels, cache, include_dirs, line_info, remarks,
                        programmatic_launch)
    finally:
        if paused:
            gc.enable()


def _compile(source_or_path, arch, defines, opt, ptx_version, name, passes, stop_after, after_pass,
             llvm_pipeline, kernels, cache, include_dirs, line_info, remarks, programmatic_launch) -> Program:
    """The body of `compile` (which pauses the cyclic garbage collector around it)."""
    from . import targets

    if isinstance(opt, bool) or not isinstance(opt, int):
        raise TypeError(f"opt must be an int 0..3, not {type(opt).__name__} {opt!r}")
    if opt not in (0, 1, 2, 3):
        raise ValueError(f"opt must be 0..3, not {opt}")
    if not isinstance(arch, str):
        raise TypeError(f"arch must be a str like \"sm_90\", not {type(arch).__name__}")
    if ptx_version is not None and not isinstance(ptx_version, str):
        raise TypeError(f"ptx_version must be a str like \"8.0\", not {type(ptx_version).__name__}")
    kernels = _names(kernels, "kernels", '["rope_fwd"]')
    passes = _names(passes, "passes", '["inline", "canonicalize"]')
    if passes is not None:
        from .ir.passes import PASSES
        unknown = [n for n in passes if n not in PASSES]
        if unknown:
            raise ValueError(f"unknown pass `{unknown[0]}`; passes: {', '.join(sorted(PASSES))}")
    target = targets.resolve(arch, ptx_version)
    from .ir.analysis.grid_dependency import launch_mode
    programmatic_launch = launch_mode(programmatic_launch)
    if programmatic_launch and target.sm < 90:
        raise targets.TargetError(f"programmatic launch (griddepcontrol) needs sm_90 or newer; the target is "
                                  f"{target.arch}")
    # the names of ember.lowering.ptx.LLVM_PIPELINES, which a cache hit must not import
    if llvm_pipeline not in ("cleanup", "full"):
        raise ValueError(f"llvm_pipeline must be cleanup or full, not {llvm_pipeline!r}")
    file = source_or_path if isinstance(source_or_path, SourceFile) else load_source(source_or_path, name)
    timings: dict[str, float] = {}
    stages: dict[str, Any] = {s: "" for s in STAGES}
    diags = Diagnostics()
    defines = _define_values(defines)
    _check_encodable(file, diags)
    from .import_paths import search_dirs
    if isinstance(include_dirs, (str, bytes)) or not all(isinstance(d, (str, os.PathLike)) for d in include_dirs):
        raise TypeError("include_dirs must be a list of directories (str or os.PathLike)")
    search = search_dirs([os.fspath(d) for d in include_dirs])
    store = _cache_for(cache) if stop_after is None and passes is None and after_pass is None and not remarks \
        else None
    if store is not None:
        t0 = time.perf_counter()
        key = _cache_key(file, target, opt, llvm_pipeline, defines, kernels, search, bool(line_info),
                         ptx_version is not None, programmatic_launch)
        hit = _from_cache(store.get(key), file, target, opt, search)
        if hit is not None:
            hit._full = lambda only=kernels: compile(file, arch, defines, opt, ptx_version, name, kernels=only,
                                                     llvm_pipeline=llvm_pipeline, cache=False,
                                                     include_dirs=include_dirs, line_info=line_info,
                                                     programmatic_launch=programmatic_launch)
            hit.timings["cache"] = time.perf_counter() - t0
            for hook in compile_hooks:
                hook(hit)
            return hit

    def timed(stage: str, fn, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            timings[stage] = timings.get(stage, 0.0) + time.perf_counter() - t0

    from .frontend import checker, imports, irgen, parser
    module_ast = timed("parse", parser.parse, file, diags)
    sources = timed("parse", imports.resolve, module_ast, diags, parser.parse, search)
    only = None if kernels is None else set(kernels)
    prog = timed("check", checker.check, module_ast, defines, diags, target, only)
    if diags.has_errors:
        error = CompileError(diags)
        # what each kernel's head declares, read even when its body does not check (a tuner
        # whose kernel fails with its default configuration still finds the others)
        error.declared = {k.name: (dict(k.tunables), {n: v for n, (_, v) in k.consts.items()})
                          for k in getattr(prog, "kernels", ())}
        raise error
    warnings = [d for d in diags.items if not d.is_error]

    def ast_text():
        from .frontend.astdump import dump
        return dump(prog)

    stages["ast"] = ast_text
    kernels = {k.name: KernelInfo(k.name, tuple(ParamInfo(s.name, s.ty) for s in k.params),
                                  k.block, {n: v for n, (_, v) in k.consts.items()}, cluster=k.cluster,
                                  tunables=dict(k.tunables))
               for k in prog.kernels}
    result = Program(file.name, target.arch, target.ptx_text, opt, "", kernels, warnings, timings,
                     None, stages, [f.path or f.name for f in sources])
    if stop_after == "ast":
        return result

    from .ir import verifier
    from .ir.printer import print_module
    from .ir.verifier import VerifyError, verify_module
    def generate(diagnostics):
        module = irgen.generate(prog, diagnostics)
        if programmatic_launch:
            from .ir.analysis.grid_dependency import insert_wait
            for f in module.kernels:
                insert_wait(f, module.functions, signal=programmatic_launch == "signal")
        return module

    module = timed("irgen", generate, diags)
    # verify-each mode checks IR generation's output on its own (naming it); a plain compile
    # verifies once, after the pipeline, which catches the same errors (`--emit ir` verifies here)
    each = verifier.VERIFY_EACH or after_pass is not None or bool(os.environ.get("EMBER_VERIFY_EACH"))
    if each or stop_after == "ir":
        try:
            verify_module(module)
        except VerifyError as e:
            raise InternalError("irgen", str(e)) from e
    _check_inlined_size(module, diags)
    # The IR text is made on request: rerunning IR generation is cheaper than a copy.
    stages["ir"] = lambda: print_module(generate(Diagnostics()))
    result._ir = module
    if stop_after == "ir":
        return result

    from .ir.passes import PIPELINES, PassFailed, run_passes
    pass_list = PIPELINES[opt] if passes is None else list(passes)
    if remarks:
        module.remarks = []
    try:
        timed("passes", run_passes, module, pass_list, verify=each, after=after_pass, timings=timings)
        if not each:
            t0 = time.perf_counter()
            verify_module(module)
            timings["verify"] = timings.get("verify", 0.0) + time.perf_counter() - t0
    except PassFailed as e:
        raise InternalError(f"pass {e.pass_name}", str(e.error)) from e
    except VerifyError as e:
        raise InternalError(f"irgen or passes ({', '.join(pass_list)}; EMBER_VERIFY_EACH=1 names the stage)",
                            str(e)) from e
    if "unroll" in pass_list:
        warnings.extend(_kept_unroll_loops(module, diags))
    _check_constant_bounds(module, diags)
    if remarks:
        result.remarks = _remarks(module.remarks, diags)
    stages["ir-opt"] = lambda: print_module(module)
    from .ir.analysis.grid_dependency import waits_before_global
    from .ir.analysis.shared import dynamic_bytes, sized
    for f in module.kernels:
        if f.name in result.kernels:
            result.kernels[f.name] = replace(result.kernels[f.name], dynamic_shared=dynamic_bytes(f),
                                             sized_shared=sized(f),
                                             programmatic=waits_before_global(f, module.functions))
    if stop_after == "ir-opt":
        return result

    target = _ptx_for_ops(module, target, ptx_version)
    result.ptx_version = target.ptx_text
    from .lowering import library, llvm_lower, local_memory, ptx as ptxmod
    lowered = timed("lower", llvm_lower.lower_module, module, target, ptxmod.data_layout(target),
                    line_info=bool(line_info))
    llvm_text = timed("lower", str, lowered)
    stages["llvm"] = llvm_text
    if stop_after == "llvm":
        return result
    optimized = timed("llvm-opt", ptxmod.optimize, llvm_text, target, opt, llvm_pipeline, "cse" in pass_list,
                      lowered.size_hint)
    stages["llvm-opt"] = lambda: str(optimized)
    if stop_after == "llvm-opt":
        return result
    names = lowered.library
    codegen_opt = 0 if opt and ptxmod.large_function(optimized, lowered.size_hint) else opt
    ptx = timed("codegen", ptxmod.emit_ptx, optimized, target, codegen_opt,
                lambda raw: timed("library", library.link, raw, names, target, opt, llvm_pipeline))
    stages["ptx"] = ptx
    result.ptx = ptx
    if "unroll" in pass_list:                # -O0 and -O1 keep arrays in memory by design
        warnings.extend(local_memory.warn_local_memory(ptx, module, diags))
    if store is not None and not warnings:     # warnings are shown by every compile: not stored
        _to_cache(store, key, result, [(f.path, f.text) for f in sources[1:]], module_ast.import_edges)
    for hook in compile_hooks:
        hook(result)
    return result


def _check_encodable(file: SourceFile, diags: Diagnostics) -> None:
    """Source text given from Python may hold a lone surrogate (from surrogateescape or a
    JSON string), which is no character and has no UTF-8: a located error."""
    try:
        file.text.encode("utf-8")
    except UnicodeEncodeError as e:
        from .source import Span
        diags.error("E0003", f"the source holds a lone surrogate (U+{ord(file.text[e.start]):04X}), which is not "
                    "a character", Span(file, e.start, e.start + 1), label="not valid here",
                    help="the text was decoded with errors='surrogateescape' or built from a broken string; "
                         "decode it as UTF-8")
        raise CompileError(diags)


def _cache_for(cache):
    from .cache import Cache, disabled_by_environment
    if cache is None:
        return None if disabled_by_environment() else Cache()
    if cache is False:
        return None
    if cache is True:
        return Cache()
    return cache if isinstance(cache, Cache) else Cache(os.fspath(cache))


def _cache_key(file: SourceFile, target, opt: int, llvm_pipeline: str, defines: dict, kernels, search,
               line_info: bool, ptx_asked: bool, programmatic_launch) -> str:
    from .cache import make_key
    # a PTX version asked for is not the architecture's default one, which the ops may raise
    ptx = target.ptx_text if ptx_asked else f"default {target.ptx_text}"
    options = {"arch": target.arch, "ptx": ptx, "opt": opt, "llvm": llvm_pipeline,
               "defines": sorted(defines.items()), "kernels": None if kernels is None else sorted(kernels),
               "search": list(search), "line_info": line_info, "programmatic_launch": programmatic_launch}
    return make_key("ptx", options, file.text.encode("utf-8"))


def _kernel_json(k: KernelInfo) -> dict:
    from .ir.types import Type, to_json
    return {"name": k.name, "params": [[p.name, to_json(p.type)] for p in k.params],
            "block": list(k.block) if k.block else None, "dynamic_shared": k.dynamic_shared,
            "sized_shared": list(k.sized_shared) if k.sized_shared else None,
            "cluster": list(k.cluster) if k.cluster else None,
            "tunables": {n: list(v) for n, v in k.tunables.items()}, "programmatic": k.programmatic,
            "consts": [[n, {"type": to_json(v)} if isinstance(v, Type) else v] for n, v in k.consts.items()]}


def _kernel_from_json(d: dict) -> KernelInfo:
    from .ir.types import from_json
    return KernelInfo(d["name"], tuple(ParamInfo(n, from_json(t)) for n, t in d["params"]),
                      tuple(d["block"]) if d["block"] else None,
                      {n: from_json(v["type"]) if isinstance(v, dict) else v for n, v in d["consts"]},
                      d["dynamic_shared"], tuple(d["sized_shared"]) if d.get("sized_shared") else None,
                      tuple(d["cluster"]) if d.get("cluster") else None, d.get("tunables", {}),
                      bool(d.get("programmatic")))


def _to_cache(store, key: str, prog: Program, imported: list, edges: list) -> None:
    from .cache import record_imports
    meta = {"kernels": [_kernel_json(k) for k in prog.kernels.values()],
            "imports": record_imports(imported, edges)}
    store.put(key, meta, {"ptx": prog.ptx.encode()})


def _ptx_for_ops(module, target, asked):
    """The target with the PTX ISA version the module's ops need (PTX 8.0 for sm_90's bulk
    copies and mbarrier transaction counts): raised from the architecture's default when
    no version was asked for; an asked-for version that is too old is an error."""
    from . import targets
    from .ir.ops import OPS
    need, first = target.ptx, None
    for f in module.functions:
        for op in f.walk():
            v = OPS[op.name].min_ptx
            if v is not None and v > need:
                need, first = v, op
    if first is None:
        return target
    if asked is not None:
        diags = Diagnostics()
        diags.error("E0501", f"this operation (`{first.name}`) needs PTX ISA {need[0]}.{need[1]}; --ptx-version "
                    f"asked for {target.ptx_text}", first.loc,
                    help=f"drop --ptx-version, or ask for {need[0]}.{need[1]}")
        raise CompileError(diags)
    return targets.resolve(target.arch, need)


def _from_cache(entry, file: SourceFile, target, opt: int, search: list) -> Program | None:
    from .cache import check_imports
    if entry is None:
        return None
    imports = check_imports(file.path, entry.meta.get("imports"), search)
    if imports is None:
        return None
    kernels = {d["name"]: _kernel_from_json(d) for d in entry.meta["kernels"]}
    ptx = entry.blobs["ptx"].decode()
    version = next((line.split()[1] for line in ptx.splitlines() if line.startswith(".version ")), target.ptx_text)
    return Program(file.name, target.arch, version, opt, ptx, kernels, [], {}, None, {"ptx": ptx},
                   [file.path or file.name] + imports, cached=True)


def _remarks(collected: list, diags) -> list:
    """The passes' remarks as diagnostics, one per location (the first: the widest access
    tried), in source order."""
    out, seen = [], set()
    for loc, message, help_ in collected:
        key = None if loc is None else (loc.file.name, loc.start, loc.end)
        if key in seen:
            continue
        seen.add(key)
        out.append(diags.remark("R0001", message, loc, help=help_))
    diags.items = [d for d in diags.items if d.severity != "remark"]     # reported by whoever asked
    return sorted(out, key=lambda d: (d.span.file.name, d.span.start) if d.span else ("", 0))


def _kept_unroll_loops(module, diags) -> list:
    """W0003 for each `unroll for` (by source location: inlining copies a function's loops)
    that the pipeline left a loop."""
    from .ir.analysis.values import const_value
    out, seen = [], set()
    for f in module.functions:
        for op in f.body.walk():
            if op.name != "scf.for" or not op.attrs.get("unroll") or op.loc in seen:
                continue
            seen.add(op.loc)
            constant = all(const_value(v) is not None for v in op.operands[:3])
            why = ("its trip count or unrolled size is over the limit" if constant else
                   "its bounds are not constants after inlining and constant folding")
            out.append(diags.warning("W0003", "`unroll for` was not unrolled", op.loc, why,
                                     help="the loop runs as written; per-thread arrays it indexes with its "
                                          "variable may live in local memory (see `ember compile --check`)"))
    return out


def _check_constant_bounds(module, diags) -> None:
    """E0409 for each array access that the pipeline made a constant out of its array's
    bounds (ember.ir.analysis.bounds), once per source location: unrolled and inlined copies
    share it; the note names the array and the kernel."""
    from .ir.analysis.bounds import out_of_bounds
    from .ir.library import is_library_function
    seen = set()
    for f in module.functions:
        if is_library_function(f):
            continue
        for oob in out_of_bounds([f]):
            if (oob.access.loc, oob.array) in seen:
                continue
            seen.add((oob.access.loc, oob.array))
            array = oob.array.attrs.get("name") or oob.array.results[0].name or "the array"
            space = "shared" if oob.array.name == "mem.shared" else "per-thread"
            what = {"mem.load": "this access reads", "mem.store": "this access writes"}.get(
                oob.access.name, f"this `{oob.access.name.split('.')[-1]}` touches")
            span = (f"elements {oob.first}..{oob.first + oob.count - 1}" if oob.count > 1
                    else f"element {oob.first}")
            length = oob.array.attrs["length"]
            whole = oob.start == 0 and oob.end == length
            bounds = (f"its {length} element{'s' if length != 1 else ''}" if whole
                      else f"the row of elements {oob.start}..{oob.end - 1} (of {length})")
            notes = [f"`{array}` is the {space} array declared at {oob.array.loc}" if oob.array.loc else
                     f"`{array}` is a {space} array"]
            if f.kind == "kernel":
                notes.append(f"in kernel `{f.name}`, whose unrolled loops and inlined calls made the index a constant")
            diags.error("E0409", f"{what} {span} of {space} array `{array}`, outside {bounds}",
                        oob.access.loc, label="out of bounds whenever this runs", notes=notes,
                        help="check the const values this kernel was compiled with against the sizes of "
                             "its arrays (a `static_assert` states what they must satisfy)")
    if diags.has_errors:
        raise CompileError(diags)


def _check_inlined_size(module, diags) -> None:
    """A kernel that inlining would blow up (every level of calls multiplies) is the
    program's error, reported with its call chain before any pass runs."""
    from .frontend.check_generics import shown_function as shown
    from .ir.passes.inline import MAX_INLINED_OPS, too_large
    for kernel, size, chain in too_large(module):
        notes = [f"{shown(caller.name)} calls {shown(callee.name)} {n} time(s), and {shown(callee.name)} is "
                 f"{csize} ops inlined"
                 for caller, callee, n, csize in chain[:12]]
        if len(chain) > 12:
            notes.append(f"... and {len(chain) - 12} more levels")
        diags.error("E0502", f"kernel `{kernel.name}` would be {size} IR ops once its device functions are "
                    f"inlined (the limit is {MAX_INLINED_OPS})", kernel.loc, label="this kernel", notes=notes,
                    help="call the function from a loop instead of several times, or split the kernel")
    if diags.has_errors:
        raise CompileError(diags)


__all__ = ["compile", "Program", "KernelInfo", "ParamInfo", "CompileError", "InternalError", "Diagnostic"]
