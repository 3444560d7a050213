"""Ember's library functions (the Payne-Hanek reductions the math expansions call): compiled
once per process and target, linked into the PTX once each, before the kernels, not
exported; the same bytes whether this process compiled them before or not; never changed by
a pass. (conftest validates every PTX compiled here with nvJitLink or ptxas.)"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ember
from ember.diagnostics import InternalError
from ember.ir.library import is_library_function
from ember.ir.passes import PIPELINES
from ember.ir.passes.expand_math import library_function
from ember.ir.printer import print_module
from ember.ir.core import Module
from ember.lowering import library

ROOT = Path(__file__).resolve().parents[2]

# Two kernels calling f64 sincos (which calls the f64 reduction) and f32 sin (the f32 one);
# the expansions themselves are inline.
SRC = """
kernel a(x: *mut global f64) block(32) {
    let (s, c) = sincos(x[thread_idx.x]);
    x[thread_idx.x] = s + c + exp(x[thread_idx.x]);
}
kernel b(x: *mut global f64, y: *mut global f32) block(32) {
    let (s, c) = sincos(x[thread_idx.x] * 2.0);
    x[thread_idx.x] = s * c;
    y[thread_idx.x] = sin(y[thread_idx.x]);
}
"""

LIBRARY = ["__ember_trig_reduce_f32", "__ember_trig_reduce_f64"]


def definitions(ptx: str) -> list:
    return re.findall(r"^\.func\s.*?(__ember_\w+)\($", ptx, re.M)


def test_each_library_function_is_defined_once_before_the_kernels_and_not_exported():
    ptx = ember.compile(SRC, cache=False).ptx
    defined = definitions(ptx)
    assert defined == sorted(LIBRARY)
    assert ".extern" not in ptx and ".visible .func" not in ptx
    assert ptx.count("__ember_two_over_pi[") == 1                 # both reductions read one table
    first_kernel = ptx.index(".visible .entry")
    assert all(ptx.index(f"{name}(") < first_kernel for name in defined)
    calls = re.findall(r"call\.uni \(retval0\), (\w+),", ptx)
    assert sorted(set(calls)) == sorted(LIBRARY) and len(calls) == 3     # the math itself is inline


def test_callees_come_before_their_callers(monkeypatch):
    """No library function calls another today; the link order still puts every callee first."""
    graph = {"a": ["c"], "b": ["a", "c"], "c": []}
    monkeypatch.setattr(library, "_callees", lambda n: graph[n])
    assert library._callees_first(["b"]) == ["c", "a", "b"]
    assert library._callees_first(["a", "b"]) == ["c", "a", "b"]


def test_kernels_that_call_nothing_of_the_library_link_nothing():
    ptx = ember.compile("kernel k(x: *mut global f32) block(32) { x[thread_idx.x] = sin(x[thread_idx.x]) * 2.0; }",
                        cache=False).ptx
    assert definitions(ptx) == ["__ember_trig_reduce_f32"]
    ptx = ember.compile("kernel k(x: *mut global f64) block(32) { x[thread_idx.x] = x[thread_idx.x] * 2.0; }",
                        cache=False).ptx
    assert definitions(ptx) == []


def test_same_bytes_whether_the_library_was_compiled_before_or_not(monkeypatch):
    first = ember.compile(SRC, cache=False).ptx
    compiled = []
    real = library._compile
    monkeypatch.setattr(library, "_compile", lambda *a: compiled.append(a[0]) or real(*a))
    again = ember.compile(SRC, cache=False).ptx
    assert again == first and compiled == []            # the second compile compiled no library function
    monkeypatch.setattr(library, "_units", {})
    fresh = ember.compile(SRC, cache=False).ptx
    assert fresh == first and sorted(compiled) == sorted(LIBRARY)


def test_same_bytes_in_a_process_that_compiled_other_kernels_first(tmp_path):
    """Call sites are numbered over the linked text; the library's PTX (memoized with the
    numbers LLVM gave it) must not make a second process's output differ."""
    src = tmp_path / "k.ember"
    src.write_text(SRC)
    script = ("import sys, ember\n"
              "if sys.argv[2] == 'warm':\n"
              "    ember.compile(open(sys.argv[3]).read(), defines={'HEAD_DIM': 64}, cache=False)\n"
              "sys.stdout.write(ember.compile(sys.argv[1], cache=False).ptx)\n")
    env = dict(os.environ, PYTHONHASHSEED="7")
    outs = [subprocess.run([sys.executable, "-c", script, str(src), mode, str(ROOT / "kernels_src" / "rope.ember")],
                           env=env, capture_output=True, text=True, check=True).stdout for mode in ("cold", "warm")]
    assert outs[0] == outs[1] == ember.compile(SRC, cache=False).ptx


def test_every_optimization_level_and_pipeline_links(tmp_path):
    for opt in (0, 1, 2, 3):
        ptx = ember.compile(SRC, opt=opt, cache=False).ptx
        assert sorted(definitions(ptx)) == sorted(LIBRARY), opt
    ptx = ember.compile(SRC, llvm_pipeline="full", cache=False).ptx
    assert sorted(definitions(ptx)) == sorted(LIBRARY)


def test_passes_after_expand_math_never_change_the_shared_library_functions():
    before = {n: print_module(Module([library_function(n)])) for n in LIBRARY if library_function(n)}
    ember.compile(SRC, passes=["inline", "expand-math", "canonicalize", "licm", "unroll", "cse", "vectorize",
                               "dce", "expand-math", "dce"], cache=False)
    assert {n: print_module(Module([library_function(n)])) for n in before} == before


def test_expand_math_adds_the_library_functions_it_calls_to_the_module():
    prog = ember.compile(SRC, stop_after="ir-opt", cache=False, passes=PIPELINES[3] + ["expand-math"])
    names = [f.name for f in prog.ir.functions]
    assert names[:2] == ["a", "b"] and sorted(names[2:]) == sorted(LIBRARY)
    assert all(is_library_function(f) for f in prog.ir.functions[2:])
    text = prog.stage("ir-opt")
    assert "func.call @__ember_trig_reduce_f64" in text and "library = true" in text


def test_the_lowering_declares_the_library_functions_of_the_templates_it_emits():
    prog = ember.compile(SRC, stop_after="llvm", cache=False)
    assert [f.name for f in prog.ir.functions] == ["a", "b"]      # the math ops are still whole
    declared = [line for line in prog.stage("llvm").splitlines() if line.startswith("declare") and "ember" in line]
    assert [d.split('@"')[1].split('"')[0] for d in declared] == LIBRARY


def test_an_unknown_library_function_is_an_internal_error():
    with pytest.raises(InternalError, match="no function of that name|has none"):
        library.link(".version 7.8\n.target sm_90\n.address_size 64\n", ["__ember_nonsense_f64"],
                     ember.targets.resolve("sm_90", None), 3, "cleanup")
