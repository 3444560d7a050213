"""The Python API: ember.compile and the Program it returns."""

from pathlib import Path

import pytest

import ember
from ember import CompileError

ROOT = Path(__file__).resolve().parents[1]
SRC = "kernel k<const N: u32 = 64>(x: *mut global f32 align(16), n: u32) block(N) { x[thread_idx.x] = f32(n); }"


def test_compile_from_text_path_and_pathlike():
    a = ember.compile(SRC)
    p = ROOT / "kernels_src" / "rope.ember"
    b = ember.compile(p, defines={"HEAD_DIM": 64})
    c = ember.compile(str(p.relative_to(ROOT)) if Path.cwd() == ROOT else str(p), defines={"HEAD_DIM": 64})
    assert ".entry k(" in a.ptx and b.ptx == c.ptx and "rope" in b.kernels


def test_program_metadata():
    prog = ember.compile(SRC, arch="sm_80", opt=2, defines={"N": 128})
    k = prog.kernels["k"]
    assert k.block == (128, 1, 1) and k.consts == {"N": 128}
    assert [(p.name, str(p.type)) for p in k.params] == [("x", "*mut global f32 align(16)"), ("n", "u32")]
    assert k.signature() == "kernel k(x: *mut global f32 align(16), n: u32) block(128, 1, 1)"
    assert (prog.arch, prog.ptx_version, prog.opt) == ("sm_80", "7.0", 2)
    stages = prog.stages
    assert set(stages) == {"ast", "ir", "ir-opt", "llvm", "llvm-opt", "ptx"}
    assert stages["ast"].startswith("KernelDef k") and "kernel @k" in stages["ir"]
    assert "define ptx_kernel" in stages["llvm"] and stages["ptx"] == prog.ptx
    assert set(prog.timings) >= {"parse", "check", "irgen", "lower", "llvm-opt", "codegen"}


def test_errors_raise_with_every_diagnostic():
    with pytest.raises(CompileError) as e:
        ember.compile("kernel k(x: *mut global f32) block(32) { x[0] = a; x[1] = b; }")
    assert [d.code for d in e.value.diagnostics.errors] == ["E0101", "E0101"]
    assert "t" in str(e.value) and "cannot find `a`" in str(e.value)


def test_bad_options():
    with pytest.raises(ValueError):
        ember.compile(SRC, opt=5)
    with pytest.raises(ValueError, match="unknown target"):
        ember.compile(SRC, arch="sm_1")


def test_stop_after_and_custom_passes():
    prog = ember.compile(SRC, stop_after="ir")
    assert prog.ptx == "" and "kernel @k" in prog.stage("ir")
    seen = []
    ember.compile(SRC, passes=["expand-math"], after_pass=lambda name, m: seen.append(name))
    assert seen == ["expand-math"]
