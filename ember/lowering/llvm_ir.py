"""LLVM IR as text, built directly: the part of llvmlite.ir's interface (types, constants,
globals, functions, blocks, an IRBuilder) that the lowering uses, writing each instruction
as its line when it is built.

llvmlite.ir keeps every instruction as a Python object and formats the module in `str()`,
which cost about a fifth of a warm compile (12 of 55 ms for kernels_src/rope.ember, 2.5
of 11 for one RMSNorm kernel); LLVM parses the text either way. The text follows
llvmlite's conventions (quoted names, `%".N"` for unnamed values, declarations for
intrinsics, metadata numbered in order of creation) so that LLVM builds the same module
from it: every kernel's PTX is byte-identical (tests/lowering/test_llvm_ir.py)."""

from __future__ import annotations

import contextlib

# -- types ---------------------------------------------------------------------------------

class Type:
    __slots__ = ("text",)

    def __str__(self) -> str:
        return self.text

    def __eq__(self, other) -> bool:
        return isinstance(other, Type) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def as_pointer(self, addrspace: int = 0) -> "PointerType":
        return PointerType(addrspace=addrspace)


class VoidType(Type):
    def __init__(self):
        self.text = "void"


class IntType(Type):
    __slots__ = ("width",)

    def __init__(self, width: int):
        self.width = width
        self.text = f"i{width}"


class _Float(Type):
    def __init__(self, text: str):
        self.text = text


def HalfType():
    return _Float("half")


def BFloatType():
    return _Float("bfloat")


def FloatType():
    return _Float("float")


def DoubleType():
    return _Float("double")


class PointerType(Type):
    """An opaque pointer (LLVM's `ptr`) in an address space (a pointee is accepted and
    ignored, as llvmlite does with opaque pointers)."""
    __slots__ = ("addrspace",)

    def __init__(self, pointee=None, addrspace: int = 0):
        self.addrspace = addrspace
        self.text = "ptr" if addrspace == 0 else f"ptr addrspace({addrspace})"


class VectorType(Type):
    __slots__ = ("element", "count")

    def __init__(self, element: Type, count: int):
        self.element, self.count = element, count
        self.text = f"<{count} x {element}>"


class ArrayType(Type):
    __slots__ = ("element", "count")

    def __init__(self, element: Type, count: int):
        self.element, self.count = element, count
        self.text = f"[{count} x {element}]"


class LiteralStructType(Type):
    __slots__ = ("elements",)

    def __init__(self, elements: list):
        self.elements = list(elements)
        self.text = "{" + ", ".join(str(e) for e in self.elements) + "}"


class FunctionType:
    def __init__(self, return_type: Type, args: list):
        self.return_type, self.args = return_type, list(args)


# -- values --------------------------------------------------------------------------------

class Value:
    """Anything an instruction can take: `type` and its reference text (`ref`)."""
    __slots__ = ("type", "ref")

    def __init__(self, type_: Type, ref: str):
        self.type, self.ref = type_, ref

    def typed(self) -> str:
        return f"{self.type} {self.ref}"


Undefined = object()


def _const_text(t: Type, value) -> str:
    if value is Undefined:
        return "undef"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(v.typed() for v in value) + "]"
    if isinstance(t, IntType) and t.width == 1:
        return "true" if value else "false"
    return str(value)


def Constant(t: Type, value) -> Value:
    return Value(t, _const_text(t, value))


def FormattedConstant(t: Type, text: str) -> Value:
    return Value(t, text)


def _quote(name: str) -> str:
    return '"' + name.replace("\\", "\\5c").replace('"', "\\22") + '"'


class Argument(Value):
    __slots__ = ("attrs", "align", "_name", "_index", "_function")

    def __init__(self, t: Type, index: int, function: "Function"):
        super().__init__(t, f'%".{index + 1}"')
        self.attrs: list[str] = []
        self.align = None
        self._name = ""
        self._index = index
        self._function = function

    @property
    def name(self) -> str:
        return self._name

    @name.setter
    def name(self, name: str) -> None:
        self._name = name
        if name:        # values and blocks share a function's names: a block named so is renamed
            self._function._names.setdefault(name, 0)
        self.ref = f"%{_quote(name)}" if name else f'%".{self._index + 1}"'

    @property
    def attributes(self) -> "_ArgAttributes":
        return _ArgAttributes(self)

    def add_attribute(self, attr: str) -> None:
        self.attrs.append(attr)

    def declared(self, with_name: bool) -> str:
        parts = [str(self.type), *self.attrs]
        if self.align is not None:
            parts.append(f"align {self.align}")
        if with_name:
            parts.append(self.ref)
        return " ".join(parts)


