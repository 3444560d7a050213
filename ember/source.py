"""Source files and spans.

Every AST node and IR op carries a `Span` (character offsets into a `SourceFile`), so
every stage can point its errors at the source line that caused them.
"""

from __future__ import annotations

import bisect


class SourceFile:
    """The text of one input, with a line index for offset -> (line, column). `path` is the
    file it was read from (None for text given directly or read from stdin): imports in
    it are relative to that file's directory."""

    __slots__ = ("name", "text", "path", "_line_starts")

    def __init__(self, name: str, text: str, path: str | None = None):
        self.name = name
        self.text = text
        self.path = path
        starts = [0]
        find = text.find
        pos = find("\n")
        while pos >= 0:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        self._line_starts = starts

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column of a character offset."""
        line = bisect.bisect_right(self._line_starts, offset) - 1
        return line + 1, offset - self._line_starts[line] + 1

    def line_text(self, line: int) -> str:
        """The text of a 1-based line, without its newline."""
        start = self._line_starts[line - 1]
        end = self._line_starts[line] - 1 if line < len(self._line_starts) else len(self.text)
        return self.text[start:end].rstrip("\r")

    @property
    def line_count(self) -> int:
        return len(self._line_starts)

    def __repr__(self) -> str:
        return f"SourceFile({self.name!r})"


class Span:
    """A half-open range [start, end) of characters in one source file."""

    __slots__ = ("file", "start", "end")

    def __init__(self, file: SourceFile, start: int, end: int):
        self.file = file
        self.start = start
        self.end = max(end, start)

    def to(self, other: "Span") -> "Span":
        """The span covering self and other (same file)."""
        return Span(self.file, min(self.start, other.start), max(self.end, other.end))

    @property
    def line_col(self) -> tuple[int, int]:
        return self.file.line_col(self.start)

    def __str__(self) -> str:
        line, col = self.line_col
        return f"{self.file.name}:{line}:{col}"

    def __repr__(self) -> str:
        return f"Span({self}, {self.start}..{self.end})"
