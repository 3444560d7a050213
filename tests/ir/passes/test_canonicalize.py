"""canonicalize reaches its fixed point in one walk per function: a second run changes
nothing, on every kernel of kernels_src/ and a quarter of the fuzz corpus (the
differential fuzzer checks every program it makes), where it runs in the -O3 pipeline
(after inlining, and again after unrolling)."""

from pathlib import Path

import pytest

import ember
from ember.fuzz import corpus
from ember.ir.core import clone_module
from ember.ir.passes import run_passes
from ember.ir.passes.canonicalize import canonicalize
from ember.ir.printer import print_module

ROOT = Path(__file__).resolve().parents[3]
KERNELS = sorted((ROOT / "kernels_src").glob("*.ember"))
DEFINES = {"rope.ember": {"HEAD_DIM": 128}, "rope_append.ember": {"HEAD_DIM": 128}}


def _second_run_changes_nothing(module, where: str) -> None:
    for passes in (["inline", "canonicalize"], ["inline", "canonicalize", "licm", "unroll", "canonicalize"]):
        m = clone_module(module)
        run_passes(m, passes, verify=False)
        changed = canonicalize(m)       # the functions a walk changed (rewrite counts every rewrite)
        assert changed == set(), f"{where}: a second canonicalize changed {sorted(f.name for f in changed)}"


@pytest.mark.parametrize("path", KERNELS, ids=lambda p: p.name)
def test_once_is_enough_on_the_kernels(path):
    arch = {"arch": "sm_90a"} if path.name == "gemm_wgmma.ember" else {}       # wgmma and setmaxnreg
    prog = ember.compile(path, defines=DEFINES.get(path.name, {}), stop_after="ir", cache=False, **arch)
    _second_run_changes_nothing(prog.ir, path.name)


def test_once_is_enough_on_the_fuzz_corpus():
    for e in list(corpus.read(ROOT / "tests" / "fuzz" / "corpus.jsonl.gz"))[::4]:
        prog = ember.compile(e["source"], name="fuzz.ember", stop_after="ir", cache=False)
        _second_run_changes_nothing(prog.ir, f"corpus seed {e['seed']}")


def test_the_ops_a_rewrite_makes_are_canonicalized_in_the_same_walk():
    """if-conversion makes `select(c, true, false)`, which is `c`: the same walk finishes it."""
    src = ("kernel k(x: *global u32, y: *mut global u32) block(32) {\n"
           "    var b = false;\n    if x[thread_idx.x] > 3u32 { b = true; }\n    y[0] = u32(b);\n}\n")
    m = clone_module(ember.compile(src, stop_after="ir", cache=False).ir)
    assert canonicalize(m)
    text = print_module(m)
    assert "scf.if" not in text and "arith.select" not in text, text
    assert canonicalize(m) == set()
