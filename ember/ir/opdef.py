"""An op's definition: everything Ember knows about one op, in one place.

    defop("arith.add", Operands(),
          operands="lhs: N, rhs: N", results="result: N",
          traits=(COMMUTATIVE, Identity(ZERO, INT)),
          eval=lambda op, a, b: (a + b,),
          example="%r = arith.add %a, %b : u32", example_args="%a: u32, %b: u32",
          doc="Wrapping for integers, IEEE for floats.")

- schema: named operands and results with type constraints (`ember.ir.signature`, the
  notation builtins share), attributes with their kinds; each op's instances get
  accessors for them (`op.lhs`, `op.pred`), so nothing outside the op indexes operands;
- `verify`: checks beyond the schema; result types are inferred from the constraints
  (or by `infer`);
- traits: effects (pure unless it reads or writes memory, allocates, synchronizes
  threads, ...) and algebraic facts one generic canonicalization reads (identity and
  absorbing elements, idempotence, self-inverse, involution, commutativity);
- semantics: `eval` (pure, on lane arrays; also the constant folder), `simulate` (ops that
  need the machine: memory, the thread's coordinates, its warp and the active mask), or
  `expanded_by` (defined by an expansion into other ops, which that pass copies into the
  IR and the lowering emits where no pass did; evaluated through the expansion);
  `fold`, the same for integer and bool constants on Python ints, which the constant
  folder tries first (a compile then needs no numpy; tests check it equals `eval`);
- `canonicalize`: the op's own rewrites beyond the traits;
- `min_sm`: the oldest architecture that has it; `approx`: the documented bound when the
  hardware does not compute the result exactly (everything else is bitwise);
- the LLVM lowering is registered by op name in `ember/lowering/` (llvmlite stays there);
  every op is either lowered or expanded, which the lowering checks when it loads;
- `doc` and a doc `example` (printed by the op's own printer in docs/ir.md).
"""

from __future__ import annotations

from typing import Callable

from ..records import field, record
from . import signature as sig
from .core import Op

OPS: dict = {}


# ---------------------------------------------------------------- traits

@record(frozen=True)
class Effect:
    """A side effect or constraint on moving the op."""

    name: str

    def __repr__(self):
        return self.name


READS_MEMORY = Effect("reads_memory")        # its result depends on memory
WRITES_MEMORY = Effect("writes_memory")      # changes memory
ALLOCATES = Effect("allocates")              # a fresh array: removable when unused, never moved or merged
CONVERGENT = Effect("convergent")            # involves other threads: never moved across control flow
MAY_FAULT = Effect("may_fault")              # must not run where the program would not
SIDE_EFFECT = Effect("side_effect")          # anything else that must stay (marks, calls)
TERMINATOR = Effect("terminator")
COMMUTATIVE = Effect("commutative")

# Kinds of types an algebraic fact holds for.
INT, BOOL_KIND, FLOAT = ("int",), ("bool",), ("float",)
INT_OR_BOOL = INT + BOOL_KIND
# Symbolic constants of algebraic facts.
ZERO, ONE, ALL_ONES = "zero", "one", "all_ones"
POS_ZERO, NEG_ZERO, FONE = "+0.0", "-0.0", "1.0"


@record(frozen=True)
class Identity:
    """x op e == x, for the types of `kinds`."""

    value: str
    kinds: tuple


@record(frozen=True)
class Absorbing:
    """x op z == z."""

    value: str
    kinds: tuple


@record(frozen=True)
class Idempotent:
    """x op x == x."""

    kinds: tuple


@record(frozen=True)
class SelfInverse:
    """x op x == 0."""

    kinds: tuple


@record(frozen=True)
class Involution:
    """op(op(x)) == x."""

    kinds: tuple


# ---------------------------------------------------------------- attributes