class _ArgAttributes:
    """`arg.attributes.align = n`, as llvmlite spells it."""

    def __init__(self, arg: Argument):
        object.__setattr__(self, "_arg", arg)

    def __setattr__(self, name, value) -> None:
        if name != "align":
            raise AttributeError(name)
        self._arg.align = value



class Block:
    __slots__ = ("function", "name", "lines", "label")

    def __init__(self, function: "Function", name: str):
        self.function, self.name = function, name
        self.lines: list = []
        self.label = f"%{_quote(name)}"

    @property
    def instructions(self) -> list:
        return self.lines


class _FunctionAttributes(list):
    def add(self, attr: str) -> None:
        self.append(attr)


class Function(Value):
    __slots__ = ("module", "ftype", "name", "args", "blocks", "calling_convention", "linkage", "attributes", "subprogram",
                 "_names", "_values")

    def __init__(self, module: "Module", ftype: FunctionType, name: str):
        super().__init__(PointerType(), f"@{_quote(name)}")
        self.module, self.ftype, self.name = module, ftype, name
        self.args = tuple(Argument(t, i, self) for i, t in enumerate(ftype.args))
        self.blocks: list[Block] = []
        self.calling_convention = ""
        self.linkage = ""
        self.attributes = _FunctionAttributes()
        self.subprogram: str | None = None        # its !DISubprogram (line info), if any
        self._names: dict[str, int] = {}
        self._values = len(self.args)
        module.add_global(name, self)

    def append_basic_block(self, name: str = "") -> Block:
        n = self._names.get(name)
        while n is not None and f"{name}.{n + 1}" in self._names:
            n += 1
        self._names[name] = 0 if n is None else n + 1
        unique = name if n is None else f"{name}.{n + 1}"
        self._names.setdefault(unique, 0)
        block = Block(self, unique)
        self.blocks.append(block)
        return block

    @property
    def entry_basic_block(self) -> Block:
        return self.blocks[0]

    def new_name(self) -> str:
        self._values += 1
        return f'%".{self._values}"'

    def __str__(self) -> str:
        head = " ".join(x for x in (self.linkage, self.calling_convention, str(self.ftype.return_type)) if x)
        params = ", ".join(a.declared(bool(self.blocks)) for a in self.args)
        attrs = "".join(" " + a for a in self.attributes)
        if not self.blocks:
            return f"declare {head} {self.ref}({params}){attrs}\n"
        dbg = f" !dbg {self.subprogram}" if self.subprogram else ""
        out = [f"define {head} {self.ref}({params}){attrs}{dbg}\n{{\n"]
        for b in self.blocks:
            out.append(f"{b.name}:\n" if b.name.isidentifier() else f"{_quote(b.name)}:\n")
            out.extend(f"  {line}\n" for line in b.lines)
        out.append("}\n")
        return "".join(out)


class GlobalVariable(Value):
    __slots__ = ("name", "value_type", "addrspace", "linkage", "global_constant", "align", "initializer")

    def __init__(self, module: "Module", value_type: Type, name: str, addrspace: int = 0):
        super().__init__(PointerType(addrspace=addrspace), f"@{_quote(name)}")
        self.name, self.value_type, self.addrspace = name, value_type, addrspace
        self.linkage = ""
        self.global_constant = False
        self.align = None
        self.initializer = None
        module.add_global(name, self)

    def gep(self, indices: list) -> Value:
        """A constant address inside the global (all-zero indices: the global itself)."""
        if all(i.ref == "0" for i in indices):
            return self
        idx = ", ".join(i.typed() for i in indices)
        return Value(self.type, f"getelementptr ({self.value_type}, {self.typed()}, {idx})")

    def __str__(self) -> str:
        parts = [self.linkage] if self.linkage else []
        if self.addrspace:
            parts.append(f"addrspace({self.addrspace})")
        parts.append("constant" if self.global_constant else "global")
        parts.append(str(self.value_type))
        if self.initializer is not None:
            parts.append(self.initializer.ref)
        text = f"@{_quote(self.name)} = " + " ".join(parts)
        if self.align is not None:
            text += f", align {self.align}"
        return text + "\n"


