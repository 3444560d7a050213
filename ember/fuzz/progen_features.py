"""Program features aimed at the defects a hostile tester found, so the generator makes
programs of their kind (ember.fuzz.progen mixes these into its Generator):

- pointer arithmetic that breaks a declared alignment (`in_T` declared `align(16)`, then
  `in_T + k`) followed by adjacent accesses the vectorizer may merge, loads and stores;
- read-only parameters declared `stream`, whose loads (scalar of every width, and the
  vectors the vectorizer merges) are inline PTX with cache qualifiers;
- device functions that store and load through bit-cast per-thread and shared pointers;
- calls that fan out (each function calls the next twice);
- long expressions and deep statement nests;
- extreme literals (the limits of each type, negative minimums written with a suffix);
- large per-thread and shared arrays, and arrays of two and three dimensions;
- per-thread arrays filled through a device function's pointer in a loop its constant
  arguments unroll (indices constant only after inlining: E0409 must not fire in bounds);
- atomics with an order and a scope (on a block's own shared array or a thread's own
  slot, where every scope is correct);
- blocks in clusters of two: relaxed atomics of both blocks on one counter at `cluster`
  scope (the simulator once held that scope to one block) and distributed shared memory
  read across cluster barriers;
- two such clusters, the last to finish merging what both wrote: a block that learns of
  the other cluster's writes only through its cluster barrier (the simulator once passed
  on there only its cluster's own writes, and reported a race that was none).

Every program stays valid with one defined result (in bounds, race free, no NaN bits
deciding a result), so any difference between two runs is a bug.
"""

from __future__ import annotations

import math

from .vocab import BITS, FLOATS, FUZZ_SCOPES, INTS, NUMERIC, ORDERS

# Extreme literals of each type: its largest and smallest magnitudes (the minimum of a
# signed integer is written with its suffix, `-128i8`).
EXTREME_FLOATS = {"f16": [65504.0, 5.960464477539063e-08, 6.103515625e-05],
                  "bf16": [3.3895313892515355e+38, 9.183549615799121e-41, 1.1754943508222875e-38],
                  "f32": [3.4028234663852886e+38, 1.401298464324817e-45, 1.1754943508222875e-38],
                  "f64": [1.7976931348623157e+308, 5e-324, 2.2250738585072014e-308]}
SHARED_LIMIT = 40 * 1024


