"""The fuzz corpus through the compiler's large-function path (ember.fuzz.large.forced): the
path is taken - straight-line code cut into more blocks, code generated at -O0 - and every
program's PTX assembles (tests/gpu/test_fuzz_corpus_gpu.py runs them against the simulator's
results on a GPU)."""

import os
import re

import pytest

import ember
from ember.fuzz import corpus as C
from ember.fuzz.large import forced
from ember.lowering import llvm_lower, ptx
from tests.fuzz import CORPUS

SAMPLE = 24          # corpus entries (the whole corpus, 1,649 programs at -O3 and -O0, took 190 s here)


def _blocks(llvm_ir: str) -> int:
    return len(re.findall(r"\n[\w.\"]+:", llvm_ir))


def test_forced_takes_the_path_and_gives_it_back(monkeypatch):
    source = C.program_of(C.read(CORPUS)[5]).source
    normal = ember.compile(source, cache=False)
    opts = []
    real = ptx.emit_ptx
    monkeypatch.setattr(ptx, "emit_ptx", lambda mod, target, opt, link=None: opts.append(opt) or
                        real(mod, target, opt, link))
    bound = (llvm_lower.LARGE_FUNCTION, llvm_lower.SPLIT_EVERY, ptx.LARGE_FUNCTION, ptx._SURELY_SMALL)
    cache = os.environ.get("EMBER_NO_CACHE")
    with forced():
        large = ember.compile(source)
    assert opts == [0]
    assert _blocks(large.stage("llvm-opt")) > _blocks(normal.stage("llvm-opt"))
    assert (llvm_lower.LARGE_FUNCTION, llvm_lower.SPLIT_EVERY, ptx.LARGE_FUNCTION, ptx._SURELY_SMALL) == bound
    assert os.environ.get("EMBER_NO_CACHE") == cache


def test_corpus_programs_assemble_through_the_large_function_path():
    bad = []
    with forced():
        for e in C.read(CORPUS)[:SAMPLE]:
            for opt in (3, 0):
                prog = ember.compile(C.program_of(e).source, opt=opt, name=f"fuzz{e['seed']}.ember")
                try:
                    prog.validate()
                except Exception as ex:          # ValidationError, or no validator on this machine
                    bad.append((e["seed"], opt, str(ex).splitlines()[0]))
    assert bad == []


def test_the_gpu_command_without_a_gpu_says_so(capsys):
    """`python -m ember.fuzz gpu` (with or without --large) on a machine without a usable GPU:
    exit status 2 and one line saying why, not a traceback."""
    from ember.fuzz.__main__ import main
    from ember.runtime import cuda
    try:
        cuda.context(0)
        pytest.skip("a GPU is usable here")
    except cuda.NoGPUError:
        pass
    assert main(["gpu", str(CORPUS), "--large", "--limit", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("python -m ember.fuzz gpu: no NVIDIA GPU") and "Traceback" not in err
