"""Program features for the warp-wide tensor-core and async-copy ops (sm_80+), mixed into
ember.fuzz.progen.Generator as top-level collective statements (every lane of every warp
runs them, outside branches):

- `mma_m16n8k32` and `mma_m16n8k16_i8` on 8-bit integers (words of four, signed or unsigned) with i32
  accumulators (drawn last: the programs of earlier seeds keep their bodies);
- `mma_m16n8k16` on f16 or bf16 fragments filled from the program's values, with f32
  accumulators, one or two pieces per array at constant or computed offsets;
- `ldmatrix_x1/x2/x4` (and `_trans`) of 16-bit rows each thread wrote to shared memory,
  each lane pointing at a row chosen by an expression;
- `cp_async_4/8/16` (and `_16_cg`) from the inputs into shared memory, in one to three
  commit groups, some copies reading fewer bytes than they move (the rest zeros), read
  back only after a `cp_async_wait` that covers them (and a barrier for other threads'
  copies);
- a ring of two or three stages that the copies refill in a loop, as a pipelined kernel's
  (drawn last): each stage refilled only after the barrier that ends every thread's reads
  of it - the ordering the simulator once failed to check (a refill racing with another
  thread's earlier read), so that a pass moving a copy or a barrier across the other
  shows up as a race in its output.

The values mma multiplies and accumulates are small integers (|a|, |b| <= 8, |c| <= 1000),
so every product and every sum is exact in f32 whatever order the hardware adds in: the
result is bit for bit the simulator's, and the GPU corpus compares it like any other.
"""

from __future__ import annotations

from .vocab import BITS, NUMERIC

HALVES = ["f16", "bf16", "i16", "u16"]       # the 16-bit types ldmatrix moves
COPY_SIZES = {"cp_async_4": 4, "cp_async_8": 8, "cp_async_16": 16, "cp_async_16_cg": 16}


