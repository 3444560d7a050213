"""Source text -> AST, with Ember's LALR(1) driver over the tables lark builds (lalr.py).

Parsing is tree-less: the driver calls a `_Builder` method as each rule reduces, which builds
the AST node at once. A syntax error inside one kernel or function does not hide errors in
the others: on failure each top-level item is parsed on its own and every broken item is
reported.
"""

from __future__ import annotations

import bisect
import re
import threading
from fractions import Fraction

from .. import floats
from ..diagnostics import Diagnostics
from ..source import SourceFile, Span
from . import ast as A
from .lalr import ParseError, Parser, Token, UnexpectedCharacters
from .syntax_errors import report


_INT_RE = re.compile(r"^(0x[0-9a-fA-F_]+|0b[01_]+|[0-9][0-9_]*)_?(i8|i16|i32|i64|u8|u16|u32|u64)?$")
_FLOAT_RE = re.compile(r"^(.*?)_?(f16|bf16|f32|f64)?$")


class _Builder:
    """Callbacks run by the LALR parser as it reduces; each returns an AST node."""

    def __init__(self) -> None:
        self.file: SourceFile | None = None
        self.diags: Diagnostics | None = None

    # -- helpers
    def tspan(self, tok: Token) -> Span:
        return Span(self.file, tok.start_pos, tok.end_pos)

    def span(self, children) -> Span:
        """From the first child with a position to the last (hot: no intermediate Spans)."""
        first = last = None
        for c in children:
            if c is None:
                continue
            if isinstance(c, Token):
                pos = (c.start_pos, c.end_pos)
            else:
                s = getattr(c, "span", None)
                if s is None:
                    continue
                pos = (s.start, s.end)
            if first is None:
                first = pos
            last = pos
        return Span(self.file, min(first[0], last[0]), max(first[1], last[1]))

    @staticmethod
    def nodes(children):
        """The AST children, without punctuation and keyword tokens."""
        return [c for c in children if not isinstance(c, Token)]

    @staticmethod
    def tokens(children, *types):
        return [c for c in children if isinstance(c, Token) and c.type in types]

    # -- items
    def start(self, c):
        return c

    def item_only(self, c):
        return c[0]

    def kernel_def(self, c):
        name = self.tokens(c, "NAME")[0]
        generics, params, block, min_blocks, body, cluster = [], [], None, None, None, None
        for n in self.nodes(c):
            if isinstance(n, _Generics):
                generics = n.items
            elif isinstance(n, _Params):
                params = n.items
            elif isinstance(n, _ClusterAttr):
                cluster = n.dims
            elif isinstance(n, _BlockAttr):
                block = n.dims
            elif isinstance(n, _MinBlocksAttr):
                min_blocks = n.expr
            elif isinstance(n, A.Block):
                body = n
        return A.KernelDef(self.span(c), str(name), self.tspan(name), generics, params, block, body, min_blocks,
                           cluster)

    def fn_def(self, c):
        name = self.tokens(c, "NAME")[0]
        generics, params, ret, body = [], [], None, None
        for n in self.nodes(c):
            if isinstance(n, _Generics):
                generics = n.items
            elif isinstance(n, _Params):
                params = n.items
            elif isinstance(n, _Ret):
                ret = n.type
            elif isinstance(n, A.Block):
                body = n
        return A.FnDef(self.span(c), str(name), self.tspan(name), generics, params, ret, body)

    def import_item(self, c):
        tok = self.tokens(c, "STRING")[0]
        return A.Import(self.span(c), str(tok)[1:-1], self.tspan(tok))

    def ret_type(self, c):
        return _Ret(self.nodes(c)[0])

    def generic_params(self, c):
        return _Generics(self.nodes(c))

    def generic_param(self, c):
        name = self.tokens(c, "NAME")[0]
        n = self.nodes(c)
        tune = n.pop().values if n and isinstance(n[-1], _Tune) else None
        return A.GenericParam(self.span(c), str(name), self.tspan(name), n[0], n[1] if len(n) > 1 else None, tune)

    def tune_list(self, c):
        return _Tune(self.nodes(c))

    def params(self, c):
        return _Params(self.nodes(c))

    def param(self, c):
        name = self.tokens(c, "NAME")[0]
        n = self.nodes(c)
        align = next((x.value for x in n[1:] if isinstance(x, _Align)), None)
        stream = next((x.span for x in n[1:] if isinstance(x, _Stream)), None)
        return A.Param(self.span(c), str(name), self.tspan(name), n[0], align, stream)

    def align(self, c):
        tok = self.tokens(c, "INT")[0]
        try:
            value = _parse_int(str(tok))[0]
        except LiteralTooLarge as e:
            self.diags.error("E0203", str(e), self.tspan(tok))
            value = 0
        return _Align(value, self.tspan(tok))

    def stream(self, c):
        return _Stream(self.span(c))

    def block_attr(self, c):
        return _BlockAttr(self.nodes(c))

    def cluster_attr(self, c):
        return _ClusterAttr(self.nodes(c))

    def min_blocks_attr(self, c):
        return _MinBlocksAttr(self.nodes(c)[0])

    def body(self, c):
        return A.Block(self.span(c), self.nodes(c))

    # -- types
    def named_type(self, c):
        return A.TypeName(self.span(c), str(c[0]))

    def ptr_type(self, c):
        mut = bool(self.tokens(c, "MUT"))
        space = self.tokens(c, "NAME", "SHARED", "CONST")[0]
        return A.PtrTypeExpr(self.span(c), mut, str(space), self.tspan(space), self.nodes(c)[0])

    def array_type(self, c):
        elem, length = self.nodes(c)
        return A.ArrayTypeExpr(self.span(c), elem, length)

    def tensormap_type(self, c):
        n = self.nodes(c)
        swz = n[-1] if isinstance(n[-1], _Align) else None
        dims = n[1:-1] if swz else n[1:]
        return A.TensorMapTypeExpr(self.span(c), n[0], list(dims), swz.value if swz else None,
                                   swz.span if swz else None)

    def tuple_type(self, c):
        return A.TupleTypeExpr(self.span(c), self.nodes(c))

    def fn_type(self, c):
        arrow = any(isinstance(x, Token) and x.value == "->" for x in c)
        n = self.nodes(c)
        return A.FnTypeExpr(self.span(c), n[:-1] if arrow else n, n[-1] if arrow else None)

    # -- statements
    def let_stmt(self, c):
        n = self.nodes(c)
        pat = n[0]
        ty = n[1] if len(n) == 3 else None
        return A.Let(self.span(c), pat.names, pat.is_tuple, ty, n[-1])

    def name_pattern(self, c):
        return _Pattern([(str(c[0]), self.tspan(c[0]))], False)

    def tuple_pattern(self, c):
        return _Pattern([(str(t), self.tspan(t)) for t in self.tokens(c, "NAME")], True)

    def var_stmt(self, c):
        name = self.tokens(c, "NAME")[0]
        n = self.nodes(c)
        has_value = bool(self.tokens(c, "ASSIGN"))
        ty = n[0] if (len(n) == 2 or not has_value) and n else None
        return A.Var(self.span(c), str(name), self.tspan(name), ty, n[-1] if has_value else None)

    def shared_stmt(self, c):
        name = self.tokens(c, "NAME")[0]
        n = self.nodes(c)
        swz = next((x for x in n[1:] if isinstance(x, _Align)), None)
        return A.SharedDecl(self.span(c), str(name), self.tspan(name), n[0], swz.value if swz else None,
                            swz.span if swz else None)

    swizzle = align          # `swizzle(N)`: one integer, as `align(N)`

    def if_stmt(self, c):
        n = self.nodes(c)
        return A.If(self.span(c), n[0], n[1], n[2] if len(n) > 2 else None)

    def for_stmt(self, c):
        name = self.tokens(c, "NAME")[0]
        n = self.nodes(c)
        step = n[2] if len(n) == 4 else None
        unroll = bool(self.tokens(c, "UNROLL"))
        return A.For(self.span(c), str(name), self.tspan(name), n[0], n[1], step, n[-1], unroll)

    def while_stmt(self, c):
        cond, body = self.nodes(c)
        return A.While(self.span(c), cond, body)

    def break_stmt(self, c):
        return A.Break(self.span(c))

    def continue_stmt(self, c):
        return A.Continue(self.span(c))

    def return_stmt(self, c):
        n = self.nodes(c)
        return A.Return(self.span(c), n[0] if n else None)

    def expr_stmt(self, c):
        return A.ExprStmt(self.span(c), self.nodes(c)[0])

    def assign_stmt(self, c):
        target, value = self.nodes(c)
        op_tok = [t for t in c if isinstance(t, Token) and t.type.endswith("ASSIGN")][0]
        op = "=" if op_tok.type == "ASSIGN" else str(op_tok)[:-1]
        return A.Assign(self.span(c), target, op, self.tspan(op_tok), value)

    def block_stmt(self, c):
        return c[0]

    # -- expressions
    def binop(self, c):
        lhs, op, rhs = c
        return A.Binary(self.span(c), str(op), self.tspan(op), lhs, rhs)

    def unop(self, c):
        op, operand = c
        return A.Unary(self.span(c), str(op), operand)

    def index(self, c):
        base, idx = self.nodes(c)
        return A.Index(self.span(c), base, idx)

    def field(self, c):
        base = self.nodes(c)[0]
        name = c[-1]
        return A.Field(self.span(c), base, str(name), self.tspan(name))

    def call(self, c):
        name = c[0]
        args = self.nodes(c)[0]
        return A.Call(self.span(c), str(name), self.tspan(name), args)

    def args(self, c):
        return self.nodes(c)

    def bitcast(self, c):
        ty, value = self.nodes(c)
        return A.BitCast(self.span(c), ty, value)

    def name(self, c):
        return A.Name(self.span(c), str(c[0]))

    def paren(self, c):
        inner = self.nodes(c)[0]
        inner.span = self.span(c)  # the parentheses belong to the expression's extent
        return inner

    def tuple_expr(self, c):
        return A.TupleExpr(self.span(c), self.nodes(c))

    def int_lit(self, c):
        span = self.span(c)
        try:
            value, suffix = _parse_int(str(c[0]))
        except LiteralTooLarge as e:
            self.diags.error("E0203", str(e), span, label="too large")
            value, suffix = 0, None
        return A.IntLit(span, value, suffix)

    def float_lit(self, c):
        m = _FLOAT_RE.match(str(c[0]))
        span = self.span(c)
        try:
            value = floats.parse_decimal(m.group(1))
        except floats.DecimalRangeError as e:
            self.diags.error("E0203", str(e), span, label="out of range")
            value = Fraction(0)
        return A.FloatLit(span, value, m.group(2))

    def true_lit(self, c):
        return A.BoolLit(self.span(c), True)

    def false_lit(self, c):
        return A.BoolLit(self.span(c), False)


