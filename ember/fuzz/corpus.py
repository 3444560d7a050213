"""A corpus of generated programs with their simulator results, for the GPU.

Each entry keeps the program (its source, launch and input seed; inputs come from a
stable bit stream, see progen.Program.arguments) and a digest of every output array as
the simulator computed it. A digest covers the array in a canonical form: every NaN is
one NaN (NaN bits are unspecified), and a fast-math result slot is replaced by whether
the thread wrote it, since its value only has to be within the documented bound (which
`check_outputs` measures against f64). So a GPU run matches an entry when every digest
matches (bit for bit everywhere else) and every fast result is within its bound.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import asdict

import numpy as np

from ..ir.ops import OPS
from .progen import Program, _BITS_TYPE

FORMAT = 1


def canonical(name: str, a: np.ndarray, initial: np.ndarray, program: Program) -> np.ndarray:
    t = name[4:]
    out = a.copy()
    if t in _BITS_TYPE:
        bits = out.view(_BITS_TYPE[t])
        if t == "bf16":
            nan = ((bits & 0x7F80) == 0x7F80) & ((bits & 0x7F) != 0)
            bits[nan] = 0x7FC0
        else:
            bits[np.isnan(out)] = np.array([np.nan], dtype=out.dtype).view(_BITS_TYPE[t])[0]
    if t == "f32" and program.approx:
        rows = out.reshape(-1, program.slots)
        init = initial.reshape(-1, program.slots).view(np.uint32)
        for _, _, j in program.approx:
            rows[:, j] = (rows[:, j].view(np.uint32) != init[:, j]).astype(np.float32)
    return out


def digests(outputs: dict, initial: dict, program: Program) -> dict:
    return {name: hashlib.sha256(np.ascontiguousarray(canonical(name, a, initial[name], program)).tobytes()
                                 ).hexdigest()[:24]
            for name, a in outputs.items()}


def initial_outputs(program: Program) -> dict:
    return program.outputs(program.arguments())


def entry(seed: int, program: Program, outputs: dict) -> dict:
    e = asdict(program)
    e["seed"] = seed
    e["approx"] = [list(a) for a in program.approx]
    e["outputs"] = digests(outputs, initial_outputs(program), program)
    return e


def program_of(e: dict) -> Program:
    return Program(e["source"], e["block"], e["grid"], e["slots"], e["input_seed"],
                   [tuple(a) for a in e["approx"]], list(e["types"]), list(e.get("zeroed", [])))


def write(path, entries: list) -> None:
    """gzip without a timestamp or name inside, so the same corpus gives the same bytes."""
    lines = [json.dumps({"format": FORMAT, "programs": len(entries)})] + [json.dumps(e, sort_keys=True) for e in entries]
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f:
        f.write(("\n".join(lines) + "\n").encode("utf-8"))


def read(path) -> list:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        header = json.loads(f.readline())
        if header.get("format") != FORMAT:
            raise ValueError(f"{path}: corpus format {header.get('format')}, expected {FORMAT}")
        return [json.loads(line) for line in f]


def check_outputs(e: dict, outputs: dict) -> str | None:
    """Compare outputs from some device with an entry: None, or what differs."""
    program = program_of(e)
    initial = initial_outputs(program)
    got = digests(outputs, initial, program)
    for name, want in e["outputs"].items():
        if got[name] != want:
            return f"{name} differs from the simulator's"
    if program.approx:
        rows = outputs["out_f32"].reshape(-1, program.slots)
        init = initial["out_f32"].reshape(-1, program.slots).view(np.uint32)
        for fn, a, j in program.approx:
            written = rows[:, j].view(np.uint32) != init[:, j]
            inside, err, bound = OPS[f"math.{fn}"].approx.errors((rows[written, a],), rows[written, j])
            if (err > bound).any():
                k = int(np.argmax(err))
                return (f"{fn}({rows[written, a][k]!r}) = {rows[written, j][k]!r}: error {err[k]:.3g} "
                        f"beyond the documented {bound:.3g}")
    return None


def refresh(entries: list, simulate) -> tuple[list, list]:
    """Recompute every entry's digests from its stored source with `simulate(program)`
    (the sources stay as they are: a corpus is a fixed set of programs, not a seed range).
    Returns (entries, [(seed, names whose digest changed)])."""
    fresh, changed = [], []
    for e in entries:
        program = program_of(e)
        now = digests(simulate(program), initial_outputs(program), program)
        moved = sorted(n for n in now if e["outputs"].get(n) != now[n])
        if moved:
            changed.append((e["seed"], moved))
        fresh.append(dict(e, outputs=now))
    return fresh, changed


def run_on_gpu(entries: list, levels=(3, 0), on_failure=None) -> list:
    """Compile each entry's program for this GPU at each -O level, run it and compare with
    the simulator's results. Returns [(seed, level, what differs)]."""
    import ember
    from ember.runtime import cuda
    arch = cuda.context(0).arch             # the first GPU: the fuzz runs there
    failures = []
    for e in entries:
        program = program_of(e)
        for opt in levels:
            prog = ember.compile(program.source, arch=arch, opt=opt, name=f"fuzz{e['seed']}.ember")
            args = program.arguments()
            cuda.load(prog).fuzz(*args, grid=program.grid)
            outputs = program.outputs(args)
            problem = check_outputs(e, outputs)
            if problem:
                failures.append((e["seed"], opt, problem))
                if on_failure is not None:
                    on_failure(e, opt, program, outputs, problem)
    return failures
