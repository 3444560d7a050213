"""Diagnostics that stop at the fix: what a located message says beyond its code, for the
cases a hostile user found terse, misleading or unprintable."""

import pytest

import ember
from ember.diagnostics import CompileError


def rendered(src: str) -> str:
    with pytest.raises(CompileError) as e:
        ember.compile(src, name="t.ember", cache=False)
    return e.value.diagnostics.render()


def test_a_nul_byte_is_named_and_printed_visibly():
    text = rendered("kernel k(x: *mut global f32) block(32) {\n    x[0] = 1.0;\0\n}\n")
    assert "unexpected character U+0000 (a NUL byte)" in text
    assert "\0" not in text and "x[0] = 1.0;\u2400" in text


def test_control_characters_and_tabs_keep_the_carets_aligned():
    text = rendered("kernel k(x: *mut global f32) block(32) {\n\tx[0] = \x1b 1.0;\n}\n")
    line, caret = [ln for ln in text.splitlines() if ln.startswith(("2 |", "  |")) and ("x[0]" in ln or "^" in ln)]
    assert "\x1b" not in text and line.index("\u241b") == caret.index("^")


def test_a_lone_surrogate_in_api_text_is_a_located_error():
    text = rendered("kernel k(x: *mut global f32) block(32) {\n    x[0] = 1.0; \ud800\n}\n")
    assert "lone surrogate (U+D800)" in text and "t.ember:2:17" in text
    text.encode("utf-8")       # printable on any terminal


def test_an_unclosed_brace_names_the_brace_and_the_likely_place():
    src = "kernel k(x: *mut global f32) block(32) {\n    if true {\n        x[0] = 1.0;\n\n}\n"
    text = rendered(src)
    assert "t.ember:1:40" in text and "this `{` is never closed" in text
    assert "the `}` on line 5 closes the `{` on line 2" in text


def test_an_error_in_a_generic_function_names_the_instance_and_the_call():
    src = ("fn add1<const T: type>(x: T) -> T { return x + 1.5; }\n"
           "kernel k(x: *mut global i32) block(32) { x[0] = add1(x[0]); }\n")
    text = rendered(src)
    assert "in `add1` (with T = i32), instantiated by the call at t.ember:2:49" in text


def test_no_mangled_names_reach_the_user():
    src = ("fn f<const T: type>(x: T) -> T { return f(x); }\n"
           "kernel k(x: *mut global f32) block(32) { x[0] = f(x[0]); }\n")
    text = rendered(src)
    assert "`f` (with T = f32) is called recursively" in text and "$" not in text


def test_a_device_function_value_parameter_is_reported_once():
    src = ("fn f<const N: u32>(x: f32) -> f32 { return x * f32(N); }\n"
           "kernel k(x: *mut global f32) block(32) { x[0] = f(x[0]); }\n")
    with pytest.raises(CompileError) as e:
        ember.compile(src, cache=False)
    assert [d.code for d in e.value.diagnostics.errors] == ["E0107"]


def test_a_standard_library_function_used_without_its_import_names_the_import():
    text = rendered("kernel k(x: *mut global f32) block(32) { x[0] = block_sum(x[0]); }\n")
    assert 'add `import "std/reduce.ember";`' in text


@pytest.mark.parametrize("src,fix", [
    ("kernel k(x: *mut global f32, n: u32) block(32) { x[0] = n as f32; }\n", "`f32(x)`"),
    ("kernel k(x: *mut global f32, n: u32) block(32) { x[0] = n > 0 ? 1.0 : 2.0; }\n", "`select(c, a, b)`"),
])
def test_other_languages_syntax_gets_emberss(src, fix):
    assert fix in rendered(src)


def test_an_error_inside_the_standard_library_is_reported_at_the_users_call(tmp_path, monkeypatch):
    """(With a standard library of this test's own, one of whose generic functions breaks
    for some types.)"""
    from ember import import_paths
    std = tmp_path / "std"
    std.mkdir()
    (std / "odd.ember").write_text("fn halve<const T: type>(v: T) -> T {\n    return v % 2.0;\n}\n")
    monkeypatch.setattr(import_paths, "std_dir", lambda: str(std))
    src = 'import "std/odd.ember";\nkernel k(x: *mut global i32) block(32) {\n    x[0] = halve(x[0]);\n}\n'
    text = rendered(src)
    assert text.startswith("t.ember:3:12: error[E0201]")
    assert "inside `halve` (with T = i32) at std/odd.ember:2:16" in text
