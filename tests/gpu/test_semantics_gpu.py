"""The language's arithmetic on the GPU against the interpreter, bit for bit.

Each kernel applies a device function `ops(a, b)` to arrays of special and random
values; the expected results come from running the same function's IR in the
interpreter (ember.ir.interp, i.e. ember.ir.semantics). This pins down what the
lowering must preserve: wrapping, division by zero, shift masking, float min/max on
signed zeros and NaN, saturating float->int conversion and single rounding to every
float type."""

import numpy as np
import pytest

import ember
from ember.ir.types import SCALARS

pytestmark = pytest.mark.gpu

INT_TYPES = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
FLOAT_TYPES = ["f16", "bf16", "f32", "f64"]


def vocabulary(name: str) -> list[str]:
    """Every operator and exactly specified builtin over values of type `name`, from the
    operator and builtin tables (the language refuses `-` on unsigned types)."""
    from ember.frontend.builtins import BUILTINS
    from ember.frontend.operators import BINARY, COMPARE, UNARY
    from ember.ir import signature as sig
    from ember.ir.ops import OPS
    t = SCALARS[name]
    out = [f"a {o} b" for o, op in BINARY.items() if OPS[op].infer_types([t, t], {}) is not None]
    out += [f"({u}a)" for u, op in UNARY.items() if OPS[op].infer_types([t], {}) is not None
            and not (u == "-" and t.is_int and not t.signed)]
    out += [f"u32(a {c} b)" for c in COMPARE]
    for b in BUILTINS.values():
        d = OPS.get(b.op)
        if (d is None or d.eval is None or d.approx is not None or len(b.results) != 1 or not b.params
                or not all(isinstance(p, sig.Var) and p.letter == b.params[0].letter and p.admits(t)
                           for p in b.params + b.results)):
            continue
        out.append(f"{b.name}({', '.join('ab'[i % 2] for i in range(len(b.params)))})")
    return out


def _out_type(expr: str, t: str) -> str:
    return "u32" if expr.startswith("u32(") else t
NP = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16,
      "u32": np.uint32, "u64": np.uint64, "f16": np.float16, "bf16": np.uint16, "f32": np.float32,
      "f64": np.float64}


def _values(t: str, n: int, seed: int) -> np.ndarray:
    """Special and random values of type t (bf16 as its raw bits in uint16)."""
    from ember.ir import semantics as S
    rng = np.random.default_rng(seed)
    st = SCALARS[t]
    if st.is_int:
        lo, hi = st.int_range()
        special = [0, 1, 2, lo, hi, lo + 1, hi - 1, 7, 8, 31, 32, 33, 63, 64] + ([-1] if lo < 0 else [])
        special = np.array([v for v in special if lo <= v <= hi], dtype=NP[t])
        rand = rng.integers(lo, hi, n, endpoint=True, dtype=NP[t])
        return np.concatenate([special, rand])
    f = [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, np.inf, -np.inf, np.nan, 1e-40, -1e-45, 65504.0, 70000.0, 3e38, 1e300]
    x = np.concatenate([np.array(f), rng.standard_normal(n) * 10.0 ** rng.uniform(-8, 8, n)])
    if t == "bf16":
        return S.to_bits(S.round_to(x, st), st).astype(np.uint16)
    with np.errstate(over="ignore"):
        return x.astype(NP[t])


def _program(t: str, exprs: list[str], out_types: list[str], arch: str):
    fn_results = ", ".join(out_types)
    body = ", ".join(exprs)
    outs = ", ".join(f"y{i}: *mut global {ot}" for i, ot in enumerate(out_types))
    stores = " ".join(f"y{i}[i] = r{i};" for i in range(len(exprs)))
    names = ", ".join(f"r{i}" for i in range(len(exprs)))
    src = f"""
fn ops(a: {t}, b: {t}) -> ({fn_results}) {{ return ({body}); }}
kernel k(a: *global {t}, b: *global {t}, {outs}, n: u32) block(256) {{
    let i = block_idx.x * 256 + thread_idx.x;
    if i < n {{ let ({names}) = ops(a[i], b[i]); {stores} }}
}}"""
    return ember.compile(src, arch=arch, opt=0)   # -O0: what reaches LLVM is the IR we interpret