class TensorCoreFeatures:
    """Mixed into ember.fuzz.progen.Generator (it supplies emit, let, expr, store, ...)."""

    def small_value(self, t: str, spread: int, salt: str) -> str:
        """An integer in [-spread, spread] computed from the program's values, as a `t`."""
        return f"{t}(i32(({self.expr('u32', 1)} + {salt}) % {2 * spread + 1}u32) - {spread}i32)"

    def fill(self, array: str, t: str, count: int, spread: int) -> None:
        """array[0..count] = small values, in an unrolled or a plain loop."""
        e = self.fresh("e")
        head = "unroll for" if self.chance(60) else "for"
        self.emit(f"{head} {e} in 0u32..{count}u32 {{")
        self.indent += 1
        self.emit(f"{array}[{e}] = {self.small_value(t, spread, f'{e} * {self.integer(1, 97)}u32')};")
        self.indent -= 1
        self.emit("}")

    def collective_mma(self) -> None:
        t = self.choice(["bf16", "f16"])
        pieces = self.choice([1, 2])                    # fragments per array
        a, b, acc = self.fresh("fa"), self.fresh("fb"), self.fresh("acc")
        self.emit(f"var {a}: [{t}; {8 * pieces}];")
        self.emit(f"var {b}: [{t}; {4 * pieces}];")
        self.emit(f"var {acc}: [f32; {4 * pieces}];")
        self.fill(a, t, 8 * pieces, 8)
        self.fill(b, t, 4 * pieces, 8)
        self.fill(acc, "f32", 4 * pieces, 1000)
        for _ in range(self.integer(1, 3)):
            p, q, r = (self.integer(0, pieces - 1) for _ in range(3))
            if self.chance(25):    # an offset no pass can fold: n < 24 at every launch, so n / 32 is 0
                self.emit(f"mma_m16n8k16({acc}, {4 * p}u32 + n / 32u32 * 4u32, {a}, {8 * q}u32, {b}, {4 * r}u32);")
            else:
                self.emit(f"mma_m16n8k16({acc}, {4 * p}u32, {a}, {8 * q}u32, {b}, {4 * r}u32);")
        for i in sorted({self.integer(0, 4 * pieces - 1) for _ in range(self.integer(1, 4))}):
            self.store("f32", f"{acc}[{i}]")
        if "f32" in self.types and self.chance(50):
            self.let("f32", f"{acc}[{self.integer(0, 4 * pieces - 1)}]")

    def collective_mma_i8(self) -> None:
        """mma_m16n8k32 or mma_m16n8k16_i8 on words of four 8-bit values made from the
        program's values (u32 words unsigned, i32 words signed, A and B each either), with i32
        accumulators; the sums stored as u32 bits."""
        ta, tb = self.choice(["u32", "i32"]), self.choice(["u32", "i32"])
        pieces = self.choice([1, 2])                    # fragments per array
        a, b, acc = self.fresh("ia"), self.fresh("ib"), self.fresh("iacc")
        self.emit(f"var {a}: [{ta}; {4 * pieces}];")
        self.emit(f"var {b}: [{tb}; {2 * pieces}];")
        self.emit(f"var {acc}: [i32; {4 * pieces}];")
        for array, t, count in ((a, ta, 4 * pieces), (b, tb, 2 * pieces)):
            e = self.fresh("e")
            self.emit(f"for {e} in 0u32..{count}u32 {{")
            word = f"({self.expr('u32', 1)}) * {2 * self.integer(1, 2 ** 30) + 1}u32 + {e} * {self.integer(1, 97)}u32"
            self.emit(f"    {array}[{e}] = {word if t == 'u32' else f'bitcast<i32>({word})'};")
            self.emit("}")
        self.fill(acc, "i32", 4 * pieces, 100000)
        if self.chance(30):
            # accumulators started far from zero: the f32 bits of 1.5 * 2^23 (std/q4k.ember's
            # mma_bias, whose dot a subtraction reads back as an f32), or next to the ends of
            # i32, where the sums must wrap to 32 bits as the hardware's do
            start = self.choice(["0x4B400000i32", "0x7FFFF000i32", "bitcast<i32>(0x80000800u32)"])
            e = self.fresh("e")
            self.emit(f"for {e} in 0u32..{4 * pieces}u32 {{")
            self.emit(f"    {acc}[{e}] = {acc}[{e}] + {start};")
            self.emit("}")
        for _ in range(self.integer(1, 3)):
            p, q, r = (self.integer(0, pieces - 1) for _ in range(3))
            if self.chance(35):    # K = 16: half the words of A and of B
                self.emit(f"mma_m16n8k16_i8({acc}, {4 * p}u32, {a}, {4 * q + 2 * self.integer(0, 1)}u32, {b}, "
                          f"{2 * r + self.integer(0, 1)}u32);")
            else:
                self.emit(f"mma_m16n8k32({acc}, {4 * p}u32, {a}, {4 * q}u32, {b}, {2 * r}u32);")
        for i in sorted({self.integer(0, 4 * pieces - 1) for _ in range(self.integer(1, 4))}):
            self.store("u32", f"bitcast<u32>({acc}[{i}])")

    def collective_mma_any_offset(self) -> None:
        """mma_m16n8k16 whose fragments start at any element of arrays longer than them (f16
        or bf16 A and B, f32 accumulators): registers have no alignment, and the simulator
        once reported such a fragment, read as one run of elements, as a misaligned access."""
        t = self.choice(["bf16", "f16"])
        a, b, acc = self.fresh("fa"), self.fresh("fb"), self.fresh("acc")
        na, nb, nc = (n + self.integer(1, 7) for n in (8, 4, 4))
        self.emit(f"var {a}: [{t}; {na}];")
        self.emit(f"var {b}: [{t}; {nb}];")
        self.emit(f"var {acc}: [f32; {nc}];")
        self.fill(a, t, na, 8)
        self.fill(b, t, nb, 8)
        self.fill(acc, "f32", nc, 1000)
        p, q, r = self.integer(0, nc - 4), self.integer(0, na - 8), self.integer(0, nb - 4)
        self.emit(f"mma_m16n8k16({acc}, {p}u32, {a}, {q}u32, {b}, {r}u32);")
        for i in sorted({self.integer(p, p + 3) for _ in range(2)}):
            self.store("f32", f"{acc}[{i}]")

    def collective_cp_async_ring(self) -> None:
        """Tiles of an input streamed through a ring of `stages` shared stages: the copies of
        tiles 0 .. stages - 2 first, then per tile i the copy of tile i + stages - 1 into the
        stage tile i - 1 was read from, a wait for tile i's group, a barrier (other threads'
        copies of it have landed), a read of another thread's element of it into a reserved
        slot of its own, and a barrier (every read of the stage is done before the next
        iteration refills it)."""
        fn = self.choice(sorted(COPY_SIZES))
        size = COPY_SIZES[fn]
        t = self.choice([u for u in NUMERIC if BITS[u] // 8 <= size])
        per = size * 8 // BITS[t]                       # elements per copy
        stages = self.integer(2, 3)
        tiles = self.integer(stages + 1, stages + 3)    # more tiles than stages: every stage is refilled
        if not self.take_shared(self.block * stages * size):
            return
        ring, base, i, nxt = self.fresh("ring"), self.fresh("base"), self.fresh("t"), self.fresh("nxt")
        mult = 2 * self.integer(0, 40) + 1
        nbytes = self.weighted([(size, 4), (0, 1), (self.integer(0, size), 1)])
        other = self.integer(0, self.block - 1)         # whose element a thread reads (0: its own)
        e = self.integer(0, per - 1)
        first = self.new_slot(reserve=True)
        for _ in range(tiles - 1):
            self.new_slot(reserve=True)

        def copy(tile: str) -> str:
            src = f"(({base} + {tile} * {mult}u32) % {self.length // per}u32) * {per}u32"
            return f"{fn}({ring}, (({tile} % {stages}u32) * {self.block}u32 + tid) * {per}u32, in_{t}, {src}, {nbytes}u32);"
        self.emit(f"shared {ring}: [{t}; {stages * self.block * per}];")
        self.emit(f"let {base}: u32 = {self.expr('u32', 1)};")
        for k in range(stages - 1):
            self.emit(copy(f"{k}u32"))
            self.emit("cp_async_commit();")
        self.emit(f"for {i} in 0u32..{tiles}u32 {{")
        self.emit(f"    let {nxt} = {i} + {stages - 1}u32;")
        self.emit(f"    if {nxt} < {tiles}u32 {{ {copy(nxt)} }}")
        self.emit("    cp_async_commit();")
        self.emit(f"    cp_async_wait({stages - 1});")
        self.emit("    barrier();")
        self.emit(f"    out_{t}[slot + {first}u32 + {i}] = {ring}[(({i} % {stages}u32) * {self.block}u32 + "
                  f"(tid + {other}u32) % {self.block}u32) * {per}u32 + {e}u32];")
        self.emit("    barrier();")
        self.emit("}")

    def collective_ldmatrix(self) -> None:
        """Each thread writes one 8-element row of a shared array; after a barrier each lane
        names a row (any thread's), and ldmatrix hands out the 8x8 matrices."""
        t = self.choice(HALVES)
        rows = self.block
        if not self.take_shared(rows * 16):
            return
        count = self.choice([1, 2, 4])
        trans = "_trans" if self.chance(40) else ""
        sh, dst, e = self.fresh("mat"), self.fresh("frag"), self.fresh("e")
        extra = self.choice([0, 2])                     # the fragment lands at an offset
        self.emit(f"shared {sh}: [{t}; {rows * 8}];")
        self.emit(f"for {e} in 0u32..8u32 {{ {sh}[tid * 8u32 + {e}] = "
                  f"{t}({self.expr('u32', 1)} + {e} * {self.integer(1, 97)}u32); }}")
        self.emit("barrier();")
        self.emit(f"var {dst}: [{t}; {2 * count + extra}];")
        self.emit(f"ldmatrix_x{count}{trans}({dst}, {extra}u32, {sh}, (({self.expr('u32', 1)}) % {rows}u32) * 8u32);")
        for i in sorted({self.integer(extra, extra + 2 * count - 1) for _ in range(self.integer(1, 3))}):
            self.store(t, f"{dst}[{i}]")

    def collective_bulk(self) -> None:
        """One thread's bulk copy (the copy engine) of a piece of an input into a shared
        array, completing on an mbarrier that every thread waits for before reading it."""
        t = self.choice([u for u in NUMERIC if BITS[u] >= 16])
        most = min(8, self.length * BITS[t] // 8 // 16)        # 16-byte pieces, within the input
        if most < 1:
            return
        nbytes = 16 * self.integer(1, most)
        per = nbytes * 8 // BITS[t]
        if not self.take_shared(nbytes + 8):
            return
        sh, bar = self.fresh("bulk"), self.fresh("bar")
        self.emit(f"shared {sh}: [{t}; {per}];")
        self.emit(f"shared {bar}: [u64; 1];")
        self.emit(f"if tid == 0u32 {{ mbarrier_init({bar}, 0, 1u32); }}")
        self.emit("barrier();")
        src = f"(({self.expr('u32', 1)}) % {self.length // per}u32) * {per}u32"   # 16-byte aligned
        self.emit("if tid == 0u32 {")
        self.emit(f"    mbarrier_arrive({bar}, 0, {nbytes}u32);")
        self.emit(f"    cp_async_bulk({sh}, 0, in_{t}, {src}, {nbytes}u32, {bar}, 0);")
        self.emit("}")
        self.emit(f"while !mbarrier_try_wait({bar}, 0, 0u32) {{}}")
        self.let(t, f"{sh}[({self.expr('u32', 1)}) % {per}u32]")

    def collective_cp_async(self) -> None:
        """Copies from the inputs into this thread's chunks of a shared array, in groups;
        a wait covering the groups read, then a barrier before reading other threads'."""
        fn = self.choice(sorted(COPY_SIZES))
        size = COPY_SIZES[fn]
        t = self.choice([u for u in NUMERIC if BITS[u] // 8 <= size])
        per = size * 8 // BITS[t]                       # elements per copy
        groups = self.integer(1, 3)
        if not self.take_shared(self.block * groups * size):
            return
        sh = self.fresh("cp")
        chunk = groups * per                            # elements per thread
        self.emit(f"shared {sh}: [{t}; {self.block * chunk}];")
        for g in range(groups):
            src = f"(({self.expr('u32', 1)}) % {self.length // per}u32) * {per}u32"
            nbytes = self.weighted([(size, 4), (0, 1), (self.integer(0, size), 1)])
            self.emit(f"{fn}({sh}, tid * {chunk}u32 + {g * per}u32, in_{t}, {src}, {nbytes}u32);")
            self.emit("cp_async_commit();")
        waits = self.integer(0, groups - 1)             # the newest `waits` groups may still be copying
        self.emit(f"cp_async_wait({waits});")
        landed = (groups - waits) * per                 # this thread's elements that have landed
        self.let(t, f"{sh}[tid * {chunk}u32 + ({self.expr('u32', 1)}) % {landed}u32]")
        if waits:
            self.emit("cp_async_wait(0);")
        self.emit("barrier();")
        self.let(t, f"{sh}[({self.expr('u32', 1)}) % {self.block * chunk}u32]")
