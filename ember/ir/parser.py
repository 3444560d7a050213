"""Text -> IR. The inverse of `ember.ir.printer`; tests and `ember opt` read IR with it.

A hand-written tokenizer and a descent parser: the structure (modules, functions,
regions, result lists) is parsed here, and each op's operands/attributes/types by the
format family its op table entry names. Regions nest through generators run by
`ember.trampoline`, so nesting depth costs no Python recursion.
"""

from __future__ import annotations

import re

from ..diagnostics import Diagnostics
from ..source import SourceFile, Span
from ..trampoline import run
from .core import Function, Global, Module, Op, Region, Value
from .opdef import OpDef
from .types import ADDRESS_SPACES, SCALARS, ArrayType, PtrType, TensorMapType, Type, VectorType

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\n]+|//[^\n]*)
  | (?P<value>%[A-Za-z0-9_.$-]+)
  | (?P<symbol>@[A-Za-z0-9_.$]+)
  | (?P<number>-?(0x[0-9A-Fa-f]+|inf\b|[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?))
  | (?P<word>[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<string>"(\\.|[^"\\])*")
  | (?P<punct>->|[{}()\[\],:=*;<>])
""", re.VERBOSE)


class IRSyntaxError(Exception):
    def __init__(self, message: str, span: Span):
        super().__init__(message)
        self.span = span


class Tok:
    __slots__ = ("kind", "text", "start", "end")

    def __init__(self, kind, text, start, end):
        self.kind, self.text, self.start, self.end = kind, text, start, end

    def __repr__(self):
        return f"{self.kind}:{self.text}"


def _tokenize(file: SourceFile) -> list[Tok]:
    text, pos, out = file.text, 0, []
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise IRSyntaxError(f"unexpected character `{text[pos]}`", Span(file, pos, pos + 1))
        kind = m.lastgroup
        if kind != "ws":
            out.append(Tok(kind, m.group(), m.start(), m.end()))
        pos = m.end()
    out.append(Tok("eof", "", len(text), len(text)))
    return out


def value_hint(name: str) -> str | None:
    """`%head.2` -> hint `head`; `%12` -> no hint (the printer renumbers)."""
    if name.isdigit():
        return None
    base, dot, suffix = name.rpartition(".")
    return base if dot and suffix.isdigit() and base else name


class IRParser:
    def __init__(self, file: SourceFile):
        from . import ops  # noqa: F401  (fills the op table)
        from .ops import OPS
        self.ops = OPS
        self.file = file
        self.toks = _tokenize(file)
        self.i = 0
        self.env: dict[str, Value] = {}

    # -- token helpers
    @property
    def tok(self) -> Tok:
        return self.toks[self.i]

    def span(self, tok: Tok | None = None) -> Span:
        t = tok or self.tok
        return Span(self.file, t.start, t.end)

    def error(self, message: str, tok: Tok | None = None):
        raise IRSyntaxError(message, self.span(tok))

    def next(self) -> Tok:
        t = self.toks[self.i]
        self.i += 1
        return t

    def peek(self, text: str) -> bool:
        return self.tok.text == text

    def starts_line(self) -> bool:
        """The current token is the first of its line (ops are one line each, regions aside)."""
        prev = self.toks[self.i - 1] if self.i else None
        return prev is not None and "\n" in self.file.text[prev.end:self.tok.start]

    def accept(self, text: str) -> bool:
        if self.tok.text == text:
            self.i += 1
            return True
        return False

    def expect(self, text: str) -> Tok:
        if self.tok.text != text:
            self.error(f"expected `{text}`, found `{self.tok.text or 'end of input'}`")
        return self.next()

    def word(self) -> str:
        if self.tok.kind != "word":
            self.error(f"expected a word, found `{self.tok.text}`")
        return self.next().text

    def int(self) -> int:
        t = self.tok
        if t.kind != "number" or not re.fullmatch(r"-?(0x[0-9A-Fa-f]+|[0-9]+)", t.text):
            self.error(f"expected an integer, found `{t.text}`")
        self.i += 1
        return int(t.text, 0)

    def number_text(self) -> str:
        t = self.tok
        if t.kind == "number" or t.text in ("true", "false", "inf"):
            self.i += 1
            return t.text
        self.error(f"expected a number, found `{t.text}`")

    def symbol(self) -> str:
        if self.tok.kind != "symbol":
            self.error(f"expected `@name`, found `{self.tok.text}`")
        return self.next().text[1:]

    # -- values
    def value(self) -> Value:
        t = self.tok
        if t.kind != "value":
            self.error(f"expected a value (`%name`), found `{t.text}`")
        self.i += 1
        v = self.env.get(t.text[1:])
        if v is None:
            self.error(f"use of undefined value `{t.text}`", t)
        return v

    def values(self, close: str | None = None) -> list[Value]:
        """A comma-separated list of values (possibly empty when `close` follows)."""
        out: list[Value] = []
        if self.tok.kind != "value" or self.starts_line():
            return out   # an op without operands; a value on the next line begins the next op
        out.append(self.value())
        while self.accept(","):
            out.append(self.value())
        return out

    def define(self, name_tok: Tok, v: Value) -> None:
        name = name_tok.text[1:]
        if name in self.env:
            self.error(f"redefinition of `%{name}`", name_tok)
        v.name = value_hint(name)
        self.env[name] = v

    def new_value_names(self) -> list[Tok]:
        """`%a, %b =` before an op (empty if the op has no results)."""
        if self.tok.kind != "value":
            return []
        j = self.i
        names = [self.toks[j]]
        j += 1
        while self.toks[j].text == ",":
            names.append(self.toks[j + 1])
            j += 2
        if self.toks[j].text != "=":
            return []
        self.i = j + 1
        return names

    # -- types
    def type(self) -> Type:
        t = self.tok
        if t.text == "*":
            self.i += 1
            mut = self.accept("mut")
            space = self.word()
            if space not in ADDRESS_SPACES:
                self.error(f"unknown address space `{space}`", self.toks[self.i - 1])
            pointee = self.type()
            align = None
            if self.accept("align"):
                self.expect("(")
                align = self.int()
                self.expect(")")
            return PtrType(pointee, space, mut, align)
        if t.text == "[":
            self.i += 1
            elem = self.type()
            self.expect(";")
            n = self.int()
            self.expect("]")
            return ArrayType(elem, n)
        if t.text == "tensormap":          # tensormap<bf16, [128, 64], swizzle(128)>
            self.i += 1
            self.expect("<")
            elem = self.type()
            self.expect(",")
            self.expect("[")
            box = [self.int()]
            while self.accept(","):
                box.append(self.int())
            self.expect("]")
            swizzle = 0
            if self.accept(","):
                if self.word() != "swizzle":
                    self.error("expected `swizzle(N)` in a tensor map type")
                self.expect("(")
                swizzle = self.int()
                self.expect(")")
            self.expect(">")
            return TensorMapType(elem, tuple(box), swizzle)
        if t.text == "vec":
            self.i += 1
            self.expect("<")
            n = self.int()
            if self.word() != "x":
                self.error("expected `x` in a vector type")
            elem = self.type()
            self.expect(">")
            return VectorType(elem, n)
        if t.kind == "word" and t.text in SCALARS:
            self.i += 1
            return SCALARS[t.text]
        self.error(f"expected a type, found `{t.text}`")

    def types(self) -> list[Type]:
        out = [self.type()]
        while self.accept(","):
            out.append(self.type())
        return out

    def paren_types(self) -> list[Type]:
        if self.accept("("):
            if self.accept(")"):
                return []
            ts = self.types()
            self.expect(")")
            return ts
        return [self.type()]

    # -- attributes
    def attr_value(self):
        t = self.tok
        if self.accept("["):
            items = []
            if not self.accept("]"):
                items.append(self.attr_value())
                while self.accept(","):
                    items.append(self.attr_value())
                self.expect("]")
            return items
        if t.text in ("true", "false"):
            self.i += 1
            return t.text == "true"
        if t.kind == "number":
            return self.int()
        if t.kind == "string":
            self.i += 1
            return t.text[1:-1].replace('\\"', '"')
        if t.kind == "word":
            self.i += 1
            return t.text
        self.error(f"expected an attribute value, found `{t.text}`")

    def attr_dict(self) -> dict:
        attrs: dict = {}
        if self.accept("{"):
            if self.accept("}"):
                return attrs
            while True:
                key = self.word()
                self.expect("=")
                attrs[key] = self.attr_value()
                if not self.accept(","):
                    break
            self.expect("}")
        return attrs

    def optional_attr_dict(self) -> dict:
        """An attribute dict only if `{` starts one (not a region: `{ %` or `{ word.`)."""
        if self.peek("{") and self.toks[self.i + 1].kind == "word" and self.toks[self.i + 2].text == "=":
            return self.attr_dict()
        if self.peek("{") and self.toks[self.i + 1].text == "}":
            self.i += 2
            return {}
        return {}

    # -- structure
    def region(self, args: list[tuple[Tok, Type]], implicit_yield: bool = True):
        """A generator (see ember.trampoline) returning the region."""
        region = Region([t for _, t in args])
        for (tok, _), v in zip(args, region.args):
            self.define(tok, v)
        start = self.expect("{")
        while not self.peek("}"):
            if self.tok.kind == "eof":
                self.error("unexpected end of input inside a region")
            region.append((yield self.op()))
        self.expect("}")
        if implicit_yield and not (region.ops and region.ops[-1].opdef.terminator):
            region.append(Op(self.ops["scf.yield"], [], [], loc=self.span(start)))
        return region

    def op(self):
        """A generator (see ember.trampoline) returning the op."""
        names = self.new_value_names()
        start = self.tok
        name = self.word()
        if name == "return":
            name = "func.return"
        opdef: OpDef | None = self.ops.get(name)
        if opdef is None:
            self.error(f"unknown op `{name}`", start)
        loc = self.span(start)
        op = yield opdef.format.parse(self, opdef, len(names), loc)
        if len(op.results) != len(names):
            self.error(f"`{name}` has {len(op.results)} result(s) but {len(names)} name(s) were given", start)
        for tok, v in zip(names, op.results):
            self.define(tok, v)
        return op

    def function(self) -> Function:
        start = self.tok
        kind = self.word()
        name = self.symbol()
        self.env = {}
        self.expect("(")
        params: list[tuple[Tok, Type]] = []
        if not self.peek(")"):
            while True:
                tok = self.tok
                if tok.kind != "value":
                    self.error("expected a parameter (`%name: type`)")
                self.i += 1
                self.expect(":")
                params.append((tok, self.type()))
                if not self.accept(","):
                    break
        self.expect(")")
        results: list[Type] = []
        if self.accept("->"):
            results = self.paren_types()
        attrs = {}
        if self.accept("attributes"):
            attrs = self.attr_dict()
        body = run(self.region(params, implicit_yield=False))
        return Function(name, kind, body, results, attrs, loc=self.span(start))

    def global_(self) -> Global:
        start = self.tok
        self.expect("global")
        name = self.symbol()
        self.expect(":")
        ty = self.type()
        if not isinstance(ty, ArrayType):
            self.error("a global must have an array type `[T; N]`", start)
        self.expect("=")
        self.expect("[")
        from .formats import parse_scalar
        vals = []
        if not self.peek("]"):
            vals.append(parse_scalar(self.number_text(), ty.elem))
            while self.accept(","):
                vals.append(parse_scalar(self.number_text(), ty.elem))
        self.expect("]")
        if len(vals) != ty.length:
            self.error(f"global `@{name}` declares {ty.length} elements but has {len(vals)}", start)
        return Global(name, ty.elem, vals, loc=self.span(start))

    def module(self) -> Module:
        m = Module()
        while self.tok.kind != "eof":
            if self.peek("global"):
                m.globals.append(self.global_())
            elif self.tok.text in ("kernel", "func"):
                m.functions.append(self.function())
            else:
                self.error(f"expected `kernel`, `func` or `global`, found `{self.tok.text}`")
        return m


def parse_module(text: str, name: str = "<ir>", diags: Diagnostics | None = None) -> Module:
    """Parse IR text. Raises IRSyntaxError (or records it in `diags` and returns None)."""
    file = SourceFile(name, text)
    try:
        return IRParser(file).module()
    except IRSyntaxError as e:
        if diags is None:
            raise
        diags.error("E0001", str(e), e.span)
        return None
