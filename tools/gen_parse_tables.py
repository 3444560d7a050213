"""Writes ember/frontend/parse_tables.py: lark's LALR(1) automaton and contextual lexer for
Ember's grammar, as plain Python data for Ember's own parser driver (ember/frontend/lalr.py).

    python tools/gen_parse_tables.py           # rewrite the tables after editing grammar.lark
    python tools/gen_parse_tables.py --check   # exit 1 when the committed tables are stale

Why generated: importing lark and building its parser from lark's cache were about 60 ms
of every cold `ember compile` (250 M of its 760 M instructions); the tables below load in
well under a millisecond. lark stays the grammar compiler: it computes the automaton, the
tree-shaping of every rule and every lexer state's scanner, and this file only copies its
decisions out. tests/frontend/test_lalr.py checks that the committed file is what this
writes, and that Ember's driver gives lark's tokens, trees and errors.

The output is canonical: lark numbers its states in an order that depends on the hash seed,
so states are renumbered breadth first from the start states (symbols in name order) and
the same grammar always gives the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from lark import Lark
from lark.lexer import BasicLexer, PatternStr
from lark.parsers.lalr_analysis import Shift

ROOT = Path(__file__).resolve().parents[1]
GRAMMAR = ROOT / "ember" / "frontend" / "grammar.lark"
TABLES = ROOT / "ember" / "frontend" / "parse_tables.py"
STARTS = ("start", "item_only")


def build(grammar: str) -> Lark:
    return Lark(grammar, parser="lalr", lexer="contextual", start=list(STARTS), keep_all_tokens=True)


def _canonical_states(table) -> list:
    """lark's state ids in breadth-first order from the start states."""
    order, seen = [], set()
    queue = [table.start_states[s] for s in STARTS]
    while queue:
        state = queue.pop(0)
        if state in seen:
            continue
        seen.add(state)
        order.append(state)
        for _symbol, (action, arg) in sorted(table.states[state].items()):
            if action is Shift:
                queue.append(arg)
    assert seen == set(table.states), "unreachable parser states"
    return order


def _rule_record(rule) -> tuple:
    """(origin, length, callback, expand single child, indices spliced): lark's tree shaping.

    With keep_all_tokens every child is kept (parse_tree_builder.maybe_create_child_filter);
    a child made by a rule whose name starts with `_` has its children spliced in; a `?rule`
    without an alias returns its only child (ExpandSingleChild runs after the splice).
    Rules named `__...` are lark's repetitions: their value is the list the parent splices."""
    names = [str(s.name) for s in rule.expansion]
    splice = tuple(i for i, s in enumerate(rule.expansion) if not s.is_term and s.name.startswith("_"))
    internal = rule.origin.name.startswith("_")
    assert not (internal and rule.alias), rule
    assert not rule.options.empty_indices, "`[...]` placeholders are not supported by Ember's driver"
    callback = None if internal else str(rule.alias or rule.options.template_source or rule.origin.name)
    expand1 = bool(rule.options.expand1 and not rule.alias)
    return (str(rule.origin.name), len(names), callback, expand1, splice)


def _scanner_record(lexer: BasicLexer) -> tuple:
    """A lexer state's scanner as lark builds it: terminals in match order, after string
    terminals embedded in a regular one are dropped (those become the `unless` map: a match
    of the regular terminal whose text is the string takes the string's type)."""
    scanner = lexer.scanner          # builds it: lexer.callback is set now
    order = tuple(str(t.name) for t in scanner.terminals)
    unless = {}
    for name, callback in sorted(lexer.callback.items()):
        unless[str(name)] = {str(t.pattern.value): str(t.name) for t in callback.scanner.terminals}
    allowed = tuple(sorted(str(n) for n in scanner.allowed_types - lexer.ignore_types)) or ("<END-OF-FILE>",)
    return order, unless, allowed


def generate(grammar: str) -> str:
    lark = build(grammar)
    frontend = lark.parser
    table = frontend.parser.parser.parse_table
    lexer = frontend.lexer
    order = _canonical_states(table)
    number = {old: new for new, old in enumerate(order)}

    rules = sorted({r for row in table.states.values() for a, r in row.values() if a is not Shift},
                   key=lambda r: (r.origin.name, [s.name for s in r.expansion], r.alias or ""))
    rule_number = {r: i for i, r in enumerate(rules)}

    states = []
    for old in order:
        row = {}
        for symbol, (action, arg) in sorted(table.states[old].items()):
            row[str(symbol)] = number[arg] if action is Shift else -1 - rule_number[arg]
        states.append(row)

    scanners, scanner_of_state, by_key = [], [], {}
    for old in order:
        record = _scanner_record(lexer.lexers[old])
        key = repr(record)
        if key not in by_key:
            by_key[key] = len(scanners)
            scanners.append(record)
        scanner_of_state.append(by_key[key])
    root = _scanner_record(lexer.root_lexer)

    terminals = {str(t.name): str(t.pattern.to_regexp()) for t in sorted(lark.terminals, key=lambda t: t.name)}
    strings = {str(t.name): str(t.pattern.value) for t in sorted(lark.terminals, key=lambda t: t.name)
               if isinstance(t.pattern, PatternStr)}
    assert all(type(k) is str for row in states for k in row)
    assert not lexer.root_lexer.user_callbacks, "terminal callbacks are not supported"

    digest = hashlib.sha256(grammar.encode()).hexdigest()
    out = [
        '"""Generated by tools/gen_parse_tables.py from grammar.lark - do not edit.',
        "",
        "lark's LALR(1) tables and contextual lexer for Ember's grammar; read by lalr.py.",
        '"""',
        "",
        "# fmt: off",
        f"GRAMMAR_SHA256 = {digest!r}",
        "",
        "# parser states: symbol -> next state (>= 0: shift or goto) or -1 - rule (reduce)",
        f"START = { {s: number[table.start_states[s]] for s in STARTS}!r}",
        f"END = { {s: number[table.end_states[s]] for s in STARTS}!r}",
        "STATES = (",
        *(f"    {row!r}," for row in states),
        ")",
        "",
        "# rules: (name, length, builder callback or None for a list to splice, return the",
        "# only child, child indices to splice)",
        "RULES = (",
        *(f"    {_rule_record(r)!r}," for r in rules),
        ")",
        "",
        "# terminals: name -> regular expression; string terminals' text",
        f"TERMINALS = {terminals!r}",
        f"STRINGS = {strings!r}",
        f"IGNORE = {tuple(sorted(str(n) for n in lexer.root_lexer.ignore_types))!r}",
        "",
        "# scanners: (terminals in match order, {regular terminal: {text: string terminal}},",
        "# terminals reported as allowed when nothing matches); ROOT_SCANNER scans for all",
        f"ROOT_SCANNER = {root!r}",
        "SCANNERS = (",
        *(f"    {s!r}," for s in scanners),
        ")",
        f"SCANNER_OF_STATE = {tuple(scanner_of_state)!r}",
        "",
    ]
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when parse_tables.py is stale")
    args = ap.parse_args(argv)
    text = generate(GRAMMAR.read_text())
    if args.check:
        if TABLES.read_text() != text:
            print(f"{TABLES.relative_to(ROOT)} is stale: run python tools/gen_parse_tables.py", file=sys.stderr)
            return 1
        return 0
    TABLES.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