@record(frozen=True)
class Attr:
    """An attribute's kind: "enum" (one of `values`), "int" (within `lo..hi` when given),
    "bool", "symbol" (a name), "ints" (a list of integers) or "any" (checked by the op's
    verifier). The verifier and the language's checker (for builtins whose constant
    arguments become attributes) both apply `check`."""

    kind: str
    values: tuple = ()
    required: bool = True
    doc: str = ""
    lo: int | None = None
    hi: int | None = None
    multiple_of: int | None = None

    def check(self, v) -> str | None:
        if self.kind == "enum":
            return None if v in self.values else f"must be one of {', '.join(self.values)}"
        if self.kind == "int":
            if not isinstance(v, int) or isinstance(v, bool):
                return "must be an integer"
            if (self.lo is not None and v < self.lo) or (self.hi is not None and v > self.hi):
                return f"must be {self.lo}..{self.hi}, not {v}"
            if self.multiple_of and v % self.multiple_of:
                return f"must be a multiple of {self.multiple_of}, not {v}"
            return None
        if self.kind == "bool":
            return None if isinstance(v, bool) else "must be true or false"
        if self.kind == "symbol":
            return None if isinstance(v, str) and v else "must be a name"
        if self.kind == "ints":
            return None if isinstance(v, list) and all(isinstance(x, int) for x in v) else "must be a list of integers"
        return None


def enum(*values: str, doc: str = "") -> Attr:
    return Attr("enum", tuple(values), doc=doc)


# ---------------------------------------------------------------- approximations

@record(frozen=True)
class Range:
    """Where an approximate op's bound holds for one argument: lo <= x <= hi, or
    lo <= |x| <= hi when `magnitude`."""

    lo: float
    hi: float
    magnitude: bool = False

    def contains(self, x):
        v = abs(x) if self.magnitude else x
        return (v >= self.lo) & (v <= self.hi)


@record(frozen=True)
class Approx:
    """The documented error of an op whose hardware result is not exactly specified:
    with every argument inside its `domain` entry (a Range, or None for any finite
    value), |got - exact| (kind "abs"), relative ("rel"), or the smaller of the two
    ("abs_or_rel") is at most `bound`. `exact` computes the reference in f64."""

    exact: Callable
    domain: tuple                     # per argument: Range or None
    kind: str
    bound: float

    def errors(self, args: tuple, got):
        """(in-domain mask, each result's error in the bound's kind, the bound)."""
        import numpy as np
        a64 = [np.asarray(a).astype(np.float64) for a in args]
        inside = np.ones(a64[0].shape, dtype=bool)
        for a, r in zip(a64, self.domain):
            inside &= np.isfinite(a) if r is None else r.contains(a)
        with np.errstate(all="ignore"):
            ref = self.exact(*a64)
            err = np.abs(np.asarray(got).astype(np.float64) - ref)
            rel = err / np.maximum(np.abs(ref), 1e-300)
        measured = {"abs": err, "rel": rel, "abs_or_rel": np.minimum(err, rel)}[self.kind]
        return inside, np.where(inside, measured, 0.0), self.bound


# ---------------------------------------------------------------- the definition

