"""Shuffles of tuples: `shfl_xor((m, i), k)` shuffles each element with the same lane
(one gpu.shfl per element), so a (value, index) or (max, sum) reduction needs no element
written out twice. Checked against numpy in the simulator, in the IR, and in the
checker's errors."""

import numpy as np
import pytest

import ember
from ember.diagnostics import CompileError

# an argmax over each warp (ties to the lower index) with a butterfly of (value, index)
# pairs, and a (f64, u8, f16) triple rotated down by one lane through a function's result
SRC = """fn triple(a: f64, b: u8, c: f16) -> (f64, u8, f16) { return (a, b, c); }
kernel k(x: *global f32, w: *global f64, best: *mut global f32, at: *mut global i32,
         rw: *mut global f64, rb: *mut global u8, rc: *mut global f16) block(64) {
    let t = thread_idx.x;
    var m = x[t];
    var i = i32(t);
    for k in 0u32..5u32 {
        let (om, oi) = shfl_xor((m, i), 16u32 >> k);
        if om > m || (om == m && oi < i) { m = om; i = oi; }
    }
    best[t] = m;
    at[t] = i;
    let (a, b, c) = shfl_down(triple(w[t], u8(t * 7u32), f16(x[t])), 1);
    rw[t] = a;
    rb[t] = b;
    rc[t] = c;
}
"""


def _run(device: str, x, w, arch=None):
    prog = ember.compile(SRC, cache=False, **({"arch": arch} if arch else {"stop_after": "ir-opt"}))
    outs = [np.zeros(64, np.float32), np.zeros(64, np.int32), np.zeros(64, np.float64),
            np.zeros(64, np.uint8), np.zeros(64, np.float16)]
    ember.runtime.load(prog, device=device).k(x, w, *outs, grid=1)
    return outs


def _inputs(seed: int):
    rng = np.random.default_rng(seed)
    x = rng.integers(-4, 4, 64).astype(np.float32) * np.float32(0.5)    # many ties
    w = rng.standard_normal(64)
    return x, w


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_tuple_shuffles_in_the_simulator(seed):
    x, w = _inputs(seed)
    best, at, rw, rb, rc = _run("sim", x, w)
    for warp in (0, 1):
        lanes = slice(32 * warp, 32 * warp + 32)
        j = 32 * warp + int(np.argmax(x[lanes]))       # numpy's argmax takes the first
        assert (best[lanes] == x[j]).all() and (at[lanes] == j).all()
        down = np.minimum(np.arange(32) + 1, 31) + 32 * warp    # the last lane keeps its own
        assert (rw[lanes] == w[down]).all()
        assert (rb[lanes] == (down * 7) % 256).all()
        assert (rc[lanes] == x[down].astype(np.float16)).all()


def test_one_shuffle_per_element_with_the_same_lane():
    ir = ember.compile(SRC, stop_after="ir", cache=False).stages["ir"]
    shuffles = [line for line in ir.splitlines() if "gpu.shfl" in line]
    assert sum(" xor " in s for s in shuffles) == 2 and sum(" down " in s for s in shuffles) == 3
    assert {s.rsplit(":", 1)[1].strip() for s in shuffles if " down " in s} == {"f64", "u8", "f16"}


def _error(body: str) -> str:
    src = f"kernel k(o: *mut global f32) block(32) {{\n{body}\n    o[0] = 1.0;\n}}\n"
    with pytest.raises(CompileError) as e:
        ember.compile(src, cache=False)
    assert all(d.span is not None for d in e.value.diagnostics.errors)
    return e.value.diagnostics.render()


def test_an_element_the_shuffle_cannot_take_is_named():
    text = _error("    let (a, b) = shfl_xor((1.0f32, true), 1u32);")
    assert "`shfl_xor` of a tuple: element 1 is `bool`" in text


def test_the_shared_arguments_are_checked_once():
    text = _error("    let (a, b) = shfl_xor((1.0f32, 2i32), 1i32);")
    assert text.count("error[") == 1 and "expected `u32`, found `i32`" in text


def test_it_compiles_to_ptx_that_the_assembler_takes():
    prog = ember.compile(SRC, arch="sm_90", cache=False)
    assert prog.ptx.count("shfl.sync.bfly") >= 2 and prog.ptx.count("shfl.sync.down") >= 3
    prog.validate()


def test_only_shuffles_take_tuples():
    assert "found `(f32, f32)`" in _error("    let (a, b) = max((1.0f32, 2.0f32), 1.0f32);")
