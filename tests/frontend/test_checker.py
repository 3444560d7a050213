"""The type checker: literal typing, no implicit conversions, constants and defines."""

import pytest

import ember
from ember.diagnostics import CompileError


def errors(src: str, **defines) -> list:
    try:
        ember.compile(src, defines=defines, stop_after="ast")
    except CompileError as e:
        return [(d.code, d.message) for d in e.diagnostics.sorted()]
    return []


def ok(src: str, **defines):
    prog = ember.compile(src, defines=defines, stop_after="ast")
    return prog


K = "kernel k(x: *mut global f32, u: u32, i: i32, h: f16) block(32) {{ {} }}"


@pytest.mark.parametrize("body", [
    "let a = u + 1; x[0] = f32(a);",                 # literal takes u32
    "let a: f64 = 1; x[0] = f32(a);",                # untyped int to float type
    "let a = 1 << u; x[0] = f32(a);",                # untyped shifted value: i32 by default
    "let a: u64 = 1 << 40; x[0] = f32(a);",          # exact constant arithmetic
    "let a = min(u, 3); x[0] = f32(a);",
    "let a = select(u > 2, 1.0, 2.0); x[0] = a;",
    "let a = h * 2.0; x[0] = f32(a);",               # f16 arithmetic
    "let p = x + i64(i); p[0] = 1.0;",               # pointer arithmetic
    "let b = bitcast<u32>(x[0]); x[1] = f32(b);",
    "let v = -2147483648; x[0] = f32(v);",           # i32 minimum as a literal
    "let (s, c) = sincos(h); x[0] = f32(s + c);",    # f16 through f32 math
])
def test_well_typed(body):
    assert errors(K.format(body)) == []


@pytest.mark.parametrize("body,code", [
    ("x[0] = u + i;", "E0201"),
    ("let a: u8 = 256; x[0] = f32(a);", "E0203"),
    ("let a: i8 = -129; x[0] = f32(a);", "E0203"),
    ("let a: u32 = 1.5; x[0] = f32(a);", "E0201"),
    ("x[0] = f32(u) % 2.0;", "E0202"),
    ("let a = -u; x[0] = f32(a);", "E0202"),
    ("x[0] = u;", "E0201"),
    ("if u { x[0] = 1.0; }", "E0209"),
    ("x[0] = f32(bool(u));", "E0204"),
    ("let b = bitcast<u64>(x[0]); x[1] = f32(b);", "E0205"),
    ("x[0] = fma(1.0, 2.0);", "E0206"),
    ("let p = x - u; p[0] = 1.0;", "E0202"),
    ("x[0] = f32(1e39_f32);", "E0203"),
])
def test_ill_typed(body, code):
    codes = [c for c, _ in errors(K.format(body))]
    assert code in codes, codes


def test_const_params_fold_and_bind_from_defines():
    src = "kernel k<const N: u32, const S: i32 = -3>(x: *mut global f32) block(N / 2) { x[0] = f32(S); }"
    prog = ok(src, N=128)
    assert prog.kernels["k"].block == (64, 1, 1)
    assert prog.kernels["k"].consts == {"N": 128, "S": -3}
    assert ok(src, N="0x40", S=5).kernels["k"].consts == {"N": 64, "S": 5}


def test_define_values_are_checked_against_the_declared_type():
    src = "kernel k<const N: u8>(x: *mut global f32) block(32) { x[0] = f32(N); }"
    assert errors(src, N=300) and errors(src, N=300)[0][0] == "E0404"
    assert errors(src)[0][0] == "E0106"


def test_bool_and_float_defines():
    src = "kernel k<const F: bool, const G: f32>(x: *mut global f32) block(32) { if F { x[0] = G; } }"
    assert ok(src, F=True, G="0.1").kernels["k"].consts["G"] == pytest.approx(0.1)
    assert ok(src, F="1", G=2).kernels["k"].consts["F"] is True


def test_unused_define_is_a_warning():
    prog = ok("kernel k(x: *mut global f32) block(32) { x[0] = 1.0; }", NOPE=1)
    assert [w.code for w in prog.warnings] == ["W0001"]


def test_block_size_limits():
    assert errors("kernel k(x: *mut global f32) block(0) { }")[0][0] == "E0402"
    assert errors("kernel k(x: *mut global f32) block(32, 32, 2) { }")[0][0] == "E0402"


