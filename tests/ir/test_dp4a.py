"""dp4a (`arith.dp4a`, the `dp4a` builtin): semantics against a byte-by-byte reference in
Python integers, constant folding, the zero-factor rewrite, the type rule in the verifier,
and the simulator running it in a kernel (the GPU test is tests/gpu/test_dp4a_gpu.py)."""

import itertools

import numpy as np
import pytest

import ember
from ember.ir.ops import OPS
from ember.ir.parser import parse_module
from ember.ir.passes import run_passes
from ember.ir.verifier import VerifyError, verify_module
from ember.runtime import load

COMBOS = list(itertools.product(["i32", "u32"], repeat=2))
EDGES = [0, 1, 0x7F7F7F7F, 0x80808080, 0xFFFFFFFF, 0x01FF80FE, 0x12345678]


def reference(a: int, b: int, c: int, sa: bool, sb: bool) -> int:
    """The PTX definition: four byte products (each byte signed or not) plus c, mod 2^32."""
    def byte(x, k, signed):
        v = (x >> (8 * k)) & 0xFF
        return v - 256 if signed and v >= 128 else v
    return (sum(byte(a, k, sa) * byte(b, k, sb) for k in range(4)) + c) & 0xFFFFFFFF


def _inputs(n: int, seed: int):
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 2**32, size=(3, n), dtype=np.uint64).astype(np.uint32)
    raw[:, : len(EDGES) ** 2] = np.array([[x, y, x ^ y] for x in EDGES for y in EDGES], dtype=np.uint32).T
    return raw


def _as(t: str, bits: np.ndarray) -> np.ndarray:
    return bits.view(np.int32) if t == "i32" else bits


def _result_type(ta, tb):
    return "u32" if ta == tb == "u32" else "i32"


@pytest.mark.parametrize("ta, tb", COMBOS)
def test_eval_matches_the_byte_by_byte_definition(ta, tb):
    tr = _result_type(ta, tb)
    m = parse_module(f"func @f(%a: {ta}, %b: {tb}, %c: {tr}) -> {tr} {{\n"
                     f"  %r = arith.dp4a %a, %b, %c : {ta}, {tb}, {tr}\n  return %r : {tr}\n}}\n")
    op = next(op for op in m.functions[0].walk() if op.name == "arith.dp4a")
    a, b, c = _inputs(2000, seed=hash((ta, tb)) % 1000)
    (got,) = OPS["arith.dp4a"].eval(op, _as(ta, a), _as(tb, b), _as(tr, c))
    want = [reference(int(x), int(y), int(z), ta == "i32", tb == "i32") for x, y, z in zip(a, b, c)]
    assert got.dtype == (np.int32 if tr == "i32" else np.uint32)
    assert got.view(np.uint32).tolist() == want


def test_constants_fold_and_a_zero_factor_leaves_the_accumulator():
    m = parse_module("""func @f(%x: i32, %c: i32) -> (i32, i32, i32) {
  %a = arith.const 2155905152 : u32
  %b = arith.const -16843010 : i32
  %k = arith.const 100 : i32
  %z = arith.const 0 : i32
  %r = arith.dp4a %a, %b, %k : u32, i32, i32
  %s = arith.dp4a %x, %z, %c : i32, i32, i32
  %t = arith.dp4a %z, %x, %c : i32, i32, i32
  return %r, %s, %t : i32, i32, i32
}
""")
    run_passes(m, ["canonicalize"])
    f = m.functions[0]
    r, s_, t = next(op for op in f.walk() if op.name == "func.return").operands
    want = reference(2155905152, -16843010 & 0xFFFFFFFF, 100, False, True)
    assert r.op.name == "arith.const" and r.op.value == (want - 2**32 if want >= 2**31 else want)
    assert s_ is f.body.args[1] and t is f.body.args[1]      # the accumulator itself


@pytest.mark.parametrize("types, message", [
    ("u32, u32, i32", "operand `acc` must be u32 (u32 when `a` and `b` are both u32, else i32), not i32"),
    ("i32, u32, u32", "operand `acc` must be i32"),
    ("i64, u32, u32", "operand `a` is defined for i32, u32 only, not i64"),
])
def test_the_verifier_applies_the_type_rule(types, message):
    ta, tb, tc = [t.strip() for t in types.split(",")]
    text = (f"func @f(%a: {ta}, %b: {tb}, %c: {tc}) {{\n"
            f"  %r = arith.dp4a %a, %b, %c : {ta}, {tb}, {tc}\n  return\n}}\n")
    with pytest.raises(Exception, match="cannot be inferred|" + message.replace("(", r"\(").replace(")", r"\)")):
        verify_module(parse_module(text))


def test_verifier_rejects_a_wrong_result_type():
    from ember.ir.core import Op
    from ember.ir.types import I32
    m = parse_module("func @f(%a: u32, %b: u32, %c: u32) {\n  return\n}\n")
    f = m.functions[0]
    a, b, c = f.body.args
    op = Op(OPS["arith.dp4a"], [a, b, c], [I32])
    f.body.ops.insert(0, op)
    with pytest.raises(VerifyError, match="result `result` must be u32"):
        verify_module(m)


KERNEL = """
kernel k(s: *global i32, u: *global u32, y: *mut global i32, z: *mut global u32, n: u32) block(64) {
    let i = block_idx.x * 64 + thread_idx.x;
    if i < n {
        y[i] = dp4a(s[i], s[i + n], y[i]);
        y[i + n] = dp4a(s[i], u[i], y[i + n]);
        y[i + 2 * n] = dp4a(u[i], s[i], y[i + 2 * n]);
        z[i] = dp4a(u[i], u[i + n], z[i]);
    }
}
"""


def expected(s, u, y, z, n):
    ref = np.vectorize(reference, otypes=[np.int64])
    sb, ub, yb, zb = (x.view(np.uint32).astype(np.int64) for x in (s, u, y, z))
    out_y = np.concatenate([ref(sb[:n], sb[n:], yb[:n], True, True), ref(sb[:n], ub[:n], yb[n:2 * n], True, False),
                            ref(ub[:n], sb[:n], yb[2 * n:], False, True)]).astype(np.uint32).view(np.int32)
    out_z = ref(ub[:n], ub[n:], zb, False, False).astype(np.uint32)
    return out_y, out_z


def arguments(n: int, seed: int):
    a, b, c = _inputs(2 * n, seed)
    s, u = a.view(np.int32).copy(), b.copy()
    y = np.concatenate([c, c[:n]]).view(np.int32).copy()[: 3 * n]
    z = c[:n].copy()
    return s, u, y, z


@pytest.mark.parametrize("opt", [0, 3])
def test_simulator_runs_all_four_forms(opt):
    n = 200
    s, u, y, z = arguments(n, seed=11)
    want_y, want_z = expected(s, u, y, z, n)
    load(ember.compile(KERNEL, opt=opt), device="sim").k(s, u, y, z, n, grid=(n + 63) // 64)
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(z, want_z)
