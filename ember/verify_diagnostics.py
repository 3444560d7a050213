"""`--verify-diagnostics`: compare a program's diagnostics with annotations in comments.

    let x: u32 = 1.5;   // expected-error {{mismatched types}}
    // expected-error@+1 {{E0101}}
    let y = nope;
    // expected-warning@-3 {{unreachable}}
    // expected-error@* {{...}}          (a diagnostic with no line, or any line)
    // expected-no-diagnostics           (the file must compile cleanly)

An annotation matches a diagnostic of its severity on its line when TEXT is a substring
of the diagnostic's message or label, or is its code. Every annotation must match a
diagnostic and every diagnostic an annotation.
"""

from __future__ import annotations

import re

from .diagnostics import Diagnostic
from .records import record
from .source import SourceFile

_ANNOT = re.compile(r"expected-(error|warning)(@(?:[+-]\d+|\d+|\*))?\s*\{\{(.*?)\}\}")
_NO_DIAGS = re.compile(r"expected-no-diagnostics")


@record
class Expectation:
    severity: str
    line: int | None        # None: any line (@*)
    text: str
    at: int                 # the line the annotation is written on
    matched: bool = False


def parse_expectations(file: SourceFile) -> tuple[list[Expectation], bool]:
    exps: list[Expectation] = []
    no_diags = False
    for i in range(1, file.line_count + 1):
        line = file.line_text(i)
        pos = line.find("//")
        if pos < 0:
            continue
        comment = line[pos:]
        if _NO_DIAGS.search(comment):
            no_diags = True
        for m in _ANNOT.finditer(comment):
            sev, where, text = m.group(1), m.group(2), m.group(3)
            if where is None:
                target = i
            elif where == "@*":
                target = None
            elif where[1] in "+-":
                target = i + int(where[1:])
            else:
                target = int(where[1:])
            exps.append(Expectation(sev, target, text.strip(), i))
    return exps, no_diags


def _matches(e: Expectation, d: Diagnostic) -> bool:
    if e.severity != d.severity:
        return False
    if e.line is not None:
        if d.span is None or d.span.line_col[0] != e.line:
            return False
    return e.text in d.message or (d.label and e.text in d.label) or e.text == d.code


def check_expectations(file: SourceFile, diagnostics: list[Diagnostic]) -> list[str]:
    """The mismatches, as messages (empty when the diagnostics match the annotations)."""
    exps, no_diags = parse_expectations(file)
    problems: list[str] = []
    if no_diags and exps:
        problems.append(f"{file.name}: `expected-no-diagnostics` together with expected diagnostics")
    unmatched_diags = []
    for d in diagnostics:
        for e in exps:
            if not e.matched and _matches(e, d):
                e.matched = True
                break
        else:
            unmatched_diags.append(d)
    for e in exps:
        if not e.matched:
            where = "any line" if e.line is None else f"line {e.line}"
            problems.append(f"{file.name}:{e.at}: expected {e.severity} on {where} not produced: {{{{{e.text}}}}}")
    for d in unmatched_diags:
        loc = f"{d.span.file.name}:{d.span.line_col[0]}:{d.span.line_col[1]}" if d.span else file.name
        problems.append(f"{loc}: unexpected {d.severity}[{d.code}]: {d.message}")
    if not exps and not no_diags and not diagnostics:
        problems.append(f"{file.name}: no expected-error/expected-warning annotations and no "
                        "`expected-no-diagnostics`")
    return problems
