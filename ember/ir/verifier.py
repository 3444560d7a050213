"""The IR verifier: runs after every stage and every pass.

Checks each op against its op-table verifier, and the structure around it: values are
defined before use and only used where visible (structured dominance), every region ends
in the terminator its parent expects with the right types, calls match their callee, and
kernels return nothing.
"""

from __future__ import annotations

from ..source import Span
from .core import Function, Module, Op, Region
from .types import BOOL


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
        visible = set(map(id, f.args))
        self.region(f.body, visible, expect=("func.return", f.result_types), fn=f)

    def region(self, r: Region, visible: set, expect: tuple, fn: Function | None = None) -> None:
        """`visible` is shared: what this region defines is removed again when it ends."""
        added = [id(a) for a in r.args]
        visible.update(added)
        try:
            self._region(r, visible, expect, fn, added)
        finally:
            visible.difference_update(added)

    def _region(self, r: Region, visible: set, expect: tuple, fn, added: list) -> None:
        term_name, term_types = expect
        if not r.ops:
            self.err(f"empty region (expected a `{term_name}` terminator)", r.parent if isinstance(r.parent, Op) else None, fn)
            return
        n = len(r.ops)
        for i, op in enumerate(r.ops):
            last = i == n - 1
            if op.parent is not r:
                self.err("op's parent link is wrong", op)
            for v in op.operands:
                if id(v) not in visible:
                    self.err(f"operand {v!r} is used where it is not defined or not visible", op)
            opdef = op.opdef
            msg = opdef.verify(op)
            if msg:
                self.err(msg, op)
            if opdef.terminator and not last:
                self.err("terminator in the middle of a region", op)
            if last:
                if op.name != term_name:
                    self.err(f"region must end with `{term_name}`, not `{op.name}`", op)
                else:
                    got = [v.type for v in op.operands]
                    if term_name == "scf.condition":
                        if not got or got[0] != BOOL:
                            self.err("first operand must be the bool condition", op)
                        got = got[1:]
                    if got != list(term_types):
                        self.err(f"yields ({', '.join(map(str, got))}) but "
                                 f"({', '.join(map(str, term_types))}) is expected", op)
            if len(op.regions) != opdef.num_regions:
                self.err(f"has {len(op.regions)} regions, expected {opdef.num_regions}", op)
            if op.regions:
                self.nested(op, visible)
            if op.name == "func.call":
                self.call(op)
            elif op.name == "mem.global":
                g = self.globals.get(op.attrs.get("name"))
                if g is None:
                    self.err(f"unknown global @{op.attrs.get('name')}", op)
                elif g.elem != op.results[0].type.pointee:
                    self.err(f"global @{g.name} holds {g.elem}", op)
            for v in op.results:
                visible.add(id(v))
                added.append(id(v))

    def nested(self, op: Op, visible: set) -> None:
        if op.name == "scf.if" and len(op.regions) == 2:
            for r in op.regions:
                if r.args:
                    self.err("scf.if regions take no arguments", op)
                self.region(r, visible, ("scf.yield", [v.type for v in op.results]))
        elif op.name == "scf.for" and len(op.regions) == 1:
            body = op.regions[0]
            want = [op.operands[0].type] + [v.type for v in op.operands[3:]]
            if [a.type for a in body.args] != want:
                self.err("body arguments must be the induction variable and the iter_args", op)
            self.region(body, visible, ("scf.yield", [v.type for v in op.results]))
        elif op.name == "scf.while" and len(op.regions) == 2:
            before, after = op.regions
            types = [v.type for v in op.results]
            if [a.type for a in before.args] != types or [a.type for a in after.args] != types:
                self.err("both regions take the loop-carried values as arguments", op)
            self.region(before, visible, ("scf.condition", types))
            self.region(after, visible, ("scf.yield", types))
        else:
            for r in op.regions:
                self.region(r, visible, ("scf.yield", []))

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