class _Generics:
    __slots__ = ("items",)

    def __init__(self, items):
        self.items = items


class _Params:
    __slots__ = ("items",)

    def __init__(self, items):
        self.items = items


class _BlockAttr:
    __slots__ = ("dims",)

    def __init__(self, dims):
        self.dims = dims


class _ClusterAttr(_BlockAttr):
    __slots__ = ()


class _Tune:
    __slots__ = ("values",)

    def __init__(self, values):
        self.values = values


class _MinBlocksAttr:
    __slots__ = ("expr",)

    def __init__(self, expr):
        self.expr = expr


class _Ret:
    __slots__ = ("type",)

    def __init__(self, t):
        self.type = t


class _Align:
    __slots__ = ("value", "span")

    def __init__(self, value, span):
        self.value = value
        self.span = span


class _Stream:
    __slots__ = ("span",)

    def __init__(self, span):
        self.span = span


class _Pattern:
    __slots__ = ("names", "is_tuple")

    def __init__(self, names, is_tuple):
        self.names = names
        self.is_tuple = is_tuple


# Integer literals are exact but bounded, so reading one takes bounded time.
MAX_INT_LITERAL_BITS = 8192


class LiteralTooLarge(ValueError):
    pass


def _parse_int(text: str) -> tuple[int, str | None]:
    m = _INT_RE.match(text)
    digits = m.group(1).replace("_", "")
    body = digits[2:] if digits[:2] in ("0x", "0b") else digits
    bits_per_digit = {"0x": 4, "0b": 1}.get(digits[:2], 3.33)
    if len(body.lstrip("0")) * bits_per_digit > MAX_INT_LITERAL_BITS + 4:
        raise LiteralTooLarge(f"integer literal `{text[:20]}...` is too large "
                              f"(literals have at most {MAX_INT_LITERAL_BITS} bits)")
    base = {"0x": 16, "0b": 2}.get(digits[:2], 10)     # decimal even with leading zeros (`007`)
    value = int(body, base) if body else 0
    if value.bit_length() > MAX_INT_LITERAL_BITS:
        raise LiteralTooLarge(f"integer literal `{text[:20]}...` is too large "
                              f"(literals have at most {MAX_INT_LITERAL_BITS} bits)")
    return value, m.group(2)


