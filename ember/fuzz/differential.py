"""Differential testing of one generated program.

The reference is the simulator running the IR straight from IR generation. Against it:
each pass alone on that IR (and canonicalize must leave its own output unchanged), the -O3 pipeline after every one of its passes and then
expand-math (the expansions the lowering emits, in the IR), and (when asked) the PTX of
-O0 and -O3 assembled by nvJitLink or ptxas, the -O3 PTX also the same bytes as with
expand-math in the pipeline. Results must agree bit for bit, except that any NaN equals
any NaN (NaN bits are unspecified)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import driver
from ..records import replace
from ..ir.core import clone_module
from ..ir.passes import PASSES, PIPELINES, run_passes
from ..sim import SimError, StepLimitExceeded, load_module
from .progen import Program


@dataclass
class Disagreement:
    where: str                 # "pass cse", "-O3 after licm", "ptx -O3", ...
    detail: str


@dataclass
class Report:
    program: Program
    reference: dict = field(default_factory=dict)      # output name -> array
    disagreements: list = field(default_factory=list)
    runs: int = 0

    @property
    def ok(self) -> bool:
        return not self.disagreements

    def describe(self) -> str:
        lines = [f"{d.where}: {d.detail}" for d in self.disagreements]
        return "\n".join(lines) + "\n--- program ---\n" + self.program.source


class GeneratorBug(Exception):
    """The reference run failed: the generator made a program with no defined result."""


def simulate(program: Program, module, kernels) -> dict:
    """The program's outputs from `module` in the simulator, each kernel marked programmatic
    as the compiler's proof finds it on this module: the simulator then reports a global
    access before griddep_wait (S0014) - a pass that moved one above the wait, or the proof
    wrong."""
    from ..ir.analysis.grid_dependency import waits_before_global
    kernels = {n: replace(k, programmatic=waits_before_global(module.get(n), module.functions))
               for n, k in kernels.items()}
    args = program.arguments()
    load_module(module, kernels).fuzz(*args, grid=program.grid, step_limit=10_000)
    return program.outputs(args)


def reference(program: Program) -> dict:
    """The outputs of the IR straight from IR generation, in the simulator."""
    prog = driver.compile(program.source, name="fuzz.ember", stop_after="ir")
    return simulate(program, prog.ir, prog.kernels)


def same(a: np.ndarray, b: np.ndarray, t: str) -> np.ndarray:
    """Elementwise agreement: equal bits, or both NaN."""
    if t == "bf16":
        nan_a = ((a & 0x7F80) == 0x7F80) & ((a & 0x7F) != 0)
        nan_b = ((b & 0x7F80) == 0x7F80) & ((b & 0x7F) != 0)
        return (a == b) | (nan_a & nan_b)
    if t in ("f16", "f32", "f64"):
        bits = {"f16": np.uint16, "f32": np.uint32, "f64": np.uint64}[t]
        return (a.view(bits) == b.view(bits)) | (np.isnan(a) & np.isnan(b))
    return a == b


def compare(ref: dict, got: dict, program: Program) -> str | None:
    for name, want in ref.items():
        t = name[4:]
        ok = same(want, got[name], t)
        if not ok.all():
            k = int(np.nonzero(~ok)[0][0])
            thread, slot = divmod(k, program.slots)
            return (f"{name}[{k}] (thread {thread}, slot {slot}): expected {want[k]!r}, got {got[name][k]!r} "
                    f"({int((~ok).sum())} elements differ)")
    return None


def check(program: Program, *, each_pass: bool = True, pipeline: bool = True, ptx: bool = True,
          arch: str = "sm_90", validator: str = "auto") -> Report:
    report = Report(program)
    prog = driver.compile(program.source, arch=arch, name="fuzz.ember", stop_after="ir")
    base = prog.ir
    try:
        report.reference = simulate(program, base, prog.kernels)
    except (SimError, StepLimitExceeded) as e:
        raise GeneratorBug(f"the reference run fails: {e}\n{program.source}") from e
    report.runs += 1

    def run(where: str, module) -> None:
        report.runs += 1
        try:
            got = simulate(program, module, prog.kernels)
        except (SimError, StepLimitExceeded) as e:
            report.disagreements.append(Disagreement(where, f"the simulator reports: {e}"))
            return
        diff = compare(report.reference, got, program)
        if diff:
            report.disagreements.append(Disagreement(where, diff))

    if each_pass:
        for name in sorted(PASSES):
            m = clone_module(base)
            run_passes(m, [name])
            run(f"pass {name} alone", m)
            if name == "canonicalize" and PASSES[name].run(m):
                report.disagreements.append(Disagreement(
                    "pass canonicalize twice", "the second run changed the IR (one walk must reach the fixed point)"))
    if pipeline:
        m = clone_module(base)
        run_passes(m, PIPELINES[3] + ["expand-math"], after=lambda name, mod: run(f"-O3 after {name}", mod))
    if ptx:
        for opt in (0, 3):
            full = driver.compile(program.source, arch=arch, name="fuzz.ember", opt=opt)
            try:
                full.validate(tool=validator)
            except Exception as e:   # ValidationError: the PTX does not assemble
                report.disagreements.append(Disagreement(f"ptx -O{opt}", f"does not validate: {e}"))
        # the lowering's expansions are the ones simulated above: the same PTX
        copied = driver.compile(program.source, arch=arch, name="fuzz.ember", passes=PIPELINES[3] + ["expand-math"])
        if copied.ptx != full.ptx:
            report.disagreements.append(Disagreement("ptx -O3", "differs from the PTX with expand-math in the "
                                                     "pipeline (the lowering's expansions are not the pass's)"))
    return report
