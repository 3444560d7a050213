"""Math builtins on the GPU.

Accurate and native functions must give exactly the bits the interpreter computes from
the same IR (the expansion in ember.ir.mathlib uses only exactly specified operations);
NaN results only need to be NaN. Fast approximations are measured against f64 and must
stay within the bounds docs/math.md gives."""

import numpy as np
import pytest

import ember
from ember.ir.interp import expansion
from ember.ir.ops import OPS
from ember.ir.types import F32, F64

pytestmark = pytest.mark.gpu

# The vocabularies come from the op table: accurate ops are the expanded unary ones,
# native ones the exactly specified unary math ops, fast ones those with a documented bound.
ACCURATE = [n[5:] for n, d in OPS.items() if n.startswith("math.") and d.expanded_by and len(d.results) == 1]
NATIVE = {n[5:]: d for n, d in OPS.items() if n.startswith("math.") and d.eval and not d.approx
          and len(d.operands) == 1}
FAST = [n[5:] for n, d in OPS.items() if d.approx is not None]


def _inputs(dtype, n=200_000, seed=0):
    rng = np.random.default_rng(seed)
    f = np.finfo(dtype)
    special = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5, np.inf, -np.inf, np.nan,
                        f.tiny, -f.tiny, f.tiny * f.eps, f.max, -f.max, np.pi / 2, np.pi, 1e5, 105615.0,
                        105616.0, 2.0 ** 26, 3e38 if dtype == np.float32 else 1e300], dtype=np.float64)
    parts = [special,
             rng.uniform(-10, 10, n // 4),
             rng.uniform(-1e5, 1e5, n // 4),
             rng.standard_normal(n // 4) * 10.0 ** rng.uniform(-30, 30 if dtype == np.float32 else 300, n // 4),
             rng.uniform(-160, 160, n // 4)]
    with np.errstate(over="ignore"):
        return np.concatenate(parts).astype(dtype)


def _run(source, x, outs, arch):
    from ember.runtime.cuda import DeviceArray, load
    mod = load(ember.compile(source, arch=arch))
    n = len(x)
    dx = DeviceArray.from_host(x)
    dys = [DeviceArray(n, x.dtype) for _ in range(outs)]
    mod.k(dx, *dys, n, grid=((n + 255) // 256,))
    return [d.to_host() for d in dys]


def _run_n(source, args, arch):
    """Launch `k(args..., out, n)` over len(args[0]) threads; the output array."""
    from ember.runtime.cuda import load
    n = len(args[0])
    out = np.zeros(n, np.float32)
    load(ember.compile(source, arch=arch)).k(*args, out, n, grid=((n + 255) // 256,))
    return out


def _same(got, want):
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    bits = {np.float32: np.uint32, np.float64: np.uint64}[want.dtype.type]
    mism = np.nonzero(got[~nan].view(bits) != want[~nan].view(bits))[0]
    assert mism.size == 0, f"{mism.size} results differ, e.g. {got[~nan][mism[:5]]} vs {want[~nan][mism[:5]]}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", ACCURATE + ["sincos"] + list(NATIVE))
def test_accurate_and_native_math_is_bit_exact(fn, dtype):
    from ember.runtime.cuda import context
    arch = context().arch
    t = "f32" if dtype == np.float32 else "f64"
    x = _inputs(dtype)
    if fn == "sincos":
        src = f"""kernel k(x: *global {t}, s: *mut global {t}, c: *mut global {t}, n: u32) block(256) {{
            let i = block_idx.x * 256 + thread_idx.x;
            if i < n {{ let (a, b) = sincos(x[i]); s[i] = a; c[i] = b; }} }}"""
        got = _run(src, x, 2, arch)
        want = expansion("math.sincos", F32 if t == "f32" else F64).run([x])
        for g, w in zip(got, want):
            _same(g, w)
        return
    src = f"""kernel k(x: *global {t}, y: *mut global {t}, n: u32) block(256) {{
        let i = block_idx.x * 256 + thread_idx.x;
        if i < n {{ y[i] = {fn}(x[i]); }} }}"""
    got, = _run(src, x, 1, arch)
    if fn in NATIVE:          # the op's own semantics
        from ember.ir.interp import evaluate
        from ember.ir.core import Op, Value
        t_ir = F32 if t == "f32" else F64
        op = Op(NATIVE[fn], [Value(t_ir)], [t_ir])
        want, = evaluate(op, [x.astype(dtype)])
    else:
        want, = expansion(f"math.{fn}", F32 if t == "f32" else F64).run([x])
    _same(got, want)


def _inside(r, n: int, rng) -> np.ndarray:
    """n f32 values spread over a Range (log-uniform when it is all positive)."""
    if r.lo > 0:
        x = np.exp(rng.uniform(np.log(r.lo), np.log(r.hi), n))
        if r.magnitude:
            x *= rng.choice([-1.0, 1.0], n)
    else:
        x = rng.uniform(r.lo, r.hi, n)
    return x.astype(np.float32)


@pytest.mark.parametrize("fn", FAST)
def test_fast_math_within_documented_bounds(fn):
    from ember.runtime.cuda import context
    approx = OPS[f"math.{fn}"].approx         # the bound docs/math.md documents
    rng = np.random.default_rng(3)
    args = [_inside(r, 100_000, rng) for r in approx.domain]
    names = "xyz"[: len(args)]
    params = ", ".join(f"{c}: *global f32" for c in names)
    src = f"""kernel k({params}, out: *mut global f32, n: u32) block(256) {{
        let i = block_idx.x * 256 + thread_idx.x;
        if i < n {{ out[i] = {fn}({', '.join(f'{c}[i]' for c in names)}); }} }}"""
    got = _run_n(src, args, context().arch)
    inside, err, bound = approx.errors(tuple(args), got)
    assert inside.all()
    print(f"{fn}: max {approx.kind} error {err.max():.3g} (bound {bound:.3g})")
    assert err.max() <= bound
