"""The IR verifier: runs after every stage and every pass.

Checks each op against its definition (operand and result types, attributes, the op's
own verifier, what its regions take and yield) and the structure around it: values are
defined before use and only used where visible (structured dominance), every region ends
in the terminator its op expects, calls match their callee, kernels return nothing, and
every value's use list matches the IR (a pass that dropped an op without erasing it, or
rewired an operand behind the use lists' back, is caught here). Iterative: nesting depth
costs no recursion.
"""

from __future__ import annotations

from ..source import Span
from .core import Function, Module, Op, Region


class VerifyError(Exception):
    def __init__(self, errors: list[tuple[str, Span | None]]):
        self.errors = errors
        super().__init__("\n".join(f"{loc}: {msg}" if loc else msg for msg, loc in errors))


def verify_module(m: Module) -> None:
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
        _Verifier(m, globals_, errors).function(f)
    if errors:
        raise VerifyError(errors)


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
        self.uses: dict = {}
        self.values: set = set()
        visible: set = set()
        # Frames: (region, position, ids this region made visible, expected terminator).
        stack = [self.enter(f.body, visible, "func.return", list(f.result_types), f)]
        while stack:
            frame = stack[-1]
            region, added, (term, term_types), fn = frame[0], frame[2], frame[3], frame[4]
            ops = region.ops
            i = frame[1]
            if i == len(ops):
                if not ops:
                    self.err(f"empty region (expected a `{term}` terminator)",
                             region.parent if isinstance(region.parent, Op) else None, fn)
                visible.difference_update(added)
                stack.pop()
                continue
            op = ops[i]
            if frame[5] is not op:           # first visit: check the op, then its regions
                frame[5] = op
                self.check_op(op, region, visible, last=i == len(ops) - 1, term=term, term_types=term_types)
                rules = self.region_rules(op)
                for r, (arg_types, r_term, r_types) in reversed(list(zip(op.regions, rules))):
                    if [a.type for a in r.args] != list(arg_types):
                        self.err("region arguments must be (" + ", ".join(map(str, arg_types)) + ")", op)
                    stack.append(self.enter(r, visible, r_term, r_types, None))
                if op.regions:
                    continue
            # after its regions: its results become visible
            for v in op.results:
                visible.add(id(v))
                added.append(id(v))
                self.values.add(v)
            frame[1] = i + 1
        self.check_uses(f)

    def enter(self, r: Region, visible: set, term: str, term_types: list, fn) -> list:
        added = [id(a) for a in r.args]
        visible.update(added)
        self.values.update(r.args)
        return [r, 0, added, (term, term_types), fn, None]

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

    def check_op(self, op: Op, region: Region, visible: set, last: bool, term: str, term_types: list) -> None:
        if op.parent is not region:
            self.err("op's parent link is wrong", op)
        if op.erased:
            self.err("op was erased but is still in the IR", op)
        for v in op.operands:
            if id(v) not in visible:
                self.err(f"operand {v!r} is used where it is not defined or not visible", op)
            self.uses[(id(v), op)] = self.uses.get((id(v), op), 0) + 1
        d = op.opdef
        msg = d.check_types(op) or d.check_attrs(op)
        if not msg and d.verify is not None:
            try:
                msg = d.verify(op)
            except (AttributeError, IndexError, TypeError, KeyError) as e:
                msg = f"malformed: {type(e).__name__}: {e}"
        if msg:
            self.err(msg, op)
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
        """Every value's use list names exactly the ops of this function that use it."""
        for v in self.values:
            for user, n in v.uses.items():
                if self.uses.get((id(v), user), 0) != n:
                    where = "an op outside the IR" if user.erased or (id(v), user) not in self.uses else "an op"
                    self.err(f"use list of {v!r} is stale: it counts {n} use(s) by {where} "
                             f"(`{user.name}`), the IR has {self.uses.get((id(v), user), 0)}", user)
                    return
        for (vid, user), n in self.uses.items():
            v = next((x for x in user.operands if id(x) == vid), None)
            if v is not None and v.uses.get(user, 0) != n:
                self.err(f"use list of {v!r} misses {n - v.uses.get(user, 0)} use(s) by this op", user)
                return
