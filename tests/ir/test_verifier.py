"""The verifier rejects malformed IR with a located message."""

import re

import pytest

from ember.ir.parser import IRSyntaxError, parse_module
from ember.ir.verifier import VerifyError, verify_module


def verify_text(body: str, sig: str = "%x: u32, %p: *mut global f32, %h: f16, %q: *global f32 align(16)"):
    m = parse_module(f"kernel @k({sig}) {{\n{body}\n  return\n}}\n")
    verify_module(m)


@pytest.mark.parametrize("body,msg", [
    ("  %y = arith.add %x, %p : u32", re.escape("operand `rhs` must be u32 (like the other `N`)")),
    ("  %c = arith.const 300 : u8", "out of range"),
    ("  %y = arith.cast %x : u32 to u32\n  %z = arith.cmp lt %y, %x : u32\n  %w = arith.select %y, %x, %x : u32",
     "operand `cond` must be bool, not u32"),
    ("  mem.store %x, %p[%x] : u32", "does not match the pointee"),
    ("  %b = arith.bitcast %x : u32 to f64", re.escape("cannot bit cast `u32` (4 bytes) to `f64` (8 bytes)")),
    ("  %y = math.sin %x : u32", "operand `x` must be a float, not u32"),
    ("  %y = math.sin %h : f16", "operand `x` is defined for f32, f64 only, not f16"),
    ("  %o = mem.offset %q, %x : *global f32 align(16)", "claims no alignment of its own"),
    ("  %v = gpu.shfl sideways %x, %x : u32", "attribute `mode` must be one of down, up, xor, idx"),
    ("  %r = scf.for %i = %x to %x step %x iter_args(%a = %x) -> (u32) {\n    %f = arith.const 1.0 : f32\n"
     "    scf.yield %f : f32\n  }", re.escape("yields (f32) but (u32) is expected")),
    ("  %y = func.call @nowhere(%x) : u32", "unknown function"),
])
def test_rejects(body, msg):
    with pytest.raises(VerifyError, match=msg):
        verify_text(body)


def test_store_through_readonly_pointer():
    with pytest.raises(VerifyError, match="read-only"):
        verify_text("  %v = mem.load %p[%x] : f32\n  mem.store %v, %p[%x] : f32", sig="%x: u32, %p: *global f32")


def test_use_outside_its_region_is_rejected():
    text = """kernel @k(%x: u32) {
  %c = arith.cmp lt %x, %x : u32
  scf.if %c {
    %inner = arith.add %x, %x : u32
  }
  %y = arith.add %inner, %x : u32
  return
}
"""
    m = parse_module(text)
    with pytest.raises(VerifyError, match="not defined or not visible"):
        verify_module(m)


def test_parse_errors_have_locations():
    with pytest.raises(IRSyntaxError) as e:
        parse_module("kernel @k() {\n  %y = arith.frobnicate : u32\n  return\n}\n")
    assert "unknown op" in str(e.value) and e.value.span.line_col == (2, 8)


def test_use_lists_must_match_the_ir():
    """A pass that drops an op from its region without erasing it leaves its operands'
    use lists counting a user that is gone: the verifier reports it."""
    m = parse_module("kernel @k(%x: u32) {\n  %y = arith.add %x, %x : u32\n  %z = arith.mul %y, %x : u32\n"
                     "  return\n}\n")
    verify_module(m)
    body = m.functions[0].body
    body.ops = [body.ops[0], body.ops[-1]]        # the mul is dropped but not erased
    with pytest.raises(VerifyError, match="use list of .* is stale"):
        verify_module(m)
    m = parse_module("kernel @k(%x: u32) {\n  %y = arith.add %x, %x : u32\n  return\n}\n")
    op = m.functions[0].body.ops[0]
    op.operands = (op.operands[0], op.operands[0])  # rewired behind the use lists' back
    x = m.functions[0].args[0]
    x.uses[op] = 1
    with pytest.raises(VerifyError, match="use list"):
        verify_module(m)


@pytest.mark.parametrize("attr,ok", [
    ("[3]", True),                 # %q: *global f32 align(16)
    ("[1]", False),                # a written pointer
    ("[0]", False),                # not a pointer
    ("[7]", False),                # no such parameter
    ("3", False),                  # not a list
])
def test_stream_attribute_names_read_only_pointers(attr, ok):
    text = (f"kernel @k(%x: u32, %p: *mut global f32, %h: f16, %q: *global f32 align(16)) "
            f"attributes {{stream = {attr}}} {{\n  return\n}}\n")
    if ok:
        verify_module(parse_module(text))
    else:
        with pytest.raises(VerifyError, match="`stream` must list parameters of a kernel"):
            verify_module(parse_module(text))
    with pytest.raises(VerifyError, match="`stream`"):
        verify_module(parse_module("func @f(%q: *global f32) attributes {stream = [0]} {\n  return\n}\n"))
