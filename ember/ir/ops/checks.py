"""Small predicates shared by the op verifiers; each returns an error message or None."""

from __future__ import annotations

from ..types import ScalarType, Type


def scalar(t: Type, what: str = "operand") -> str | None:
    return None if isinstance(t, ScalarType) else f"{what} must be a scalar, not {t}"


def numeric(t: Type, what: str = "operand") -> str | None:
    if not isinstance(t, ScalarType) or t.is_bool:
        return f"{what} must be a number, not {t}"
    return None


def integer(t: Type, what: str = "operand") -> str | None:
    if not isinstance(t, ScalarType) or not t.is_int:
        return f"{what} must be an integer, not {t}"
    return None


def floating(t: Type, what: str = "operand") -> str | None:
    if not isinstance(t, ScalarType) or not t.is_float:
        return f"{what} must be a float, not {t}"
    return None


def int_or_bool(t: Type, what: str = "operand") -> str | None:
    if not isinstance(t, ScalarType) or t.is_float:
        return f"{what} must be an integer or bool, not {t}"
    return None


def same(types, what: str = "operands") -> str | None:
    types = list(types)
    if any(t != types[0] for t in types[1:]):
        return f"{what} must have one type, found " + ", ".join(str(t) for t in types)
    return None


def arity(op, n_operands: int, n_results: int) -> str | None:
    if len(op.operands) != n_operands:
        return f"expects {n_operands} operand(s), has {len(op.operands)}"
    if len(op.results) != n_results:
        return f"expects {n_results} result(s), has {len(op.results)}"
    return None


def first(*checks) -> str | None:
    """The first failing check (checks are thunks, so later ones may assume earlier ones)."""
    for c in checks:
        err = c()
        if err:
            return err
    return None
