"""The IR text form: print -> parse -> print gives the same bytes, for every kernel in
kernels_src and for constants of every type (floats bit-exact, NaN payloads included)."""

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import ember
from ember.ir.parser import parse_module
from ember.ir.printer import print_module
from ember.ir.verifier import verify_module

ROOT = Path(__file__).resolve().parents[2]


def roundtrip(text: str) -> None:
    m = parse_module(text)
    verify_module(m)
    assert print_module(m) == text


@pytest.mark.parametrize("neox", [False, True])
@pytest.mark.parametrize("fast", [False, True])
def test_rope_ir_round_trips(neox, fast):
    prog = ember.compile(ROOT / "kernels_src" / "rope.ember",
                         defines={"HEAD_DIM": 128, "NEOX": neox, "FAST": fast}, stop_after="ir-opt")
    roundtrip(prog.stage("ir"))
    roundtrip(prog.stage("ir-opt"))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["f16", "bf16", "f32", "f64"]), st.integers(min_value=0))
def test_float_constants_are_bit_exact(fmt, raw):
    bits = raw % (1 << {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}[fmt])
    text = f"kernel @k() {{\n  %c = arith.const {_fmt(bits, fmt)} : {fmt}\n  return\n}}\n"
    m = parse_module(text)
    assert m.functions[0].body.ops[0].attrs["value"] == bits
    assert print_module(m) == text


def _fmt(bits, fmt):
    from ember import floats
    return floats.format_bits(bits, fmt)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]), st.integers())
def test_int_constants(t, v):
    from ember.ir.types import SCALARS
    lo, hi = SCALARS[t].int_range()
    v = lo + v % (hi - lo + 1)
    roundtrip(f"kernel @k() {{\n  %c = arith.const {v} : {t}\n  return\n}}\n")


def test_names_are_deduplicated_deterministically():
    text = ("kernel @k(%x: u32) {\n  %a = arith.add %x, %x : u32\n  %a.1 = arith.add %a, %x : u32\n"
            "  %0 = arith.mul %a.1, %a : u32\n  return\n}\n")
    roundtrip(text)


def test_an_op_without_operands_ends_at_its_line():
    """`gpu.barrier` then a definition on the next line: the value begins the next op (it
    was read as the barrier's operand)."""
    roundtrip("""kernel @k(%x: *mut global u32) attributes {block = [32, 1, 1]} {
  %i = gpu.thread_idx x : u32
  gpu.barrier
  %v = mem.load %x[%i] : u32
  gpu.exited
  %w, %z = func.call @two(%v) : u32, u32
  mem.store %w, %x[%z] : u32
  return
}

func @two(%a: u32) -> (u32, u32) {
  return %a, %a : u32, u32
}
""")
