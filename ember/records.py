"""Record classes: what Ember would use `dataclasses` for, at a fifth of the start-up cost.

`@record` turns a class with annotated fields into a plain record: an `__init__` taking the
fields in order (with defaults and `field(default_factory=...)`), a `__repr__`, and, as
asked, value equality and hashing (`eq`), immutability (`frozen`) and `__slots__` (`slots`);
`__post_init__` runs after `__init__` when the class defines it. The semantics are those of
`dataclasses.dataclass` with the same arguments, for the features Ember uses.

Why not `dataclasses`: it builds every class by compiling three to five functions from
source, and asks `inspect` for a signature to write a docstring - 0.27 ms a class on the CI
machine, about 28 ms of every `ember compile` process for Ember's hundred classes. A record
compiles one function (its `__init__`, so construction is as fast as a dataclass's) and
shares the others: 0.05-0.1 ms a class, and a compile does not import `dataclasses` at all.
"""

from __future__ import annotations

import operator
import threading

__all__ = ["record", "field", "fields", "replace", "asdict", "FrozenRecordError"]

_MISSING = object()


class FrozenRecordError(AttributeError):
    """An assignment to a field of a frozen record."""


class Field:
    __slots__ = ("default", "factory", "repr")

    def __init__(self, default=_MISSING, factory=_MISSING, repr: bool = True) -> None:
        self.default, self.factory, self.repr = default, factory, repr


def field(*, default=_MISSING, default_factory=_MISSING, repr: bool = True) -> Field:
    """A field's default (`default`, or `default_factory()` for each new record) and whether
    `repr` shows it."""
    if default is not _MISSING and default_factory is not _MISSING:
        raise ValueError("a field takes default or default_factory, not both")
    return Field(default, default_factory, repr)


def record(cls=None, /, *, eq: bool = True, frozen: bool = False, slots: bool = False):
    """Make `cls` a record (usable as `@record` or `@record(eq=False, slots=True)`)."""
    def wrap(c):
        return _build(c, eq, frozen, slots)
    return wrap if cls is None else wrap(cls)


def fields(obj_or_cls) -> tuple:
    """The field names of a record class or record, in order."""
    return obj_or_cls._fields


def replace(obj, **changes):
    """A new record like `obj` with some fields changed (`dataclasses.replace`)."""
    return type(obj)(**{n: changes.pop(n) if n in changes else getattr(obj, n) for n in obj._fields},
                     **changes)


def asdict(obj) -> dict:
    """The fields of a record as a dict (one level: field values are not converted)."""
    return {n: getattr(obj, n) for n in obj._fields}


def _build(cls, eq: bool, frozen: bool, slots: bool):
    specs: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        specs.update(base.__dict__.get("_field_specs", {}))
    own = []
    for name in cls.__dict__.get("__annotations__", {}):
        value = cls.__dict__.get(name, _MISSING)
        specs[name] = value if isinstance(value, Field) else Field(value)
        own.append(name)
    names = tuple(specs)
    attrs = {k: v for k, v in cls.__dict__.items() if k not in ("__dict__", "__weakref__")}
    for name in own:                              # defaults live in __init__, not the class
        attrs.pop(name, None)
        if not slots and specs[name].default is not _MISSING:
            attrs[name] = specs[name].default     # (as dataclasses leave them)
    attrs["_field_specs"] = specs
    attrs["_fields"] = names
    attrs["_repr_fields"] = tuple(n for n in names if specs[n].repr)
    if slots:
        inherited = {s for b in cls.__mro__[1:] for s in b.__dict__.get("__slots__", ())}
        attrs["__slots__"] = tuple(n for n in own if n not in inherited)
    if "__init__" not in attrs:
        attrs["__init__"] = _init(cls.__qualname__, specs, frozen, hasattr(cls, "__post_init__"))
    attrs.setdefault("__repr__", _repr)
    explicit_hash = "__hash__" in attrs and not (attrs["__hash__"] is None and "__eq__" in attrs)
    if eq and "__eq__" not in attrs:
        key = _key(names)
        attrs["__eq__"] = _eq(key)
        if not explicit_hash:
            attrs["__hash__"] = _hash(key) if frozen else None
    if frozen:
        attrs["__setattr__"] = _frozen_setattr
        attrs["__delattr__"] = _frozen_delattr
        if slots:                                  # pickle and copy set slots through setattr
            attrs["__getstate__"] = _getstate
            attrs["__setstate__"] = _setstate
    if not slots:                 # the class itself, so that zero-argument super() works
        for name in own:
            if name in cls.__dict__:
                delattr(cls, name)
        for name, value in attrs.items():
            if cls.__dict__.get(name, _MISSING) is not value:
                setattr(cls, name, value)
        return cls
    return type(cls)(cls.__name__, cls.__bases__, attrs)


def _init(qualname: str, specs: dict, frozen: bool, post_init: bool):
    """The one compiled function: assignments in field order, as fast as written by hand."""
    globs = {"_MISSING": _MISSING, "_setattr": object.__setattr__}
    params, body = [], []
    for name, spec in specs.items():
        if spec.factory is not _MISSING:
            globs[f"_factory_{name}"] = spec.factory
            params.append(f"{name}=_MISSING")
            body.append(f"  if {name} is _MISSING: {name} = _factory_{name}()")
        elif spec.default is not _MISSING:
            globs[f"_default_{name}"] = spec.default
            params.append(f"{name}=_default_{name}")
        else:
            params.append(name)
    for name in specs:
        body.append(f"  _setattr(self, {name!r}, {name})" if frozen else f"  self.{name} = {name}")
    if post_init:
        body.append("  self.__post_init__()")
    src = f"def __init__(self{''.join(', ' + p for p in params)}):\n" + ("\n".join(body) or "  pass") + "\n"
    local: dict = {}
    exec(src, globs, local)
    fn = local["__init__"]
    fn.__qualname__ = f"{qualname}.__init__"
    return fn


def _key(names: tuple):
    if not names:
        return lambda self: ()
    if len(names) == 1:
        get = operator.attrgetter(names[0])
        return lambda self: (get(self),)
    return operator.attrgetter(*names)


def _eq(key):
    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented
    return __eq__


def _hash(key):
    def __hash__(self):
        return hash(key(self))
    return __hash__


_repr_active = threading.local()


def _repr(self) -> str:
    active = _repr_active.__dict__.setdefault("ids", set())
    if id(self) in active:                # a record that (indirectly) contains itself
        return "..."
    active.add(id(self))
    try:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._repr_fields)
    finally:
        active.discard(id(self))
    return f"{type(self).__qualname__}({inner})"


def _frozen_setattr(self, name, value):
    raise FrozenRecordError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")


def _frozen_delattr(self, name):
    raise FrozenRecordError(f"cannot delete field {name!r} of a frozen {type(self).__name__}")


def _getstate(self):
    return [getattr(self, n) for n in self._fields]


def _setstate(self, state):
    for name, value in zip(self._fields, state):
        object.__setattr__(self, name, value)
