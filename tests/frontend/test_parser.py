"""The parser: AST shapes and spans, operator precedence, syntax errors and recovery."""

import pytest

from ember.diagnostics import Diagnostics
from ember.frontend import ast as A
from ember.frontend import parser
from ember.source import SourceFile


def parse(text: str):
    d = Diagnostics()
    m = parser.parse(SourceFile("t.ember", text), d)
    return m, d


def expr_of(text: str) -> A.Expr:
    m, d = parse(f"kernel k(x: *mut global f32) {{ let v = {text}; }}")
    assert not d.items, d.render()
    return m.items[0].body.stmts[0].value


def shape(e) -> str:
    if isinstance(e, A.Binary):
        return f"({shape(e.lhs)} {e.op} {shape(e.rhs)})"
    if isinstance(e, A.Unary):
        return f"({e.op}{shape(e.operand)})"
    if isinstance(e, A.Name):
        return e.id
    if isinstance(e, A.IntLit):
        return str(e.value)
    if isinstance(e, A.Call):
        return f"{e.name}(" + ", ".join(shape(a) for a in e.args) + ")"
    if isinstance(e, A.Index):
        return f"{shape(e.base)}[{shape(e.index)}]"
    if isinstance(e, A.Field):
        return f"{shape(e.base)}.{e.name}"
    return type(e).__name__


@pytest.mark.parametrize("src,expected", [
    ("a + b * c", "(a + (b * c))"),
    ("a * b + c", "((a * b) + c)"),
    ("a - b - c", "((a - b) - c)"),
    ("a << 1 + 2", "(a << (1 + 2))"),
    ("a & b == c", "((a & b) == c)"),          # bitwise binds tighter than comparison (Rust order)
    ("a | b ^ c & d", "(a | (b ^ (c & d)))"),
    ("a < b && c > d || e", "(((a < b) && (c > d)) || e)"),
    ("-a * b", "((-a) * b)"),
    ("!a[i]", "(!a[i])"),
    ("f(a, b + 1)[2]", "f(a, (b + 1))[2]"),
    ("thread_idx.x * 2", "(thread_idx.x * 2)"),
    ("a >> 2 >> 1", "((a >> 2) >> 1)"),
])
def test_precedence(src, expected):
    assert shape(expr_of(src)) == expected


@pytest.mark.parametrize("text,value,suffix", [
    ("42", 42, None), ("0x2A", 42, None), ("0b101010", 42, None), ("1_000", 1000, None),
    ("7u8", 7, "u8"), ("7_i64", 7, "i64"), ("0xFF_u32", 255, "u32"),
])
def test_int_literals(text, value, suffix):
    e = expr_of(text)
    assert isinstance(e, A.IntLit) and e.value == value and e.suffix == suffix


def test_float_literals_are_exact_rationals():
    from fractions import Fraction
    assert expr_of("0.1").value == Fraction(1, 10)
    assert expr_of("1e-3_f64").suffix == "f64"
    assert expr_of("2.5e2").value == 250


def test_spans_cover_the_source():
    text = "kernel k(x: *mut global f32) {\n    let value = x[1] + 2.0;\n}\n"
    m, d = parse(text)
    let = m.items[0].body.stmts[0]
    assert text[let.span.start:let.span.end] == "let value = x[1] + 2.0;"
    assert let.span.line_col == (2, 5)
    assert text[let.value.span.start:let.value.span.end] == "x[1] + 2.0"


def test_parenthesized_expression_span_includes_parens():
    e = expr_of("(a + b) * c")
    assert e.span.file.text[e.lhs.span.start:e.lhs.span.end] == "(a + b)"


