"""Each op's doc example, made real: parsed (inside a function taking `example_args`, or
as a whole module when the example is one: a terminator or a call needs its context),
verified, and printed back by the op's own printer. docs/ir.md shows the printed text,
and a test checks that it reads back to the same bytes, so an example cannot drift from
what the op is."""

from __future__ import annotations

from .ops import OPS
from .parser import parse_module
from .printer import print_module, print_op
from .verifier import verify_module


class ExampleError(Exception):
    pass


def example_module(name: str):
    d = OPS[name]
    if not d.example:
        raise ExampleError(f"`{name}` has no doc example")
    if d.example.startswith(("global ", "func ", "kernel ")):
        text = d.example
    else:
        text = f"func @example({d.example_args}) {{\n{d.example}\n  return\n}}\n"
    try:
        m = parse_module(text, f"<example of {name}>")
        verify_module(m)
    except Exception as e:
        raise ExampleError(f"the example of `{name}` does not parse and verify: {e}") from e
    if first_op(m, name) is None:
        raise ExampleError(f"the example of `{name}` does not contain the op")
    return m


def first_op(m, name: str):
    return next((op for f in m.functions for op in f.walk() if op.name == name), None)


def example_text(name: str) -> str:
    """The op of the example as the printer writes it."""
    return print_op(first_op(example_module(name), name))


def round_trips(name: str) -> bool:
    """The example module prints, parses and prints again to the same bytes."""
    text = print_module(example_module(name))
    return print_module(parse_module(text)) == text
