"""Ember's LALR(1) driver: lark's automaton and contextual lexer, run from generated tables.

lark compiles grammar.lark; tools/gen_parse_tables.py copies the result (parser states,
rules with their tree shaping, each lexer state's scanner) into parse_tables.py, and this
module runs it - the work lark's LALR parser and ContextualLexer do at parse time, without
importing lark (which, with building its parser, was about 60 ms of every cold compile).
tests/frontend/test_lalr.py runs lark and this driver side by side: the same tokens, trees
and errors on every `.ember` file of the repository, fuzz-corpus programs and broken ones.

Lexing is contextual: in each parser state only the terminals that state accepts are
scanned for (`block`, `step`, `align`, ... are words of the language in some places and
names in others). Compiling a regular expression per state was 10-20 ms of a cold compile,
so the root scanner (every terminal) runs first and its token is kept when the state
accepts it. A state's scanner holds a subsequence of the root's alternatives in the same
order, so where the root's first matching alternative is one the state accepts, the state's
scanner would match the same one; otherwise the position is kept and the state's own
scanner - compiled on first use - decides, exactly as lark's would.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from . import parse_tables as T


class Token:
    """A terminal: its type (the grammar's name), text and offsets in the source."""

    __slots__ = ("end_pos", "start_pos", "type", "value")

    def __init__(self, type_: str, value: str, start_pos: int, end_pos: int) -> None:
        self.type = type_
        self.value = value
        self.start_pos = start_pos
        self.end_pos = end_pos

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"Token({self.type!r}, {self.value!r}, {self.start_pos})"


class ParseError(Exception):
    """A syntax error; `partial` holds the parser's value stack when it was raised."""

    partial: list = []


class UnexpectedCharacters(ParseError):
    """No terminal allowed here matches at `pos`."""

    def __init__(self, pos: int, allowed) -> None:
        super().__init__(f"unexpected character at offset {pos}")
        self.pos = pos
        self.allowed = set(allowed)


class UnexpectedToken(ParseError):
    """`token` is not one of the `expected` terminals."""

    def __init__(self, token: Token, expected) -> None:
        super().__init__(f"unexpected {token.type} at offset {token.start_pos}")
        self.token = token
        self.expected = set(expected)


class StaleTables(RuntimeError):
    """grammar.lark changed after parse_tables.py was generated."""


def _check_tables() -> None:
    """The tables must be those of grammar.lark: a grammar edited without regenerating them
    would otherwise parse the old language. (A package without the grammar file skips it.)"""
    try:
        grammar = Path(__file__).with_name("grammar.lark").read_bytes()
    except OSError:
        return
    if hashlib.sha256(grammar).hexdigest() != T.GRAMMAR_SHA256:
        raise StaleTables("ember/frontend/grammar.lark changed after parse_tables.py was generated: "
                          "run python tools/gen_parse_tables.py")


class _Scanner:
    __slots__ = ("allowed", "match", "unless")

    def __init__(self, record: tuple) -> None:
        order, unless, allowed = record
        self.match = re.compile("|".join(f"(?P<{n}>{T.TERMINALS[n]})" for n in order)).match
        self.unless = unless
        self.allowed = allowed


_IGNORE = frozenset(T.IGNORE)


class _Lexers:
    """The root scanner and each state's own, compiled when first needed."""

    def __init__(self) -> None:
        self.root = _Scanner(T.ROOT_SCANNER)
        self._scanners: list = [None] * len(T.SCANNERS)

    def of_state(self, state: int) -> _Scanner:
        index = T.SCANNER_OF_STATE[state]
        scanner = self._scanners[index]
        if scanner is None:
            scanner = self._scanners[index] = _Scanner(T.SCANNERS[index])
        return scanner


def _next(scanner: _Scanner, text: str, pos: int, end: int):
    """The next token that is not ignored, from `pos`: (token or None at the end, its end)."""
    match = scanner.match
    while pos < end:
        m = match(text, pos, end)
        if m is None:
            raise UnexpectedCharacters(pos, scanner.allowed)
        kind = m.lastgroup
        value = m.group()
        stop = m.end()
        if kind in _IGNORE:
            pos = stop
            continue
        strings = scanner.unless.get(kind)
        if strings is not None:
            kind = strings.get(value, kind)
        return Token(kind, value, pos, stop), stop
    return None, pos


class Parser:
    """Parses text from a start symbol, calling `builder`'s methods as rules reduce."""

    def __init__(self, builder) -> None:
        _check_tables()
        self.lexers = _Lexers()
        # rule -> (name, length, callback, return-only-child, spliced children)
        self.rules = [(name, size, _callback(builder, cb, size, expand1, splice), expand1, splice)
                      for name, size, cb, expand1, splice in T.RULES]

    def parse(self, text: str, start: str, pos: int = 0, end: int | None = None):
        """Parse text[pos:end] from the start symbol `start`; tokens keep their offsets in
        the whole text."""
        states = T.STATES
        rules = self.rules
        lexers = self.lexers
        root = lexers.root
        end_state = T.END[start]
        state_stack = [T.START[start]]
        value_stack: list = []
        end = len(text) if end is None else end
        try:
            return self._run(text, start, pos, end, states, rules, lexers, root, end_state, state_stack,
                             value_stack)
        except ParseError as e:
            e.partial = value_stack      # what was reduced before the error (see parser._recover)
            raise

    @staticmethod
    def _run(text, start, pos, end, states, rules, lexers, root, end_state, state_stack, value_stack):
        last = None
        while True:
            # -- the next token, as the contextual lexer of the current state scans it
            state = state_stack[-1]
            row = states[state]
            try:
                token, stop = _next(root, text, pos, end)
                if token is not None and token.type not in row:
                    token, stop = _next(lexers.of_state(state), text, pos, end)
            except UnexpectedCharacters:        # the root scanner matched nothing: the state's decides
                try:
                    token, stop = _next(lexers.of_state(state), text, pos, end)
                except UnexpectedCharacters as inner:
                    # As lark: a terminal that exists but is not allowed here reads better as
                    # an unexpected token than as an unexpected character.
                    try:
                        found, _ = _next(root, text, inner.pos, end)
                    except UnexpectedCharacters:
                        raise inner from None
                    raise UnexpectedToken(found, inner.allowed) from None
            if token is None:
                token = Token("$END", "", last.start_pos, last.end_pos) if last else Token("$END", "", pos, pos)
            else:
                last = token
                pos = stop
            kind = token.type
            # -- shift it, after every reduction it calls for
            while True:
                action = row.get(kind)
                if action is None:
                    raise UnexpectedToken(token, {s for s in row if s.isupper()})
                if action >= 0:
                    state_stack.append(action)
                    value_stack.append(token)
                    break
                name, size, callback, expand1, splice = rules[-1 - action]
                if size:
                    children = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                else:
                    children = []
                if splice:
                    children = _splice(children, splice)
                if callback is None:
                    value = children
                elif expand1 and len(children) == 1:
                    value = children[0]
                else:
                    value = callback(children)
                goto = states[state_stack[-1]][name]
                state_stack.append(goto)
                value_stack.append(value)
                if goto == end_state and kind == "$END":
                    return value
                row = states[goto]


def _callback(builder, name, size: int, expand1: bool, splice: tuple):
    if name is None:
        return None                       # a repetition: its value is the list spliced
    method = getattr(builder, name, None)
    if method is None:
        if expand1 and size == 1 and not splice:
            return _never                 # `?rule: one_symbol` returns that symbol's value
        raise TypeError(f"the parser's builder has no method for the grammar's rule `{name}`")
    return method


def _never(children):
    raise AssertionError("a `?rule` of one symbol returns its child")


def _splice(children: list, splice: tuple) -> list:
    """The children with those at `splice` (lists) replaced by their items. A list spliced
    first is extended in place, as lark does: a repetition (`stmt*`) is left-recursive, and
    copying it at each item would make a long list quadratic."""
    out = None
    for i, child in enumerate(children):
        if i in splice:
            if out is None:
                out = child
            else:
                out += child
        elif out is None:
            out = [child]
        else:
            out.append(child)
    return out if out is not None else []