def test_statements_and_items():
    m, d = parse("""
fn f(a: f32) -> (f32, u32) { return (a, 1); }
kernel k<const N: u32 = 4, const B: bool = true>(x: *mut global f32 align(16), n: u32) block(N, 2) {
    var s: f32 = 0.0;
    var arr: [f32; 4];
    for i in 0..n step 2 { if i > 3 { break; } else if i == 1 { continue; } else { s += 1.0; } }
    unroll for j in 0..4 { arr[j] = s; }
    while s < 10.0 { s *= 2.0; }
    let (p, q) = f(s);
    x[0] = p;
    return;
}
""")
    assert not d.items, d.render()
    fn, k = m.items
    assert isinstance(fn.ret, A.TupleTypeExpr)
    assert [g.name for g in k.generics] == ["N", "B"]
    assert k.params[0].align == 16 and len(k.block) == 2
    kinds = [type(s).__name__ for s in k.body.stmts]
    assert kinds == ["Var", "Var", "For", "For", "While", "Let", "Assign", "Return"]
    assert k.body.stmts[3].unroll and not k.body.stmts[2].unroll


def test_keywords_are_reserved():
    m, d = parse("kernel k(x: *mut global f32) { let if = 1.0; }")
    assert d.has_errors and "unexpected `if`" in d.render()


def test_contextual_words_remain_identifiers():
    m, d = parse("kernel k(x: *mut global f32) { let block = 1.0; let step = block; let align = step; x[0] = align; }")
    assert not d.items, d.render()


def test_missing_semicolon_points_after_the_statement():
    _, d = parse("kernel k(x: *mut global f32) {\n    let a = 1.0\n    x[0] = a;\n}\n")
    (err,) = d.items
    assert err.code == "E0001" and err.message == "expected `;`"
    assert err.span.line_col == (2, 15) and "add `;`" in err.help


def test_each_broken_item_is_reported_and_good_items_survive():
    m, d = parse("""
kernel a(x: *mut global f32) { x[0] = ; }
fn good(v: f32) -> f32 { return v; }
kernel b(x: *mut global f32) { let = 1; }
""")
    assert len(d.errors) == 2
    assert [i.name for i in m.items] == ["good"]
    assert m.broken_items == {"a", "b"}


def test_unexpected_character_and_end_of_input():
    _, d = parse("kernel k(x: *mut global f32) { x[0] = 1.0 @ 2.0; }")
    assert d.items[0].code == "E0003" and "`@`" in d.items[0].message
    _, d = parse("kernel k(x: *mut global f32) { x[0] = 1.0;")
    assert d.items[0].code == "E0002"


def test_comments_are_ignored():
    m, d = parse("// line\nkernel k(x: *mut global f32) { /* block\n comment */ x[0] = 1.0; // trailing\n}")
    assert not d.items and len(m.items) == 1


def test_integer_literals_with_leading_zeros_are_decimal():
    """`007` is 7 (decimal, as in Rust); it used to crash the parser (found by the CLI fuzzer)."""
    import ember
    prog = ember.compile("kernel k(x: *mut global u64) block(32) { x[0] = 0007u64 + 04294967296u64; }",
                         stop_after="ast")
    assert "= 4294967303" in prog.stage("ast")


def test_a_compile_imports_neither_lark_nor_dataclasses():
    """The parser runs from generated tables (lalr.py): importing lark and building its
    parser were ~60 ms of every cold compile. Records replace dataclasses (records.py)."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    code = ("import sys, ember\n"
            "ember.compile('kernels_src/rope.ember', defines={'HEAD_DIM': 128}, cache=False)\n"
            "print(sorted(m for m in ('lark', 'dataclasses') if m in sys.modules))\n")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, env=dict(os.environ, EMBER_NO_CACHE="1"),
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_stale_table_is_caught_before_it_parses(monkeypatch):
    """grammar.lark edited without running tools/gen_parse_tables.py: a clear error, never
    a parser for the old grammar."""
    from ember.frontend import lalr, parse_tables
    monkeypatch.setattr(parse_tables, "GRAMMAR_SHA256", "0" * 64)
    with pytest.raises(lalr.StaleTables, match="gen_parse_tables"):
        lalr.Parser(parser._Builder())
