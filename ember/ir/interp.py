"""Executes IR over many lanes at once with numpy: each SSA value is an array with one
element per lane, and structured control flow runs under a lane mask.

- scf.if runs each side for the lanes that take it (a side no lane takes is skipped);
- scf.for / scf.while iterate while any active lane continues; a lane that has left
  keeps its values;
- every other op runs its definition's semantics: `eval` (pure), `simulate` (ops that
  need the machine), or, for an op defined by its expansion (`expanded_by`), the
  expansion itself, so the constant folder and the simulator compute what the GPU runs.

Regions nest through generators run by `ember.trampoline` (no recursion per nesting
level). This is the engine of constant folding (one lane, the plain `Machine`) and of the
simulator (`ember.sim`, whose machine keeps memory and threads).
"""

from __future__ import annotations

from functools import lru_cache

from ..lazy_numpy import np

from ..diagnostics import Diagnostic
from ..trampoline import SUSPEND, Task, run
from .core import Function, Module, Op, Region, Value


def merge(cond: np.ndarray, a, b):
    """Per lane: a where cond, else b (values may be pointers in the simulator)."""
    if isinstance(a, np.ndarray):
        return np.where(cond, a, b)
    return type(a).where(cond, a, b)


def _copy(v):
    return v.copy() if isinstance(v, np.ndarray) else v


# Ops whose semantics are the interpreter's own: they run regions or functions under
# lane masks (every other op has `eval`, `simulate` or an expansion; a test checks this).
STRUCTURED = {"scf.if": "if_", "scf.for": "for_", "scf.while": "while_", "func.call": "call_op"}


class StepLimitExceeded(Exception):
    """A loop ran past the step limit (the simulator reports it as error S0007)."""

    def __init__(self, op: Op, limit: int):
        self.op = op
        self.limit = limit
        self.code = "S0007"
        self.diagnostic = Diagnostic("error", "S0007", f"this loop ran more than {limit} iterations "
                                     "(the step limit); it may never end", op.loc, label="this loop",
                                     help="raise the limit with step_limit=... (ember run --step-limit) "
                                          "if it is just long")
        super().__init__(self.diagnostic.render())


class Machine:
    """What ops with a `simulate` hook see: memory, the threads and their warps. This base
    machine knows only the module's constant tables (enough for constant folding and the
    math library); the simulator's (`ember.sim.machine.SimMachine`) implements it all:

    - threads: `lanes`, `coordinate(which, dim)` (which: thread, block, block_dim,
      grid_dim), `lane_in_warp()`, `warp_in_block()`, `warp_lane(src)` (the interpreter
      lane of each lane's warp-mate `src`, and whether that thread exists), `warps()`
      (each lane's warp number and the count), `exit(mask)`, `barrier(op, mask)`;
    - memory: `allocate(op, space, elem, length, name)`, `table(name, elem)`,
      `wild_pointer(type)` (points nowhere),
      `load(op, ptr, index, type, mask)`, `store(op, ptr, index, type, values, mask)`,
      `atomic(op, ptr, index, type, mask, update)` (update(old, lane) -> new, applied
      lane by lane);
    - `fail(code, message, op, notes)` reports an error at the op; `who(lane)` names a
      thread. Pointer values offer `.offset(index)` and `.reinterpret(type)`;
    - `suspend`: set by an op whose threads cannot go on until others act (a failed wait
      on an mbarrier): the interpreter then lets the other branch of a divergent `if` run.
    """

    def __init__(self, tables: dict | None = None, lanes: int = 1):
        self.tables = tables or {}
        self.lanes = lanes
        self.suspend = False

    def table(self, name: str, elem) -> "TableRef":
        return TableRef(name, self.lanes)

    def load(self, op: Op, ptr, index, t, mask):
        if not isinstance(ptr, TableRef):
            self.fail(None, f"`{op.name}` needs the simulator (ember.sim)", op)
        table = self.tables[ptr.name]
        idx = index.astype(np.int64)
        if np.any(mask & ((idx < 0) | (idx >= len(table)))):
            self.fail(None, f"constant table @{ptr.name} read out of bounds", op)
        return table[np.where(mask, idx, 0)]

    def fail(self, code, message: str, op: Op, notes=()):
        raise NotImplementedError(f"{message} (at {op.loc})")

    def independent(self, mask: np.ndarray) -> list:
        """The lanes of `mask` in the groups a GPU runs independently of each other (the
        simulator: warpgroups); here one group."""
        return [mask]

    def __getattr__(self, name):
        # any other machine service: only the simulator has it
        def missing(*args, **kwargs):
            op = next((a for a in args if isinstance(a, Op)), None)
            raise NotImplementedError(f"`{op.name if op else name}` needs the simulator (ember.sim)")
        return missing


