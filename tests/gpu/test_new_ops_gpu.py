"""The bit operations, shfl_up, shuffles of tuples, redux_* and match_* compute on the GPU
what the simulator computes, bit for bit, over every integer type they take and divergent
warps."""

import numpy as np
import pytest

import ember
from tests.sim.test_warp_reduce import SRC as WARP_SRC
from tests.sim.test_warp_reduce import inputs as warp_inputs

pytestmark = pytest.mark.gpu

TYPES = ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"]


@pytest.mark.parametrize("t", TYPES)
def test_bit_ops_and_shfl_up(t):
    from ember.runtime import cuda
    src = (f"kernel k(x: *mut global {t}, o: *mut global u32, r: *mut global {t}) block(64) {{\n"
           "    let i = thread_idx.x;\n"
           "    o[i * 4u32] = popc(x[i]);\n    o[i * 4u32 + 1u32] = clz(x[i]);\n"
           "    o[i * 4u32 + 2u32] = bfind(x[i]);\n"
           "    o[i * 4u32 + 3u32] = u32(shfl_up(brev(x[i]), i % 7u32));\n"
           "    r[i] = brev(x[i]);\n}\n")
    rng = np.random.default_rng(len(t))
    info = np.iinfo(np.dtype(("u" if t[0] == "u" else "") + "int" + t[1:]))
    x = rng.integers(info.min, info.max, 64, endpoint=True, dtype=info.dtype)
    x[:6] = [0, 1, info.max, info.min, info.max // 3, -1 if info.min < 0 else 2]
    prog = ember.compile(src, arch=cuda.context().arch, cache=False)
    outs = {}
    for device in ("cuda", "sim"):
        o, r = np.zeros(256, np.uint32), np.zeros(64, info.dtype)
        ember.runtime.load(prog, device=device).k(x.copy(), o, r, grid=1)
        outs[device] = (o, r)
    assert (outs["cuda"][0] == outs["sim"][0]).all() and (outs["cuda"][1] == outs["sim"][1]).all()


@pytest.mark.parametrize("n", [0, 1, 5])
def test_redux_and_match(n):
    from ember.runtime import cuda
    x, s, w = warp_inputs(n)
    prog = ember.compile(WARP_SRC, arch=cuda.context().arch, cache=False)
    outs = {}
    for device in ("cuda", "sim"):
        o = np.zeros(64 * 8, np.uint32)
        ember.runtime.load(prog, device=device).k(x, s, w, o, n, grid=1)
        outs[device] = o
    assert (outs["cuda"] == outs["sim"]).all()


@pytest.mark.parametrize("seed", [1, 2])
def test_tuple_shuffles(seed):
    from ember.runtime import cuda
    from tests.sim.test_tuple_shuffles import _inputs, _run
    x, w = _inputs(seed)
    got, want = _run("cuda", x, w, arch=cuda.context().arch), _run("sim", x, w)
    assert all((g == s).all() for g, s in zip(got, want))


def test_elect_sync():
    from ember.runtime import cuda
    from tests.sim.test_elect import ELECT, expected
    if cuda.context().compute_capability < (9, 0):
        pytest.skip("elect.sync needs sm_90")
    prog = ember.compile(ELECT, arch=cuda.context().arch, cache=False)
    for n in (1, 3, 7, 40):
        out = np.zeros(96, np.uint32)
        ember.runtime.load(prog, device="cuda").k(out, n, grid=1)
        np.testing.assert_array_equal(out, expected(n))


def test_warp_barrier_exchange_and_staged_bulk_stores():
    """The simulator's warp_barrier programs on the GPU: the same values (the staged bulk
    stores on sm_90)."""
    from ember.runtime import cuda
    from tests.sim.test_warp_barrier import REVERSE, STAGED
    cases = [(REVERSE, 96)] + ([(STAGED, 512)] if cuda.context().compute_capability >= (9, 0) else [])
    for src, n in cases:
        x = np.random.default_rng(5).standard_normal(n).astype(np.float32)
        got, want = np.zeros_like(x), np.zeros_like(x)
        for device, out in (("cuda", got), ("sim", want)):
            prog = ember.compile(src, arch=cuda.context().arch, cache=False)
            ember.runtime.load(prog, device=device).k(x, out, grid=1)
        np.testing.assert_array_equal(got, want)


def test_setmaxnreg_on_sm_90a():
    from ember.runtime import cuda
    from tests.sim.test_setmaxnreg import SRC
    if cuda.context().compute_capability != (9, 0):
        pytest.skip("setmaxnreg is compiled for sm_90a here")
    prog = ember.compile(SRC.replace("PRODUCERS", "4u32"), arch="sm_90a", cache=False)
    out = np.zeros(256, np.uint32)
    ember.runtime.load(prog, device="cuda").k(out, grid=1)
    np.testing.assert_array_equal(out, np.repeat([1, 2], 128))
