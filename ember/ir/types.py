"""Ember's types, shared by the type checker and the IR.

Scalars are interned singletons (compare with `is` or `==`); composite types are frozen
value objects. `str(t)` is the spelling used both in source and in the IR text form.
"""

from __future__ import annotations

from ..records import record


class Type:
    __slots__ = ()
    is_scalar = False
    is_ptr = False
    is_array = False
    is_tuple = False
    is_vector = False
    is_tensormap = False


class ScalarType(Type):
    __slots__ = ("name", "kind", "bits", "signed")
    is_scalar = True

    def __init__(self, name: str, kind: str, bits: int, signed: bool):
        self.name = name
        self.kind = kind  # "bool" | "int" | "float"
        self.bits = bits
        self.signed = signed

    @property
    def is_bool(self) -> bool:
        return self.kind == "bool"

    @property
    def is_int(self) -> bool:
        return self.kind == "int"

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_numeric(self) -> bool:
        return self.kind != "bool"

    @property
    def nbytes(self) -> int:
        return max(self.bits // 8, 1)

    def int_range(self) -> tuple[int, int]:
        if self.signed:
            return -(1 << (self.bits - 1)), (1 << (self.bits - 1)) - 1
        return 0, (1 << self.bits) - 1

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self):
        return (scalar, (self.name,))


BOOL = ScalarType("bool", "bool", 1, False)
I8 = ScalarType("i8", "int", 8, True)
I16 = ScalarType("i16", "int", 16, True)
I32 = ScalarType("i32", "int", 32, True)
I64 = ScalarType("i64", "int", 64, True)
U8 = ScalarType("u8", "int", 8, False)
U16 = ScalarType("u16", "int", 16, False)
U32 = ScalarType("u32", "int", 32, False)
U64 = ScalarType("u64", "int", 64, False)
F16 = ScalarType("f16", "float", 16, True)
BF16 = ScalarType("bf16", "float", 16, True)
F32 = ScalarType("f32", "float", 32, True)
F64 = ScalarType("f64", "float", 64, True)

SCALARS: dict[str, ScalarType] = {
    t.name: t for t in (BOOL, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64)
}
INT_TYPES = tuple(t for t in SCALARS.values() if t.is_int)
FLOAT_TYPES = (F16, BF16, F32, F64)


def scalar(name: str) -> ScalarType:
    return SCALARS[name]


def int_type(bits: int, signed: bool) -> ScalarType:
    return SCALARS[f"{'i' if signed else 'u'}{bits}"]


# Address spaces: name -> NVPTX address space number.
ADDRESS_SPACES: dict[str, int] = {"generic": 0, "global": 1, "shared": 3, "const": 4, "local": 5}


@record(frozen=True, slots=True)
class PtrType(Type):
    """`*[mut] SPACE T [align(N)]`: a pointer into one address space.

    `align` is the alignment in bytes the pointer is promised to have (None: the pointee's
    natural alignment). Kernel arguments check it at launch.
    """

    pointee: Type
    space: str = "global"
    mut: bool = False
    align: int | None = None

    is_ptr = True

    @property
    def alignment(self) -> int:
        return self.align if self.align is not None else natural_align(self.pointee)

    def with_align(self, align: int | None) -> "PtrType":
        return PtrType(self.pointee, self.space, self.mut, align)

    def __str__(self) -> str:
        s = f"*{'mut ' if self.mut else ''}{self.space} {self.pointee}"
        return s + (f" align({self.align})" if self.align is not None else "")


@record(frozen=True, slots=True)
class ArrayType(Type):
    """`[T; N]`: a fixed-size array (shared memory tiles, constant tables)."""

    elem: Type
    length: int
    space: str | None = None      # "shared" or "local" for declared arrays
    sized_by: str | None = None   # a shared array sized at launch: the kernel parameter that
                                  # gives its length (`[f32; cols]`; `length` is then 0)
    swizzle: int | None = None    # a shared tile declared `swizzle(N)` (32, 64 or 128 bytes), and
                                  # its rows: its bytes lie in the tensor cores' XOR order

    is_array = True

    def __str__(self) -> str:
        return self.plain() + (f" swizzle({self.swizzle})" if self.swizzle else "")

    def plain(self) -> str:
        elem = self.elem.plain() if isinstance(self.elem, ArrayType) else str(self.elem)
        return f"[{elem}; {self.sized_by or self.length}]"


