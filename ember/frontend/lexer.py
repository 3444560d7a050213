"""Lark's contextual lexer, scanning with one regular expression instead of one per state.

Ember's grammar needs contextual lexing (`block`, `step`, `align`, ... are words of the
language in some places and names in others). Lark's ContextualLexer builds a scanner -
every terminal the parser accepts in a state, joined into one large regular expression -
for each distinct set of terminals it meets: 44 in a compile of rmsnorm.ember, whose
`re.compile` calls were 10-20 ms of every cold `ember compile`.

This lexer scans with the root scanner (all terminals) and keeps its token when the parser
accepts that terminal in the current state. The state's own scanner holds a subsequence of
the root's alternatives in the same priority order, so where the root's first matching
alternative is one the state accepts, the state's scanner matches the same one. When the
root's token is not accepted (a contextual word used as a name, a character the root cannot
scan), the position is rewound and the state's own scanner - built on first use, as lark
does - decides, exactly as lark's lexer would. tests/frontend/test_lexer.py checks that the
token streams are the same as lark's on every `.ember` file in the repository and on
programs of the fuzz corpus. The parser installs it through lark's `_plugins` option (the
hook lark offers for replacing its lexer class).
"""

from __future__ import annotations

from copy import copy

from lark.exceptions import UnexpectedCharacters, UnexpectedToken
from lark.lexer import BasicLexer, ContextualLexer


class SharedScannerLexer(ContextualLexer):
    def __init__(self, conf, states, always_accept=()) -> None:
        # Not ContextualLexer.__init__: it makes a lexer for each of the 85 distinct sets of
        # accepted terminals up front (3 ms of every cold compile); here a state's lexer is
        # made when first asked for, as its scanner is. The root lexer checks every terminal
        # once (lark's per-state lexers did it before).
        extra = frozenset(always_accept)
        self.accepts = {state: frozenset(names) | extra for state, names in states.items()}
        self.root_lexer = BasicLexer(copy(conf))
        self._conf = conf
        self._by_terminals: dict = {}
        self.lexers = _StateLexers(self._state_lexer)

    def _state_lexer(self, state):
        key = self.accepts[state]
        lexer = self._by_terminals.get(key)
        if lexer is None:
            conf = copy(self._conf)
            names = key | set(conf.ignore)
            conf.terminals = [t for t in self._conf.terminals if t.name in names]
            conf.skip_validation = True
            lexer = self._by_terminals[key] = BasicLexer(conf)
        return lexer

    def lex(self, lexer_state, parser_state):
        root = self.root_lexer
        try:
            while True:
                state = parser_state.position
                ctr = lexer_state.line_ctr
                saved = (ctr.char_pos, ctr.line, ctr.column, ctr.line_start_pos, lexer_state.last_token)
                try:
                    token = root.next_token(lexer_state, parser_state)
                    if token.type in self.accepts[state]:
                        yield token
                        continue
                except UnexpectedCharacters:
                    pass
                ctr.char_pos, ctr.line, ctr.column, ctr.line_start_pos, lexer_state.last_token = saved
                yield self.lexers[state].next_token(lexer_state, parser_state)
        except EOFError:
            pass
        except UnexpectedCharacters as e:
            # As lark's lexer: a terminal that exists but is not allowed here reads better as
            # an unexpected token than as an unexpected character.
            try:
                last_token = lexer_state.last_token
                token = root.next_token(lexer_state, parser_state)
                raise UnexpectedToken(token, e.allowed, state=parser_state, token_history=[last_token],
                                      terminals_by_name=root.terminals_by_name) from None
            except UnexpectedCharacters:
                raise e from None


class _StateLexers(dict):
    """parser state -> its lexer, made on first use."""

    def __init__(self, make) -> None:
        super().__init__()
        self._make = make

    def __missing__(self, state):
        lexer = self[state] = self._make(state)
        return lexer
