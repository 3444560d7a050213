"""Reductions over a combine function (function parameters of device functions): any
associative operation, and pairs - (value, index) for an argmax, (max, sum) for an online
softmax - without writing the butterfly again."""

import re

import numpy as np
import pytest

import ember
from ember.diagnostics import CompileError

SRC = """import "std/reduce.ember";
fn argmax(v: f32, i: u32, w: f32, j: u32) -> (f32, u32) {
    if w > v || (w == v && j < i) { return (w, j); }
    return (v, i);
}
fn online(m: f32, s: f32, m2: f32, s2: f32) -> (f32, f32) {
    let mx = max(m, m2);
    return (mx, s * exp(m - mx) + s2 * exp(m2 - mx));
}
kernel k(x: *mut global f32, best: *mut global u32, soft: *mut global f32, lo: *mut global i32) block(32) {
    let i = thread_idx.x;
    let v = x[i];
    let (bv, bi) = warp_reduce_pair(v, i, argmax);
    let (m, s) = warp_reduce_pair(v, 1.0, online);
    if i == 0u32 { best[0] = bi; soft[0] = m; soft[1] = s; }
    lo[i] = warp_reduce(i32(v * 100.0), min);
}
"""


def test_argmax_online_softmax_and_min_by_combine_functions():
    prog = ember.compile(SRC, cache=False)
    x = np.random.default_rng(3).standard_normal(32).astype(np.float32)
    best, soft, lo = np.zeros(1, np.uint32), np.zeros(2, np.float32), np.zeros(32, np.int32)
    ember.runtime.load(prog, device="sim").k(x.copy(), best, soft, lo, grid=1)
    assert best[0] == int(np.argmax(x))
    assert soft[0] == x.max()
    assert abs(soft[1] - np.exp(x.astype(np.float64) - x.max()).sum()) < 1e-5
    assert (lo == (x * 100).astype(np.int32).min()).all()


@pytest.mark.parametrize("call,message", [
    ("warp_reduce(v, 3)", "takes a function"),
    ("warp_reduce(v, nowhere)", "takes a function"),
    ("warp_reduce(v, abs)", "takes a function of 2 argument(s), and `abs` takes 1"),
])
def test_a_wrong_function_argument_is_located(call, message):
    src = ('import "std/reduce.ember";\n'
           f"kernel k(x: *mut global f32) block(32) {{ let v = x[0]; x[0] = {call}; }}\n")
    with pytest.raises(CompileError, match=re.escape(message)):
        ember.compile(src, cache=False)


def test_a_function_type_elsewhere_is_an_error():
    with pytest.raises(CompileError, match="E0214"):
        ember.compile("kernel k(x: *mut global f32, f: fn(f32) -> f32) block(32) { x[0] = 1.0; }", cache=False)
