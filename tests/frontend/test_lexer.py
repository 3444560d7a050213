"""The shared-scanner lexer gives lark's contextual lexer's tokens, positions and errors.

Two tree-building parsers of Ember's grammar, one with lark's ContextualLexer and one with
Ember's SharedScannerLexer, read every `.ember` file in the repository, 150 programs of
the fuzz corpus and broken variants of them (cut short, a character replaced); their trees
(every token with its type, text and position) or their errors must be the same.
"""

import gzip
import json
import random
from importlib import resources
from pathlib import Path

import pytest
from lark import Lark, Token
from lark.exceptions import UnexpectedInput

from ember.frontend.lexer import SharedScannerLexer

ROOT = Path(__file__).resolve().parents[2]


def _lark(plugins: dict) -> Lark:
    grammar = resources.files("ember.frontend").joinpath("grammar.lark").read_text()
    return Lark(grammar, parser="lalr", lexer="contextual", start=["start", "item_only"], keep_all_tokens=True,
                _plugins=plugins)


@pytest.fixture(scope="module")
def parsers():
    return _lark({}), _lark({"ContextualLexer": SharedScannerLexer})


def _outcome(parser: Lark, text: str):
    try:
        tree = parser.parse(text, start="start")
    except UnexpectedInput as e:
        token = getattr(e, "token", None)
        return ("error", type(e).__name__, e.line, e.column, str(token) if token is not None else None,
                sorted(getattr(e, "expected", None) or getattr(e, "allowed", None) or ()))
    return [(t.type, t.value, t.start_pos, t.end_pos, t.line, t.column, t.end_line, t.end_column)
            for t in tree.scan_values(lambda v: isinstance(v, Token))]


def _sources() -> list:
    texts = [p.read_text() for p in sorted(ROOT.glob("**/*.ember")) if ".git" not in p.parts]
    with gzip.open(ROOT / "tests" / "fuzz" / "corpus.jsonl.gz", "rt") as f:
        rows = [json.loads(line) for line in f]
    corpus = [r["source"] for r in rows if "source" in r]
    return texts + random.Random(3).sample(corpus, 150)      # the whole corpus takes 20 s


def test_same_tokens_as_lark_on_every_program(parsers):
    lark_lexer, shared = parsers
    texts = _sources()
    assert len(texts) > 200
    for text in texts:
        assert _outcome(shared, text) == _outcome(lark_lexer, text)


def test_same_errors_as_lark_on_broken_programs(parsers):
    lark_lexer, shared = parsers
    r = random.Random(7)
    texts = _sources()
    junk = "@#$`\\'?>><<}{)(;:.,0x1e5_f32 block step align unroll"
    for text in r.sample(texts, 100):
        cut = text[:r.randrange(len(text) + 1)]
        i = r.randrange(len(text))
        replaced = text[:i] + r.choice(junk) + text[i + 1:]
        for variant in (cut, replaced):
            assert _outcome(shared, variant) == _outcome(lark_lexer, variant)


def test_contextual_words_need_the_state_scanner(parsers):
    """`block` and `step` as names: the root scanner's token (the word) is not accepted
    there, and the state's scanner decides."""
    lark_lexer, shared = parsers
    text = "kernel k(x: *mut global f32) { let block = 1; let step = block >> 1; x[0] = 1.0; }"
    out = _outcome(shared, text)
    assert out == _outcome(lark_lexer, text)
    assert ("NAME", "block") in [t[:2] for t in out] and ("NAME", "step") in [t[:2] for t in out]
