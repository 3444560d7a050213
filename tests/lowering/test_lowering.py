"""Lowering: every intrinsic Ember uses exists in this LLVM (an unknown one would surface
as `.extern .func llvm.*`), and programs using all of it validate for sm_80 and sm_90.
(That every op is lowered or expanded is tests/ir/test_op_completeness.py.)"""

import pytest

import ember
from ember.frontend.builtins import BUILTINS
from ember.ir import signature as sig
from ember.ir.types import F32
from tests.conftest import compile_both

# Every builtin over f32 values with one result, from the builtin table.
F32_BUILTINS = [b for b in BUILTINS.values() if len(b.results) == 1 and b.params
                and all((isinstance(p, sig.Var) and p.admits(F32)) or p == sig.Exact(F32) for p in b.params)]


def test_all_builtins_lower_and_validate():
    calls = [f"{b.name}({', '.join(['a'] * len(b.params))})" for b in F32_BUILTINS]
    as_f32 = [c if BUILTINS[c.split("(")[0]].results[0] != sig.parse_spec("bool") else f"f32(u32({c}))"
              for c in calls]
    src = f"""
kernel k(x: *mut global f32, d: *mut global f64, h: *mut global f16, b: *mut global bf16,
         i: *mut global i32, u: *mut global u32) block(32) {{
    let a = x[0];
    x[1] = {" + ".join(as_f32)};
    let (s, c) = sincos(d[0]);
    d[1] = s + c + exp(d[0]) + log2(d[0]) + tanh(d[0]);
    h[0] = h[1] * h[2] + sin(h[3]);
    b[0] = b[1] + b[2] * exp(b[3]);
    x[3] = f32(u32(isnan(a))) + f32(u32(isinf(a))) + f32(u32(isfinite(a)));
    i[0] = dp4a(i[1], u[1], i[2]);
    u[0] = dp4a(u[1], u[2], u[3]);
}}"""
    assert len(F32_BUILTINS) > 30
    for prog in compile_both(src).values():
        assert "llvm." not in "".join(l for l in prog.ptx.splitlines() if l.startswith(".extern"))


@pytest.mark.parametrize("src_t", ["i8", "u16", "i32", "u64", "f16", "bf16", "f32", "f64"])
def test_all_conversions_lower(src_t):
    dsts = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64"]
    outs = "".join(f"y{i}: *mut global {d}, " for i, d in enumerate(dsts))
    stores = " ".join(f"y{i}[0] = {d}(a[0]);" for i, d in enumerate(dsts))
    compile_both(f"kernel k(a: *global {src_t}, {outs}) block(32) {{ {stores} }}")


def test_int_to_bf16_before_sm90_rounds_once():
    """LLVM goes through a rounded f32 before sm_90; Ember rounds toward zero with a
    sticky bit instead (cvt.rz + or), so the final rounding is the only one."""
    progs = compile_both("kernel k(a: *global i64, y: *mut global bf16) block(32) { y[0] = bf16(a[0]); }")
    assert "cvt.rz.f32.s64" in progs["sm_80"].ptx
    assert "cvt.rn.bf16.s64" in progs["sm_90"].ptx


def test_opt_levels_all_validate():
    src = ("kernel k(x: *mut global f32, n: u32) block(64) { var s = 0.0; "
           "for i in 0..n { s += sin(x[i]); } x[thread_idx.x] = s; }")
    for o in range(4):
        compile_both(src, opt=o)


def test_local_arrays_of_several_element_types():
    """One memset declaration serves arrays of every element type (found by the fuzzer)."""
    src = """kernel k(o: *mut global f64, i: u32) block(32) {
        var a: [u8; 4];
        var b: [i64; 2];
        var c: [f32; 8];
        a[i % 4] = 3;
        b[i % 2] = 5;
        c[i % 8] = 0.5;
        o[thread_idx.x] = f64(a[1]) + f64(b[1]) + f64(c[1]);
    }"""
    for opt in (0, 3):
        prog = ember.compile(src, opt=opt)
        assert prog.validate("sm_90").kernels["k"].spill_stores == 0


def test_constant_shift_amounts_are_folded_modulo_the_width():
    """`x >> 40` on u32 shifts by 8 (the language takes amounts modulo the width); a
    constant amount is lowered as the constant, a variable one is masked."""
    src = """
kernel k(x: *mut global u32, y: *mut global i16, n: u32) block(32) {
    x[0] = x[1] >> 40u32;
    y[0] = y[1] << 17u32;
    x[2] = x[3] << n;
}"""
    llvm_ir = ember.compile(src, opt=0, stop_after="llvm", cache=False).stage("llvm")
    assert "lshr i32" in llvm_ir and ", 8\n" in llvm_ir.split("lshr i32", 1)[1].split("\n", 1)[0] + "\n"
    assert "shl i16" in llvm_ir and ", 1\n" in llvm_ir.split("shl i16", 1)[1].split("\n", 1)[0] + "\n"
    assert "and i32 %" in llvm_ir and ", 31" in llvm_ir          # the variable amount
    assert "and i32 40" not in llvm_ir and "and i16 17" not in llvm_ir


def test_a_pass_list_without_cse_gets_llvm_gvn_before_codegen():
    """The back end's strength reduction is quadratic in equal address expressions of a loop
    body: without Ember's cse (a `-p` list), LLVM's GVN merges them first (a fuzzed program of
    5,000 copies took minutes to compile)."""
    import ember
    body = " + ".join("x[thread_idx.x * 4u32 + i]" for _ in range(50))
    src = ("kernel k(x: *mut global f32) block(32) {\n    var a: f32 = 0.0;\n"
           f"    for i in 0u32..4u32 {{ a = a + {body}; }}\n    x[thread_idx.x] = a;\n}}\n")
    bare = ember.compile(src, passes=["expand-math"], stop_after="llvm-opt", cache=False)
    # thread_idx.x is read once per copy (and declared once, read once more for the store)
    assert bare.stage("llvm").count("tid.x") == 52 and bare.stage("llvm").count("load float") == 50
    assert bare.stage("llvm-opt").count("tid.x") <= 3 and bare.stage("llvm-opt").count("load float") == 1
    # Ember's cse merges the index arithmetic itself
    assert ember.compile(src, stop_after="llvm", cache=False).stage("llvm").count("tid.x") == 2
