"""PTX validation and resource reports."""

import pytest

import ember
from ember.lowering.validate import ValidationError, parse_info_log, ptxas_path, validate

SRC = "kernel k(x: *mut global f32) block(32) { x[thread_idx.x] = sqrt(x[thread_idx.x]); }"


def test_resources_are_reported():
    prog = ember.compile(SRC, arch="sm_90")
    v = validate(prog.ptx, "sm_90")
    assert v.tool == "nvjitlink" and v.cubin[:4] == b"\x7fELF"
    r = v.kernels["k"]
    assert r.registers > 0 and r.spill_stores == 0 and r.stack == 0


def test_bad_ptx_is_reported():
    with pytest.raises(ValidationError) as e:
        validate(".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k() { bogus.instr; }\n", "sm_90")
    assert "sm_90" in str(e.value)


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas not on PATH")
def test_ptxas_agrees():
    prog = ember.compile(SRC, arch="sm_80")
    v = validate(prog.ptx, "sm_80", tool="ptxas")
    assert v.tool == "ptxas" and v.kernels["k"].registers > 0


def test_info_log_parsing():
    log = """ptxas info    : Compiling entry function 'rope' for 'sm_90'
ptxas info    : Function properties for rope
ptxas         .     8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 1024 bytes smem"""
    r = parse_info_log(log)["rope"]
    assert (r.registers, r.spill_stores, r.stack, r.shared, r.barriers) == (40, 4, 8, 1024, 1)
