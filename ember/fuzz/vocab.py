"""What the program generator may use, taken from the language's own tables (builtins and
the ops they are), so a new builtin or op is fuzzed without editing a list here."""

from __future__ import annotations

import itertools

from ..frontend.builtins import BUILTINS
from ..ir import signature as sig
from ..ir.ops import OPS
from ..ir.ops.gpu import SHUFFLE_MODES
from ..ir.ops.mem import ATOMIC_KINDS
from ..ir.ops import ordering
from ..ir.types import SCALARS

INTS = [t.name for t in SCALARS.values() if t.is_int]
FLOATS = [t.name for t in SCALARS.values() if t.is_float]
NUMERIC = INTS + FLOATS
BITS = {t.name: t.bits for t in SCALARS.values() if t.is_numeric}


def _math(b) -> bool:
    return b.op.startswith("math.") and len(b.params) == 1 and len(b.results) == 1


# Builtins over one float: exact ones (rounding and the like, correctly rounded), Ember's
# accurate implementations, and the hardware approximations (held to their bounds).
ROUNDING = ["abs"] + [b.name for b in BUILTINS.values() if b.op and _math(b) and OPS[b.op].eval is not None
                      and OPS[b.op].approx is None] + ["round"]
ACCURATE = [b.name for b in BUILTINS.values() if b.op and _math(b) and OPS[b.op].expanded_by
            and b.name not in ROUNDING]
FAST = [b.name for b in BUILTINS.values() if b.op and _math(b) and OPS[b.op].approx is not None]

# Atomics whose final value does not depend on the order the lanes apply them in (the
# GPU's order is unspecified): every kind but exchange, on the types they all accept.
ATOMIC_OPS = [k for k, (combine, _) in ATOMIC_KINDS.items() if combine is not None]
ATOMIC_TYPES = [t for t in INTS if all(t in ATOMIC_KINDS[k][1] for k in ATOMIC_OPS)]
ORDERS = ordering.ORDERS
FENCE_ORDERS = ordering.FENCE_ORDERS
FUZZ_SCOPES = [s for s in ordering.SCOPES if s != "cluster"]    # cluster scope needs sm_90
SHUFFLES = [f"shfl_{m}" for m in SHUFFLE_MODES]
VOTES = [b.name for b in BUILTINS.values() if b.op == "gpu.vote"]


def _letter_types(b) -> dict | None:
    """Each type variable of a builtin with the types every occurrence admits; None when
    the builtin has a slot that is not a type variable or an exact type."""
    out: dict = {}
    for spec in b.params + b.results:
        if isinstance(spec, sig.Var):
            ok = [n for n in NUMERIC + ["bool"] if spec.admits(SCALARS[n])]
            out[spec.letter] = [n for n in out.get(spec.letter, ok) if n in ok]
        elif not isinstance(spec, sig.Exact):
            return None
    return out


def _integers_only(b) -> bool:
    """Every slot takes integers only (so no NaN bits can reach a result)."""
    letters = _letter_types(b)
    return (letters is not None and all(v and all(n in INTS for n in v) for v in letters.values())
            and all(s.type.is_int for s in b.params + b.results if isinstance(s, sig.Exact)))


# Pure builtins over integers only, beyond the operators (dp4a, ...): generated from their
# signatures, so a new one is fuzzed as soon as it is in the builtin table.
INT_BUILTINS = [b for b in BUILTINS.values() if b.op and OPS[b.op].foldable and OPS[b.op].pure
                and len(b.results) == 1 and _integers_only(b)]


def builtin_calls(t: str) -> list:
    """(builtin, argument types) for every way an integer builtin can give a `t`."""
    out = []
    for b in INT_BUILTINS:
        letters = _letter_types(b)
        names = sorted(letters)
        for combo in itertools.product(*(letters[x] for x in names)):
            binding = {x: SCALARS[n] for x, n in zip(names, combo)}
            if any(r.apply(dict(binding)) for r in b.rules) or b.results[0].resolve(binding) != SCALARS[t]:
                continue
            out.append((b, [str(p.resolve(binding)) for p in b.params]))
    return out
