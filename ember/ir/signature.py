"""Type constraints of op operands and results, in one notation that both the IR verifier
and the language's builtin checking read (a builtin that is one op takes its signature
from the op).

    u32, bool, f32, ...   exactly that type
    F                     any float type          I   any integer type
    N                     any number              B   an integer or bool
    T, U, V               any scalar
    F{f32,f64}            a variable restricted to some types
    *T                    a mutable global or shared pointer whose element type is T
    *shared T, *global T, *local T  ... in that space only (local: a per-thread array)
    &global T             a global pointer to T, mutable or not (read through only)
    ptr                   any pointer              vec  any vector
    any                   anything (checked by the op's own verifier)

Every occurrence of one variable in a signature stands for the same type. A `Rule` fixes
a variable from others where a letter cannot say it (dp4a's result is u32 when both its
inputs are u32, else i32); the verifier, result inference and builtin checking apply the
same rules.
"""

from __future__ import annotations

import re
from typing import Callable

from ..records import record
from .types import SCALARS, PtrType, ScalarType, Type, VectorType

KINDS = {
    "F": ("a float", lambda t: t.is_float),
    "I": ("an integer", lambda t: t.is_int),
    "N": ("a number", lambda t: t.is_numeric),
    "B": ("an integer or bool", lambda t: not t.is_float),
    "T": ("a scalar", lambda t: True),
    "U": ("a scalar", lambda t: True),
    "V": ("a scalar", lambda t: True),
}


class Spec:
    """One operand's or result's constraint."""

    def match(self, t: Type, binding: dict) -> str | None:
        """None if `t` satisfies the constraint (binding its variables), else why not."""
        raise NotImplementedError

    def resolve(self, binding: dict) -> Type | None:
        """The type the constraint stands for once its variables are bound (None if open)."""
        return None


@record(frozen=True)
class Exact(Spec):
    type: ScalarType

    def match(self, t, binding):
        return None if t == self.type else f"must be {self.type}, not {t}"

    def resolve(self, binding):
        return self.type

    def __str__(self):
        return str(self.type)


@record(frozen=True)
class Var(Spec):
    letter: str
    allowed: tuple | None = None       # type names, when restricted

    @property
    def words(self) -> str:
        return KINDS[self.letter][0]

    def admits(self, t: Type) -> bool:
        return (isinstance(t, ScalarType) and KINDS[self.letter][1](t)
                and (self.allowed is None or t.name in self.allowed))

    def match(self, t, binding):
        bound = binding.get(self.letter)
        if bound is not None:
            return None if t == bound else f"must be {bound} (like the other `{self.letter}`), not {t}"
        if not self.admits(t):
            if self.allowed is not None and isinstance(t, ScalarType) and KINDS[self.letter][1](t):
                return f"is defined for {', '.join(self.allowed)} only, not {t}"
            return f"must be {self.words}, not {t}"
        binding[self.letter] = t
        return None

    def resolve(self, binding):
        return binding.get(self.letter)

    def __str__(self):
        return self.letter + ("{" + ",".join(self.allowed) + "}" if self.allowed else "")


@record(frozen=True)
class PointerTo(Spec):
    """`*T`: a mutable global or shared pointer to elements of type T; `*shared T` or
    `*global T` in one space; `&global T` a pointer read through (mutable or not)."""

    var: Var
    spaces: tuple = ("global", "shared")
    mut: bool = True

    def admits(self, t) -> bool:
        return isinstance(t, PtrType) and (t.mut or not self.mut) and t.space in self.spaces

    @property
    def words(self) -> str:
        kinds = " or ".join(f"`*{'mut ' if self.mut else ''}{s}`" for s in self.spaces)
        return f"a {kinds} pointer"

    def match(self, t, binding):
        if not self.admits(t):
            return f"must be {self.words}, not {t}"
        return self.var.match(t.pointee, binding)

    def __str__(self):
        space = "" if self.spaces == ("global", "shared") else f"{self.spaces[0]} "
        return f"{'*' if self.mut else '&'}{space}{self.var}"


