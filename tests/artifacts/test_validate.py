"""PTX validation and resource reports."""

import pytest

import ember
from ember.artifacts.validate import ValidationError, parse_info_log, ptxas_path, validate

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


@pytest.mark.parametrize("n", [8, 32, 64, 128])
def test_per_thread_arrays_indexed_by_unrolled_loops_stay_in_registers(n):
    """0 bytes of local memory for arrays of any size the unroller expands (arrays of 32 or
    more elements once stayed on the stack: SROA ran before instcombine folded their
    indices to constants)."""
    src = f"""kernel k(x: *global f32 align(16), y: *mut global f32 align(16)) block(64) {{
        var a: [f32; {n}];
        var acc: f32 = 0.0;
        let base = thread_idx.x * {n}u32;
        unroll for j in 0..{n}u32 {{
            a[j] = x[base + j];
            acc += a[j];
        }}
        unroll for j in 0..{n}u32 {{
            y[base + j] = a[{n - 1}u32 - j] / acc;
        }}
    }}"""
    r = validate(ember.compile(src, arch="sm_90").ptx, "sm_90").kernels["k"]
    assert (r.stack, r.spill_stores) == (0, 0)