def _expected(prog, a, b, t):
    from ember.ir import semantics as S
    from ember.ir.interp import Interpreter
    st = SCALARS[t]
    fn = prog.ir.get("ops")
    args = [S.from_bits(a.astype(np.uint64), st), S.from_bits(b.astype(np.uint64), st)] if t == "bf16" else [a, b]
    return Interpreter(prog.ir, len(a)).call(fn, args)


def _compare(got, want, out_t):
    from ember.ir import semantics as S
    st = SCALARS[out_t]
    if st.is_float:
        w = np.asarray(want)
        nan = np.isnan(w.astype(np.float64))
        g_bits = got.view(np.uint16) if out_t == "bf16" else got
        g = S.from_bits(g_bits.astype(np.uint64), st) if out_t == "bf16" else got
        assert np.array_equal(np.isnan(g.astype(np.float64)), nan)
        wb, gb = S.to_bits(w[~nan], st), S.to_bits(g[~nan], st)
        bad = np.nonzero(wb != gb)[0]
        assert bad.size == 0, f"{bad.size} differ: got {g[~nan][bad[:4]]} want {w[~nan][bad[:4]]}"
    else:
        bad = np.nonzero(np.asarray(got) != np.asarray(want).astype(got.dtype))[0]
        assert bad.size == 0, f"{bad.size} differ: got {got[bad[:4]]} want {np.asarray(want)[bad[:4]]}"


