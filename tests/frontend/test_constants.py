"""Constants a kernel author names: a type's constants (`f32.inf`, `T.max`), `let` of a
constant as a named constant, const parameter defaults computed from others without
parentheses, and `static_assert` of what the const values must satisfy."""

import math

import numpy as np
import pytest

import ember
from ember import floats
from ember.diagnostics import CompileError
from ember.frontend.type_constants import value
from ember.ir.types import SCALARS


@pytest.mark.parametrize("t,name,want", [
    ("f32", "inf", math.inf), ("f32", "max", 3.4028234663852886e38), ("f16", "max", 65504.0),
    ("bf16", "max", 3.3895313892515355e38), ("f64", "epsilon", 2.0 ** -52), ("f32", "min_positive", 2.0 ** -126),
    ("f16", "min", -65504.0), ("u8", "max", 255), ("i64", "min", -2 ** 63), ("u16", "bits", 16),
])
def test_type_constants(t, name, want):
    assert value(SCALARS[t], name)[1] == want


def test_type_constants_in_a_kernel_and_through_a_type_parameter():
    src = """fn clamp_big<const T: type>(x: T) -> T { return min(x, T.max); }
kernel k<const T: type = f16>(x: *mut global f32, h: *mut global T) block(1) {
    x[0] = f32.inf; x[1] = -f32.inf; x[2] = f32.nan; x[3] = f32(T.max); x[4] = f32(u8.bits);
    h[0] = clamp_big(h[0]);
}
"""
    prog = ember.compile(src, stop_after="ir-opt", cache=False)
    x = np.zeros(5, np.float32)
    h = np.array([np.inf], np.float16)
    ember.runtime.load(prog, device="sim").k(x, h, grid=1)
    assert x[0] == np.inf and x[1] == -np.inf and np.isnan(x[2]) and x[3] == 65504.0 and x[4] == 8.0
    assert h[0] == 65504.0
    assert floats.to_bits(float(x[2]), "f32") == 0x7FC00000


def test_an_unknown_type_constant_lists_the_known_ones():
    with pytest.raises(CompileError) as e:
        ember.compile("kernel k(x: *mut global u32) block(32) { x[0] = u32.inf; }", cache=False)
    d = e.value.diagnostics.errors[0]
    assert d.code == "E0105" and "`u32.max`" in d.help


def test_a_let_of_a_constant_is_a_named_constant():
    src = """kernel k(x: *mut global f32) block(32) {
    let N = 4u32;
    var a: [f32; N * 2u32];
    unroll for i in 0u32..N * 2u32 { a[i] = f32(i); }
    x[thread_idx.x] = a[7];
}
"""
    ember.compile(src, cache=False)


def test_const_defaults_are_expressions_of_other_const_parameters():
    src = "kernel k<const N: u32 = 64, const H: u32 = N / 2 + 1>(x: *mut global f32) block(H) { x[0] = 1.0; }\n"
    assert ember.compile(src, cache=False).kernels["k"].block == (33, 1, 1)
    assert ember.compile(src, defines={"N": 128}, cache=False).kernels["k"].block == (65, 1, 1)


def test_static_assert_reports_the_condition_and_the_values():
    src = ("kernel k<const COLS: u32 = 100>(x: *mut global f32) block(32) {\n"
           "    static_assert(COLS % 8u32 == 0u32);\n    x[0] = 1.0;\n}\n")
    with pytest.raises(CompileError) as e:
        ember.compile(src, cache=False)
    d = e.value.diagnostics.errors[0]
    assert d.code == "E0408" and "COLS % 8u32 == 0u32" in d.message and d.notes == ["with COLS = 100"]
    assert d.span.line_col == (2, 19)
    ember.compile(src, defines={"COLS": 64}, cache=False)
    with pytest.raises(CompileError, match="E0401"):
        ember.compile("kernel k(x: *mut global f32, n: u32) block(32) { static_assert(n > 0u32); }", cache=False)
