"""The driver's own behaviour around the stages: the garbage collector paused only while
compiling, IR verified once after the pipeline when passes are not verified one by one,
parsed files reused only when nothing was reported, kernels with arrays in local memory
warned about (W0004)."""

import gc

import pytest

import ember
from ember.diagnostics import InternalError
from ember.ir import verifier
from ember.ir.passes import PASSES, Pass
from ember.source import SourceFile

OK = "kernel k(x: *mut global f32) block(32) { x[thread_idx.x] = 2.0; }\n"


@pytest.mark.parametrize("source", [OK, "kernel k() { let x: u32 = 1.0; }\n"])
def test_the_collector_runs_again_after_a_compile(source):
    assert gc.isenabled()
    try:
        ember.compile(source, cache=False)
    except ember.CompileError:
        pass
    assert gc.isenabled()
    gc.disable()
    try:
        ember.compile(OK, cache=False)
        assert not gc.isenabled()            # left as the caller had it
    finally:
        gc.enable()


def test_ir_broken_by_a_pass_never_reaches_lowering(monkeypatch):
    """With per-pass verification off (a plain compile), the IR is verified after the
    pipeline: a pass that breaks it is an internal error, not bad PTX."""
    monkeypatch.setattr(verifier, "VERIFY_EACH", False)
    dce = PASSES["dce"]

    def breaking(module):       # dce, then the stored constant's op erased: a use of an undefined value
        dce.run(module)
        for f in module.functions:
            for op in f.walk():
                if op.name == "arith.const":
                    op.erase()
                    return True
        return True
    monkeypatch.setitem(PASSES, "dce", Pass("dce", breaking, dce.doc))
    with pytest.raises(InternalError, match="EMBER_VERIFY_EACH=1 names the stage"):
        ember.compile(OK, cache=False)
    monkeypatch.setattr(verifier, "VERIFY_EACH", True)
    with pytest.raises(InternalError, match="dce"):
        ember.compile(OK, cache=False)


def test_syntax_errors_are_reported_by_every_compile():
    bad = "kernel k( { }\n"
    for _ in range(2):
        with pytest.raises(ember.CompileError, match="error"):
            ember.compile(bad, cache=False)


def test_a_reused_parse_gives_the_same_program():
    first = ember.compile(OK, cache=False)
    again = ember.compile(OK, cache=False)
    assert again.ptx == first.ptx and again.stage("ast") == first.stage("ast")
    other = ember.compile(OK.replace("2.0", "3.0"), cache=False)
    assert other.ptx != first.ptx


def test_a_kernel_with_an_array_in_local_memory_is_warned_about_at_its_declaration():
    src = SourceFile("dyn.ember", "kernel k(x: *mut global f32, n: u32) block(32) {\n"
                                  "    var v: [f32; 8];\n"
                                  "    unroll for i in 0u32..8u32 { v[i] = x[i]; }\n"
                                  "    x[0] = v[n % 8u32];\n}\n")
    prog = ember.compile(src, cache=False)
    assert [(w.code, w.span.line_col) for w in prog.warnings] == [("W0004", (1, 8))]
    assert "32 bytes" in prog.warnings[0].message
