"""A generator of random, well-typed Ember kernels for differential testing.

Every generated kernel is a valid program with one defined result: it compiles without
errors, every access is in bounds, it has no data race and no uninitialized shared read,
every loop ends, and collective operations (barriers, shuffles, votes) only run where all
threads of the block are present. So any difference between two ways of running it (the
simulator before and after a pass, or the GPU) is a bug in one of them.

Shape of a kernel (one thread per element, `gid` its global index):

    kernel fuzz(in_T...: *global T, out_T...: *mut global T, n: u32, s: i32) block(B) {
        let gid = ...; let slot = gid * SLOTS;
        <phase 1: top level; shared-memory exchanges with barriers, atomics, shuffles and
                  votes between ordinary statements, which may branch and loop>
        <phase 2: anything else, nested: if/else, for (step), while, break, continue, early
                  return, per-thread arrays, casts and bitcasts, the math builtins>
    }

Results leave through `out_T[slot + j]` (each thread owns its slots). Fast-math results
are written next to their argument, so the GPU check can hold them to the documented
bound instead of bit equality (`Program.approx`). A NaN's bits are unspecified, so no
program lets them decide a result: values that may be NaN are replaced before a
`bitcast` or the sign operand of `copysign` (`not_nan`).

Choices come from a `Source`: `RandomSource(seed)` for reproducible programs by number,
or hypothesis's `draw` (tests/fuzz), which can shrink a failing program. Options are
listed simplest first, since shrinking moves towards the first.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np

from .progen_features import Features
from .progen_generics import GenericFeatures
from .progen_tensor import TensorCoreFeatures
from .vocab import (ACCURATE, ATOMIC_OPS, ATOMIC_TYPES, BITS, FAST, FENCE_ORDERS, FLOATS, FUZZ_SCOPES, INTS, NUMERIC,
                    ROUNDING, SHUFFLES, VOTES, builtin_calls)

INT_BINOPS = ["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "min", "max"]
FLOAT_BINOPS = ["+", "-", "*", "/", "min", "max", "copysign"]
COMPOUND_INT = ["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"]
COMPOUND_FLOAT = ["+", "-", "*", "/"]
FLOAT_LITERALS = {"f16": [0.0, 1.0, 0.5, 2.0, 3.0, 0.1, 100.0, 1e-3, 65504.0, 6e-5],
                  "bf16": [0.0, 1.0, 0.5, 2.0, 3.0, 0.1, 1e30, 1e-30, 3e38],
                  "f32": [0.0, 1.0, 0.5, 2.0, 3.0, 0.1, 1e30, 1e-30, 3e38, 1e-45, 16777217.0],
                  "f64": [0.0, 1.0, 0.5, 2.0, 3.0, 0.1, 1e300, 1e-300, 1.7e308, 5e-324, 9007199254740993.0]}


class RandomSource:
    """Choices from a seeded PRNG: the same seed gives the same program everywhere."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)


class DrawSource:
    """Choices drawn through hypothesis (inside @given with st.data(), or st.composite)."""

    def __init__(self, draw):
        from hypothesis import strategies as st
        self._draw = draw
        self._st = st

    def integer(self, lo: int, hi: int) -> int:
        return self._draw(self._st.integers(lo, hi))


@dataclass
class Program:
    source: str
    block: int
    grid: int
    slots: int                      # output slots per thread (in every out_T)
    input_seed: int
    approx: list = field(default_factory=list)   # (fast fn, arg slot, result slot) in out_f32
    types: list = field(default_factory=list)    # the element types the program computes in
    zeroed: list = field(default_factory=list)   # elements of out_u32 that start at 0 (counters)

    @property
    def threads(self) -> int:
        return self.block * self.grid

    def arguments(self) -> list:
        """Fresh inputs in parameter order: in_T arrays of special and random values,
        out_T arrays (filled with random bits, so unwritten slots compare too), n, s.
        They come from PCG64's raw stream, which numpy keeps stable across versions."""
        bits = _Bits(self.input_seed)
        n = self.threads
        ins = [_input_values(t, n, bits) for t in NUMERIC]
        outs = [bits.raw(n * self.slots).astype(NP_TYPES[t] if t not in FLOATS else _BITS_TYPE[t]).view(
            NP_TYPES[t]) for t in NUMERIC]
        outs[NUMERIC.index("u32")][list(self.zeroed)] = 0
        return ins + outs + [int(bits.raw(1)[0] % 24), int(bits.raw(1)[0] % 2001) - 1000]

    def output_names(self) -> list:
        return [f"out_{t}" for t in NUMERIC]

    def outputs(self, args: list) -> dict:
        """The out_T arrays of an argument list from arguments(), by name."""
        return dict(zip(self.output_names(), args[len(NUMERIC):2 * len(NUMERIC)]))


