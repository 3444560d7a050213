"""The IR verifier: runs after every stage and every pass.

Checks each op against its definition (operand and result types, attributes, the op's
own verifier, what its regions take and yield) and the structure around it: values are
defined before use and only used where visible (structured dominance), every region ends
in the terminator its op expects, calls match their callee, kernels return nothing, and
(with CHECK_USES, which the test suite sets) every value's use list matches the IR (a pass
that dropped an op without erasing it, or rewired an operand behind the use lists' back,
is caught here). Iterative: nesting depth costs no recursion.
"""

from __future__ import annotations

from ..source import Span
from .core import Function, Module, Op, Region
from .library import is_library_function
from .types import PtrType

# The use-list check (every value's use list matches the IR) is an internal consistency
# check, like LLVM's expensive checks: the test suite turns it on; a compile does not pay
# for it.
CHECK_USES = False

# Verify after every pass that changed the IR (naming the pass that broke it), as LLVM's
# -verify-each does: the test suite, the fuzzers, `ember opt` and EMBER_VERIFY_EACH=1 turn
# it on (and check IR generation's output too). A plain compile verifies once, after the
# pipeline (a tenth of a compile's time saved; broken IR still never reaches lowering).
VERIFY_EACH = False


class VerifyError(Exception):
    def __init__(self, errors: list[tuple[str, Span | None]]):
        self.errors = errors
        super().__init__("\n".join(f"{loc}: {msg}" if loc else msg for msg, loc in errors))


def verify_module(m: Module, functions=None) -> None:
    """Verify the module (or only `functions` of it: a pass that changed a few)."""
    errors: list[tuple[str, Span | None]] = []
    names = set()
    for f in m.functions:
        if f.name in names:
            errors.append((f"duplicate function @{f.name}", f.loc))
        names.add(f.name)
    globals_ = {g.name: g for g in m.globals}
    for g in m.globals:
        if not all(isinstance(v, int) for v in g.values):
            errors.append((f"global @{g.name} has a non-integer entry", g.loc))
    for f in m.functions:
        if (functions is None or f in functions) and not _canonical_library(f):
            _Verifier(m, globals_, errors).function(f)
    if errors:
        raise VerifyError(errors)


def _canonical_library(f: Function) -> bool:
    """A canonical library function (shared by all modules, never changed) was verified when
    it was made."""
    return bool(f.attrs.get("library")) and is_library_function(f)