@record(eq=False)
class OpDef:
    name: str
    format: object
    operands: tuple = ()
    results: tuple = ()
    attrs: dict = field(default_factory=dict)
    regions: tuple = ()                    # region names
    region_types: Callable | None = None   # op -> per region: (argument types, terminator, its operand types)
    traits: frozenset = frozenset()
    verify: Callable | None = None         # extra checks: op -> message or None
    accesses: Callable | None = None       # attrs -> [(pointer operand, index operand, elements)]:
                                           # the elements from pointer[index] on that the op
                                           # reads or writes (the checker reports a per-thread
                                           # or shared array too short at a constant index)
    check_consts: Callable | None = None   # (attrs, {operand name: constant value or None}) ->
                                           # (operand name, message) when a constant operand is
                                           # invalid; the verifier and the language's checker
                                           # (which points at the argument) both apply it
    infer: Callable | None = None          # (operand types, attrs) -> result types
    eval: Callable | None = None           # (op, *lane arrays) -> result arrays
    fold: Callable | None = None           # (op, *constants) -> result constants, or None to use
                                           # eval: exact on Python scalars (int_semantics.py)
    simulate: Callable | None = None       # (machine, op, args, mask) -> results
    canonicalize: Callable | None = None   # op -> None or (new ops, replacement values)
    expanded_by: str | None = None         # the pass that can replace it by its expansion
    rules: tuple = ()                      # signature.Rule: variables the others decide
    min_sm: int = 0
    arch_specific: bool = False            # needs an arch-specific target (sm_90a, sm_100a: wgmma,
                                           # setmaxnreg), not the portable sm_90
    min_ptx: tuple | None = None           # the oldest PTX ISA version (major, minor) that has it
                                           # (a module using it is compiled for at least that)
    min_sm_for: Callable | None = None     # attrs -> the oldest architecture those attribute
                                           # values need (a cluster scope: sm_90), beyond min_sm
    approx: Approx | None = None
    doc: str = ""
    example: str = ""
    example_args: str = ""
    cls: type | None = None
    _type_verdicts: dict = field(default_factory=dict, repr=False)
    _fast_types: Callable | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.derive()

    def derive(self) -> None:
        """The flags passes read in their inner loops, from the traits (computed once)."""
        t = self.traits
        self.terminator = TERMINATOR in t
        self.commutative = COMMUTATIVE in t
        self.reads_memory = READS_MEMORY in t
        self.writes_memory = WRITES_MEMORY in t
        self.convergent = CONVERGENT in t
        self.allocates = ALLOCATES in t
        # No effect: removable when unused (regions are judged by their contents). A
        # convergent op without other effects (a shuffle) is pure: unused, it goes.
        self.pure = not (t & {WRITES_MEMORY, SIDE_EFFECT, TERMINATOR}) and not self.regions
        # Free to move, merge or run where the program would not: pure, cannot fault,
        # reads no memory, allocates nothing and involves no other thread.
        self.speculatable = self.pure and not (t & {READS_MEMORY, MAY_FAULT, ALLOCATES, CONVERGENT})
        # Its semantics (`eval`, or the expansion's) give the bits the GPU computes.
        self.foldable = (self.eval is not None or self.expanded_by is not None) and self.approx is None
        self.num_regions = len(self.regions)
        self._fast_types = None if self.rules else _fast_type_check(self.operands, self.results)
        self.identities = tuple(f for f in t if isinstance(f, Identity))
        self.absorbing = tuple(f for f in t if isinstance(f, Absorbing))
        self.idempotent = tuple(f for f in t if isinstance(f, Idempotent))
        self.self_inverse = tuple(f for f in t if isinstance(f, SelfInverse))
        self.involution = tuple(f for f in t if isinstance(f, Involution))
        self.has_facts = bool(self.identities or self.absorbing or self.idempotent or self.self_inverse
                              or self.involution)

    def has(self, trait) -> bool:
        return trait in self.traits

    def facts(self, kind):
        """The algebraic facts of class `kind` (Identity, Absorbing, ...)."""
        return [t for t in self.traits if isinstance(t, kind)]

    # -- types
    def infer_types(self, operand_types: list, attrs: dict) -> list | None:
        """Result types from the operands (None when they cannot be inferred)."""
        if self.infer is not None:
            return self.infer(operand_types, attrs)
        binding: dict = {}
        if sig.check(self.operands, operand_types, binding, "operand", self.rules):
            return None
        out = []
        for s in self.results:
            t = s.spec.resolve(binding)
            if t is None:
                return None
            out.append(t)
        return out

    def check_types(self, op: Op) -> str | None:
        fast = self._fast_types
        if fast is not None and fast(op):
            return None
        # The verdict depends only on the types (interned, hashable): computed once per
        # combination, as the verifier runs after every pass.
        key = (tuple([v.type for v in op.operands]), tuple([v.type for v in op.results]))
        cache = self._type_verdicts
        if key in cache:
            return cache[key]
        binding: dict = {}
        verdict = (sig.check(self.operands, list(key[0]), binding, "operand", self.rules)
                   or sig.check(self.results, list(key[1]), binding, "result", self.rules))
        cache[key] = verdict
        return verdict

    def check_attrs(self, op: Op) -> str | None:
        for name, spec in self.attrs.items():
            if name not in op.attrs:
                if spec.required:
                    return f"missing attribute `{name}`"
                continue
            err = spec.check(op.attrs[name])
            if err:
                return f"attribute `{name}` {err}"
        return None


