"""The target table: every arch compiles, emits the PTX version the table says, and
validates; unsupported pairs are refused before LLVM sees them (LLVM would abort)."""

import pytest

import ember
from ember import targets
from ember.artifacts.validate import validate

SRC = "kernel k(x: *mut global f32) block(32) { x[thread_idx.x] = f32(thread_idx.x); }"


@pytest.mark.parametrize("arch", targets.archs())
def test_every_arch_emits_its_version_and_validates(arch):
    prog = ember.compile(SRC, arch=arch)
    t = targets.resolve(arch)
    assert f".version {t.ptx_text}\n" in prog.ptx
    assert f".target {arch}\n" in prog.ptx
    validate(prog.ptx, arch)


def test_requested_version_is_honoured_and_checked():
    assert ".version 8.5" in ember.compile(SRC, arch="sm_80", ptx_version="8.5").ptx
    with pytest.raises(targets.TargetError, match="needs PTX 7.8"):
        targets.resolve("sm_90", "7.0")
    with pytest.raises(targets.TargetError, match="not supported"):
        targets.resolve("sm_90", "9.9")
    with pytest.raises(targets.TargetError, match="unknown target"):
        targets.resolve("sm_42")


def test_ptx_version_check_catches_a_silent_fallback():
    from ember.diagnostics import InternalError
    from ember.lowering.ptx import check_ptx
    with pytest.raises(InternalError, match="got .version 7.0"):
        check_ptx(".version 7.0\n.target sm_90\n", targets.resolve("sm_90"))


def test_undefined_llvm_function_is_an_internal_error():
    from ember.diagnostics import InternalError
    from ember.lowering.ptx import check_ptx
    ptx = ".version 7.8\n.target sm_90\n.extern .func  (.param .b32 func_retval0) llvm.nvvm.bogus(\n"
    with pytest.raises(InternalError, match="llvm.nvvm.bogus"):
        check_ptx(ptx, targets.resolve("sm_90"))