def _syncscope(scope: str | None) -> str:
    """An LLVM synchronization scope (None: the whole system, LLVM's default)."""
    return f' syncscope("{scope}")' if scope else ""


class InlineAsm:
    def __init__(self, ftype: FunctionType, asm: str, constraint: str, side_effect: bool = False):
        self.type = ftype
        text = asm.replace("\\", "\\5c").replace('"', "\\22")
        self.ref = f'asm {"sideeffect " if side_effect else ""}"{text}", "{constraint}"'


class Module:
    def __init__(self, name: str = ""):
        self.name = name
        self.triple = ""
        self.data_layout = ""
        self.globals: dict = {}           # globals and functions, in order of creation
        self._metadata: list[str] = []
        self._named: dict[str, list] = {}
        self._empty = None
        self.library: list[str] = []      # the Ember library functions it declares (linked into the PTX)
        self.size_hint = 0                # an estimate of its largest function's LLVM instructions
                                          # (ember.lowering.ptx.large_function)

    def add_global(self, name: str, value) -> None:
        if name in self.globals:
            raise KeyError(f"duplicate global {name}")
        self.globals[name] = value

    def add_metadata(self, operands: list) -> str:
        """A metadata node `!{...}`; returns its reference (`!N`). The empty node is made once."""
        if not operands:
            if self._empty is None:
                self._empty = self._node("!{}")
            return self._empty
        parts = []
        for o in operands:
            parts.append(f'!"{o}"' if isinstance(o, str) else f"ptr {o.ref}" if isinstance(o, Function)
                         else o.typed())
        return self._node("!{" + ", ".join(parts) + "}")

    def _node(self, text: str) -> str:
        self._metadata.append(text)
        return f"!{len(self._metadata) - 1}"

    def add_raw_metadata(self, text: str, distinct: bool = False) -> str:
        """A specialized metadata node (`!DILocation(...)`) written as given; returns `!N`."""
        return self._node(("distinct " if distinct else "") + text)

    def add_named_metadata(self, name: str, node: str) -> None:
        self._named.setdefault(name, []).append(node)

    def __str__(self) -> str:
        out = [f'; ModuleID = "{self.name}"\n', f'target triple = "{self.triple}"\n',
               f'target datalayout = "{self.data_layout}"\n', "\n"]
        out.extend(str(g) + "\n" for g in self.globals.values())
        out.extend(f"!{name} = !{{{', '.join(nodes)}}}\n" for name, nodes in self._named.items())
        out.extend(f"!{i} = {text}\n" for i, text in enumerate(self._metadata))
        return "".join(out)


# -- instructions ----------------------------------------------------------------------------

class Instruction(Value):
    """A value-producing instruction; its line can still gain metadata (`set_metadata`)."""
    __slots__ = ("_block", "_line")

    def set_metadata(self, kind: str, node: str) -> None:
        lines = self._block.lines
        i = len(lines) - 1              # set right after the instruction is built: near the end
        while lines[i] is not self._line:
            i -= 1
        self._line = f"{self._line}, !{kind} {node}"
        lines[i] = self._line


class Phi(Value):
    __slots__ = ("incoming",)

    def __init__(self, t: Type, ref: str):
        super().__init__(t, ref)
        self.incoming: list = []

    def add_incoming(self, value: Value, block: Block) -> None:
        self.incoming.append(f"[{value.ref}, {block.label}]")

    def __str__(self) -> str:
        return f"{self.ref} = phi {self.type} {', '.join(self.incoming)}"


class Alloca(Value):
    __slots__ = ("allocated", "align")

    def __init__(self, allocated: Type, ref: str):
        super().__init__(PointerType(), ref)
        self.allocated, self.align = allocated, None

    def __str__(self) -> str:
        return f"{self.ref} = alloca {self.allocated}" + (f", align {self.align}" if self.align else "")


_ICMP_S = {"==": "eq", "!=": "ne", "<": "slt", "<=": "sle", ">": "sgt", ">=": "sge"}
_ICMP_U = {"==": "eq", "!=": "ne", "<": "ult", "<=": "ule", ">": "ugt", ">=": "uge"}
_FCMP_O = {"==": "oeq", "!=": "one", "<": "olt", "<=": "ole", ">": "ogt", ">=": "oge"}
_FCMP_U = {"==": "ueq", "!=": "une", "<": "ult", "<=": "ule", ">": "ugt", ">=": "uge", "uno": "uno"}
I1 = IntType(1)