def _fast_type_check(operands: tuple, results: tuple):
    """A quick `op -> True` for the common signatures (every slot one unrestricted
    variable, `lhs: N, rhs: N -> result: N`; or every slot an exact type); None when
    only the general check applies. False means "ask the general check"."""
    slots = operands + results
    if not slots or any(s.variadic for s in slots):
        return None
    n_ops, n_res = len(operands), len(results)
    specs = [s.spec for s in slots]
    if all(isinstance(p, sig.Var) and p.letter == specs[0].letter and p.allowed is None for p in specs):
        pred = sig.KINDS[specs[0].letter][1]

        def same_var(op) -> bool:
            o, r = op.operands, op.results
            if len(o) != n_ops or len(r) != n_res:
                return False
            t = (o[0] if o else r[0]).type
            for v in o:
                if v.type is not t:
                    return False
            for v in r:
                if v.type is not t:
                    return False
            return t.__class__ is sig.ScalarType and pred(t)
        return same_var
    if all(isinstance(p, sig.Exact) for p in specs):
        want = [p.type for p in specs]

        def exact(op) -> bool:
            o, r = op.operands, op.results
            if len(o) != n_ops or len(r) != n_res:
                return False
            return all(v.type is t for v, t in zip(list(o) + list(r), want))
        return exact
    return None


def _operand_accessor(i: int, variadic: bool):
    if variadic:
        return property(lambda self: self.operands[i:], doc="the variadic operands")
    return property(lambda self: self.operands[i])


def _result_accessor(i: int):
    return property(lambda self: self.results[i])


def _attr_accessor(name: str):
    return property(lambda self: self.attrs.get(name))


def _region_accessor(i: int):
    return property(lambda self: self.regions[i])


def _op_class(d: OpDef) -> type:
    """The op's own subclass of Op, with a property per named operand, result, attribute
    and region."""
    ns: dict = {"__slots__": ()}
    taken = set(dir(Op))
    for i, s in enumerate(d.operands):
        if s.name not in taken:
            ns[s.name] = _operand_accessor(i, s.variadic)
    for i, s in enumerate(d.results):
        if s.name not in taken and s.name not in ns:
            ns[s.name] = _result_accessor(i)
    for name in d.attrs:
        if name not in taken and name not in ns:
            ns[name] = _attr_accessor(name)
    for i, name in enumerate(d.regions):
        if name not in taken and name not in ns:
            ns[name] = _region_accessor(i)
    cls_name = "".join(p.capitalize() for p in d.name.replace(".", "_").split("_")) + "Op"
    return type(cls_name, (Op,), ns)


def defop(name: str, format, *, operands: str = "", results: str = "", attrs: dict | None = None,
          regions: tuple = (), traits: tuple = (), **kw) -> OpDef:
    assert name not in OPS, f"op {name} declared twice"
    d = OpDef(name=name, format=format, operands=sig.parse_slots(operands), results=sig.parse_slots(results),
              attrs=dict(attrs or {}), regions=tuple(regions), traits=frozenset(traits), **kw)
    d.cls = _op_class(d)
    OPS[name] = d
    return d
