"""Diagnostics in the style of rustc: a located headline, the source line, carets and help.

    rope.ember:12:18: error[E0201]: mismatched types
       |
    12 |     let n: u32 = head;
       |                  ^^^^ expected `u32`, found `i32`
       |
       = help: convert explicitly: `u32(head)`

Every code is listed with its title and meaning in `ember.diagnostic_codes` (`ember
explain CODE` prints it; docs/diagnostics.md's table is kept equal to it by a test).
"""

from __future__ import annotations

from .diagnostic_codes import CODES as _CODES
from .records import field, record
from .source import Span

# code -> one-line title (the meanings are in ember.diagnostic_codes, which `ember explain` reads)
CODES: dict[str, str] = {code: title for code, (title, _) in _CODES.items()}


@record
class Diagnostic:
    severity: str  # "error" | "warning" | "remark"
    code: str | None
    message: str
    span: Span | None = None
    label: str = ""
    help: str | None = None
    notes: list[str] = field(default_factory=list)

    def render(self, color: bool = False) -> str:
        return render(self, color)

    @property
    def is_error(self) -> bool:
        return self.severity == "error"


# ANSI styles of a coloured rendering (rustc's): the kind in red or yellow, the gutter blue.
_STYLE = {"error": "\x1b[1;31m", "warning": "\x1b[1;33m", "bold": "\x1b[1m", "gutter": "\x1b[1;34m",
          "help": "\x1b[1;36m", "reset": "\x1b[0m"}


def render(d: Diagnostic, color: bool = False) -> str:
    """The diagnostic as text; `color` adds ANSI styles (for a terminal)."""
    def paint(style: str, text: str) -> str:
        return f"{_STYLE[style]}{text}{_STYLE['reset']}" if color and text else text
    kind = {"error": "error", "remark": "help"}.get(d.severity, "warning")
    head = paint(kind, f"{d.severity}[{d.code}]" if d.code else d.severity)
    message = paint("bold", d.message)
    if d.span is None:
        out = [f"{paint('bold', 'ember:')} {head}: {message}"]
        gutter = " "
    else:
        line, col = d.span.line_col
        out = [f"{paint('bold', f'{d.span.file.name}:{line}:{col}:')} {head}: {message}"]
        end_line, end_col = d.span.file.line_col(max(d.span.end - 1, d.span.start))
        text = d.span.file.line_text(line)
        gutter = " " * len(str(line))
        # Carets cover the span on its first line (at least one caret).
        width = (end_col - col + 1) if end_line == line else max(len(text) - col + 1, 1)
        text, col, width = _shown(text, col, width)
        text, col, width = _window(text, col, width)
        bar = paint("gutter", "|")
        out.append(f"{gutter} {bar}")
        out.append(f"{paint('gutter', str(line))} {bar} {text}")
        caret = " " * (col - 1) + paint(kind, "^" * max(width, 1) + (f" {d.label}" if d.label else ""))
        out.append(f"{gutter} {bar} {caret}")
    if d.help or d.notes:
        out.append(f"{gutter} {paint('gutter', '|')}")
    for note in d.notes:
        out.append(f"{gutter} {paint('gutter', '=')} {paint('bold', 'note')}: {note}")
    if d.help:
        out.append(f"{gutter} {paint('gutter', '=')} {paint('help', 'help')}: {d.help}")
    return "\n".join(out)


MAX_LINE = 120


def shown_char(ch: str) -> str:
    """How a source character is printed: itself, or (a tab aside) a visible stand-in for
    what a terminal would not show or would act on - control characters as their Unicode
    control pictures (NUL as ␀), lone surrogates as U+FFFD, other invisible or
    reordering characters (a BOM, bidi overrides) as <U+XXXX>."""
    o = ord(ch)
    if ch == "\t":
        return "    "
    if o < 0x20:
        return chr(0x2400 + o)
    if o == 0x7F:
        return "\u2421"
    if 0xD800 <= o <= 0xDFFF:
        return "\ufffd"
    if not ch.isprintable():
        return f"<U+{o:04X}>"
    return ch