@record(frozen=True, slots=True)
class TensorMapType(Type):
    """`tensormap<T, [d0, d1, ...]> swizzle(N)`: a kernel parameter the host makes from a
    tensor (a CUtensorMap: its address, shape and strides, and this box), through which TMA
    copies boxes of `box` elements (outermost dimension first, as array types and tensor
    shapes read) between the tensor and shared tiles `[[T; d1]; d0]` laid out as `swizzle`
    (0: none) orders them."""

    elem: ScalarType
    box: tuple
    swizzle: int = 0

    is_tensormap = True

    @property
    def rank(self) -> int:
        return len(self.box)

    @property
    def box_bytes(self) -> int:
        n = self.elem.nbytes
        for d in self.box:
            n *= d
        return n

    def __str__(self) -> str:
        swz = f", swizzle({self.swizzle})" if self.swizzle else ""
        return f"tensormap<{self.elem}, [{', '.join(map(str, self.box))}]{swz}>"


@record(frozen=True, slots=True)
class VectorType(Type):
    """`vec<N x T>`: a short vector, the value of a wide (64/128-bit) load or store."""

    elem: ScalarType
    length: int

    is_vector = True

    def __str__(self) -> str:
        return f"vec<{self.length} x {self.elem}>"


@record(frozen=True, slots=True)
class TupleType(Type):
    """The result of a multi-result builtin such as `sincos`; only destructured."""

    elems: tuple

    is_tuple = True

    def __str__(self) -> str:
        return "(" + ", ".join(str(e) for e in self.elems) + ")"


class VoidType(Type):
    __slots__ = ()

    def __str__(self) -> str:
        return "void"

    def __reduce__(self):
        return (_void, ())


VOID = VoidType()


def _void() -> VoidType:
    return VOID


def natural_align(t: Type) -> int:
    if isinstance(t, ScalarType):
        return t.nbytes
    if isinstance(t, VectorType):
        return t.elem.nbytes * t.length
    if isinstance(t, ArrayType):
        return natural_align(t.elem)
    if isinstance(t, PtrType):
        return 8
    raise TypeError(f"type {t} has no memory layout")


def array_scalar(t: "ArrayType") -> Type:
    """The scalar a (possibly multi-dimensional) array holds: f32 for `[[f32; 4]; 8]`."""
    while isinstance(t, ArrayType):
        t = t.elem
    return t


def array_elements(t: "ArrayType") -> int:
    """How many scalars a (possibly multi-dimensional) array holds, laid out row by row."""
    n = 1
    while isinstance(t, ArrayType):
        n *= t.length
        t = t.elem
    return n


def array_in(t: "ArrayType", space: str) -> "ArrayType":
    """The array type (and its rows') placed in `space`."""
    elem = array_in(t.elem, space) if isinstance(t.elem, ArrayType) else t.elem
    return ArrayType(elem, t.length, space, t.sized_by, t.swizzle)


def swizzled(t: "ArrayType", swizzle: int) -> "ArrayType":
    """The array type and its rows declared `swizzle(N)`."""
    elem = swizzled(t.elem, swizzle) if isinstance(t.elem, ArrayType) else t.elem
    return ArrayType(elem, t.length, t.space, t.sized_by, swizzle)


def size_of(t: Type) -> int:
    if isinstance(t, ScalarType):
        return t.nbytes
    if isinstance(t, VectorType):
        return t.elem.nbytes * t.length
    if isinstance(t, ArrayType):
        return size_of(t.elem) * t.length
    if isinstance(t, PtrType):
        return 8
    raise TypeError(f"type {t} has no memory layout")


def to_json(t: Type):
    """A JSON value for a type (what the compile cache stores of kernel signatures)."""
    if isinstance(t, ScalarType):
        return t.name
    if isinstance(t, PtrType):
        return {"ptr": to_json(t.pointee), "space": t.space, "mut": t.mut, "align": t.align}
    if isinstance(t, VectorType):
        return {"vec": to_json(t.elem), "length": t.length}
    if isinstance(t, ArrayType):
        return {"array": to_json(t.elem), "length": t.length, "space": t.space}
    if isinstance(t, TensorMapType):
        return {"tensormap": to_json(t.elem), "box": list(t.box), "swizzle": t.swizzle}
    if isinstance(t, TupleType):
        return {"tuple": [to_json(e) for e in t.elems]}
    if t is VOID:
        return "void"
    raise TypeError(f"type {t} has no JSON form")


def from_json(v) -> Type:
    """The inverse of `to_json`."""
    if isinstance(v, str):
        return VOID if v == "void" else SCALARS[v]
    if "ptr" in v:
        return PtrType(from_json(v["ptr"]), v["space"], v["mut"], v["align"])
    if "vec" in v:
        return VectorType(from_json(v["vec"]), v["length"])
    if "array" in v:
        return ArrayType(from_json(v["array"]), v["length"], v["space"])
    if "tensormap" in v:
        return TensorMapType(from_json(v["tensormap"]), tuple(v["box"]), v["swizzle"])
    return TupleType(tuple(from_json(e) for e in v["tuple"]))