def test_typed_constant_arithmetic_wraps():
    src = "kernel k<const A: u8 = 200>(x: *mut global u8) block(32) { x[0] = A + A; }"
    prog = ember.compile(src, stop_after="ir")
    assert "arith.const 144 : u8" in prog.stage("ir")


def test_no_kernel_is_an_error():
    assert errors("fn f(a: f32) -> f32 { return a; }")[0][0] == "E0109"


def test_mutability():
    assert errors(K.format("let a = 1.0; a = 2.0;"))[0][0] == "E0301"
    assert errors(K.format("u = 1;"))[0][0] == "E0301"
    assert errors(K.format("for j in 0..4 { j = 1; }"))[0][0] == "E0301"
    assert errors(K.format("var a = 1.0; a = 2.0; x[0] = a;")) == []


def test_return_rules():
    assert errors("fn f() -> f32 { }\nkernel k(x: *mut global f32) block(32) { x[0] = f(); }")[0][0] == "E0305"
    assert errors("fn f() { return 1.0; }\nkernel k(x: *mut global f32) block(32) { f(); }")[0][0] == "E0304"
    assert errors("fn f(a: f32) -> f32 { if a > 0.0 { return 1.0; } else { return 2.0; } }\n"
                  "kernel k(x: *mut global f32) block(32) { x[0] = f(1.0); }") == []


def test_a_type_parameter_defaults_to_an_earlier_one():
    """`const TI: type = T`: TI is T's value unless given (-D TI=...); a later or unknown
    name is not a type, an earlier one with a bad value reports only its own error."""
    import ember
    src = """kernel k<const T: type = f32, const TI: type = T>(x: *mut global T, y: *global TI) block(32) {
        x[0] = T(f32(y[0]));
    }"""
    for defines, want in (({}, ("f32", "f32")), ({"T": "bf16"}, ("bf16", "bf16")), ({"T": "bf16", "TI": "f32"},
                                                                                 ("bf16", "f32"))):
        consts = ember.compile(src, defines=defines).kernels["k"].consts
        assert (consts["T"], consts["TI"]) == want
    assert [e[0] for e in errors("kernel k<const TI: type = T, const T: type = f32>(x: *mut global TI) block(32) "
                                 "{ x[0] = TI(1); }")] == ["E0404"]
    assert [e[0] for e in errors("kernel k<const T: type = bool, const TI: type = T>(x: *mut global f32) block(32) "
                                 "{ x[0] = 1.0; }")] == ["E0404"]


def test_type_parameters_bind_types():
    import ember
    src = """kernel k<const T: type = f32, const N: u32 = 4>(x: *mut global T, y: *global u32) block(32) {
        var a: [T; N];
        a[0] = T(y[0]);
        let b: T = bitcast<T>(bitcast<u32>(f32(1.5)));
        x[thread_idx.x] = a[0] + T(f32(b) * 0.0);
    }"""
    for t, ok in (("f32", True), ("i32", True), ("f16", False)):
        try:
            prog = ember.compile(src, defines={"T": t})
        except ember.CompileError as e:
            assert not ok and "cannot bit cast `u32` (4 bytes) to `f16`" in str(e)
            continue
        assert ok
        assert str(prog.kernels["k"].params[0].type) == f"*mut global {t}"
        assert prog.kernels["k"].consts == {"T": t, "N": 4}


def test_some_kernels_only_check_the_functions_they_call():
    """With some kernels only (`-k`, `kernels=`: the runtime and ember.ops compile one) a
    function of the file that none of them calls is not checked: a kernel for sm_80 compiles
    beside a helper that needs sm_90 (decode_attention_mma.ember's split pass beside its
    cluster merge). Every kernel, or the one that calls it, still reports it at the use."""
    src = ("fn leader() -> bool { return elect_sync(); }\n"
           "kernel uses(x: *mut global f32) block(32) { if leader() { x[0] = 1.0; } }\n"
           "kernel plain(x: *mut global f32) block(32) { x[thread_idx.x] = 2.0; }\n")
    assert "plain" in ember.compile(src, arch="sm_80", kernels=["plain"], cache=False).kernels
    for kernels in (None, ["uses"]):
        with pytest.raises(CompileError) as e:
            ember.compile(src, arch="sm_80", kernels=kernels, cache=False)
        (d,) = e.value.diagnostics.items
        assert (d.code, d.span.line_col) == ("E0501", (1, 30))