class IRBuilder:
    def __init__(self, block: Block):
        self.position_at_end(block)

    # -- position
    # the debug location (`!N`) every instruction built gets (line info), or ""
    dbg = ""

    def position_at_end(self, block: Block) -> None:
        self.block = block
        self._at = None              # None: append; else the index to insert at

    def position_before(self, instr) -> None:
        lines = self.block.lines
        self._at = next(i for i, line in enumerate(lines) if line is instr or getattr(instr, "_line", None) is line)

    @contextlib.contextmanager
    def goto_entry_block(self):
        saved = (self.block, self._at)
        self.position_at_end(self.block.function.entry_basic_block)
        try:
            yield
        finally:
            self.block, self._at = saved

    def _emit(self, line) -> None:
        if self.dbg and isinstance(line, str):
            line = f"{line}, !dbg {self.dbg}"
        if self._at is None:
            self.block.lines.append(line)
        else:
            self.block.lines.insert(self._at, line)
            self._at += 1

    def _value(self, t: Type, text: str) -> Instruction:
        ref = self.block.function.new_name()
        v = Instruction(t, ref)
        v._block = self.block
        v._line = f"{ref} = {text}" + (f", !dbg {self.dbg}" if self.dbg else "")
        saved, self.dbg = self.dbg, ""
        self._emit(v._line)
        self.dbg = saved
        return v

    # -- arithmetic
    def _bin(self, op: str, a: Value, b: Value) -> Instruction:
        return self._value(a.type, f"{op} {a.type} {a.ref}, {b.ref}")

    def add(self, a, b): return self._bin("add", a, b)
    def sub(self, a, b): return self._bin("sub", a, b)
    def mul(self, a, b): return self._bin("mul", a, b)
    def and_(self, a, b): return self._bin("and", a, b)
    def or_(self, a, b): return self._bin("or", a, b)
    def xor(self, a, b): return self._bin("xor", a, b)
    def shl(self, a, b): return self._bin("shl", a, b)
    def lshr(self, a, b): return self._bin("lshr", a, b)
    def ashr(self, a, b): return self._bin("ashr", a, b)
    def sdiv(self, a, b): return self._bin("sdiv", a, b)
    def udiv(self, a, b): return self._bin("udiv", a, b)
    def srem(self, a, b): return self._bin("srem", a, b)
    def urem(self, a, b): return self._bin("urem", a, b)
    def fadd(self, a, b): return self._bin("fadd", a, b)
    def fsub(self, a, b): return self._bin("fsub", a, b)
    def fmul(self, a, b): return self._bin("fmul", a, b)
    def fdiv(self, a, b): return self._bin("fdiv", a, b)

    def neg(self, a):
        return self._value(a.type, f"sub {a.type} 0, {a.ref}")

    def fneg(self, a):
        return self._value(a.type, f"fneg {a.type} {a.ref}")

    def not_(self, a):
        return self._value(a.type, f"xor {a.type} {a.ref}, {'true' if a.type == I1 else -1}")

    def ptrtoint(self, v: Value, t: Type) -> Instruction:
        return self._value(t, f"ptrtoint {v.typed()} to {t}")

    def icmp_signed(self, pred, a, b):
        return self._value(I1, f"icmp {_ICMP_S[pred]} {a.type} {a.ref}, {b.ref}")

    def icmp_unsigned(self, pred, a, b):
        return self._value(I1, f"icmp {_ICMP_U[pred]} {a.type} {a.ref}, {b.ref}")

    def fcmp_ordered(self, pred, a, b):
        return self._value(I1, f"fcmp {_FCMP_O[pred]} {a.type} {a.ref}, {b.ref}")

    def fcmp_unordered(self, pred, a, b):
        return self._value(I1, f"fcmp {_FCMP_U[pred]} {a.type} {a.ref}, {b.ref}")

    def select(self, c, a, b):
        return self._value(a.type, f"select {c.typed()}, {a.typed()}, {b.typed()}")

    # -- conversions
    def _cast(self, op: str, v: Value, t: Type) -> Instruction:
        return self._value(t, f"{op} {v.typed()} to {t}")

    def trunc(self, v, t): return self._cast("trunc", v, t)
    def zext(self, v, t): return self._cast("zext", v, t)
    def sext(self, v, t): return self._cast("sext", v, t)
    def fptrunc(self, v, t): return self._cast("fptrunc", v, t)
    def fpext(self, v, t): return self._cast("fpext", v, t)
    def sitofp(self, v, t): return self._cast("sitofp", v, t)
    def uitofp(self, v, t): return self._cast("uitofp", v, t)
    def bitcast(self, v, t):
        # a value to its own type is itself; a pointer to a pointer stays an instruction (a
        # no-op, as llvmlite's typed-pointer casts became), which keeps -O0's PTX as it was
        if v.type == t and not isinstance(t, PointerType):
            return v
        return self._cast("bitcast", v, t)

    # -- memory
    def gep(self, ptr: Value, indices: list, source_etype: Type, inbounds: bool = False) -> Instruction:
        idx = ", ".join(i.typed() for i in indices)
        return self._value(ptr.type, f"getelementptr {source_etype}, {ptr.typed()}, {idx}")

    def load(self, ptr: Value, typ: Type, align: int | None = None) -> Instruction:
        return self._value(typ, f"load {typ}, {ptr.typed()}" + (f", align {align}" if align else ""))

    def store(self, value: Value, ptr: Value, align: int | None = None) -> None:
        self._emit(f"store {value.typed()}, {ptr.typed()}" + (f", align {align}" if align else ""))

    def alloca(self, t: Type) -> Alloca:
        a = Alloca(t, self.block.function.new_name())
        self._emit(a)
        return a

    def atomic_rmw(self, op: str, ptr: Value, val: Value, ordering: str) -> Instruction:
        return self._value(val.type, f"atomicrmw {op} {ptr.typed()}, {val.typed()} {ordering}")

    def cmpxchg(self, ptr: Value, cmp: Value, new: Value, ordering: str, failordering: str,
                scope: str | None = None) -> Instruction:
        return self._value(LiteralStructType([cmp.type, I1]),
                           f"cmpxchg {ptr.typed()}, {cmp.typed()}, {new.typed()}{_syncscope(scope)} "
                           f"{ordering} {failordering}")

    def load_atomic(self, ptr: Value, typ: Type, ordering: str, scope: str | None, align: int) -> Instruction:
        return self._value(typ, f"load atomic {typ}, {ptr.typed()}{_syncscope(scope)} {ordering}, align {align}")

    def store_atomic(self, value: Value, ptr: Value, ordering: str, scope: str | None, align: int) -> None:
        self._emit(f"store atomic {value.typed()}, {ptr.typed()}{_syncscope(scope)} {ordering}, align {align}")

    def fence(self, ordering: str, scope: str | None) -> None:
        self._emit(f"fence{_syncscope(scope)} {ordering}")

    # -- aggregates and vectors
    def extract_value(self, agg: Value, i: int) -> Instruction:
        return self._value(agg.type.elements[i], f"extractvalue {agg.typed()}, {i}")

    def insert_value(self, agg: Value, v: Value, i: int) -> Instruction:
        return self._value(agg.type, f"insertvalue {agg.typed()}, {v.typed()}, {i}")

    def extract_element(self, vec: Value, idx: Value) -> Instruction:
        return self._value(vec.type.element, f"extractelement {vec.typed()}, {idx.typed()}")

    def insert_element(self, vec: Value, v: Value, idx: Value) -> Instruction:
        return self._value(vec.type, f"insertelement {vec.typed()}, {v.typed()}, {idx.typed()}")

    # -- control flow and calls
    def phi(self, t: Type) -> Phi:
        p = Phi(t, self.block.function.new_name())
        self._emit(p)
        return p

    def branch(self, target: Block) -> None:
        self._emit(f"br label {target.label}")

    def cbranch(self, cond: Value, then: Block, other: Block) -> None:
        self._emit(f"br i1 {cond.ref}, label {then.label}, label {other.label}")

    def ret(self, v: Value) -> None:
        self._emit(f"ret {v.typed()}")

    def ret_void(self) -> None:
        self._emit("ret void")

    def call(self, fn, args: list):
        ret = fn.ftype.return_type if isinstance(fn, Function) else fn.type.return_type
        text = f"call {ret} {fn.ref}({', '.join(a.typed() for a in args)})"
        if isinstance(ret, VoidType):
            self._emit(text)
            return None
        return self._value(ret, text)

    def asm(self, ftype: FunctionType, asm: str, constraint: str, args: list, side_effect: bool):
        return self.call(InlineAsm(ftype, asm, constraint, side_effect), args)
