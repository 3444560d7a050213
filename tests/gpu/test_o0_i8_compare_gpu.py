"""A disagreement found by the fuzz corpus (seed 40031) and reduced to this kernel on an H100
(2026-11-26, PTX to SASS by nvJitLink 13.0): at Ember -O0 the GPU's `0i8 == v32` gives, in
some lanes, the value of the neighbouring lane, while `i32(v32)` computed from the same
PTX register is right. The -O0 PTX (LLVM without optimisation) is a plain
`ld.global.s8; max.s16; setp.eq.b16; selp.b32` per lane and reads correctly; the -O3 PTX
and the simulator agree. Not understood yet (a SASS-level problem of 16-bit registers is
the lead); strict xfail, so that the test fails once the GPU agrees and the cause is known."""

import numpy as np
import pytest

import ember

pytestmark = pytest.mark.gpu

SRC = """
fn fan23(x: i8) -> i8 { return x * 26i8; }
fn fan24(x: i8) -> i8 { return fan23(x) * fan23(x * (-1i8)); }
fn fan25(x: i8) -> i8 { return fan24(x) * fan24(x * (-6i8)); }
fn gl<const T: type>(p: *global T, i: u32, v: T) -> T { return max(p[i % 96u32], v); }
kernel k(x: *global i8, o: *mut global u32, r: *mut global i32) block(32) {
    let v26: i8 = fan25((2i8 << 4294967295u32));
    let v11 = thread_idx.x * 32u32;
    let v32: i8 = gl(x, (v11 << 8399605953271646025i64), (-v26));
    o[thread_idx.x] = select(0i8 == v32, 1u32, 2u32);
    r[thread_idx.x] = i32(v32) * 1000 + i32(v26);
}
"""


def _run(device: str, opt: int):
    from ember.runtime import cuda
    x = np.random.default_rng(0).integers(-128, 128, 96).astype(np.int8)
    x[::5] = 0
    kw = {"stop_after": "ir"} if device == "sim" else {"arch": cuda.context().arch}
    prog = ember.compile(SRC, opt=opt, cache=False, **kw)
    o, r = np.zeros(32, np.uint32), np.zeros(32, np.int32)
    ember.runtime.load(prog, device=device).k(x, o, r, grid=1)
    return o, r


def test_o3_agrees_with_the_simulator():
    so, sr = _run("sim", 3)
    go, gr = _run("cuda", 3)
    np.testing.assert_array_equal(go, so)
    np.testing.assert_array_equal(gr, sr)


@pytest.mark.xfail(strict=True, reason="-O0 on an H100 (nvJitLink 13.0): see the module docstring")
def test_o0_agrees_with_the_simulator():
    so, sr = _run("sim", 3)
    go, gr = _run("cuda", 0)
    np.testing.assert_array_equal(gr, sr)      # the value is right...
    np.testing.assert_array_equal(go, so)      # ...its comparison with 0 is not