# ---------------------------------------------------------------- the parser

_lock = threading.Lock()
_parser: Parser | None = None
_builder: _Builder | None = None


def _get_parser() -> tuple[Parser, _Builder]:
    global _parser, _builder
    if _parser is None:
        builder = _Builder()
        _parser, _builder = Parser(builder), builder
    return _parser, _builder


# Files parsed without a diagnostic, by (name, path, text): their items, shared by every
# later compile in the process (AST nodes are never changed after parsing; the checker
# builds typed trees of its own). The standard library is parsed once per process, and a
# recompile of unchanged source skips the parser.
_PARSED: dict = {}
_PARSED_MAX = 256


def parse(file: SourceFile, diags: Diagnostics) -> A.Module:
    """Parse a whole file. Syntax errors go to `diags`; the module holds what parsed."""
    key = (file.name, file.path, file.text)
    hit = _PARSED.get(key)
    if hit is not None:
        return A.Module(hit[0], list(hit[1]))
    module = _parse(file, diags)
    if not module.broken_items and not diags.items:
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.pop(next(iter(_PARSED)))
        _PARSED[key] = (file, tuple(module.items))
    return module


def _parse(file: SourceFile, diags: Diagnostics) -> A.Module:
    parser, builder = _get_parser()
    with _lock:
        builder.file = file
        builder.diags = diags
        reported = len(diags.items)
        try:
            return A.Module(file, parser.parse(file.text, "start"))
        except ParseError as e:
            first_error = e
            # literal errors: kept for the items recovery keeps, reported again as others re-parse
            said = diags.items[reported:]
            del diags.items[reported:]
        return _recover(file, parser, diags, first_error, said)


