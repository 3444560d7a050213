"""ember.records: the dataclass semantics Ember relies on, checked against `dataclasses`
itself where they overlap, and that compiling Ember does not import `dataclasses`."""

import copy
import dataclasses
import pickle
import subprocess
import sys

import pytest

from ember.records import FrozenRecordError, asdict, field, fields, record, replace


@record(frozen=True, slots=True)
class Point:
    x: int
    y: int = 0


@record(eq=False, slots=True)
class Node:
    span: int


@record(eq=False, slots=True)
class Leaf(Node):
    name: str
    tags: list = field(default_factory=list)


@record
class Plain:
    a: int
    hidden: object = field(default=None, repr=False)
    seen: list = field(default_factory=list)

    def __post_init__(self):
        self.seen.append(self.a)

    def doubled(self):
        return super().__repr__()      # zero-argument super() needs the class kept, not rebuilt


@dataclasses.dataclass(frozen=True, slots=True)
class DPoint:
    x: int
    y: int = 0


def test_init_defaults_and_factories():
    assert (Point(1).x, Point(1).y, Point(1, 2).y, Point(y=3, x=4).x) == (1, 0, 2, 4)
    a, b = Leaf(1, "a"), Leaf(2, "b")
    a.tags.append("t")
    assert b.tags == [] and a.tags == ["t"]          # a new list per record
    with pytest.raises(TypeError):
        Point()
    assert fields(Leaf) == ("span", "name", "tags") and fields(a) == fields(Leaf)


def test_value_equality_and_hash_like_dataclasses():
    assert Point(1, 2) == Point(1, 2) and Point(1, 2) != Point(2, 1)
    assert hash(Point(1, 2)) == hash(Point(1, 2)) == hash(DPoint(1, 2))
    assert Point(1, 2) != DPoint(1, 2)                # another class is never equal
    assert {Point(1, 2): "p"}[Point(1, 2)] == "p"


def test_identity_records():
    a, b = Leaf(1, "a"), Leaf(1, "a")
    assert a != b and a == a and len({a, b}) == 2
    with pytest.raises(AttributeError):
        a.other = 1                                   # slots: no stray attributes
    assert Plain.__hash__ is None                     # eq without frozen: unhashable, as dataclasses


def test_frozen():
    p = Point(1)
    with pytest.raises(FrozenRecordError):
        p.x = 2
    with pytest.raises(AttributeError):
        del p.y
    assert replace(p, y=5) == Point(1, 5) and p == Point(1)


def test_repr_post_init_and_super():
    assert repr(Point(1, 2)) == repr(DPoint(1, 2)).replace("DPoint", "Point")
    p = Plain(3, hidden="secret")
    assert p.seen == [3] and "secret" not in repr(p) and repr(p) == "Plain(a=3, seen=[3])"
    assert p.doubled().startswith("<tests.test_records.Plain object")   # object's, through super()
    loop = Plain(1)
    loop.seen.append(loop)
    assert repr(loop) == "Plain(a=1, seen=[1, ...])"


def test_pickle_and_copy():
    for obj in (Point(1, 2), Leaf(1, "x", ["t"]), Plain(7)):
        back = pickle.loads(pickle.dumps(obj))
        assert asdict(back) == asdict(obj) and type(back) is type(obj)
        assert asdict(copy.deepcopy(obj)) == asdict(obj)
    assert asdict(Point(1, 2)) == dataclasses.asdict(DPoint(1, 2))


def test_ember_classes_are_records():
    """No class Ember builds while compiling is a dataclass (and a compile alone does not
    import `dataclasses`: tests/frontend/test_parser.py)."""
    code = ("import dataclasses, gc, sys, ember; ember.compile('kernel k(p: *mut global f32) { p[0] = 1.0; }', "
            "cache=False); print(sorted(f'{c.__module__}.{c.__qualname__}' for c in gc.get_objects() "
            "if isinstance(c, type) and c.__module__.startswith('ember') and dataclasses.is_dataclass(c)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