@record(frozen=True)
class Kind(Spec):
    """`ptr`, `vec` or `any`."""

    kind: str

    def match(self, t, binding):
        if self.kind == "ptr" and not isinstance(t, PtrType):
            return f"must be a pointer, not {t}"
        if self.kind == "vec" and not isinstance(t, VectorType):
            return f"must be a vector, not {t}"
        return None

    def __str__(self):
        return self.kind


_SPEC = re.compile(r"^([*&]?)(?:(global|shared|local) +)?([A-Za-z_][A-Za-z0-9_]*)(?:\{([a-z0-9, ]+)\})?$")


def parse_spec(text: str) -> Spec:
    m = _SPEC.match(text.strip())
    if m is None:
        raise ValueError(f"bad type constraint `{text}`")
    star, space, word, allowed = m.groups()
    allowed = tuple(a.strip() for a in allowed.split(",")) if allowed else None
    if (space or star == "&") and not (star and word in KINDS and (space or star == "*")):
        raise ValueError(f"bad type constraint `{text}`")
    if word in ("ptr", "vec", "any") and not star:
        return Kind(word)
    if word in SCALARS and not star and not allowed:
        return Exact(SCALARS[word])
    if word in KINDS:
        var = Var(word, allowed)
        if not star:
            return var
        return PointerTo(var, (space,) if space else ("global", "shared"), star == "*")
    raise ValueError(f"bad type constraint `{text}`")


@record(frozen=True)
class Slot:
    """A named operand or result: `name: spec`, or `*name: spec` for a variadic tail."""

    name: str
    spec: Spec
    variadic: bool = False


def parse_slots(text: str) -> tuple:
    """`"lhs: N, rhs: N"` -> (Slot, ...); an empty text is no slots."""
    slots = []
    for part in filter(None, (p.strip() for p in re.split(r",(?![^{]*\})", text))):
        name, _, spec = part.partition(":")
        name = name.strip()
        variadic = name.startswith("*")
        slots.append(Slot(name.lstrip("*"), parse_spec(spec), variadic))
    if any(s.variadic for s in slots[:-1]):
        raise ValueError(f"only the last slot may be variadic: `{text}`")
    return tuple(slots)


@record(frozen=True)
class Rule:
    """`letter` is `fn(binding)` once every variable in `needs` is bound; `doc` says it in
    words (shown in diagnostics and docs/ir.md)."""

    letter: str
    needs: tuple
    fn: Callable
    doc: str

    def apply(self, binding: dict) -> str | None:
        """Bind `letter` (when the others are bound) or check it; why not, or None."""
        if any(n not in binding for n in self.needs):
            return None
        want = self.fn(binding)
        bound = binding.get(self.letter)
        if bound is None:
            binding[self.letter] = want
            return None
        return None if bound == want else f"must be {want} ({self.doc}), not {bound}"


def apply_rules(rules: tuple, slots: tuple, binding: dict, what: str) -> str | None:
    for rule in rules:
        err = rule.apply(binding)
        if err:
            slot = next((s for s in slots if isinstance(s.spec, Var) and s.spec.letter == rule.letter), None)
            return f"{what} `{slot.name}` {err}" if slot else err
    return None


def check(slots: tuple, types: list, binding: dict, what: str, rules: tuple = ()) -> str | None:
    """Check `types` against `slots` (binding variables, then applying `rules`); the first
    problem, or None."""
    fixed = [s for s in slots if not s.variadic]
    variadic = slots[-1] if slots and slots[-1].variadic else None
    if len(types) < len(fixed) or (variadic is None and len(types) != len(fixed)):
        want = f"at least {len(fixed)}" if variadic else str(len(fixed))
        return f"expects {want} {what}(s), has {len(types)}"
    for i, t in enumerate(types):
        slot = fixed[i] if i < len(fixed) else variadic
        err = slot.spec.match(t, binding)
        if err:
            return f"{what} `{slot.name}` {err}"
    return apply_rules(rules, slots, binding, what) if rules else None
