"""LLVM IR -> PTX with LLVM's NVPTX back end (through llvmlite.binding).

One target machine per (arch, PTX version, -O level) is created and reused. The emitted
PTX is checked: its `.version` must be the one asked for (LLVM silently falls back to an
old version on a feature it does not know), and a call to an undefined `llvm.*` function
(an intrinsic the back end could not select) is an internal error, never a PTX file. Two
rewrites follow: every `neg.s16` (which ptxas miscompiles) becomes a 32-bit negation, and the
call sites are numbered from 0 (NVPTX numbers them per process).
"""

from __future__ import annotations

import re
import threading

import llvmlite.binding as llvm

from ..diagnostics import InternalError
from ..targets import Target
from . import llvm_lower as _lower

_lock = threading.Lock()
_initialized = False
_machines: dict = {}


def _init() -> None:
    global _initialized
    if _initialized:
        return
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    # Shared, local and const pointers are 32-bit: decided once for the whole process.
    llvm.set_option("ember", "--nvptx-short-ptr")
    # Ember's vectorize pass merges accesses where it proves alignment; LLVM's load/store
    # vectorizer finds nothing after it (all kernels and the fuzz corpus give the same PTX
    # without it) and is quadratic in the accesses of a block: a 10,000-term sum of loads
    # spent 13 of its 19 s there.
    llvm.set_option("ember", "--disable-nvptx-load-store-vectorizer")
    # The DAG combiner flattens the TokenFactor chains of a block's memory operations up to
    # this many operands (default 2048): quadratic in the stores of a long block, it made
    # instruction selection 90% of a 10,000-statement kernel's compile (4.1 of 4.5 s; 0.5 s
    # at 4). Every kernel in kernels_src/ gives the same PTX with the limit.
    llvm.set_option("ember", "--combiner-tokenfactor-inline-limit=4")
    try:
        llvm.Target.from_triple("nvptx64-nvidia-cuda")
    except RuntimeError as e:  # pragma: no cover - depends on the llvmlite build
        raise InternalError("lower", f"this llvmlite has no NVPTX back end: {e}") from e
    _initialized = True


def target_machine(target: Target, opt: int):
    key = (target.arch, target.ptx, opt)
    with _lock:
        _init()
        tm = _machines.get(key)
        if tm is None:
            t = llvm.Target.from_triple("nvptx64-nvidia-cuda")
            tm = t.create_target_machine(cpu=target.arch, features=target.ptx_feature, opt=opt)
            _machines[key] = tm
        return tm


def data_layout(target: Target) -> str:
    return str(target_machine(target, 0).target_data)


# What LLVM runs after Ember's own passes. Ember's pipeline has already inlined, folded,
# merged, hoisted and unrolled, so LLVM's whole -O3 pipeline (about 17 ms of the RoPE
# compile) finds almost nothing left: on RoPE its PTX and this cleanup's differ in 2 of 631
# instructions. The cleanup keeps what only LLVM does: per-thread arrays to registers
# (sroa), combining the lowering's address arithmetic and casts (instcombine), merging
# blocks (simplifycfg), and rotating loops so each iteration has one branch. LLVM's own
# pipeline stays available as llvm_pipeline="full" (`--llvm-pipeline full`).
LLVM_PIPELINES = ("cleanup", "full")
CLEANUP_PASSES = ("sroa", "instruction_combine", "sroa", "simplify_cfg", "loop_simplify", "loop_rotate",
                  "instruction_combine", "simplify_cfg")
# ... and for a module with a function over LARGE_FUNCTION: per-thread arrays to registers
# only. simplifycfg would merge the blocks the lowering cut its straight-line code into, and
# instcombine sinks each instruction into its user's block (the whole chain of a long sum
# ends up in the last one); both undo the cut that keeps instruction selection linear. sccp
# first folds the lowering's casts of constant indices (`zext i32 3 to i64`), which
# instcombine folds in the cleanup: sroa promotes only arrays indexed by constants, and
# without it a huge unrolled kernel kept its fragments in local memory (a 4.7 KB stack frame
# a thread; tests/lowering/test_large_functions.py). sccp moves no instruction.
LARGE_CLEANUP_PASSES = ("sccp", "sroa")


# Straight-line code beyond this many LLVM instructions in one function: LLVM's code
# generator runs at -O0 on the module. At -O1..3 the NVPTX back end runs its straight-line
# scalar optimisations (strength reduction, n-ary reassociation) on every function, and in
# LLVM 22 they are quadratic in the candidates of a function: a 5,000-term sum of
# `x[i + k]` spent 25 of its 27 s in strength reduction, a 20,000-term one minutes. At -O0
# they do not run; ptxas optimises the PTX either way. The largest kernel in kernels_src/
# (gemm_bf16) is 4,608 instructions; the bound keeps codegen of any function under a few
# seconds (tests/test_compile_scaling.py). Such functions are also lowered in blocks of
# bounded size, which the cleanup must not merge (ember.lowering.llvm_lower.SPLIT_EVERY).
LARGE_FUNCTION = _lower.LARGE_FUNCTION
# ... and the size hint (ember.lowering.llvm_lower) below which no function can reach it.
_SURELY_SMALL = 4_000


def large_function(mod, size_hint: int) -> bool:
    """The optimized module has a function of more than LARGE_FUNCTION instructions. The
    count (2 us an instruction through llvmlite) is only taken when the lowering's size
    hint says it may."""
    if size_hint <= _SURELY_SMALL:
        return False
    with _lock:
        for f in mod.functions:
            n = 0
            for b in f.blocks:
                for _ in b.instructions:
                    n += 1
            if n > LARGE_FUNCTION:
                return True
    return False


