"""Diagnostics in the style of rustc: a located headline, the source line, carets and help.

    rope.ember:12:18: error[E0201]: mismatched types
       |
    12 |     let n: u32 = head;
       |                  ^^^^ expected `u32`, found `i32`
       |
       = help: convert explicitly: `u32(head)`

Every error code is listed in `CODES` (and in docs/diagnostics.md); a test keeps the two
and the code base in step.
"""

from __future__ import annotations

from .records import field, record
from .source import Span

# code -> one-line title. Errors are E, warnings W.
CODES: dict[str, str] = {
    # syntax
    "E0001": "unexpected token",
    "E0002": "unexpected end of input",
    "E0003": "unexpected character",
    "E0004": "unterminated block comment",
    # names and items
    "E0101": "undefined name",
    "E0102": "duplicate definition",
    "E0103": "unknown type",
    "E0104": "unknown function",
    "E0105": "unknown field",
    "E0106": "const parameter has no value",
    "E0107": "const value parameters are only allowed on kernels",
    "E0108": "recursive device function",
    "E0109": "no kernel in program",
    "E0110": "cannot import",
    # types
    "E0201": "mismatched types",
    "E0202": "operator not defined for this type",
    "E0203": "literal out of range",
    "E0204": "invalid cast",
    "E0205": "invalid bit cast",
    "E0206": "wrong number of arguments",
    "E0207": "value cannot be indexed",
    "E0208": "index is not an integer",
    "E0209": "condition is not a bool",
    "E0210": "store through a read-only pointer",
    "E0211": "tuple pattern does not match",
    "E0212": "tuple used as a single value",
    "E0213": "function without a result used as a value",
    "E0214": "invalid pointer type",
    "E0216": "index out of bounds",
    "E0217": "array used as a value",
    # statements and control flow
    "E0301": "assignment to an immutable binding",
    "E0302": "invalid assignment target",
    "E0303": "`break` or `continue` outside a loop",
    "E0304": "wrong kind of `return`",
    "E0305": "function may end without returning a value",
    "E0306": "invalid loop step",
    "E0307": "shared array outside a kernel's top level",
    # constants and kernel attributes
    "E0401": "not a constant expression",
    "E0402": "invalid block size",
    "E0403": "constant evaluation failed",
    "E0404": "invalid value for a const parameter",
    "E0405": "too much shared memory",
    "E0406": "too much per-thread memory",
    "E0407": "invalid launch bound",
    # the target
    "E0501": "not available on the target architecture",
    "E0502": "program too large once inlined",
    # later stages
    "E0902": "PTX validation failed",
    # the simulator (errors found while running a kernel)
    "S0001": "out-of-bounds access",
    "S0002": "misaligned access",
    "S0003": "read of uninitialized shared memory",
    "S0004": "data race",
    "S0005": "divergent barrier",
    "S0006": "shuffle from an inactive lane",
    "S0007": "step limit exceeded",
    "S0008": "kernel too large to simulate",
    "S0009": "access to memory a cp.async is still copying",
    "S0010": "warp-wide op run by part of a warp",
    # warnings
    "W0001": "unused definition from the command line",
    "W0002": "unreachable code",
    "W0003": "`unroll for` not unrolled",
}


@record
class Diagnostic:
    severity: str  # "error" | "warning"
    code: str | None
    message: str
    span: Span | None = None
    label: str = ""
    help: str | None = None
    notes: list[str] = field(default_factory=list)

    def render(self) -> str:
        return render(self)

    @property
    def is_error(self) -> bool:
        return self.severity == "error"


def render(d: Diagnostic) -> str:
    head = f"{d.severity}[{d.code}]" if d.code else d.severity
    if d.span is None:
        out = [f"ember: {head}: {d.message}"]
        gutter = " "
    else:
        line, col = d.span.line_col
        out = [f"{d.span.file.name}:{line}:{col}: {head}: {d.message}"]
        end_line, end_col = d.span.file.line_col(max(d.span.end - 1, d.span.start))
        text = d.span.file.line_text(line)
        gutter = " " * len(str(line))
        # Carets cover the span on its first line (at least one caret).
        width = (end_col - col + 1) if end_line == line else max(len(text) - col + 1, 1)
        text, col, width = _shown(text, col, width)
        text, col, width = _window(text, col, width)
        out.append(f"{gutter} |")
        out.append(f"{line} | {text}")
        caret = " " * (col - 1) + "^" * max(width, 1)
        out.append(f"{gutter} | {caret}" + (f" {d.label}" if d.label else ""))
    if d.help or d.notes:
        out.append(f"{gutter} |")
    for note in d.notes:
        out.append(f"{gutter} = note: {note}")
    if d.help:
        out.append(f"{gutter} = help: {d.help}")
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

    def render(self) -> str:
        return "\n\n".join(d.render() for d in self.sorted())


class CompileError(Exception):
    """Raised by the compiler when the program has errors; carries every diagnostic."""

    def __init__(self, diagnostics: Diagnostics):
        self.diagnostics = diagnostics
        super().__init__(diagnostics.render())


class InternalError(Exception):
    """A bug in Ember (not in the user's program). Names the stage it happened in."""

    def __init__(self, stage: str, message: str, span: Span | None = None):
        self.stage = stage
        self.span = span
        where = f" at {span}" if span is not None else ""
        super().__init__(f"internal compiler error in stage '{stage}'{where}: {message}")
