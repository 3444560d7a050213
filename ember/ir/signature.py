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


@record(frozen=True)
class Mismatch:
    """Why types do not fit a signature, for the IR verifier and the language's checker to
    word each in its own terms (`ir_text`; ember.frontend.check_calls for the language).

    kind: "count" (how many: `detail` says what was expected), "kind" (not the kind of type
    the slot takes), "allowed" (the kind, but not among the slot's types), "bound" (the slot's
    variable is already another type), "pointer" (not a pointer the slot takes), "element" (a
    pointer whose element is not the variable's bound type), "exact" (not the one type), or
    "rule" (a Rule's derived type: `detail` is its complaint)."""

    kind: str
    index: int | None = None       # the argument's position
    slot: Slot | None = None
    found: object = None           # the argument's type
    bound: object = None           # the type the slot's variable already had
    detail: str = ""

    def ir_text(self, what: str) -> str:
        if self.kind == "count":
            return f"expects {self.detail} {what}(s), has {self.found}"
        name = f"{what} `{self.slot.name}`" if self.slot is not None else None
        if self.kind == "rule":
            return f"{name} {self.detail}" if name else self.detail
        return f"{name} {self.slot.spec.match(self.found, {self.slot_letter(): self.bound} if self.bound else {})}"

    def slot_letter(self):
        spec = self.slot.spec
        return spec.var.letter if isinstance(spec, PointerTo) else getattr(spec, "letter", None)


def _mismatch(spec: Spec, t, binding: dict) -> str | None:
    """The kind of mismatch of `t` against `spec` (binding its variable when it fits)."""
    if isinstance(spec, Exact):
        return None if t == spec.type else "exact"
    if isinstance(spec, Var):
        bound = binding.get(spec.letter)
        if bound is not None:
            return None if t == bound else "bound"
        if not spec.admits(t):
            kind_ok = isinstance(t, ScalarType) and KINDS[spec.letter][1](t)
            return "allowed" if spec.allowed is not None and kind_ok else "kind"
        binding[spec.letter] = t
        return None
    if isinstance(spec, PointerTo):
        if not spec.admits(t):
            return "pointer"
        bound = binding.get(spec.var.letter)
        if bound is not None:
            return None if t.pointee == bound else "element"
        if not spec.var.admits(t.pointee):
            return "allowed"
        binding[spec.var.letter] = t.pointee
        return None
    return None if spec.match(t, binding) is None else "kind"


def match(slots: tuple, types: list, binding: dict, rules: tuple = ()) -> Mismatch | None:
    """Match `types` against `slots`, binding variables, then apply `rules`: None, or the
    first Mismatch. A type given as None is skipped (not known yet)."""
    fixed = [s for s in slots if not s.variadic]
    variadic = slots[-1] if slots and slots[-1].variadic else None
    if len(types) < len(fixed) or (variadic is None and len(types) != len(fixed)):
        return Mismatch("count", found=len(types), detail=f"at least {len(fixed)}" if variadic else str(len(fixed)))
    for i, t in enumerate(types):
        if t is None:
            continue
        slot = fixed[i] if i < len(fixed) else variadic
        letter = slot.spec.var.letter if isinstance(slot.spec, PointerTo) else getattr(slot.spec, "letter", None)
        before = binding.get(letter)
        kind = _mismatch(slot.spec, t, binding)
        if kind is not None:
            return Mismatch(kind, i, slot, t, before)
    for rule in rules:
        err = rule.apply(binding)
        if err:
            at = next((i for i, s in enumerate(slots) if isinstance(s.spec, Var) and s.spec.letter == rule.letter),
                      None)
            return Mismatch("rule", at, slots[at] if at is not None else None, detail=err)
    return None


def check(slots: tuple, types: list, binding: dict, what: str, rules: tuple = ()) -> str | None:
    """Check `types` against `slots` (binding variables, then applying `rules`); the first
    problem in the IR's words, or None."""
    m = match(slots, types, binding, rules)
    return None if m is None else m.ir_text(what)