class _Verifier:
    def __init__(self, module: Module, globals_: dict, errors: list):
        self.module = module
        self.globals = globals_
        self.errors = errors

    def err(self, msg: str, op: Op | None, fn: Function | None = None) -> None:
        where = op.loc if op is not None else (fn.loc if fn else None)
        prefix = f"'{op.name}': " if op is not None else ""
        self.errors.append((prefix + msg, where))

    def function(self, f: Function) -> None:
        if f.kind not in ("kernel", "func"):
            self.err(f"unknown function kind {f.kind}", None, f)
        if f.kind == "kernel" and f.result_types:
            self.err(f"kernel @{f.name} must not return values", None, f)
        if "stream" in f.attrs:
            self.stream_attr(f)
        counts: dict = {}
        self.uses = counts
        values: set = set(f.args)
        self.values = values
        visible: set = set(f.args)
        check_op = self.check_op
        # Each frame: an iterator over a region's ops (resumed after a nested region is
        # done), the region, the values it made visible, and its expected terminator. A
        # frame ("results", op, added) makes an op's results visible after its regions.
        stack = [(iter(enumerate(f.body.ops)), f.body, [], "func.return", list(f.result_types), f)]
        while stack:
            frame = stack[-1]
            if frame[0] == "results":
                _, op, added = stack.pop()
                for v in op.results:
                    visible.add(v)
                    values.add(v)
                    added.append(v)
                continue
            it, region, added, term, term_types, fn = frame
            last = len(region.ops) - 1
            for i, op in it:
                for v in op.operands:
                    if v not in visible:
                        self.err(f"operand {v!r} is used where it is not defined or not visible", op)
                    counts[v] = counts.get(v, 0) + 1
                check_op(op, region, i == last, term, term_types)
                if op.regions or op.opdef.num_regions:
                    stack.append(("results", op, added))
                    for r, (arg_types, r_term, r_types) in reversed(list(zip(op.regions, self.region_rules(op)))):
                        if [a.type for a in r.args] != list(arg_types):
                            self.err("region arguments must be (" + ", ".join(map(str, arg_types)) + ")", op)
                        r_added = list(r.args)
                        visible.update(r_added)
                        values.update(r_added)
                        stack.append((iter(enumerate(r.ops)), r, r_added, r_term, r_types, None))
                    break
                for v in op.results:
                    visible.add(v)
                    values.add(v)
                    added.append(v)
            else:
                if last < 0:
                    self.err(f"empty region (expected a `{term}` terminator)",
                             region.parent if isinstance(region.parent, Op) else None, fn)
                visible.difference_update(added)
                stack.pop()
        if CHECK_USES:
            self.check_uses(f)

    def stream_attr(self, f: Function) -> None:
        """`stream = [i, ...]`: parameters of a kernel, each a read-only global pointer."""
        idx = f.attrs["stream"]
        args = f.args
        if f.kind != "kernel" or not isinstance(idx, list) or not all(
                isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(args)
                and isinstance(args[i].type, PtrType) and not args[i].type.mut and args[i].type.space == "global"
                for i in idx):
            self.err(f"@{f.name}: `stream` must list parameters of a kernel that are read-only global pointers",
                     None, f)

    def region_rules(self, op: Op) -> list:
        d = op.opdef
        if len(op.regions) != d.num_regions:
            self.err(f"has {len(op.regions)} regions, expected {d.num_regions}", op)
            return [([], "scf.yield", [])] * len(op.regions)
        if not op.regions:
            return []
        if d.region_types is None:
            return [([], "scf.yield", [])] * len(op.regions)
        try:
            return d.region_types(op)
        except (AttributeError, IndexError, TypeError):   # malformed op: reported by check_op
            return [([a.type for a in r.args], "scf.yield", []) for r in op.regions]

    def check_op(self, op: Op, region: Region, last: bool, term: str, term_types: list) -> None:
        if op.parent is not region:
            self.err("op's parent link is wrong", op)
        if op.erased:
            self.err("op was erased but is still in the IR", op)
        d = op.opdef
        if op.verified is not op.operands:
            # The op's own checks depend only on its operands (its attributes and result
            # types do not change): repeated after every pass only for ops whose operands did.
            msg = d.check_types(op) or (d.check_attrs(op) if d.attrs else None)
            if not msg and d.verify is not None:
                try:
                    msg = d.verify(op)
                except (AttributeError, IndexError, TypeError, KeyError) as e:
                    msg = f"malformed: {type(e).__name__}: {e}"
            if not msg and d.check_consts is not None:
                consts = {s.name: (v.op.attrs["value"] if v.op is not None and v.op.name == "arith.const" else None)
                          for s, v in zip(d.operands, op.operands)}
                bad = d.check_consts(op.attrs, consts)
                msg = f"`{bad[0]}` {bad[1]}" if bad else None
            if msg:
                self.err(msg, op)
            else:
                op.verified = op.operands
        if d.terminator and not last:
            self.err("terminator in the middle of a region", op)
        if last:
            if op.name != term:
                self.err(f"region must end with `{term}`, not `{op.name}`", op)
            else:
                got = [v.type for v in op.operands]
                if got != list(term_types):
                    self.err(f"yields ({', '.join(map(str, got))}) but "
                             f"({', '.join(map(str, term_types))}) is expected", op)
        if op.name == "func.call":
            self.call(op)
        elif op.name == "mem.global":
            g = self.globals.get(op.attrs.get("name"))
            if g is None:
                self.err(f"unknown global @{op.attrs.get('name')}", op)
            elif g.elem != op.results[0].type.pointee:
                self.err(f"global @{g.name} holds {g.elem}", op)

    def call(self, op: Op) -> None:
        callee = self.module.get(op.attrs.get("callee"))
        if callee is None:
            self.err(f"call to unknown function @{op.attrs.get('callee')}", op)
            return
        if callee.kind != "func":
            self.err(f"cannot call kernel @{callee.name}", op)
        if [v.type for v in op.operands] != [a.type for a in callee.args]:
            self.err(f"arguments do not match @{callee.name}'s parameters", op)
        if [v.type for v in op.results] != list(callee.result_types):
            self.err(f"results do not match @{callee.name}'s result types", op)

    def check_uses(self, f: Function) -> None:
        """Every value's use list counts exactly its uses by ops of this function."""
        counts = self.uses
        for v in self.values:
            uses = v.uses
            if sum(uses.values()) != counts.get(v, 0) or any(u.erased for u in uses):
                stale = next((u for u in uses if u.erased), None) or next(iter(uses), None)
                self.err(f"use list of {v!r} is stale: it counts {sum(uses.values())} use(s), the IR has "
                         f"{counts.get(v, 0)}" + (f" (one by an erased `{stale.name}`)" if stale and stale.erased
                                                    else ""), stale)
                return
        for v, n in counts.items():
            if v not in self.values and sum(v.uses.values()) != n:
                self.err(f"use list of {v!r} (defined elsewhere) counts {sum(v.uses.values())} use(s), "
                         f"the IR has {n}", None, f)
                return