def optimize(llvm_ir: str, target: Target, opt: int, pipeline: str = "cleanup", merged: bool = True,
             size_hint: int = 0):
    """Parse LLVM IR text, verify it and optimize it: at -O0 only LLVM's -O0 pipeline (which
    inlines the `alwaysinline` helpers), else the cleanup or LLVM's full -O pipeline.

    `merged`: Ember's cse ran. Without it (a `-p` list that leaves it out) the cleanup starts
    with LLVM's GVN: the back end's straight-line strength reduction is quadratic in equal
    address expressions of a loop body (2,000 copies of `x[tid * 4 + i]`: 4.8 s, 1.7 s after
    GVN; a fuzzed 5,000-copy program took minutes). GVN itself (NewGVN) is quadratic in the
    calls of a huge block (20,000 `thread_idx.x` reads: 21 s), so a module whose size hint
    is over LARGE_FUNCTION, which is compiled without that strength reduction, skips it."""
    if pipeline not in LLVM_PIPELINES:
        raise ValueError(f"llvm pipeline must be one of {', '.join(LLVM_PIPELINES)}, not {pipeline!r}")
    tm = target_machine(target, opt)
    with _lock:
        try:
            mod = llvm.parse_assembly(llvm_ir)
            mod.verify()
        except RuntimeError as e:
            raise InternalError("llvm", f"invalid LLVM IR: {e}") from e
        mod.data_layout = str(tm.target_data)
        pto = llvm.create_pipeline_tuning_options(speed_level=opt)
        pb = llvm.create_pass_builder(tm, pto)
        if opt == 0 or pipeline == "full":
            pb.getModulePassManager().run(mod, pb)
        else:
            mpm = llvm.create_new_module_pass_manager()
            if size_hint > LARGE_FUNCTION:
                names = LARGE_CLEANUP_PASSES
            else:
                names = CLEANUP_PASSES if merged else ("new_gvn",) + CLEANUP_PASSES
            for name in names:
                getattr(mpm, f"add_{name}_pass")()
            mpm.run(mod, pb)
    return mod


_VERSION = re.compile(r"^\.version (\d+)\.(\d+)$", re.M)
_EXTERN_LLVM = re.compile(r"\.extern \.func[^;]*\bllvm\.[\w.]+")


_CALL_SITE = re.compile(r"\b(callseq |prototype_)(\d+)")


def emit_ptx(mod, target: Target, opt: int, link=None) -> str:
    """The module's PTX; `link` (raw PTX -> PTX), if given, adds what the module only declares
    (ember.lowering.library) before the PTX is checked and its call sites numbered."""
    ptx = emit_raw(mod, target, opt)
    if link is not None:
        ptx = link(ptx)
    check_ptx(ptx, target)
    return _renumber_call_sites(ptx)


def emit_raw(mod, target: Target, opt: int) -> str:
    """LLVM's PTX for the module, with the neg.s16 rewrite; call sites as LLVM numbered them."""
    tm = target_machine(target, opt)
    with _lock:
        ptx = tm.emit_assembly(mod)
    return _widen_neg_s16(ptx)


_NEG_S16 = re.compile(r"\bneg\.s16\s+(%rs\d+), (%rs\d+);")


def _widen_neg_s16(ptx: str) -> str:
    """Every 16-bit integer negation as neg.s32 of the sign-extended value, truncated.
    ptxas compiles neg.s16 to a 32-bit negation whose result it then treats as an already
    extended 16-bit value: -(-32768) read +32768 when widened, shifted right or divided (by 3:
    10923 instead of -10922) on an H100 (fuzz corpus seed 300052;
    tests/gpu/test_semantics_gpu.py). LLVM selects neg.s16 for every `sub 0, x` and `mul x, -1`
    of i16/u16, so it is replaced here, after instruction selection, in a block with a
    register of its own. (8-bit values live in 16-bit registers: their negation is right.)"""
    if "neg.s16" not in ptx:        # a substring test is ~100x faster than the pattern's scan
        return ptx
    return _NEG_S16.sub(r"{ .reg .b32 %neg; cvt.s32.s16 %neg, \2; neg.s32 %neg, %neg; cvt.u16.u32 \1, %neg; }",
                        ptx)


def _renumber_call_sites(ptx: str) -> str:
    """NVPTX numbers call sites with a process-wide counter (`// callseq N`, `prototype_N`),
    so a second compile in one process would differ; renumber them from 0 in order."""
    # The pattern is tried only where str.find (a fast scan) sees one of its words: a regular
    # expression scanning all of a long PTX text took 0.5 ms for 4 call sites.
    starts = sorted(i for word in ("callseq ", "prototype_") for i in _find_all(ptx, word))
    numbers: dict[str, str] = {}
    out, done = [], 0
    for i in starts:
        m = _CALL_SITE.match(ptx, i)
        if m is None or i < done:
            continue
        out.append(ptx[done:i] + m.group(1) + numbers.setdefault(m.group(2), str(len(numbers))))
        done = m.end()
    return "".join(out) + ptx[done:] if out else ptx


def _find_all(text: str, word: str):
    i = text.find(word)
    while i != -1:
        yield i
        i = text.find(word, i + len(word))


def check_ptx(ptx: str, target: Target) -> None:
    m = _VERSION.search(ptx)
    if m is None or (int(m.group(1)), int(m.group(2))) != target.ptx:
        got = f"{m.group(1)}.{m.group(2)}" if m else "none"
        raise InternalError("ptx", f"asked LLVM for PTX {target.ptx_text} for {target.arch}, got .version {got}")
    bad = _EXTERN_LLVM.search(ptx) if ".extern .func" in ptx else None
    if bad:
        raise InternalError("ptx", f"the PTX calls an undefined LLVM function ({bad.group(0).split()[-1]}): "
                                   "an intrinsic the NVPTX back end could not select")