def _recover(file: SourceFile, parser: Parser, diags: Diagnostics, first_error, said: list = ()) -> A.Module:
    """Report each broken top-level item, and keep the others: one run reports every broken
    item. The items the failed parse had already reduced (`start: item*` keeps them as a
    list at the bottom of its value stack) are kept as they are; the broken item is parsed
    alone for its message, and the rest of the file as a window of the text (offsets stay
    the file's) - a broken item in a large file costs one more pass over it at most, not a
    parse per item."""
    starts = _item_starts(file.text)
    if len(starts) <= 1:
        report(file, diags, first_error)
        return A.Module(file, [], broken_items=_item_names(file.text, starts))
    text = file.text
    bounds = starts + [len(text)]
    items, broken = [], set()
    k, err = 0, first_error             # the items from starts[k] on failed to parse with `err`
    def one(i: int) -> None:
        try:
            items.append(parser.parse(text, "item_only", bounds[i], bounds[i + 1]))
        except ParseError as e:
            report(file, diags, e)
            broken.update(_item_names(text, [bounds[i]]))

    while True:
        # the item holding the error; the items before it, from k, parsed
        bad = max(k, bisect.bisect_right(starts, _error_offset(err)) - 1)
        good = [it for it in _reduced_items(err) if bounds[k] <= it.span.start < bounds[bad]]
        if len(good) == bad - k:
            items += good
            diags.items += [d for d in said if d.span is not None and bounds[k] <= d.span.start < bounds[bad]]
        elif bad > k:
            try:
                items += parser.parse(text, "start", bounds[k], bounds[bad])
            except ParseError:
                for i in range(k, bad):
                    one(i)
        one(bad)
        k = bad + 1
        if k >= len(starts):
            break
        try:
            items += parser.parse(text, "start", bounds[k], len(text))
            break
        except ParseError as e:
            err = e
    return A.Module(file, items, broken_items=broken)


def _reduced_items(err: ParseError) -> list:
    """The whole items a failed parse of `start` had reduced (a list of AST items at the
    bottom of its value stack), else none."""
    stack = getattr(err, "partial", None) or []
    first = stack[0] if stack else None
    if isinstance(first, list) and all(isinstance(i, (A.FnDef, A.KernelDef, A.Import)) for i in first):
        return list(first)
    return []


def _error_offset(err: ParseError) -> int:
    if isinstance(err, UnexpectedCharacters):
        return err.pos
    return err.token.start_pos


_ITEM_RE = re.compile(r"\b(kernel|fn)\s+([A-Za-z_][A-Za-z0-9_]*)|\bimport\s*\"")


_ITEM_SCAN = re.compile(r"//[^\n]*|/\*.*?(?:\*/|\Z)|[{}]|(?<![A-Za-z0-9_])(?:kernel|fn|import)(?![A-Za-z0-9_])", re.S)


def _item_starts(text: str) -> list[int]:
    """Offsets where top-level `kernel`/`fn`/`import` items begin (brace depth 0, outside
    comments). One regular-expression scan: linear, and fast on a large file."""
    starts, depth = [], 0
    for m in _ITEM_SCAN.finditer(text):
        tok = m.group()
        if tok == "{":
            depth += 1
        elif tok == "}":
            depth = max(depth - 1, 0)
        elif depth == 0 and tok[0] in "kfi" and _ITEM_RE.match(text, m.start()):
            starts.append(m.start())
    return starts


def _item_names(text: str, starts: list[int]) -> set:
    names = set()
    for s in starts:
        m = _ITEM_RE.match(text, s)
        if m and m.group(2):
            names.add(m.group(2))
    return names
