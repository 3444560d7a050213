"""Program features for generic device functions and imports, mixed into
ember.fuzz.progen.Generator:

- generic device functions (`fn g<const T: type>(x: T, y: T) -> T`, one reading through a
  `*global T`) called at two or more types, so one body is instantiated per binding, and
  generic functions calling generic functions; one taking a function parameter, called with
  a builtin and with the program's functions;
- a type's constants (`f32.max`, `i8.min`), a `let` of a constant as an array length, and
  static_assert;
- the standard library through `import "std/reduce.ember";`: warp and block reductions of
  the program's values (top-level collective statements, every thread present);
- `import "std/swizzle.ember";`: a shared tile written and read at swizzle()'s offsets,
  rows of 3 to 12 chunks (a layout that is not a permutation of each row - as rows of 6
  chunks once were - is a race or an uninitialised read).
"""

from __future__ import annotations

from math import gcd

from .vocab import BITS

STD_REDUCE = 'import "std/reduce.ember";'
STD_SWIZZLE = 'import "std/swizzle.ember";'
# row widths (elements) by chunk (elements per 16 bytes): 3, 5, 6, 7, 8 and 12 chunks a row
SWIZZLE_WIDTHS = {8: [24, 40, 48, 56, 64, 96], 4: [12, 20, 24, 28, 32, 48]}


class GenericFeatures:
    """Mixed into ember.fuzz.progen.Generator (it supplies emit, let, expr, helpers, ...)."""

    def generic_body(self) -> str:
        """An expression in x and y of any numeric T (ops every numeric type has)."""
        op = self.choice(["x + y", "x - y", "x * y", "min(x, y)", "max(x, y)", "select(x < y, y - x, x)",
                          "select(x == y, T(3), x + T(1))"])
        return op

    def stmt_generic(self, allow_return, depth):
        """A generic function (maybe calling another) applied at one or more types."""
        inner = self.fresh("gen")
        self.helpers.append(f"fn {inner}<const T: type>(x: T, y: T) -> T {{\n"
                            f"    return {self.generic_body()};\n}}")
        name = inner
        if self.chance(50):
            name = self.fresh("gen")
            self.helpers.append(f"fn {name}<const T: type>(x: T, y: T) -> T {{\n"
                                f"    let z: T = {inner}(y, x);\n    return {inner}(z, {self.generic_body()});\n}}")
        for t in sorted({self.choice(self.types) for _ in range(self.integer(1, 3))}):
            self.let(t, f"{name}({self.expr(t, 1)}, {self.expr(t, 1)})")

    def stmt_generic_combine(self, allow_return, depth):
        """A generic function taking a function parameter, called with a builtin (min, max)
        and with device functions of the program (one generic, one of a single type)."""
        name, comb, typed = self.fresh("fold"), self.fresh("comb"), self.fresh("comb")
        self.helpers.append(f"fn {name}<const T: type>(x: T, y: T, f: fn(T, T) -> T) -> T {{\n"
                            f"    return f(f(x, y), x);\n}}")
        self.helpers.append(f"fn {comb}<const T: type>(x: T, y: T) -> T {{\n    return {self.generic_body()};\n}}")
        t = self.choice(self.types)
        self.helpers.append(f"fn {typed}(x: {t}, y: {t}) -> {t} {{\n    return max(x, y) - min(x, y);\n}}")
        for fn in (self.choice(["min", "max"]), comb, typed):
            self.let(t, f"{name}({self.expr(t, 1)}, {self.expr(t, 1)}, {fn})")

    def stmt_type_constant(self, allow_return, depth):
        """A type's constant (`f32.max`, `i8.min`, `T.epsilon`), and a `let` of a constant
        used as an array length, guarded by a static_assert."""
        t = self.choice(self.types)
        names = ["max", "min", "min_positive", "epsilon", "inf"] if t.startswith(("f", "bf")) else ["max", "min"]
        self.let(t, f"select({self.expr('bool', 1)}, {t}.{self.choice(names)}, {self.expr(t, 1)})")
        n, a = self.fresh("n"), self.fresh("arr")
        self.emit(f"let {n} = {self.integer(1, 6)}u32;")
        self.emit(f"static_assert({n} > 0u32 && {n} <= 6u32);")
        self.emit(f"var {a}: [u32; {n} + 1u32];")
        self.emit(f"{a}[0] = {self.expr('u32', 1)};")
        self.let("u32", f"{a}[0] + u32.bits")

    def stmt_generic_load(self, allow_return, depth):
        """A generic function reading through a pointer of its type parameter."""
        name = self.fresh("gload")
        self.helpers.append(f"fn {name}<const T: type>(p: *global T, i: u32, v: T) -> T {{\n"
                            f"    return max(p[i % {self.length}u32], v);\n}}")
        for t in sorted({self.choice(self.types) for _ in range(self.integer(1, 2))}):
            self.let(t, f"{name}(in_{t}, {self.expr('u32', 1)}, {self.expr(t, 1)})")

    def collective_std_reduce(self) -> None:
        """warp_sum / warp_max / block_sum / block_max of the std library."""
        self.imports.add(STD_REDUCE)
        t = self.choice(self.types)
        kind = self.choice(["warp_sum", "warp_max", "block_sum", "block_max"])
        value = self.expr(t, 2)
        if kind.startswith("warp"):
            self.let(t, f"{kind}({value})")
            return
        warps = self.block // 32
        partial = self.fresh("partial")
        self.emit(f"shared {partial}: [{t}; {warps}];")
        self.let(t, f"{kind}({value}, {partial}, {warps}u32)")

    def collective_swizzle(self) -> str | None:
        """A shared tile of rows of `width` elements stored at std/swizzle.ember's offsets: each
        thread writes `per` elements (its value, then inputs), a barrier, and every thread
        reads one element another thread wrote. Returns the value read (None: no shared memory
        left)."""
        t = self.choice(self.types)
        chunk = self.choice(sorted(SWIZZLE_WIDTHS))
        width = self.choice(SWIZZLE_WIDTHS[chunk])
        per = width // gcd(width, self.block)           # the tile: block * per elements, whole rows
        n = self.block * per
        if not self.take_shared(n * BITS[t] // 8):
            return None
        self.imports.add(STD_SWIZZLE)
        sh, e, i = self.fresh("swz"), self.fresh("e"), self.fresh("i")
        self.emit(f"shared {sh}: [{t}; {n}];")
        v = self.let(t, self.expr(t, 2))
        self.emit(f"unroll for {e} in 0..{per}u32 {{")
        self.emit(f"    let {i} = tid + {self.block}u32 * {e};")
        self.emit(f"    {sh}[swizzle({i} / {width}u32, {i} % {width}u32, {width}u32, {chunk}u32)] = "
                  f"select({e} == 0u32, {v}, in_{t}[(gid + {e}) % {self.length}u32]);")
        self.emit("}")
        self.emit("barrier();")
        j = self.let("u32", f"({self.expr('u32', 1)}) % {n}u32")
        return self.let(t, f"{sh}[swizzle({j} / {width}u32, {j} % {width}u32, {width}u32, {chunk}u32)]")