class TableRef:
    """A pointer to a module constant table, outside the simulator."""

    __slots__ = ("name", "lanes")

    def __init__(self, name: str, lanes: int):
        self.name = name
        self.lanes = lanes

    def offset(self, index):
        raise NotImplementedError("pointer arithmetic on constant tables needs the simulator")


class Interpreter:
    def __init__(self, module: Module, lanes: int, machine: Machine | None = None,
                 step_limit: int = 1_000_000):
        self.module = module
        self.lanes = lanes
        self.machine = machine or Machine(lanes=lanes)
        self.step_limit = step_limit
        self.waits: dict = {}         # `if` op -> whether it waits on an mbarrier
        self.barriers: dict = {}      # region -> whether it holds a block or cluster barrier

    def call(self, f: Function, args: list, mask: np.ndarray | None = None) -> list:
        if mask is None:
            mask = np.ones(self.lanes, dtype=bool)
        return run(self._call(f, args, mask))

    def _call(self, f: Function, args: list, mask: np.ndarray):
        env: dict[Value, object] = dict(zip(f.args, args))
        return (yield self.region(f.body, env, mask))

    def region(self, r: Region, env: dict, mask: np.ndarray):
        """Run a region's ops (a generator: see ember.trampoline); returns the terminator's
        operand values."""
        machine = self.machine
        for op in r.ops:
            d = op.opdef
            if d.terminator:
                return [env[v] for v in op.operands]
            if op.name == "arith.const":
                results = d.eval(op, self.lanes)
            else:
                args = [env[v] for v in op.operands]
                if op.name in STRUCTURED:
                    results = yield getattr(self, STRUCTURED[op.name])(op, args, env, mask)
                elif d.simulate is not None:
                    results = d.simulate(machine, op, args, mask)
                    if machine.suspend:           # spinning on another thread group: let it run
                        machine.suspend = False
                        for res, val in zip(op.results, results):
                            env[res] = val
                        yield SUSPEND
                        continue
                elif d.eval is not None:
                    results = d.eval(op, *args)
                elif d.expanded_by is not None:
                    results = expansion(op.name, op.operands[0].type).run(args)
                else:
                    raise NotImplementedError(f"`{op.name}` has no semantics (eval, simulate or an expansion)")
            for res, val in zip(op.results, results):
                env[res] = val
        return []

    def call_op(self, op: Op, args: list, env: dict, mask: np.ndarray):
        return (yield self._call(self.module.get(op.attrs["callee"]), args, mask))

    # -- structured control flow under masks
    def if_(self, op: Op, args: list, env: dict, mask: np.ndarray):
        cond = args[0]
        then_mask = mask & cond
        else_mask = mask & ~cond
        if then_mask.any() and else_mask.any() and self._waits(op):
            then_vals, else_vals = yield self.concurrently(op, env, then_mask, else_mask)
        else:
            then_vals = (yield self.region(op.regions[0], dict(env), then_mask)) if then_mask.any() else None
            else_vals = (yield self.region(op.regions[1], dict(env), else_mask)) if else_mask.any() else None
        out = []
        for i, r in enumerate(op.results):
            if then_vals is None:
                out.append(else_vals[i] if else_vals is not None else _undef(r, self.lanes))
            elif else_vals is None:
                out.append(then_vals[i])
            else:
                out.append(merge(cond, then_vals[i], else_vals[i]))
        return out

    def _waits(self, op: Op) -> bool:
        """Whether an `if` holds a wait on an mbarrier (memoized per op)."""
        got = self.waits.get(op)
        if got is None:
            got = self.waits[op] = any(inner.name == "mem.mbarrier_try_wait" for r in op.regions for inner in r.walk())
        return got

    def concurrently(self, op: Op, env: dict, then_mask: np.ndarray, else_mask: np.ndarray):
        """Both branches of a divergent `if` that waits on mbarriers, switching whenever one
        spins: the other may be what ends the wait (warp-specialised producers and
        consumers). A branch's warpgroups run apart too (the machine's `independent`
        groups; each in lockstep), unless the branch holds a block or cluster barrier: two
        consumer warpgroups taking turns on one ring of stages (ping-pong) each wait for
        stages that only the other's progress lets the producer fill."""
        tasks = []
        for region, mask in zip(op.regions, (then_mask, else_mask)):
            groups = [mask] if self._barriers(region) else self.machine.independent(mask)
            tasks.append([(g, Task(self.region(region, dict(env), g))) for g in groups])
        every = [t for branch in tasks for _, t in branch]
        while True:
            for t in every:
                if not t.done:
                    t.step()
            if all(t.done for t in every):
                break
            yield SUSPEND       # all spin: an enclosing branch may go on (else the spin limit ends it)
        out = []
        for branch in tasks:
            (_, first), *rest = branch
            vals = first.result
            for g, t in rest:
                vals = [merge(g, a, b) for a, b in zip(t.result, vals)]
            out.append(vals)
        return out[0], out[1]

    def _barriers(self, region: Region) -> bool:
        """Whether a region holds a block or cluster barrier (memoized): its threads stay together."""
        got = self.barriers.get(region)
        if got is None:
            got = self.barriers[region] = any(inner.name in ("gpu.barrier", "gpu.cluster_barrier")
                                           for inner in region.walk())
        return got

    def for_(self, op: Op, args: list, env: dict, mask: np.ndarray):
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
            new = yield self.region(body, inner, active)
            carried = [merge(active, n, c) for n, c in zip(new, carried)]
            with np.errstate(over="ignore"):
                iv = np.where(active, iv + step, iv).astype(iv.dtype)
            active = active & (iv < hi)
        return carried

    def while_(self, op: Op, args: list, env: dict, mask: np.ndarray):
        before, after = op.regions
        vals = [_copy(a) for a in args]
        results = [_copy(v) for v in vals]
        active = mask.copy()
        steps = 0
        while True:
            inner = dict(env)
            for a, v in zip(before.args, vals):
                inner[a] = v
            cond, *fwd = yield self.region(before, inner, active)
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
            new = yield self.region(after, inner, active)
            vals = [merge(active, n, f) for n, f in zip(new, fwd)]


def _undef(v: Value, lanes: int):
    from . import semantics as S
    return np.zeros(lanes, dtype=S.dtype(v.type))


class Expansion:
    """An expanded op's implementation as a one-function module, ready to run."""

    def __init__(self, module: Module, function: Function):
        self.module = module
        self.function = function
        self.tables = {g.name: np.array(g.values, dtype=np.uint32) for g in module.globals}

    def run(self, args: list) -> list:
        lanes = len(args[0])
        machine = Machine(self.tables, lanes)
        return Interpreter(self.module, lanes, machine).call(self.function, list(args))


@lru_cache(maxsize=None)
def expansion(name: str, t) -> Expansion:
    """The expansion of op `name` on type t (built once per process)."""
    from . import mathlib
    return Expansion(*mathlib.expansion_module(name, t))


def evaluate(op: Op, args: list) -> list:
    """The op's results on lane arrays, for ops that need no machine (constant folding)."""
    d = op.opdef
    if d.eval is not None:
        return list(d.eval(op, *args))
    if d.expanded_by is not None:
        return expansion(op.name, op.operands[0].type).run(args)
    raise NotImplementedError(f"`{op.name}` cannot be evaluated without the simulator")
