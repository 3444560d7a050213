"""Ember's LALR driver gives lark's tokens, trees and errors, from tables that are current.

lark (the grammar compiler, a test dependency) parses with its own LALR parser and
contextual lexer into trees; Ember's driver parses the same text with a builder that makes
the same trees. Every `.ember` file in the repository, 150 programs of the fuzz corpus,
broken variants of them (cut short, a character replaced) and token soup must give the same
tree (every token with its type, text and offsets) or the same error (kind, offset,
offending token, the terminals expected).
"""

import gzip
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from lark import Lark, Tree
from lark.exceptions import UnexpectedCharacters as LarkUnexpectedCharacters
from lark.exceptions import UnexpectedInput

from ember.frontend import lalr, parse_tables

ROOT = Path(__file__).resolve().parents[2]
GRAMMAR = ROOT / "ember" / "frontend" / "grammar.lark"
sys.path.insert(0, str(ROOT / "tools"))
import gen_parse_tables


class _TreeBuilder:
    """Makes lark's tree for every rule: (rule or alias, children)."""

    def __getattr__(self, name):
        return lambda children: (name, [_token(c) if isinstance(c, lalr.Token) else c for c in children])


def _token(t):
    return (t.type, str(t), t.start_pos, t.end_pos)


def _lark_tree(node):
    if isinstance(node, Tree):
        return (str(node.data), [_lark_tree(c) for c in node.children])
    return _token(node)


@pytest.fixture(scope="module")
def parsers():
    lark = Lark(GRAMMAR.read_text(), parser="lalr", lexer="contextual", start=["start", "item_only"],
                keep_all_tokens=True)
    return lark, lalr.Parser(_TreeBuilder())


def _lark_outcome(parser, text, start="start"):
    try:
        return _lark_tree(parser.parse(text, start=start))
    except UnexpectedInput as e:
        if isinstance(e, LarkUnexpectedCharacters):
            return ("characters", e.pos_in_stream, sorted(e.allowed))
        token = e.token
        position = (token.start_pos, token.end_pos) if token.type != "$END" else ()
        return ("token", token.type, str(token), *position, sorted(e.expected))


def _ember_outcome(parser, text, start="start"):
    try:
        tree = parser.parse(text, start)
    except lalr.UnexpectedCharacters as e:
        return ("characters", e.pos, sorted(e.allowed))
    except lalr.UnexpectedToken as e:
        token = e.token
        position = (token.start_pos, token.end_pos) if token.type != "$END" else ()
        return ("token", token.type, str(token), *position, sorted(e.expected))
    return tree


def _same(parsers, text, start="start"):
    lark, ember = parsers
    expected = _lark_outcome(lark, text, start)
    got = _ember_outcome(ember, text, start)
    assert got == expected, text


def _sources() -> list:
    texts = [p.read_text() for p in sorted(ROOT.glob("**/*.ember")) if ".git" not in p.parts]
    with gzip.open(ROOT / "tests" / "fuzz" / "corpus.jsonl.gz", "rt") as f:
        rows = [json.loads(line) for line in f]
    corpus = [r["source"] for r in rows if "source" in r]
    return texts + random.Random(3).sample(corpus, 150)


def test_tables_are_generated_from_the_grammar():
    assert parse_tables.GRAMMAR_SHA256 == gen_parse_tables.hashlib.sha256(GRAMMAR.read_bytes()).hexdigest()
    assert (ROOT / "ember" / "frontend" / "parse_tables.py").read_text() == \
        gen_parse_tables.generate(GRAMMAR.read_text()), "run python tools/gen_parse_tables.py"


def test_tables_do_not_depend_on_the_hash_seed():
    """lark numbers its states by hash order; the generator renumbers them canonically."""
    code = "import gen_parse_tables as g; print(g.generate(g.GRAMMAR.read_text()))"
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           cwd=ROOT / "tools", env={"PYTHONHASHSEED": seed, "PATH": ""}).stdout
            for seed in ("1", "2")}
    assert len(outs) == 1


def test_same_trees_as_lark_on_every_program(parsers):
    texts = _sources()
    assert len(texts) > 200
    for text in texts:
        _same(parsers, text)


def test_same_errors_as_lark_on_broken_programs(parsers):
    r = random.Random(7)
    texts = _sources()
    junk = "@#$`\\'?>><<}{)(;:.,0x1e5_f32 block step align unroll"
    for text in r.sample(texts, 100):
        cut = text[:r.randrange(len(text) + 1)]
        i = r.randrange(len(text))
        replaced = text[:i] + r.choice(junk) + text[i + 1:]
        for variant in (cut, replaced):
            _same(parsers, variant)


WORDS = ["kernel", "fn", "import", "let", "var", "if", "else", "for", "in", "while", "break", "continue",
         "return", "true", "false", "mut", "shared", "bitcast", "unroll", "const", "block", "min_blocks",
         "align", "stream", "step", "x", "f32", "global", "1", "0x1f_u8", "2.5e3_f32", "\"a.ember\"",
         "(", ")", "{", "}", "[", "]", "<", ">", ">>", "<<=", ";", ":", ",", ".", "..", "->", "=", "==",
         "+", "-", "*", "/", "%", "&", "|", "^", "!", "~", "&&", "||", "+=", "// c\n", "/* c */", "@"]


def test_same_outcome_as_lark_on_token_soup(parsers):
    """Random word sequences after a valid prefix reach many parser states and both errors."""
    r = random.Random(11)
    prefix = ["", "kernel k(p: *mut global f32) block(64) { ", "fn f<const N: u32 = 4>(a: f32) -> f32 { let v = "]
    for _ in range(1500):
        text = r.choice(prefix) + " ".join(r.choice(WORDS) for _ in range(r.randrange(1, 12)))
        _same(parsers, text)
        _same(parsers, text, start="item_only")


def test_contextual_words_need_the_state_scanner(parsers):
    """`block` and `step` as names: the root scanner's token (the word) is not accepted
    there, and the state's scanner decides."""
    text = "kernel k(x: *mut global f32) { let block = 1; let step = block >> 1; x[0] = 1.0; }"
    _same(parsers, text)
    tokens = []

    def walk(node):
        if len(node) == 4 and isinstance(node[0], str) and node[0].isupper():
            tokens.append(node[:2])
        else:
            for c in node[1]:
                walk(c)
    walk(_ember_outcome(parsers[1], text))
    assert ("NAME", "block") in tokens and ("NAME", "step") in tokens


def test_a_long_statement_list_parses_in_linear_time(parsers):
    """A repetition's list is extended in place (as lark does), never copied per item."""
    body = "x[0] = 1.0; " * 20000
    tree = _ember_outcome(parsers[1], "kernel k(x: *mut global f32) { " + body + "}")
    assert tree[0] == "start"