NP_TYPES = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
            "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "f16": np.float16,
            "bf16": np.uint16, "f32": np.float32, "f64": np.float64}   # bf16: raw bits
_BITS_TYPE = {"f16": np.uint16, "bf16": np.uint16, "f32": np.uint32, "f64": np.uint64}
_SPECIAL_FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5, float("inf"), float("-inf"), float("nan"),
                   1e-40, -1e-45, 65504.0, 7e4, 3e38, 1e300, 1e-310, 3.0, 1e5, -7.25, 0.1]


class _Bits:
    def __init__(self, seed: int):
        self.gen = np.random.PCG64(seed)

    def raw(self, n: int) -> np.ndarray:
        return self.gen.random_raw(n).astype(np.uint64)

    def unit(self, n: int) -> np.ndarray:
        """Uniform in [0, 1) from the top 53 bits."""
        return (self.raw(n) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def _input_values(t: str, n: int, bits: _Bits) -> np.ndarray:
    """A mix of special values, small values and random ones (bf16 as raw bits)."""
    kind = bits.raw(n) % np.uint64(10)
    if t in INTS:
        info = np.iinfo(NP_TYPES[t])
        special = np.array([0, 1, 2, 3, 7, 31, 32, 33, 63, 64, info.max, info.min, info.max - 1]
                           + ([-1, -2, info.min + 1] if info.min < 0 else []), dtype=np.int64 if info.min < 0 else np.uint64)
        full = bits.raw(n).astype(NP_TYPES[t])                          # random bits of the width
        small = (bits.raw(n) % np.uint64(81)).astype(np.int64) - (40 if info.min < 0 else 0)
        small = np.abs(small) if info.min == 0 else small
        pick = special[(bits.raw(n) % np.uint64(len(special))).astype(np.int64)].astype(NP_TYPES[t])
        return np.where(kind < 2, pick, np.where(kind < 6, small.astype(NP_TYPES[t]), full))
    special = np.array(_SPECIAL_FLOATS)
    pick = special[(bits.raw(n) % np.uint64(len(special))).astype(np.int64)]
    mag = 10.0 ** np.floor(bits.unit(n) * 8 - 4)                       # 1e-4 .. 1e3
    normal = (bits.unit(n) * 2 - 1) * 4 * mag
    with np.errstate(over="ignore"):
        vals = np.where(kind < 2, pick, normal)
        if t == "bf16":
            from ember.ir import semantics as S
            from ember.ir.types import SCALARS
            return S.to_bits(vals, SCALARS["bf16"]).astype(np.uint16)
        return vals.astype(NP_TYPES[t])


class _Var:
    __slots__ = ("name", "type", "mutable")

    def __init__(self, name, type, mutable):
        self.name, self.type, self.mutable = name, type, mutable


class Generator(Features, GenericFeatures, TensorCoreFeatures):
    def __init__(self, source, max_statements: int = 24, max_depth: int = 3):
        self.r = source
        self.max_statements = max_statements
        self.max_depth = max_depth
        self.lines: list[str] = []
        self.indent = 1
        self.scopes: list[list[_Var]] = [[]]
        self.arrays: list[tuple[str, str, int]] = []   # per-thread arrays (name, type, length)
        self.next_id = 0
        self.statements = 0
        self.slots_used = 0
        self.approx: list = []
        self.reserved: set[int] = set()    # slots whose value must not be overwritten
        self.loop_depth = 0
        self.for_vars: list[tuple[str, str]] = []     # enclosing `for` variables (name, type)

    # ------------------------------------------------------------------ choices
    def integer(self, lo, hi):
        return self.r.integer(lo, hi)

    def choice(self, seq):
        return seq[self.integer(0, len(seq) - 1)]

    def chance(self, percent: int) -> bool:
        return self.integer(0, 99) >= 100 - percent   # shrinks towards "no"

    def weighted(self, options):
        """options: [(value, weight)], simplest first."""
        total = sum(w for _, w in options)
        k = self.integer(0, total - 1)
        for value, w in options:
            if k < w:
                return value
            k -= w
        raise AssertionError

    # ------------------------------------------------------------------ program
    def program(self) -> Program:
        self.setup_features()
        self.block = self.choice([32, 64, 128])
        self.grid = self.integer(1, 3)
        self.length = self.block * self.grid
        n_types = self.integer(1, 4)
        self.types = sorted({self.choice(NUMERIC) for _ in range(n_types)} | {"u32"}, key=NUMERIC.index)
        self.emit(f"let gid = block_idx.x * {self.block} + thread_idx.x;")
        self.emit("let tid = thread_idx.x;")
        self.emit("let slot = gid * SLOTS;")
        for name in ("gid", "tid"):
            self.scopes[0].append(_Var(name, "u32", False))
        for t in self.types:
            self.let(t, f"in_{t}[gid]")
        budget = self.integer(3, self.max_statements)
        collective = budget // 3
        while self.statements < collective:
            self.top_level_collective()
        collective_end, collective_scope = len(self.lines), list(self.scopes[0])
        while self.statements < budget:
            self.statement(allow_return=True)
        # leave some results
        for v in [v for v in self.visible() if v.type in NUMERIC][-4:]:
            self.store(v.type, v.name)
        seed = self.integer(0, 2 ** 31 - 1)
        # a launch bound now and then (drawn last: the programs of earlier seeds keep their bodies):
        # ptxas then caps the registers, which moves spills and scheduling
        bound = self.integer(0, 3)
        bounds = f" min_blocks({4 * bound})" if bound else ""
        self.streamed = self.chance(30)      # the inputs' loads as inline PTX with cache qualifiers
        if self.chance(25):                  # a std/swizzle tile (drawn last too)
            read, last = self.drawn_last(collective_end, collective_scope, self.collective_swizzle)
            if read is not None:
                self.store(last.type, read)
        cluster = ""
        if self.grid == 2 and self.chance(30):      # blocks in a cluster of two (drawn last too)
            self.drawn_last(collective_end, collective_scope, self.collective_cluster)
            cluster = " cluster(2)"
        self.later_collectives(collective_end, collective_scope)
        cluster = self.latest_draws(collective_end, collective_scope, cluster)
        slots = max(self.slots_used, 1)
        body = "\n".join(self.lines).replace("SLOTS", str(slots))
        head = (f"kernel fuzz({', '.join(self.param_list())}, n: u32, s: i32) block({self.block}){cluster}{bounds} {{")
        helpers = "".join(h + "\n" for h in sorted(self.imports) + self.helpers)
        return Program(helpers + head + "\n" + body + "\n}\n", self.block, self.grid, slots, seed, self.approx,
                       [t for t in self.types], list(self.zeroed))

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def fresh(self, prefix="v") -> str:
        self.next_id += 1
        return f"{prefix}{self.next_id}"

    def visible(self) -> list[_Var]:
        return [v for scope in self.scopes for v in scope]

    def vars_of(self, t: str, mutable: bool = False) -> list[_Var]:
        return [v for v in self.visible() if v.type == t and (v.mutable or not mutable)]

    def let(self, t: str, text: str, mutable: bool = False) -> str:
        name = self.fresh()
        self.emit(f"{'var' if mutable else 'let'} {name}: {t} = {text};")
        self.scopes[-1].append(_Var(name, t, mutable))
        return name

    def block_of(self, fn) -> None:
        self.indent += 1
        self.scopes.append([])
        fn()
        self.scopes.pop()
        self.indent -= 1

    def store(self, t: str, text: str) -> int:
        free = [j for j in range(self.slots_used) if j not in self.reserved]
        j = self.choice(free) if free and self.chance(30) else self.new_slot()
        self.emit(f"out_{t}[slot + {j}] = {text};")
        return j

    def new_slot(self, reserve: bool = False) -> int:
        j = self.slots_used
        self.slots_used += 1
        if reserve:
            self.reserved.add(j)
        return j

    # ------------------------------------------------------------------ statements
    def top_level_collective(self) -> None:
        # (mma, ldmatrix and cp.async need sm_80+: programs are compiled for sm_90)
        kind = self.weighted([("plain", 3), ("shuffle", 3), ("vote", 2), ("shared", 2), ("atomic", 2),
                              ("cast_shared", 1), ("big_shared", 1), ("std_reduce", 1), ("mma", 1),
                              ("ldmatrix", 1), ("cp_async", 1), ("bulk", 1)])
        self.statements += 1
        if kind == "plain":
            self.statement(allow_return=False)
        elif kind in ("cast_shared", "big_shared", "std_reduce", "mma", "ldmatrix", "cp_async", "bulk"):
            getattr(self, f"collective_{kind}")()
        elif kind == "shuffle":
            t = self.choice(self.types)
            fn = self.choice(SHUFFLES)
            lane = self.expr("u32", 1) if fn == "shfl_idx" else str(self.integer(1, 31))
            if self.chance(30):         # a tuple: each element from the same lane
                u = self.choice(self.types)
                a, b = self.fresh(), self.fresh()
                self.emit(f"let ({a}, {b}) = {fn}(({self.expr(t, 2)}, {self.expr(u, 2)}), {lane});")
                self.scopes[-1] += [_Var(a, t, False), _Var(b, u, False)]
            else:
                self.let(t, f"{fn}({self.expr(t, 2)}, {lane})")
        elif kind == "vote":
            mode = self.choice(VOTES + ["elect_sync"])      # elect: the lowest active lane, defined
            args = "" if mode == "elect_sync" else self.expr("bool", 2)
            self.let("u32" if mode == "ballot" else "bool", f"{mode}({args})")
        elif kind == "shared":
            t = self.choice(self.types)
            name = self.fresh("sh")
            self.emit(f"shared {name}: [{t}; {self.block}];")
            self.emit(f"{name}[tid] = {self.expr(t, 2)};")
            self.emit("barrier();")
            self.let(t, f"{name}[({self.expr('u32', 2)}) % {self.block}]")
        else:
            t = self.choice(ATOMIC_TYPES)
            op = self.choice(ATOMIC_OPS)
            name = self.fresh("acc")
            size = self.choice([1, 2, 4])
            self.emit(f"shared {name}: [{t}; {size}];")
            self.emit(f"if tid < {size} {{ {name}[tid] = {self.literal(t)}; }}")
            self.emit("barrier();")
            self.emit(f"atomic_{op}({name}, ({self.expr('u32', 1)}) % {size}, {self.expr(t, 2)}{self.ordering()});")
            if self.chance(50) and t in self.types:   # a global atomic on this thread's own slot
                j = self.new_slot(reserve=True)
                self.emit(f"out_{t}[slot + {j}] = {self.literal(t)};")
                self.emit(f"atomic_{op}(out_{t}, slot + {j}, {self.expr(t, 2)}{self.ordering()});")
            if self.chance(25):
                self.emit(f"fence({self.choice(FENCE_ORDERS)}, {self.choice(FUZZ_SCOPES)});")
            self.emit("barrier();")
            self.let(t, f"{name}[({self.expr('u32', 1)}) % {size}]")

    def statement(self, allow_return: bool, depth: int = 0) -> None:
        self.statements += 1
        nested = depth < 3 and self.statements < self.max_statements
        options = [("let", 6), ("store", 4), ("assign", 4), ("var", 2)]
        if nested:
            options += [("if", 3), ("for", 2), ("while", 1)]
        options += [("array", 1), ("fast", 1), ("ptr_load", 1), ("ptr_store", 1), ("cast_local", 1),
                    ("fanout", 1), ("big_array", 1), ("generic", 1), ("generic_load", 1),
                    ("generic_combine", 1), ("type_constant", 1), ("array_2d", 1), ("unrolled_fill", 1)]
        if depth == 0:
            options += [("long", 1), ("deep", 1)]
        if self.loop_depth:
            options += [("break", 1), ("continue", 1)]
        if allow_return:
            options += [("return", 1)]
        kind = self.weighted(options)
        getattr(self, f"stmt_{kind}")(allow_return, depth)

    def body(self, allow_return, depth) -> None:
        def run():
            for _ in range(self.integer(1, 3)):
                if self.statements >= self.max_statements + 8:
                    break
                self.statement(allow_return, depth + 1)
        self.block_of(run)

    def stmt_let(self, allow_return, depth):
        t = self.choice(self.types + ["bool"])
        self.let(t, self.expr(t, self.max_depth))

    def stmt_var(self, allow_return, depth):
        t = self.choice(self.types)
        self.let(t, self.expr(t, 2), mutable=True)

    def stmt_store(self, allow_return, depth):
        t = self.choice(self.types)
        self.store(t, self.expr(t, self.max_depth))

    def stmt_assign(self, allow_return, depth):
        targets = [v for v in self.visible() if v.mutable]
        if not targets:
            return self.stmt_var(allow_return, depth)
        v = self.choice(targets)
        ops = COMPOUND_FLOAT if v.type in FLOATS else COMPOUND_INT
        op = self.choice([""] + ops)
        self.emit(f"{v.name} {op}= {self.expr(v.type, 2)};")

    def stmt_if(self, allow_return, depth):
        self.emit(f"if {self.expr('bool', 2)} {{")
        self.body(allow_return, depth)
        if self.chance(50):
            self.emit("} else {")
            self.body(allow_return, depth)
        self.emit("}")

    def stmt_for(self, allow_return, depth):
        t = self.choice(["u32", "i32"])
        i = self.fresh("k")
        outer = [name for name, vt in self.for_vars if vt == t]
        if outer and self.chance(50):
            # bounds from an enclosing loop's variable: constants only in the copies of an
            # unrolled outer loop (unroll must fold them and unroll these copies too)
            o = self.choice(outer)
            bounds = f"{o}..{o} + {self.integer(0, 3)}{t}"
        else:
            lo = self.integer(-3, 3) if t == "i32" else self.integer(0, 3)
            hi = f"({self.expr(t, 1)}) % {self.integer(1, 6)}" if self.chance(50) else str(self.integer(0, 6))
            step = self.choice([1, 1, 2, 3])
            bounds = f"{lo}{t}..{hi}" + (f" step {step}" if step != 1 else "")
        head = "unroll for" if self.chance(30) else "for"
        self.for_vars.append((i, t))
        self.loop(f"{head} {i} in {bounds}", [_Var(i, t, False)], None, allow_return, depth)
        self.for_vars.pop()

    def stmt_while(self, allow_return, depth):
        # the counter bounds the loop; it counts first, so `continue` cannot skip it
        w = self.fresh("w")
        self.emit(f"var {w}: u32 = 0;")
        self.loop(f"while {w} < {self.integer(1, 5)} && {self.expr('bool', 1)}", [], f"{w} += 1;",
                  allow_return, depth)

    def loop(self, head: str, variables: list, first: str | None, allow_return, depth) -> None:
        self.emit(head + " {")
        self.loop_depth += 1
        self.indent += 1
        if first:
            self.emit(first)
        self.scopes.append(variables)
        for _ in range(self.integer(1, 3)):
            self.statement(allow_return, depth + 1)
        self.scopes.pop()
        self.indent -= 1
        self.loop_depth -= 1
        self.emit("}")

    def stmt_break(self, allow_return, depth):
        self.emit(f"if {self.expr('bool', 1)} {{ break; }}")

    def stmt_continue(self, allow_return, depth):
        self.emit(f"if {self.expr('bool', 1)} {{ continue; }}")

    def stmt_return(self, allow_return, depth):
        t = self.choice(self.types)
        self.emit(f"if {self.expr('bool', 1)} {{")
        self.indent += 1
        self.store(t, self.expr(t, 1))
        self.emit("return;")
        self.indent -= 1
        self.emit("}")

    def stmt_array(self, allow_return, depth):
        t = self.choice(self.types)
        if depth == 0 or not self.arrays:
            name, size = self.fresh("a"), self.choice([2, 4, 8])
            self.emit(f"var {name}: [{t}; {size}];")
            self.arrays.append((name, t, size))
            self.scopes[-1].append(_Var(name, "array", False))
            arr = (name, t, size)
        else:
            arr = self.choice(self.arrays)
        name, t, size = arr
        if not any(v.name == name for v in self.visible()):
            return
        self.emit(f"{name}[({self.expr('u32', 1)}) % {size}] = {self.expr(t, 2)};")

    def stmt_fast(self, allow_return, depth):
        if "f32" not in self.types:
            return self.stmt_let(allow_return, depth)
        fn = self.choice(FAST)
        arg = self.let("f32", self.expr("f32", 2))
        a, j = self.new_slot(reserve=True), self.new_slot(reserve=True)
        self.emit(f"out_f32[slot + {a}] = {arg};")
        self.emit(f"out_f32[slot + {j}] = {fn}({arg});")
        self.approx.append((fn, a, j))

    # ------------------------------------------------------------------ expressions
    def literal(self, t: str) -> str:
        if t == "bool":
            return self.choice(["false", "true"])
        if self.chance(8):
            return self.extreme_literal(t)
        if t in FLOATS:
            v = self.choice(FLOAT_LITERALS[t])
            text = repr(float(v))
            return f"{'-' if self.chance(30) else ''}{text}{t}"
        bits = BITS[t]
        signed = t.startswith("i")
        hi = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
        v = self.weighted([(self.integer(0, 8), 6), (self.integer(0, hi), 2), (hi, 1)])
        if signed and self.chance(30) and v > 0:
            return f"(-{v}{t})"
        return f"{v}{t}"

    def leaf(self, t: str) -> str:
        vs = self.vars_of(t)
        extra = []
        if t == "u32":
            extra = ["lane_id", "warp_id", "n", "block_idx.x"]
        elif t == "i32":
            extra = ["s"]
        arrays = [a for a in self.arrays if a[1] == t and any(v.name == a[0] for v in self.visible())]
        options = [("var", 6 if vs else 0), ("literal", 3), ("extra", 1 if extra else 0),
                   ("array", 1 if arrays else 0), ("load", 1 if t in self.types else 0)]
        kind = self.weighted([o for o in options if o[1]])
        if kind == "var":
            return self.choice(vs).name
        if kind == "extra":
            return self.choice(extra)
        if kind == "array":
            name, _, size = self.choice(arrays)
            return f"{name}[({self.leaf('u32')}) % {size}]"
        if kind == "load":
            return f"in_{t}[({self.leaf('u32')}) % {self.length}]"
        return self.literal(t)

    def expr(self, t: str, depth: int) -> str:
        if t == "bool":
            return self.bool_expr(depth)
        if depth <= 0:
            return self.leaf(t)
        calls = builtin_calls(t) if t in INTS else []
        kind = self.weighted([("leaf", 4), ("binary", 6), ("unary", 2), ("cast", 3), ("select", 1),
                              ("bitcast", 1), ("math", 2 if t in FLOATS else 0), ("load", 1),
                              ("builtin", 1 if calls else 0)])
        if kind == "leaf":
            return self.leaf(t)
        if kind == "builtin":
            b, types = self.choice(calls)
            return f"{b.name}({', '.join(self.expr(u, depth - 1) for u in types)})"
        if kind == "binary":
            op = self.choice(FLOAT_BINOPS if t in FLOATS else INT_BINOPS)
            a, b = self.expr(t, depth - 1), self.expr(t, depth - 1)
            if op == "copysign":
                return f"copysign({a}, {self.not_nan(t, b)})"
            if op in ("min", "max"):
                return f"{op}({a}, {b})"
            if op in ("<<", ">>") and self.chance(50):
                b = self.expr(self.choice(["u32", "u8", "i64"]), depth - 1)   # any integer type
            return f"({a} {op} {b})"
        if kind == "unary":
            a = self.expr(t, depth - 1)
            if t in FLOATS:
                return self.choice([f"(-{a})", f"abs({a})"])
            ops = [f"(~{a})", f"abs({a})"] + ([f"(-{a})"] if t.startswith("i") else [])
            return self.choice(ops)
        if kind == "cast":
            src = self.choice(self.types + ["bool"] if t in INTS else self.types)
            if src == t:
                src = "bool" if t in INTS else self.choice(NUMERIC)
            return f"{t}({self.expr(src, depth - 1)})"
        if kind == "bitcast":
            same = [u for u in NUMERIC if BITS[u] == BITS[t] and u != t]
            src = self.choice(same)
            return f"bitcast<{t}>({self.not_nan(src, self.expr(src, depth - 1))})"
        if kind == "select":
            return f"select({self.bool_expr(depth - 1)}, {self.expr(t, depth - 1)}, {self.expr(t, depth - 1)})"
        if kind == "load":
            return f"in_{t}[({self.expr('u32', depth - 1)}) % {self.length}]" if t in self.types else self.leaf(t)
        # math builtins on floats
        which = self.weighted([("rounding", 4), ("fma", 2), ("accurate", 1)])
        a = self.expr(t, depth - 1)
        if which == "rounding":
            return f"{self.choice(ROUNDING)}({a})"
        if which == "fma":
            return f"fma({a}, {self.expr(t, depth - 1)}, {self.expr(t, depth - 1)})"
        return f"{self.choice(ACCURATE)}({a})"

    def not_nan(self, t: str, text: str) -> str:
        """`text`, or 1 where it is a NaN: a NaN's bits (its sign too) are unspecified, so
        they must not reach a bitcast or copysign's sign (the GPU's NaNs differ from the
        simulator's: neg.f32 of a NaN gives 0x7FFFFFFF there)."""
        if t not in FLOATS:
            return text
        return f"select(isnan({text}), 1.0{t}, {text})"

    def bool_expr(self, depth: int) -> str:
        kind = self.weighted([("leaf", 3), ("cmp", 6), ("logic", 2 if depth > 0 else 0), ("not", 1),
                              ("class", 1)])
        if kind == "leaf":
            vs = self.vars_of("bool")
            return self.choice(vs).name if vs and self.chance(70) else self.literal("bool")
        if kind == "cmp":
            t = self.choice(self.types)
            op = self.choice(["<", "<=", ">", ">=", "==", "!="])
            return f"({self.expr(t, max(depth - 1, 0))} {op} {self.expr(t, max(depth - 1, 0))})"
        if kind == "logic":
            op = self.choice(["&&", "||"])
            return f"({self.bool_expr(depth - 1)} {op} {self.bool_expr(depth - 1)})"
        if kind == "not":
            return f"(!{self.bool_expr(max(depth - 1, 0))})"
        floats = [t for t in self.types if t in FLOATS]
        if not floats:
            return self.literal("bool")
        return f"{self.choice(['isnan', 'isinf', 'isfinite'])}({self.expr(self.choice(floats), max(depth - 1, 0))})"


def generate(source, **options) -> Program:
    """A random program from `source` (RandomSource(seed) or DrawSource(draw))."""
    return Generator(source, **options).program()


def from_seed(seed: int, **options) -> Program:
    return generate(RandomSource(seed), **options)
