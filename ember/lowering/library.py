"""Ember's library functions (today the Payne-Hanek reductions that the accurate sin, cos
and tan call for huge arguments), compiled once per process and target and linked into each
module's PTX.

A module's LLVM module only declares the library functions its code calls: those of the
math templates the lowering emits, and those expand-math added to it (marked `library`)
with the templates it copied in; lower_module lists them (`library`). Each is compiled on its own, from mathlib's canonical copy
(ember.ir.passes.expand_math.library_function), once per process and (arch, PTX version,
-O level, LLVM pipeline): the next compile in the process compiles none of it (the f64
reduction is 207 IR ops; rope.ember went from 302 to 251 million instructions per compile).
Nothing of it depends on the module, so the PTX is the same bytes as if it were compiled
with the module each time.

Linking is text: after the module's header come the tables the functions read (each once),
then the functions, each callee before its callers, then the module without its
`.extern .func` declarations of them. Both sides are compiled with external linkage, which
makes them agree on the calling convention (NVPTX widens the parameter alignment of
internal functions only); the definitions lose `.visible` here, so a module exports no
library symbol and two Ember modules link together. Call sites are numbered afterwards
(ember.lowering.ptx), over the whole text.
"""

from __future__ import annotations

import re
import threading
from functools import cache

from ..diagnostics import InternalError
from ..ir.core import Function, Module
from ..records import record
from ..targets import Target

_lock = threading.Lock()
_units: dict = {}          # (name, arch, PTX version, -O, LLVM pipeline) -> _Unit


@record(frozen=True)
class _Unit:
    tables: tuple          # the module-scope `.const` definitions the function reads, one line each
    body: str              # its definition


_HEADER_END = re.compile(r"^\.address_size \d+\n", re.M)
_EXTERN_FUNC = re.compile(r"^\.extern \.func\s[^;]*?\b([\w$]+)\s*\([^;]*;\n", re.M)
_TABLE = re.compile(r"^\.(?:const|global) [^\n]*;\n", re.M)
_GLOBL = re.compile(r"^\s*// \.globl\s+\S+\n", re.M)


def link(ptx: str, names: list[str], target: Target, opt: int, pipeline: str) -> str:
    """`ptx` (a module's raw PTX, declaring the library functions `names`) with them defined."""
    if not names:
        return ptx
    units = [_unit(n, target, opt, pipeline) for n in _callees_first(names)]
    m = _HEADER_END.search(ptx)
    if m is None:
        raise InternalError("ptx", "LLVM's PTX has no .address_size line")
    wanted = set(names)
    rest = _EXTERN_FUNC.sub(lambda e: "" if e.group(1) in wanted else e.group(0), ptx[m.end():])
    tables: list[str] = []
    for u in units:
        for t in u.tables:
            if t not in tables and t not in rest:
                tables.append(t)
    return ptx[:m.end()] + "\n" + "".join(tables) + "".join(u.body for u in units) + rest


@cache
def _callees(name: str) -> tuple[str, ...]:
    """What library function `name` calls (its canonical copy never changes: walked once)."""
    return tuple(sorted({op.attrs["callee"] for op in _function(name).walk() if op.name == "func.call"}))


def _function(name: str) -> Function:
    from ..ir.passes.expand_math import library_function
    f = library_function(name)
    if f is None:
        raise InternalError("lower", f"`{name}` is marked as a library function, but Ember's library has none "
                                     "of that name")
    return f


def _callees_first(names: list[str]) -> list[str]:
    """`names` and what they call, every callee before its callers (then by name)."""
    order: list[str] = []
    done: set = set()
    for root in names:
        stack = [(root, iter(_callees(root)))]
        while stack:
            name, it = stack[-1]
            callee = next(it, None)
            if callee is None:
                stack.pop()
                if name not in done:
                    done.add(name)
                    order.append(name)
            elif callee not in done and all(callee != s[0] for s in stack):
                stack.append((callee, iter(_callees(callee))))
    return order


def _unit(name: str, target: Target, opt: int, pipeline: str) -> _Unit:
    key = (name, target.arch, target.ptx, opt, pipeline)
    with _lock:
        unit = _units.get(key)
    if unit is None:
        unit = _compile(name, target, opt, pipeline)
        with _lock:
            unit = _units.setdefault(key, unit)
    return unit


def _compile(name: str, target: Target, opt: int, pipeline: str) -> _Unit:
    from ..ir import mathlib
    from . import llvm_lower, ptx as ptxmod
    f = _function(name)
    module = Module([f] + [_function(c) for c in _callees(name)], list(mathlib.globals_needed().values()))
    text = str(llvm_lower.lower_module(module, target, ptxmod.data_layout(target), library_definition=name))
    raw = ptxmod.emit_raw(ptxmod.optimize(text, target, opt, pipeline), target, opt)
    m = _HEADER_END.search(raw)
    if m is None:
        raise InternalError("ptx", "LLVM's PTX has no .address_size line")
    body = _EXTERN_FUNC.sub("", raw[m.end():])
    tables = tuple(_TABLE.findall(body))
    body = _GLOBL.sub("", _TABLE.sub("", body))
    body, n = re.subn(r"^\.visible \.func\b", ".func", body, flags=re.M)
    if n != 1:
        raise InternalError("ptx", f"the PTX of library function `{name}` defines {n} functions")
    return _Unit(tables, body.lstrip("\n"))
