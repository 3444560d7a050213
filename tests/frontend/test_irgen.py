"""IR generation: structured control flow computes what the source says (run in the
interpreter over many lanes and compared with the same logic in Python)."""

import numpy as np

import ember
from ember.ir.interp import Interpreter

KERNEL = "kernel k(x: *mut global i32) block(32) { x[0] = 0; }\n"


def run_fn(src: str, name: str, *args):
    prog = ember.compile(src + KERNEL, stop_after="ir")
    fn = prog.ir.get(name)
    lanes = len(args[0])
    return Interpreter(prog.ir, lanes).call(fn, [np.asarray(a) for a in args])


def test_break_continue_in_for():
    src = """fn f(n: i32, k: i32) -> i32 {
        var s = 0;
        for i in 0..n {
            if i == k { break; }
            if i % 3 == 0 { continue; }
            s += i;
        }
        return s;
    }"""
    rng = np.random.default_rng(0)
    n = rng.integers(-2, 40, 500).astype(np.int32)
    k = rng.integers(-2, 40, 500).astype(np.int32)
    (got,) = run_fn(src, "f", n, k)

    def model(n, k):
        s = 0
        for i in range(n):
            if i == k:
                break
            if i % 3 == 0:
                continue
            s += i
        return s
    assert list(got) == [model(a, b) for a, b in zip(n, k)]


def test_early_returns_and_nested_loops():
    src = """fn f(a: i32, b: i32) -> i32 {
        if a < 0 { return -1; }
        var t = 0;
        var i = 0;
        while i < a {
            var j = 0;
            while true {
                if j >= b { break; }
                if i * j > 50 { return t; }
                t += j;
                j += 1;
            }
            i += 1;
        }
        return t + 1000;
    }"""
    rng = np.random.default_rng(1)
    a = rng.integers(-3, 12, 400).astype(np.int32)
    b = rng.integers(0, 12, 400).astype(np.int32)
    (got,) = run_fn(src, "f", a, b)

    def model(a, b):
        if a < 0:
            return -1
        t = 0
        for i in range(a):
            for j in range(b):
                if i * j > 50:
                    return t
                t += j
        return t + 1000
    assert list(got) == [model(x, y) for x, y in zip(a, b)]


def test_short_circuit_and_tuples():
    src = """fn g(a: u32) -> (u32, bool) {
        let big = a > 10 && a % 2 == 0 || a == 3;
        return (a * 2, big);
    }"""
    a = np.arange(30, dtype=np.uint32)
    twice, big = run_fn(src, "g", a)
    assert list(twice) == [2 * v for v in range(30)]
    assert list(big) == [(v > 10 and v % 2 == 0) or v == 3 for v in range(30)]


def test_ir_verifies_and_round_trips():
    from ember.ir.parser import parse_module
    from ember.ir.printer import print_module
    prog = ember.compile("""
fn h(a: f32) -> f32 { var s = a; for i in 0..3 { if s > 10.0 { break; } s = s * s; } return s; }
kernel k(x: *mut global f32) block(32) { x[thread_idx.x] = h(x[0]); }
""", stop_after="ir")
    text = prog.stage("ir")
    assert print_module(parse_module(text)) == text
