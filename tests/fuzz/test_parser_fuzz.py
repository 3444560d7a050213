"""Mutated and random sources never crash the frontend: a diagnostic, not a traceback."""

from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

import ember
from ember.diagnostics import CompileError
from ember.source import SourceFile

ROOT = Path(__file__).resolve().parents[2]
SEED = (ROOT / "kernels_src" / "rope.ember").read_text()
TOKENS = ["{", "}", "(", ")", ";", ",", "let", "var", "if", "else", "for", "in", "..", "while", "return",
          "break", "=", "==", "+", "*", "<<", "x", "1", "1.5", "u32", "f32", "[", "]", ":", "->", "fn",
          "kernel", "bitcast", "<", ">", "-", "!", "&&", "step", "block", "true", "\n", "//", "0x",
          # imports and generics (a NUL in an import path once crashed; /dev/zero would never end)
          'import "std/reduce.ember";', "import", '"', '"std/', '"/dev/zero"', '"\x00"', "const", "type", "T",
          # a function named like Ember's library functions once took the math's calls at -O0
          "fn __ember_trig_reduce_f32(x: f32) -> (f32, i32) { return (x, 0); }", "sin"]


def compiles_or_reports(src: str) -> None:
    try:
        # as text, whatever it looks like (a one-line string ending in .ember is a path)
        ember.compile(SourceFile("<fuzz>", src), defines={"HEAD_DIM": 64}, stop_after="ir")
    except CompileError as e:
        assert e.diagnostics.errors, "CompileError without errors"
        for d in e.diagnostics.errors:
            d.render()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(SEED)), st.integers(0, 12), st.sampled_from(TOKENS)), max_size=4))
def test_mutated_rope_never_crashes(edits):
    src = SEED
    for pos, cut, tok in edits:
        pos %= len(src) + 1
        src = src[:pos] + tok + src[pos + cut:]
    compiles_or_reports(src)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=40))
def test_token_soup_never_crashes(tokens):
    compiles_or_reports("kernel k(x: *mut global f32) block(32) { " + " ".join(tokens) + " }")


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=80))
def test_arbitrary_text_never_crashes(text):
    compiles_or_reports(text)
