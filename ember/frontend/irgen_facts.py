"""What the IR generator knows of each statement before generating it: the variables it
may assign and how control may leave it (ember.frontend.irgen.FnGen)."""

from __future__ import annotations

from . import typed as T

# how control may leave a statement: by `return`, or a `break` / `continue` of the loop around it
RETURN, BREAK, CONTINUE = ("return",), ("break",), ("continue",)


class Facts:
    """Per statement, in program order: the variables it may assign and whether control
    may leave it by `return`, or by a `break`/`continue` of the loop around it (not one
    inside it). Computed bottom-up, iteratively, once per statement."""

    def __init__(self):
        self.memo: dict[int, dict] = {}
        self.suffixes: dict[int, list] = {}

    def events(self, s) -> dict:
        memo = self.memo
        if id(s) in memo:
            return memo[id(s)]
        stack = [(s, False)]
        while stack:
            n, ready = stack.pop()
            if id(n) in memo:
                continue
            kids = T.stmt_children(n)
            if not ready and kids:
                stack.append((n, True))
                stack.extend((k, False) for k in kids)
                continue
            memo[id(n)] = self._own(n, kids)
        return memo[id(s)]

    def _own(self, n, kids) -> dict:
        if isinstance(n, T.TAssign):
            return {("var", n.sym): None}
        if isinstance(n, T.TBreak):
            return {BREAK: None}
        if isinstance(n, T.TContinue):
            return {CONTINUE: None}
        if isinstance(n, T.TReturn):
            return {RETURN: None}
        out: dict = {}
        for k in kids:
            out.update(self.memo[id(k)])
        if isinstance(n, (T.TFor, T.TWhile)):       # its breaks and continues are its own
            out.pop(BREAK, None)
            out.pop(CONTINUE, None)
        return out

    def suffix(self, stmts: list, start: int) -> dict:
        """The events of stmts[start:], in order, from unions computed once per list."""
        key = id(stmts)
        table = self.suffixes.get(key)
        if table is None:
            table = [None] * (len(stmts) + 1)
            table[len(stmts)] = {}
            for i in range(len(stmts) - 1, -1, -1):
                d = dict(self.events(stmts[i]))
                d.update(table[i + 1])
                table[i] = d
            self.suffixes[key] = table
        return table[start]

    def exits(self, s) -> set:
        ev = self.events(s)
        return {name for name, key in (("return", RETURN), ("break", BREAK), ("continue", CONTINUE))
                if key in ev}
