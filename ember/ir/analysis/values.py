"""Integer facts: constants and known power-of-two divisibility."""

from __future__ import annotations

from ..core import Value

MAX_DIVISIBILITY = 1 << 20


def const_value(v: Value):
    """The constant an SSA value holds (int, bool, or float bit pattern), or None."""
    op = v.op
    if op is not None and op.name == "arith.const":
        return op.attrs["value"]
    return None


def divisibility(v: Value, memo: dict | None = None) -> int:
    """The largest power of two known to divide the integer value v (capped at 2^20),
    from constants, additions, multiplications, shifts, masks, widening casts, and min, max
    and select (whose result is one of their operands).
    Iterative and memoized: the expression may be arbitrarily long. `memo` (value -> its
    divisibility) may be shared by the calls of a pass that does not change the ops
    defining the values it asks about."""
    if memo is None:
        memo = {}
    stack = [v]
    while stack:
        x = stack[-1]
        if x in memo:
            stack.pop()
            continue
        deps = _inputs(x)
        missing = [d for d in deps if d not in memo]
        if missing:
            stack.extend(missing)
            continue
        memo[x] = _combine(x, memo)
        stack.pop()
    return memo[v]


def _inputs(v: Value) -> list:
    op = v.op
    if op is None or const_value(v) is not None:
        return []
    n = op.name
    if n in ("arith.add", "arith.sub", "arith.mul"):
        return [op.operands[0], op.operands[1]]
    if n in ("arith.min", "arith.max") and v.type.is_int:
        return [op.operands[0], op.operands[1]]
    if n == "arith.select" and v.type.is_int:
        return [op.operands[1], op.operands[2]]
    if n in ("arith.shl", "arith.and"):
        return [op.operands[0]]
    if n == "arith.cast":
        src = op.operands[0].type
        if src.is_int and src.bits <= v.type.bits:
            return [op.operands[0]]
    return []


def _combine(v: Value, memo: dict) -> int:
    c = const_value(v)
    if c is not None and not isinstance(c, bool):
        return MAX_DIVISIBILITY if c == 0 else min(c & -c, MAX_DIVISIBILITY)
    op = v.op
    if op is None:
        return 1
    n = op.name
    if n in ("arith.add", "arith.sub"):
        return min(memo[op.operands[0]], memo[op.operands[1]])
    if n in ("arith.min", "arith.max") and v.type.is_int:      # the result is one of the operands
        return min(memo[op.operands[0]], memo[op.operands[1]])
    if n == "arith.select" and v.type.is_int:
        return min(memo[op.operands[1]], memo[op.operands[2]])
    if n == "arith.mul":
        return min(memo[op.operands[0]] * memo[op.operands[1]], MAX_DIVISIBILITY)
    if n == "arith.shl":
        k = const_value(op.operands[1])
        if k is not None and 0 <= k < v.type.bits:
            return min(memo[op.operands[0]] << k, MAX_DIVISIBILITY)
        return 1
    if n == "arith.and":
        k = const_value(op.operands[1])
        if k is not None and k:
            return max(min(k & -k, MAX_DIVISIBILITY), memo[op.operands[0]])
        return 1
    if n == "arith.cast" and op.operands[0] in memo:
        return memo[op.operands[0]]
    return 1
