"""Program features for generic device functions and imports, mixed into
ember.fuzz.progen.Generator:

- generic device functions (`fn g<const T: type>(x: T, y: T) -> T`, one reading through a
  `*global T`) called at two or more types, so one body is instantiated per binding, and
  generic functions calling generic functions;
- the standard library through `import "std/reduce.ember";`: warp and block reductions of
  the program's values (top-level collective statements, every thread present).
"""

from __future__ import annotations

STD_REDUCE = 'import "std/reduce.ember";'


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
