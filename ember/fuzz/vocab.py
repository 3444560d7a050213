"""What the program generator may use, taken from the language's own tables (builtins and
the ops they are), so a new builtin or op is fuzzed without editing a list here."""

from __future__ import annotations

from ..frontend.builtins import BUILTINS
from ..ir.ops import OPS
from ..ir.ops.gpu import SHUFFLE_MODES
from ..ir.ops.mem import ATOMIC_KINDS
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
SHUFFLES = [f"shfl_{m}" for m in SHUFFLE_MODES]
VOTES = [b.name for b in BUILTINS.values() if b.op == "gpu.vote"]