def describe_char(ch: str) -> str:
    """A character named in a message: `x`, or U+0000 for one that would not print."""
    if ch and ch.isprintable() and not 0xD800 <= ord(ch) <= 0xDFFF:
        return f"`{ch}`"
    return f"U+{ord(ch):04X}" if ch else "end of input"


def _shown(text: str, col: int, width: int) -> tuple[str, int, int]:
    """The line as printed (shown_char), with the span's column and width moved to match."""
    if text.isprintable():
        return text, col, width
    parts, starts, at = [], [], 0
    for ch in text:
        starts.append(at)
        parts.append(shown_char(ch))
        at += len(parts[-1])
    starts.append(at)
    first = starts[min(col - 1, len(text))]
    last = starts[min(col - 1 + width, len(text))]
    return "".join(parts), first + 1, max(last - first, 1)


def _window(text: str, col: int, width: int) -> tuple[str, int, int]:
    """A long source line (generated code) shown as a window around the span, with `...`
    where it is cut; the span's carets are cut to the window too."""
    if len(text) <= MAX_LINE:
        return text, col, width
    start = max(col - 1 - 40, 0)
    end = min(start + MAX_LINE, len(text))
    shown = text[start:end]
    prefix = "..." if start > 0 else ""
    suffix = "..." if end < len(text) else ""
    new_col = col - start + len(prefix)
    new_width = max(min(width, end - (col - 1)), 1)
    return prefix + shown + suffix, new_col, new_width


class Diagnostics:
    """Collects diagnostics so that one run can report several errors."""

    def __init__(self) -> None:
        self.items: list[Diagnostic] = []

    def error(self, code: str, message: str, span: Span | None = None, label: str = "",
              help: str | None = None, notes: list[str] | None = None) -> Diagnostic:
        return self._add("error", code, message, span, label, help, notes)

    def warning(self, code: str, message: str, span: Span | None = None, label: str = "",
                help: str | None = None, notes: list[str] | None = None) -> Diagnostic:
        return self._add("warning", code, message, span, label, help, notes)

    def remark(self, code: str, message: str, span: Span | None = None, label: str = "",
               help: str | None = None, notes: list[str] | None = None) -> Diagnostic:
        return self._add("remark", code, message, span, label, help, notes)

    def _add(self, severity, code, message, span, label, help, notes) -> Diagnostic:
        assert code in CODES, code
        d = Diagnostic(severity, code, message, span, label, help, list(notes or ()))
        self.items.append(d)
        return d

    def extend(self, other: "Diagnostics") -> None:
        self.items.extend(other.items)

    @property
    def has_errors(self) -> bool:
        return any(d.is_error for d in self.items)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.items if d.is_error]

    def sorted(self) -> list[Diagnostic]:
        """In source order (stable for diagnostics without a location)."""
        def key(d: Diagnostic):
            if d.span is None:
                return ("", -1)
            return (d.span.file.name, d.span.start)
        return sorted(self.items, key=key)

    def render(self, color: bool = False) -> str:
        return "\n\n".join(d.render(color) for d in self.sorted())


class CompileError(Exception):
    """Raised by the compiler when the program has errors; carries every diagnostic."""

    def __init__(self, diagnostics: Diagnostics):
        self.diagnostics = diagnostics
        super().__init__(diagnostics.render())

    def __reduce__(self):
        # Rebuilt from its diagnostics, not from the rendered text (Exception's default): a
        # worker process of `ember tune` sends it back to the command, which renders it.
        return (CompileError, (self.diagnostics,))


class InternalError(Exception):
    """A bug in Ember (not in the user's program). Names the stage it happened in."""

    def __init__(self, stage: str, message: str, span: Span | None = None):
        self.stage = stage
        self.span = span
        where = f" at {span}" if span is not None else ""
        super().__init__(f"internal compiler error in stage '{stage}'{where}: {message}")
