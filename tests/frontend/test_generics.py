"""Type-generic device functions: inference from arguments, one instance per type,
located errors."""

import pytest

import ember
from ember.diagnostics import CompileError

GENERIC = """
fn add<const T: type>(a: T, b: T) -> T { return a + b; }
fn first<const T: type>(p: *mut shared T) -> T { return p[0]; }
"""


def errors(src: str) -> list:
    with pytest.raises(CompileError) as e:
        ember.compile(src)
    return [(d.code, d.span.line_col, d.message) for d in e.value.diagnostics.sorted()]


def test_one_instance_per_type_and_untyped_constants_take_the_default():
    prog = ember.compile(GENERIC + """
kernel k(x: *mut global f32, y: *mut global u32, z: *mut global f64) block(32) {
    shared t: [u32; 32];
    t[thread_idx.x] = y[thread_idx.x];
    barrier();
    x[0] = add(x[0], 1.5) + f32(add(1, 2)) + add(2, 0.5);
    y[0] = add(y[0], first(t));
    z[0] = add(z[0], z[1]);
}""", stop_after="ir")
    ir = prog.stage("ir")
    for name in ("add$f32", "add$u32", "add$f64", "add$i32", "first$u32"):
        assert f"@{name}" in ir or f'"{name}"' in ir or name in ir, name


def test_generic_code_runs_per_type_in_the_simulator():
    import numpy as np
    from ember.sim import load
    mod = load(ember.compile(GENERIC + """
kernel k(x: *mut global f32, y: *mut global i16) block(32) {
    x[thread_idx.x] = add(x[thread_idx.x], 0.25);
    y[thread_idx.x] = add(y[thread_idx.x], i16(-7));
}"""))
    x = np.arange(32, dtype=np.float32)
    y = np.arange(32, dtype=np.int16)
    mod.k(x, y, grid=1)
    assert (x == np.arange(32) + 0.25).all() and (y == np.arange(32) - 7).all()


def test_a_binding_that_conflicts_is_located_at_the_argument():
    [(code, where, message)] = errors(GENERIC + """
kernel k(x: *mut global f32, y: *mut global u32) block(32) { x[0] = add(x[0], y[0]); }""")
    assert code == "E0201" and where == (5, 79) and "add" in message


@pytest.mark.parametrize("decl, code, text", [
    ("fn f<const N: u32>(a: f32) -> f32 { return a; }", "E0107", "only allowed on kernels"),
    ("fn f<const T: type>(a: f32) -> T { return T(a); }", "E0107", "cannot infer"),
    ("fn f<const T: type = f32>(a: T) -> T { return a; }", "E0107", "no default"),
    ("fn f<const f32: type>(a: f32) -> f32 { return a; }", "E0102", "type parameter"),
    ("fn f<const T: type>(a: bool) -> bool { return a; } fn g<const T: type>(a: T) -> T { return a; }",
     "E0107", "cannot infer"),
])
def test_bad_generic_signatures_are_located(decl, code, text):
    found = errors(decl + "\nkernel k(x: *mut global f32) block(32) { x[0] = f(x[0]); }")
    assert found and found[0][0] == code and text in found[0][2], found


def test_a_type_parameter_must_be_numeric():
    found = errors("fn f<const T: type>(a: T) -> T { return a; }\n"
                   "kernel k(x: *mut global f32) block(32) { if f(true) { x[0] = 1.0; } }")
    assert found[0][0] == "E0201" and "numeric" in found[0][2]


def test_errors_inside_an_instance_are_reported_once_per_instance_at_the_source_line():
    found = errors("fn f<const T: type>(a: T) -> T { return a % a; }\n"
                   "kernel k(x: *mut global f32, y: *mut global f64) block(32) { x[0] = f(x[0]); y[0] = f(y[0]); }")
    assert {w for _, w, _ in found} == {(1, 43)} and len(found) == 2