class Features:
    """Mixed into ember.fuzz.progen.Generator (it supplies emit, let, expr, ...)."""

    def setup_features(self) -> None:
        self.aligned = self.chance(40)      # in_T/out_T declared align(16)
        self.zeroed: list[int] = []         # out_u32 elements that start at 0 (Program.zeroed)
        self.helpers: list[str] = []        # device functions, emitted before the kernel
        self.imports: set[str] = set()      # import lines, emitted first
        self.shared_bytes = 0
        self.streamed = False               # in_T declared `stream` (drawn last: Generator.program)

    def param_list(self) -> list[str]:
        align = " align(16)" if self.aligned else ""
        stream = " stream" if self.streamed else ""
        return ([f"in_{t}: *global {t}{align}{stream}" for t in NUMERIC]
                + [f"out_{t}: *mut global {t}{align}" for t in NUMERIC])

    def extreme_literal(self, t: str) -> str:
        if t in FLOATS:
            v = self.choice(EXTREME_FLOATS[t])
            return f"{'-' if self.chance(30) else ''}{v!r}{t}"
        bits = BITS[t]
        if t.startswith("i") and self.chance(50):
            return f"(-{1 << (bits - 1)}{t})"
        return f"{(1 << (bits - 1 if t.startswith('i') else bits)) - 1}{t}"

    # ------------------------------------------------------------------ pointers
    def run_length(self, t: str) -> int:
        """Adjacent accesses in a run: 4, or a whole 16 bytes of a narrow type (8 of a
        16-bit type, 16 of an 8-bit one) that the vectorizer may make one 128-bit access."""
        whole = 128 // BITS[t]
        return whole if whole > 4 and self.chance(50) else 4

    def stmt_ptr_load(self, allow_return, depth):
        """Adjacent loads through `in_T + k`: aligned to 16 bytes only when k is."""
        t = self.choice(self.types)
        k = self.integer(0, 5)
        count = self.run_length(t)
        span = max((self.length - 2 * count) // count, 1)
        p, b = self.fresh("p"), self.fresh("b")
        self.emit(f"let {p} = in_{t} + {k}u64;")
        if self.chance(30):     # clamped: min/select of two multiples of the run (still in bounds)
            self.emit(f"let {b} = u64(min({count}u32 * (gid % {span}u32), select(n > 5u32, {count}u32 * n, {count}u32)));")
        else:
            self.emit(f"let {b} = {count}u64 * (u64(gid) % {span}u64);")
        terms = [f"{p}[{b}]"] + [f"{p}[{b} + {c}u64]" for c in range(1, count)]
        op = self.choice(["+", "-"] if t in FLOATS else ["+", "^", "-"])
        self.let(t, f" {op} ".join(terms))

    def stmt_ptr_store(self, allow_return, depth):
        """Adjacent stores through `out_T + (slot + j)`: this thread's own slots."""
        t = self.choice(self.types)
        count = self.run_length(t)
        first = self.new_slot(reserve=True)
        for _ in range(count - 1):
            self.new_slot(reserve=True)
        q = self.fresh("q")
        self.emit(f"let {q} = out_{t} + u64(slot + {first});")
        for c in range(count):
            self.emit(f"{q}[{c}u64] = {self.expr(t, 1)};")

    # ------------------------------------------------------------------ bit-cast pointers in functions
    def _same_size(self, t: str) -> str:
        return self.choice([u for u in NUMERIC if BITS[u] == BITS[t] and u != t])

    def cast_helpers(self, space: str, t: str, u: str) -> tuple[str, str]:
        """A function storing a `u` through `*mut SPACE t` bit-cast to `u`, and one
        loading it back (their names)."""
        w, r = self.fresh("store_cast"), self.fresh("load_cast")
        self.helpers.append(f"fn {w}(p: *mut {space} {t}, i: u32, v: {u}) {{\n"
                            f"    let q = bitcast<*mut {space} {u}>(p);\n    q[i] = v;\n}}")
        self.helpers.append(f"fn {r}(p: *mut {space} {t}, i: u32) -> {u} {{\n"
                            f"    let q = bitcast<*mut {space} {u}>(p);\n    return q[i];\n}}")
        return w, r

    def stmt_cast_local(self, allow_return, depth):
        t = self.choice(self.types)
        u = self._same_size(t)
        size = self.choice([2, 4, 8])
        a = self.fresh("a")
        self.emit(f"var {a}: [{t}; {size}];")
        w, r = self.cast_helpers("local", t, u)
        self.emit(f"{w}({a}, ({self.expr('u32', 1)}) % {size}u32, {self.not_nan(u, self.expr(u, 1))});")
        self.let(u, f"{r}({a}, ({self.expr('u32', 1)}) % {size}u32)")
        self.let(t, f"{a}[({self.expr('u32', 1)}) % {size}u32]")

    def collective_cast_shared(self) -> None:
        """Each thread stores its own element of a shared array through a bit-cast pointer
        in a function, then reads a neighbour's after a barrier."""
        t = self.choice(self.types)
        u = self._same_size(t)
        sh = self.fresh("sh")
        if not self.take_shared(self.block * BITS[t] // 8):
            return
        self.emit(f"shared {sh}: [{t}; {self.block}];")
        w, r = self.cast_helpers("shared", t, u)
        self.emit(f"{w}({sh}, tid, {self.not_nan(u, self.expr(u, 1))});")
        self.emit("barrier();")
        self.let(u, f"{r}({sh}, ({self.expr('u32', 1)}) % {self.block}u32)")

    def take_shared(self, nbytes: int) -> bool:
        if self.shared_bytes + nbytes > SHARED_LIMIT:
            return False
        self.shared_bytes += (nbytes + 15) // 16 * 16
        return True

    def collective_big_shared(self) -> None:
        """A large shared array, each thread filling a strided share of it."""
        t = self.choice(self.types)
        size = self.choice([1024, 2048, 4096])
        if not self.take_shared(size * BITS[t] // 8):
            return
        sh, i = self.fresh("big"), self.fresh("k")
        self.emit(f"shared {sh}: [{t}; {size}];")
        self.emit(f"for {i} in tid..{size}u32 step {self.block}u32 {{ {sh}[{i}] = {t}({i} % 97u32); }}")
        self.emit("barrier();")
        self.let(t, f"{sh}[({self.expr('u32', 1)}) % {size}u32]")

    # ------------------------------------------------------------------ size
    def stmt_fanout(self, allow_return, depth):
        """f_d(x) = f_{d-1}(x) op f_{d-1}(x op c): 2^d inlined copies of f_0."""
        t = self.choice([x for x in self.types if x in INTS or x in FLOATS])
        levels = self.integer(1, 3)
        names = [self.fresh("fan") for _ in range(levels + 1)]
        op = "+" if t in FLOATS else self.choice(["+", "^", "*"])
        self.helpers.append(f"fn {names[0]}(x: {t}) -> {t} {{\n    return x {op} {self.literal(t)};\n}}")
        for lower, upper in zip(names, names[1:]):
            self.helpers.append(f"fn {upper}(x: {t}) -> {t} {{\n"
                                f"    return {lower}(x) {op} {lower}(x {op} {self.literal(t)});\n}}")
        self.let(t, f"{names[-1]}({self.expr(t, 1)})")

    def stmt_long(self, allow_return, depth):
        """A long expression (a left-deep tree of up to a few hundred terms)."""
        t = self.choice(self.types)
        ops = ["+", "-"] if t in FLOATS else ["+", "-", "^", "|"]
        terms = [self.leaf(t) for _ in range(self.integer(8, 300))]
        text = terms[0]
        for x in terms[1:]:
            text += f" {self.choice(ops)} {x}"
        self.let(t, text)

    def stmt_deep(self, allow_return, depth):
        """Ifs nested tens of levels deep around one store."""
        levels = self.integer(4, 48)
        for k in range(levels):
            self.emit("    " * k + f"if (gid + {k}u32) % {self.integer(2, 9)}u32 != 0u32 {{")
        t = self.choice(self.types)
        j = self.new_slot()
        self.emit("    " * levels + f"out_{t}[slot + {j}] = {self.expr(t, 1)};")
        for k in range(levels - 1, -1, -1):
            self.emit("    " * k + "}")

    def stmt_big_array(self, allow_return, depth):
        t = self.choice(self.types)
        size = self.choice([64, 256])
        a, i = self.fresh("big"), self.fresh("k")
        self.emit(f"var {a}: [{t}; {size}];")
        self.emit(f"for {i} in 0u32..{size}u32 {{ {a}[{i}] = {t}({i} % 7u32); }}")
        self.emit(f"{a}[({self.expr('u32', 1)}) % {size}u32] = {self.expr(t, 1)};")
        self.let(t, f"{a}[({self.expr('u32', 1)}) % {size}u32]")

    def stmt_unrolled_fill(self, allow_return, depth):
        """A per-thread array filled by a device function through a pointer, in an `unroll
        for` whose start and count are the call's constants: indices that become constants
        only once the call is inlined and the loop unrolled (E0409 judges them: in bounds
        here, so it must stay silent)."""
        t = self.choice(self.types)
        size = self.choice([2, 4, 8])
        count = self.integer(1, size)
        at = self.integer(0, size - count)
        a, fill = self.fresh("a"), self.fresh("fill")
        self.helpers.append(f"fn {fill}(p: *mut local {t}, at: u32, n: u32, v: {t}) {{\n"
                            f"    unroll for i in 0..n {{\n        p[at + i] = v + {t}(i);\n    }}\n}}")
        self.emit(f"var {a}: [{t}; {size}];")
        self.emit(f"{fill}({a}, {at}u32, {count}u32, {self.not_nan(t, self.expr(t, 1))});")
        self.let(t, f"{a}[({self.expr('u32', 1)}) % {size}u32]")

    def stmt_array_2d(self, allow_return, depth):
        """A per-thread array of two or three dimensions, filled, updated and read at
        in-bounds indices of each dimension (rows by mem.row: the simulator checks each)."""
        t = self.choice(self.types)
        dims = [self.choice([1, 2, 3, 5]) for _ in range(self.choice([2, 3]))]
        a = self.fresh("grid")
        ty = t
        for n in reversed(dims):
            ty = f"[{ty}; {n}]"
        self.emit(f"var {a}: {ty};")
        idx = [self.fresh("d") for _ in dims]
        for k, (i, n) in enumerate(zip(idx, dims)):
            self.emit("    " * k + f"for {i} in 0u32..{n}u32 {{")
        flat = " + ".join(f"{i} * {math.prod(dims[k + 1:])}u32" for k, i in enumerate(idx))
        self.emit("    " * len(dims) + f"{a}{''.join(f'[{i}]' for i in idx)} = {t}(({flat}) % 11u32);")
        for k in range(len(dims) - 1, -1, -1):
            self.emit("    " * k + "}")
        self.emit(f"{a}{self.indices(dims)} = {self.expr(t, 1)};")
        self.let(t, f"{a}{self.indices(dims)}")

    def indices(self, dims: list) -> str:
        return "".join(f"[({self.expr('u32', 1)}) % {n}u32]" for n in dims)

    def later_collectives(self, at: int, scope: list) -> None:
        """The collective statements added to the generator after its first programs, each
        drawn after the rest of the program (`drawn_last`), in the order they were added."""
        for percent, fn in ((20, self.collective_warp_exchange),      # a warp's exchange through shared memory
                            (15, self.collective_mma_i8),             # an int8 mma
                            (15, self.collective_cp_async_ring),      # a cp.async ring that is refilled
                            (10, self.collective_grid_dependency)):   # programmatic launch's ops
            if self.chance(percent):
                self.drawn_last(at, scope, fn)

    def latest_draws(self, at: int, scope: list, cluster: str) -> str:
        """What the generator draws after everything else, in the order it was added (so the
        programs of earlier seeds keep their bodies); the kernel's cluster words after it."""
        if self.chance(10):     # the wait before anything touches memory: a programmatic kernel
            self.lines.insert(3, "    griddep_wait();")
            at += 1
        if self.chance(10):     # a prefetch into L2 first, before any wait: no access
            self.lines.insert(3, f"    prefetch_l2(in_u32, u64((gid * {self.integer(1, 97)}u32) % {self.length}u32));")
            at += 1
        if not cluster and self.grid == 2 and self.chance(20):     # two clusters, the last merging
            self.grid = 4
            self.drawn_last(at, scope, self.collective_last_cluster)
            cluster = " cluster(2)"
        if self.chance(10):     # an mma whose fragments start at any element of their arrays
            self.drawn_last(at, scope, self.collective_mma_any_offset)
        return cluster

    def collective_grid_dependency(self) -> None:
        """griddep_wait() or griddep_launch_dependents(): no-ops for a kernel launched alone,
        which must still compile, validate and stop no pass."""
        self.emit(self.choice(["griddep_wait();", "griddep_launch_dependents();"]))

    def drawn_last(self, at: int, scope: list, fn) -> tuple:
        """(fn's result, the last variable it declared): fn, a collective statement drawn
        after the rest of the program (so that the programs of earlier seeds keep their
        bodies), emitted at line `at` - among the collective statements, before any thread
        can have returned - with the variables of `scope` (those declared by then)."""
        later, kept = self.lines[at:], self.scopes[0]
        del self.lines[at:]
        self.scopes[0] = list(scope)
        result = fn()
        last = self.scopes[0][-1] if self.scopes[0] else None
        self.lines += later
        self.scopes[0] = kept
        return result, last

    def collective_cluster(self) -> None:
        """In a cluster of two blocks (the kernel gets `cluster(2)`, the grid is 2): every
        thread adds to a counter of the cluster (a reserved slot of its first thread) with a
        relaxed atomic at cluster scope, writes its block's shared array, and after a cluster
        barrier reads the other block's through distributed shared memory; a second cluster
        barrier, before any thread can return, keeps both blocks until those reads are done.
        The counter is read after it. Half the time thread 0 of each block also arrives on the
        other block's mbarrier (initialized before the first cluster barrier), and every thread
        waits for its own barrier's first phase at cluster scope: a pass that drops or moves the
        arrival, or moves the wait, shows as a deadlock (S0011) or a read of the other block's
        array before it is ordered (S0004)."""
        sh, j = self.fresh("peer"), self.new_slot(reserve=True)
        at = f"(block_idx.x / 2u32) * {2 * self.block}u32 * SLOTS + {j}u32"   # the cluster's first thread's
        bar = self.fresh("bar") if self.chance(50) else None
        self.emit(f"shared {sh}: [u32; {self.block}];")
        if bar:
            self.emit(f"shared {bar}: [u64; 1];")
            self.emit(f"if tid == 0u32 {{ mbarrier_init({bar}, 0, 1u32); }}")
        self.emit(f"atomic_add(out_u32, {at}, ({self.expr('u32', 1)}) & 255u32, relaxed, cluster);")
        self.emit(f"{sh}[tid] = {self.expr('u32', 1)};")
        self.emit("cluster_barrier();")
        if bar:
            self.emit(f"if tid == 0u32 {{ mbarrier_arrive_cluster({bar}, 0, cluster_rank ^ 1u32); }}")
            self.emit(f"while !mbarrier_try_wait({bar}, 0, 0u32, cluster) {{}}")
        self.let("u32", f"dsmem_load({sh}, (tid + {self.integer(0, self.block - 1)}u32) % {self.block}u32, "
                        f"cluster_rank ^ 1u32)")
        self.emit("cluster_barrier();")
        self.store("u32", self.scopes[-1][-1].name)
        self.store("u32", f"out_u32[{at}]")

    def collective_last_cluster(self) -> None:
        """Two clusters of two blocks (the kernel gets `cluster(2)`, the grid is 4), the last
        to finish merging, as decode_attention_mma.ember's cluster_settle does: every thread
        writes a partial to a slot of its own; after a cluster barrier rank 0's thread 0
        releases its cluster's partials with a ticket of a counter (thread 0's slot, 0 at the
        start) and tells both blocks through distributed shared memory whether it took the
        last; after a second cluster barrier rank 1's threads of the last cluster - which
        learn of the other cluster's writes only through that barrier - sum every block's
        partials of their column into block 0's slots."""
        flag, t, mine, total, b = (self.fresh(p) for p in ("last", "ticket", "mine", "sum", "b"))
        part, result, counter = (self.new_slot(reserve=True) for _ in range(3))
        self.zeroed.append(counter)                              # thread 0's slot: element `counter`
        self.emit(f"shared {flag}: [u32; 1];")
        self.emit(f"out_u32[slot + {part}u32] = {self.expr('u32', 1)};")
        self.emit("cluster_barrier();")
        self.emit("if cluster_rank == 0u32 && tid == 0u32 {")
        self.indent += 1
        self.emit("fence(acq_rel, gpu);")
        self.emit(f"let {t} = atomic_add(out_u32, {counter}u32, 1u32);")
        self.emit(f"let {mine} = select({t} == grid_dim.x / 2u32 - 1u32, 1u32, 0u32);")
        self.emit("fence(acq_rel, gpu);")
        self.emit(f"dsmem_store({flag}, 0u32, 0u32, {mine});")
        self.emit(f"dsmem_store({flag}, 0u32, 1u32, {mine});")
        self.indent -= 1
        self.emit("}")
        self.emit("cluster_barrier();")
        self.emit(f"if {flag}[0] == 1u32 && cluster_rank == 1u32 {{")
        self.indent += 1
        self.emit(f"var {total} = 0u32;")
        self.emit(f"for {b} in 0u32..grid_dim.x {{")
        self.emit(f"    {total} += out_u32[({b} * {self.block}u32 + tid) * SLOTS + {part}u32];")
        self.emit("}")
        self.emit(f"out_u32[tid * SLOTS + {result}u32] = {total};")
        self.indent -= 1
        self.emit("}")

    def collective_warp_exchange(self) -> None:
        """Values exchanged within each warp through shared memory, ordered by warp_barrier()
        alone while the block's other warps run on: each lane writes its element, reads a
        warp-mate's after a warp barrier, and - after a second one, so that every read is done -
        writes and reads again. Both values are stored."""
        t = self.choice(self.types)
        sh = self.fresh("wx")
        base = "(tid / 32u32) * 32u32"
        self.emit(f"shared {sh}: [{t}; {self.block}];")
        for _ in range(2):
            self.emit(f"{sh}[tid] = {self.expr(t, 2)};")
            self.emit("warp_barrier();")
            self.let(t, f"{sh}[{base} + (({self.expr('u32', 1)}) % 32u32)]")
            self.store(t, self.scopes[-1][-1].name)
            self.emit("warp_barrier();")

    def ordering(self) -> str:
        """An atomic's optional order and scope words (docs/memory_model.md): a block's
        own shared array or a thread's own slot, so any scope is correct (no cluster:
        the programs also compile for sm_80)."""
        if not self.chance(40):
            return ""
        words = f", {self.choice(ORDERS)}"
        return words + (f", {self.choice(FUZZ_SCOPES)}" if self.chance(60) else "")
