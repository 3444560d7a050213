"""Executes IR over many lanes at once with numpy: each SSA value is an array with one
element per lane, and structured control flow runs under a lane mask.

- scf.if runs each side for the lanes that take it (a side no lane takes is skipped);
- scf.for / scf.while iterate while any active lane continues; a lane that has left
  keeps its values;
- ops from the op table run through their `eval` semantics (ember.ir.semantics);
  memory and thread ops are delegated to a `Machine` (the simulator provides one).

This is the engine of the simulator and of constant folding (where there is one lane).
"""

from __future__ import annotations

import numpy as np

from ..ir.core import Function, Module, Op, Region, Value


def merge(cond: np.ndarray, a, b):
    """Per lane: a where cond, else b (values may be pointers in the simulator)."""
    if isinstance(a, np.ndarray):
        return np.where(cond, a, b)
    return type(a).where(cond, a, b)


def _copy(v):
    return v.copy() if isinstance(v, np.ndarray) else v


class StepLimitExceeded(Exception):
    """A loop ran past the step limit (the simulator reports it as error S0007)."""

    def __init__(self, op: Op, limit: int):
        from ..diagnostics import Diagnostic
        self.op = op
        self.limit = limit
        self.code = "S0007"
        self.diagnostic = Diagnostic("error", "S0007", f"this loop ran more than {limit} iterations "
                                     "(the step limit); it may never end", op.loc, label="this loop",
                                     help="raise the limit with step_limit=... (ember run --step-limit) "
                                          "if it is just long")
        super().__init__(self.diagnostic.render())


class Machine:
    """Hooks for ops that need more than their operands: memory, threads, globals."""

    def __init__(self, globals_: dict | None = None):
        self.globals = globals_ or {}

    def op(self, interp: "Interpreter", op: Op, args: list, mask: np.ndarray) -> list:
        if op.name == "mem.global":
            return [GlobalRef(op.attrs["name"], interp.lanes)]
        if op.name == "mem.load" and isinstance(args[0], GlobalRef):
            table = self.globals[args[0].name]
            idx = args[1].astype(np.int64)
            safe = np.where(mask, idx, 0)
            if np.any(mask & ((idx < 0) | (idx >= len(table)))):
                raise IndexError(f"constant table @{args[0].name} read out of bounds at {op.loc}")
            return [table[safe]]
        raise NotImplementedError(f"`{op.name}` needs the simulator (ember.sim)")


class GlobalRef:
    """A pointer to a module constant table (the value of `mem.global`)."""

    __slots__ = ("name", "lanes")

    def __init__(self, name: str, lanes: int):
        self.name = name
        self.lanes = lanes

    def __getitem__(self, item):
        return self


class Interpreter:
    def __init__(self, module: Module, lanes: int, machine: Machine | None = None,
                 step_limit: int = 1_000_000):
        self.module = module
        self.lanes = lanes
        self.machine = machine or Machine()
        self.step_limit = step_limit

    def call(self, f: Function, args: list, mask: np.ndarray | None = None) -> list:
        if mask is None:
            mask = np.ones(self.lanes, dtype=bool)
        env: dict[Value, object] = dict(zip(f.args, args))
        return self.region(f.body, env, mask)

    def region(self, r: Region, env: dict, mask: np.ndarray) -> list:
        """Run a region's ops; returns the terminator's operand values."""
        for op in r.ops:
            if op.opdef.terminator:
                return [env[v] for v in op.operands]
            results = self.op(op, env, mask)
            for res, val in zip(op.results, results):
                env[res] = val
        return []

    def op(self, op: Op, env: dict, mask: np.ndarray) -> list:
        name = op.name
        if name == "arith.const":
            return op.opdef.eval(op, self.lanes)
        args = [env[v] for v in op.operands]
        if name == "scf.if":
            return self.if_(op, args[0], env, mask)
        if name == "scf.for":
            return self.for_(op, args, env, mask)
        if name == "scf.while":
            return self.while_(op, args, env, mask)
        if name == "func.call":
            callee = self.module.get(op.attrs["callee"])
            return self.call(callee, args, mask)
        if name == "arith.select" and not isinstance(args[1], np.ndarray):
            return [merge(args[0], args[1], args[2])]
        ev = op.opdef.eval
        if ev is None or name in ("mem.load", "mem.store") or (
                name == "arith.bitcast" and not op.results[0].type.is_scalar):
            return self.machine.op(self, op, args, mask)
        return list(ev(op, *args))

    # -- structured control flow under masks
    def if_(self, op: Op, cond, env: dict, mask: np.ndarray) -> list:
        then_mask = mask & cond
        else_mask = mask & ~cond
        then_vals = self.region(op.regions[0], dict(env), then_mask) if then_mask.any() else None
        else_vals = self.region(op.regions[1], dict(env), else_mask) if else_mask.any() else None
        out = []
        for i, r in enumerate(op.results):
            if then_vals is None:
                out.append(else_vals[i] if else_vals is not None else _undef(r, self.lanes))
            elif else_vals is None:
                out.append(then_vals[i])
            else:
                out.append(merge(cond, then_vals[i], else_vals[i]))
        return out

    def for_(self, op: Op, args: list, env: dict, mask: np.ndarray) -> list:
        lo, hi, step, *carried = args
        body = op.regions[0]
        iv = lo.copy()
        carried = [_copy(c) for c in carried]
        active = mask & (iv < hi)
        steps = 0
        while active.any():
            steps += 1
            if steps > self.step_limit:
                raise StepLimitExceeded(op, self.step_limit)
            inner = dict(env)
            inner[body.args[0]] = iv
            for a, c in zip(body.args[1:], carried):
                inner[a] = c
            new = self.region(body, inner, active)
            carried = [merge(active, n, c) for n, c in zip(new, carried)]
            with np.errstate(over="ignore"):
                iv = np.where(active, iv + step, iv).astype(iv.dtype)
            active = active & (iv < hi)
        return carried

    def while_(self, op: Op, args: list, env: dict, mask: np.ndarray) -> list:
        before, after = op.regions
        vals = [_copy(a) for a in args]
        results = [_copy(v) for v in vals]
        active = mask.copy()
        steps = 0
        while True:
            inner = dict(env)
            for a, v in zip(before.args, vals):
                inner[a] = v
            cond, *fwd = self.region(before, inner, active)
            leaving = active & ~cond
            results = [merge(leaving, f, r) for f, r in zip(fwd, results)]
            active = active & cond
            if not active.any():
                return results
            steps += 1
            if steps > self.step_limit:
                raise StepLimitExceeded(op, self.step_limit)
            inner = dict(env)
            for a, v in zip(after.args, fwd):
                inner[a] = v
            new = self.region(after, inner, active)
            vals = [merge(active, n, f) for n, f in zip(new, fwd)]


def _undef(v: Value, lanes: int):
    from ..ir import semantics as S
    return np.zeros(lanes, dtype=S.dtype(v.type))
