"""The language's operators and the IR ops they are: read by the checker, IR generation,
the fuzzer and the GPU semantics tests."""

from __future__ import annotations

from functools import cache

# binary operator -> the op computing it (both operands of one type; shifts take any integer)
BINARY = {"+": "arith.add", "-": "arith.sub", "*": "arith.mul", "/": "arith.div", "%": "arith.rem",
          "&": "arith.and", "|": "arith.or", "^": "arith.xor", "<<": "arith.shl", ">>": "arith.shr"}
# comparison operator -> arith.cmp predicate
COMPARE = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}
# unary operator -> op (`!` and `~` are both bitwise not; logical not on bool)
UNARY = {"-": "arith.neg", "!": "arith.not", "~": "arith.not"}

BIT_OPS = ("&", "|", "^")
SHIFT_OPS = ("<<", ">>")
CMP_OPS = tuple(COMPARE)
LOGIC_OPS = ("&&", "||")


# What the language adds to the ops' signatures: `<`, `<=`, `>`, `>=` order numbers only
# (arith.cmp compares any scalar, bools included, for `==` and `!=`).
ORDERED = ("<", "<=", ">", ">=")


@cache
def operator_admits(op: str, t) -> bool:
    """Whether `a op b` with both operands of scalar type t is defined: the signature of
    the op the operator is (arith.add takes numbers, arith.and integers and bools,
    arith.rem integers, ...), read through the signature matcher the IR verifier uses
    (cached: asked for every operator the checker sees)."""
    from ..ir import signature as sig
    from ..ir.ops import OPS
    if op in COMPARE:
        if op in ORDERED and t.is_bool:
            return False
        d = OPS["arith.cmp"]
    else:
        d = OPS[BINARY[op]]
    return sig.match(d.operands, [t, t], {}, d.rules) is None
