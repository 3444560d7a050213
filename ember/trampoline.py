"""Recursive algorithms without Python recursion.

A program may nest as deep as its author (or a code generator) likes: a sum of 20,000
terms is an expression tree 20,000 deep, 1,000 `else if` arms are 1,000 nested regions.
Walking such trees with Python recursion ends in RecursionError, so every traversal
whose depth follows the program is written as a generator and run here: where it would
call itself, it yields the sub-computation instead and receives its result,

    def expr(self, e):
        if isinstance(e, Binary):
            lhs = yield self.expr(e.lhs)        # "recursive call"
            rhs = yield self.expr(e.rhs)
            return combine(lhs, rhs)
        return leaf(e)

    value = run(self.expr(root))

and `run` keeps the chain of suspended generators in a list on the heap. Exceptions
travel up the chain as they would through calls. A yielded value that is not a
generator is sent straight back (so a visitor may yield a plain function's result).
"""

from __future__ import annotations

from types import GeneratorType


# Yielded by a computation that cannot go on for now (a thread group spinning on a barrier
# that another group must complete): a Task stops there, to be stepped again later; `run`
# just goes on (there is nothing else to run).
SUSPEND = object()


class Task:
    """A generator-based computation that can stop at a SUSPEND and go on later: `step()`
    runs it until it suspends (False) or ends (True, its value in `result`)."""

    def __init__(self, gen):
        self.stack = [gen]
        self.done = False
        self.result = None
        self._value = None
        self._error = None

    def step(self) -> bool:
        stack = self.stack
        send = stack[-1].send
        value, error = self._value, self._error
        while True:
            try:
                if error is None:
                    sub = send(value)
                else:
                    exc, error = error, None
                    sub = stack[-1].throw(exc)
            except StopIteration as stop:
                stack.pop()
                if not stack:
                    self.done, self.result = True, stop.value
                    return True
                send = stack[-1].send
                value = stop.value
                continue
            except BaseException as exc:   # propagate into the caller's generator
                stack.pop()
                if not stack:
                    raise
                send = stack[-1].send
                error = exc
                continue
            if sub is SUSPEND:
                self._value, self._error = None, None
                return False
            if isinstance(sub, GeneratorType):
                stack.append(sub)
                send = sub.send
                value = None
            else:
                value = sub


def run(gen):
    """Run a generator-based recursive computation to its result."""
    if not isinstance(gen, GeneratorType):
        return gen
    task = Task(gen)
    while not task.step():
        pass
    return task.result
