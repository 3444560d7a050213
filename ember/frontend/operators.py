"""The language's operators and the IR ops they are: read by the checker, IR generation,
the fuzzer and the GPU semantics tests."""

from __future__ import annotations

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