def _run_ops(t: str, exprs: list[str], out_types: list[str]):
    from ember.runtime.cuda import DeviceArray, context, load
    arch = context().arch
    prog = _program(t, exprs, out_types, arch)
    a, b = _values(t, 20000, 1), _values(t, 20000, 2)
    rng = np.random.default_rng(3)
    a, b = a[rng.permutation(len(a))], b   # pair specials with everything
    a = np.concatenate([a, np.repeat(a[:15], 15)])
    b = np.concatenate([b, np.tile(b[:15], 15)])
    n = len(a)
    outs = [DeviceArray(n, NP[ot]) for ot in out_types]
    load(prog).k(DeviceArray.from_host(a), DeviceArray.from_host(b), *outs, n, grid=((n + 255) // 256,))
    want = _expected(prog, a, b, t)
    errors = []
    for expr, ot, dev, w in zip(exprs, out_types, outs, want):
        try:
            _compare(dev.to_host(), w, ot)
        except AssertionError as e:
            errors.append(f"{t}: `{expr}`: {e}")
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("t", INT_TYPES)
def test_integer_ops_match_interpreter(t):
    exprs = vocabulary(t)
    _run_ops(t, exprs, [_out_type(e, t) for e in exprs])


@pytest.mark.parametrize("t", FLOAT_TYPES)
def test_float_ops_match_interpreter(t):
    exprs = vocabulary(t)
    _run_ops(t, exprs, [_out_type(e, t) for e in exprs])


@pytest.mark.parametrize("t", INT_TYPES + FLOAT_TYPES)
def test_conversions_match_interpreter(t):
    targets = [u for u in INT_TYPES + FLOAT_TYPES if u != t]
    _run_ops(t, [f"{u}(a)" for u in targets], targets)


@pytest.mark.parametrize("src_t, bits_t", [("f64", "u64"), ("f32", "u32"), ("f16", "u16"), ("bf16", "u16")])
@pytest.mark.parametrize("narrow", ["i8", "u16", "u32"])
def test_float_bits_truncated_into_a_narrow_store(src_t, bits_t, narrow):
    """The low bits of a float computed on the GPU, stored narrower: ptxas converted the
    value instead (found by the fuzz corpus; see _bitcast in llvm_lower.py)."""
    from ember.runtime import cuda
    from ember.runtime import load
    if int(narrow[1:]) >= int(bits_t[1:]):
        pytest.skip("not narrower")
    src = f"""kernel k(x: *global {src_t}, o: *mut global {narrow}) block(64) {{
        let i = thread_idx.x;
        let v = select(isnan(x[i]), x[i] * {src_t}(3), x[i] * {src_t}(1.5));
        o[i] = {narrow}(bitcast<{bits_t}>(v));
    }}"""
    prog = ember.compile(src, arch=cuda.context().arch)
    x = _values(src_t, 64, 5)[:64]
    outs = {}
    for dev in ("cuda", "sim"):
        o = np.zeros(64, NP[narrow])
        load(prog, device=dev).k(x, o, grid=1)
        outs[dev] = o
    if src_t == "bf16":   # raw bits
        nan = ((x & 0x7F80) == 0x7F80) & ((x & 0x7F) != 0)
    else:
        nan = np.isnan(x)
    assert np.array_equal(outs["cuda"][~nan], outs["sim"][~nan])   # a NaN's bits are unspecified


@pytest.mark.parametrize("t, dtype", [("i16", np.int16), ("i8", np.int8)])
def test_abs_of_the_narrow_minimum_wraps_when_widened(t, dtype):
    """abs(MIN) = MIN, also after widening: ptxas miscompiled abs.s16 followed by a sign
    extension (fuzz corpus seed 1000729), so Ember lowers narrow abs through 32 bits."""
    import ember
    from ember.runtime import cuda, load
    src = f"""kernel k(a: *global {t}, o: *mut global u32, o2: *mut global i64) block(32) {{
        let v: {t} = abs(a[thread_idx.x]);
        o[thread_idx.x] = u32(v);
        o2[thread_idx.x] = i64(v) + 1;
    }}"""
    prog = ember.compile(src, arch=cuda.context().arch)
    info = np.iinfo(dtype)
    a = np.array([info.min, info.min + 1, -1, 0, 1, info.max] * 5 + [info.min] * 2, dtype)
    got = {}
    for device in ("cuda", "sim"):
        o, o2 = np.zeros(32, np.uint32), np.zeros(32, np.int64)
        load(prog, device=device).k(a, o, o2, grid=1)
        got[device] = (o, o2)
    np.testing.assert_array_equal(got["cuda"][0], got["sim"][0])
    np.testing.assert_array_equal(got["cuda"][1], got["sim"][1])
    assert got["sim"][1][0] == info.min + 1


def _wrapping_then_widening(t: str) -> list[str]:
    """Narrow results that wrap (negation, 0 - x, x * -1, sums, products, shifts), each read by
    an operation that sees more than their own bits: widening, shifting right, division and
    remainder (by constants: a multiply-high; and by a variable)."""
    signed = t.startswith("i")
    producers = ["a + b", "a - b", "a * b", "a << 3", f"0{t} - a"]
    producers += ["-a", "abs(a)", f"a * (-1{t})"] if signed else [f"a * {2 ** int(t[1:]) - 1}{t}"]
    wide = "i32" if signed else "u32"
    consumers = ["({p}) / 3{t}", "({p}) / 7{t}", "({p}) % 3{t}", wide + "({p})", "({p}) >> 1", "({p}) / b",
                 "u32(({p}) < a)"]
    return [c.format(p=p, t=t) for p in producers for c in consumers]


@pytest.mark.parametrize("t", ["i8", "i16", "u8", "u16"])
def test_narrow_results_that_wrap_keep_their_bits_when_read_wider(t):
    """ptxas compiled neg.s16 to a 32-bit negation and then read it as an extended i16:
    (-(-32768i16)) / 3 gave 10923 (fuzz corpus seed 300052); Ember rewrites neg.s16
    (ember/lowering/ptx.py). The other wrapping ops are checked the same way."""
    exprs = _wrapping_then_widening(t)
    _run_ops(t, exprs, ["u32" if e.startswith("u32(") else "i32" if e.startswith("i32(") else t for e in exprs])
