"""Syntax errors as diagnostics that stop at the fix: what was expected instead of a token
(a missing `;` at the end of the previous line, `==` for `=` in a condition), the `{` a
file ends inside (and the `}` that probably lacks its partner), an unterminated block
comment, a character that would not print named by its code point."""

from __future__ import annotations

import re

from ..diagnostics import Diagnostics, describe_char
from ..source import SourceFile, Span
from .lalr import ParseError, UnexpectedCharacters, UnexpectedToken
from .parse_tables import STRINGS

_FRIENDLY = {
    "NAME": "identifier",
    "INT": "integer literal",
    "FLOAT": "float literal",
    "$END": "end of input",
}


# What other languages write that Ember writes otherwise: said where the parser stops.
_FIXES = {
    "as": "Ember converts with the type's name: `f32(x)` (and reinterprets bits with `bitcast<u32>(x)`)",
    "?": "Ember has no `c ? a : b`: write `select(c, a, b)` (both sides evaluated) or an `if`/`else` on a `var`",
    "::": "Ember has no paths: name the function or constant directly",
    "#": "Ember has no preprocessor: `import \"file.ember\";` brings in functions, and `-D NAME=VALUE` binds a "
         "kernel's `const` parameter",
    "'": "Ember has no character literals; strings appear only in `import \"...\";`",
}


def describe_terminal(name: str) -> str:
    """How a diagnostic names a terminal: `;` for a string, `identifier` for NAME."""
    if name in _FRIENDLY:
        return _FRIENDLY[name]
    return f"`{STRINGS[name]}`" if name in STRINGS else name.lower()


def report(file: SourceFile, diags: Diagnostics, e: ParseError) -> None:
    """Report a syntax error as a located diagnostic that says what would fix it."""
    at = e.pos if isinstance(e, UnexpectedCharacters) else getattr(getattr(e, "token", None), "start_pos", None)
    if at is not None and file.text.startswith("/*", at) and "*/" not in file.text[at + 2:]:
        diags.error("E0004", "unterminated block comment", Span(file, at, at + 2),
                    label="this comment is never closed", help="end it with `*/`")
        return
    if isinstance(e, UnexpectedCharacters):
        pos = e.pos
        ch = file.text[pos] if pos < len(file.text) else ""
        what = describe_char(ch) + (" (a NUL byte)" if ch == "\0" else "")
        diags.error("E0003", f"unexpected character {what}", Span(file, pos, pos + 1), label="not valid here",
                    help=_FIXES.get(ch))
        return
    if isinstance(e, UnexpectedToken):
        tok = e.token
        expected = sorted({describe_terminal(t) for t in e.expected if not t.startswith("__")})
        listing = _one_of(expected)
        if tok.type == "$END":
            pos = len(file.text.rstrip())
            unclosed = _unclosed_brace(file.text)
            if unclosed is not None:
                opened, suspect = unclosed
                notes = [f"the file ends at line {file.line_col(max(pos - 1, 0))[0]}"]
                if suspect is not None:
                    close, its_open = suspect
                    line = file.line_col(its_open)[0]
                    notes.append(f"the `}}` on line {file.line_col(close)[0]} closes the `{{` on line {line} but is "
                                 f"indented less than that line: the block of line {line} may be missing its `}}`")
                diags.error("E0002", "unexpected end of input: a `{` is never closed", Span(file, opened, opened + 1),
                            label="this `{` is never closed", notes=notes, help="add the missing `}`")
                return
            diags.error("E0002", "unexpected end of input", Span(file, max(pos - 1, 0), pos),
                        label=f"expected {listing} after this")
            return
        span = Span(file, tok.start_pos, tok.end_pos)
        help_ = None
        prev_end = _previous_token_end(file.text, tok.start_pos)
        if "`;`" in expected and prev_end is not None and file.line_col(prev_end)[0] < span.line_col[0]:
            # The classic missing semicolon: point at the end of the previous line.
            diags.error("E0001", "expected `;`", Span(file, prev_end - 1, prev_end),
                        label="expected `;` after this", help="add `;` at the end of the statement")
            return
        line_start = file.text.rfind("\n", 0, tok.start_pos) + 1
        before = file.text[line_start:tok.start_pos]
        if str(tok) == "=" and ("`==`" in expected or re.search(r"\b(if|while)\b", before)):
            help_ = "to compare, use `==`"
        what = f"{describe_terminal(tok.type)} `{tok}`" if tok.type in _FRIENDLY else f"`{tok}`"
        diags.error("E0001", f"unexpected {what}", span, label=f"expected {listing}",
                    help=help_ or _FIXES.get(str(tok)))
        return
    diags.error("E0001", str(e).splitlines()[0], None)


def _unclosed_brace(text: str):
    """(offset of the outermost `{` left open at the end, and the likeliest place of the
    missing `}`: the first `}` indented less than the line of the `{` it closes, as
    (its offset, that `{`'s offset), or None), or None when every `{` is closed.
    Comments and strings are skipped."""
    stack: list = []
    suspect = None
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        if ch == '"':
            j = text.find('"', i + 1)
            i = n if j < 0 else j + 1
            continue
        if ch == "{":
            stack.append(i)
        elif ch == "}" and stack:
            opened = stack.pop()
            if suspect is None and _indent(text, i) < _indent(text, opened) and _line_starts_with_brace(text, i):
                suspect = (i, opened)
        i += 1
    return (stack[0], suspect) if stack else None


def _indent(text: str, pos: int) -> int:
    start = text.rfind("\n", 0, pos) + 1
    return len(text[start:pos]) - len(text[start:pos].lstrip(" \t"))


def _line_starts_with_brace(text: str, pos: int) -> bool:
    start = text.rfind("\n", 0, pos) + 1
    return text[start:pos].strip() == ""


def _one_of(items: list[str]) -> str:
    if not items:
        return "something else"
    if len(items) == 1:
        return items[0]
    if len(items) > 8:
        return "one of " + ", ".join(items[:8]) + ", ..."
    return "one of " + ", ".join(items)


def _previous_token_end(text: str, pos: int) -> int | None:
    """End offset of the token before `pos`, skipping whitespace and // comments."""
    i = pos
    while i > 0:
        j = i - 1
        while j >= 0 and text[j] in " \t\r\n":
            j -= 1
        if j < 0:
            return None
        line_start = text.rfind("\n", 0, j) + 1
        comment = text.find("//", line_start, j + 1)
        if comment >= 0:
            i = comment
            continue
        return j + 1
    return None
