"""Errors found while simulating a kernel, reported like compile errors: the source line
of the offending op, and which thread of which block did what."""

from __future__ import annotations

from ..diagnostics import Diagnostic


class SimError(Exception):
    def __init__(self, code: str, message: str, op=None, notes: list | None = None):
        self.code = code
        self.op = op
        self.diagnostic = Diagnostic("error", code, message, op.loc if op is not None else None,
                                     label="here" if op is not None else "", notes=list(notes or ()))
        super().__init__(self.diagnostic.render())


def thread_text(tid: tuple, bid: tuple) -> str:
    return f"thread ({tid[0]}, {tid[1]}, {tid[2]}) of block ({bid[0]}, {bid[1]}, {bid[2]})"
