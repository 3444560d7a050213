"""The checker's binary operators (ember.frontend.check_operators) accept exactly what the
ops' signatures admit: for every operator and every scalar type, `a op b` compiles when
operator_admits says so and is a located error otherwise (never an internal error), and
constants of every integer type fold to what the op computes."""

import pytest

import ember
from ember.diagnostics import CompileError
from ember.frontend.operators import BINARY, COMPARE, SHIFT_OPS, operator_admits
from ember.ir.types import SCALARS

TYPES = ["bool", "f16", "bf16", "f32", "f64", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"]
OPERATORS = [op for op in BINARY if op not in SHIFT_OPS] + list(COMPARE)


def _value(t: str) -> str:
    if t == "bool":
        return "thread_idx.x < 7u32"
    if t in ("f16", "bf16"):
        return f"{t}(f32(thread_idx.x & 3u32))"
    return f"{t}(thread_idx.x & 3u32)"


def _compile(body: str, out: str = "u32"):
    src = (f"kernel k(out: *mut global {out}) block(32) {{\n"
           f"{body}\n}}\n")
    return ember.compile(src, arch="sm_90", cache=False)


def _outcome(body: str) -> str:
    try:
        _compile(body)
    except CompileError as e:
        assert all(d.span is not None for d in e.diagnostics.errors), e.diagnostics.render()
        return "error"
    return "ok"


@pytest.mark.parametrize("op", OPERATORS)
def test_an_operator_accepts_what_its_op_signature_admits(op):
    wrong = []
    for t in TYPES:
        body = (f"    let a = {_value(t)};\n    let b = {_value(t)};\n"
                f"    let c = a {op} b;\n    out[thread_idx.x] = u32(thread_idx.x);")
        want = "ok" if operator_admits(op, SCALARS[t]) else "error"
        if _outcome(body) != want:
            wrong.append(f"{t}: expected {want}")
    assert wrong == []


def test_the_rule_comes_from_the_signature():
    # what the op table says, not a list in the checker: `%` takes integers only, the
    # bitwise operators integers and bools, ordering comparisons no bools
    assert not operator_admits("%", SCALARS["f32"]) and operator_admits("%", SCALARS["u8"])
    assert operator_admits("&", SCALARS["bool"]) and not operator_admits("&", SCALARS["f64"])
    assert not operator_admits("<", SCALARS["bool"]) and operator_admits("==", SCALARS["bool"])


@pytest.mark.parametrize("t", ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"])
def test_typed_constants_fold_as_the_op_computes(t):
    # wrapping arithmetic of each width, folded in the front end: a static_assert sees it
    bits = int(t[1:])
    top = (1 << (bits - 1)) - 1 if t[0] == "i" else (1 << bits) - 1
    low = -(1 << (bits - 1)) if t[0] == "i" else 0
    body = (f"    static_assert({t}.max + {t}(1) == {t}.min);\n"
            f"    static_assert({t}.max == {t}({top}));\n"
            f"    static_assert({t}.min == {t}({low}));\n"
            f"    static_assert(({t}(7) >> 1u32) == {t}(3));\n"
            f"    out[0] = 1u32;")
    _compile(body)


def test_a_mismatch_names_both_types_and_the_fix():
    with pytest.raises(CompileError) as e:
        _compile("    let a = 1.0f32;\n    let b = 2i32;\n    let c = a + b;\n    out[0] = 1u32;")
    text = e.value.diagnostics.render()
    assert "mismatched types in `+`" in text and "`f32` + `i32`" in text and "f32(b)" in text


def test_a_float_remainder_says_how_to_write_it():
    with pytest.raises(CompileError, match="`%` is not defined for floats"):
        _compile("    let a = 1.0f32;\n    let c = a % a;\n    out[0] = 1u32;")


def test_a_compound_assignment_is_checked_like_its_operator_and_not_folded():
    _compile("    var a = 5u32;\n    a += 2;\n    a <<= 1;\n    out[0] = a;")
    with pytest.raises(CompileError, match="`%` is not defined for floats"):
        _compile("    var a = 5.0f32;\n    a %= 2.0;\n    out[0] = 1u32;")
