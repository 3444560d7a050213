"""kernels_src/gemm_bf16.ember in the simulator (every check on): against the f64 reference,
and the batch-invariance contract of seed 004 at CI sizes - a row's output is bitwise the
same for every M (multiples of the 64-row tile or not), every chunking of the batch and
whatever the rows past M hold; K a power of two or not. tests/gpu/test_gemm_gpu.py runs
the same battery at real sizes on the GPU."""

from pathlib import Path

import numpy as np
import pytest

import ember
from ember.reference.gemm import bf16_bits, bf16_values, linear, linear_backward
from ember.sim import load

SRC = Path(__file__).resolve().parents[2] / "kernels_src" / "gemm_bf16.ember"
# the three products of a linear layer: which operand is stored transposed
PRODUCTS = {"forward": {}, "dx": {"B_T": True}, "dw": {"A_T": True, "B_T": True}}


def kernel(product: str):
    return load(ember.compile(SRC, defines=PRODUCTS[product], cache=False)).gemm_bf16


@pytest.fixture(scope="module")
def gemm():
    return kernel("forward")


def run(gemm, a_bits, w_bits, m, n, k):
    c = np.zeros(m * n, np.float32)
    gemm(a_bits, w_bits, c, m, n, k, grid=((n + 127) // 128, (m + 127) // 128))
    return c.reshape(m, n)


@pytest.mark.parametrize("m, n, k", [(1, 8, 16), (40, 72, 96), (64, 64, 64), (70, 20, 40), (33, 21, 40)])
def test_matches_the_f64_reference(gemm, m, n, k):
    rng = np.random.default_rng(m * 1000 + n + k)
    a, w = bf16_values(rng.standard_normal((m, k))), bf16_values(rng.standard_normal((n, k)))
    c = run(gemm, bf16_bits(a), bf16_bits(w), m, n, k)
    ref = linear(a, w)
    assert np.abs(c - ref).max() <= 1e-6 * np.abs(ref).max() * np.sqrt(k)


@pytest.mark.parametrize("k", [64, 72])          # a power of two, and not
def test_rows_do_not_depend_on_the_batch(gemm, k):
    n, rows = 24, 140
    rng = np.random.default_rng(k)
    a, w = bf16_values(rng.standard_normal((rows, k))), bf16_values(rng.standard_normal((n, k)))
    full = run(gemm, bf16_bits(a), bf16_bits(w), rows, n, k)
    for m in (1, 3, 17, 64, 65, 128):            # every M gives the same rows, bit for bit
        assert np.array_equal(run(gemm, bf16_bits(a[:m]), bf16_bits(w), m, n, k), full[:m])
    for cut in (1, 30, 129):                    # any split of the batch into chunks
        parts = [run(gemm, bf16_bits(a[s:e]), bf16_bits(w), e - s, n, k)
                 for s, e in ((0, cut), (cut, rows))]
        assert np.array_equal(np.concatenate(parts), full)


@pytest.mark.parametrize("fill", [0.0, np.nan, np.inf, "random"])
def test_rows_past_m_are_never_read(gemm, fill):
    m, n, k = 5, 16, 48
    rng = np.random.default_rng(1)
    a, w = bf16_values(rng.standard_normal((m, k))), bf16_values(rng.standard_normal((n, k)))
    padded = np.full((64, k), 0.0)
    padded[:m] = a
    padded[m:] = rng.standard_normal((64 - m, k)) if fill == "random" else fill
    ref = run(gemm, bf16_bits(a), bf16_bits(w), m, n, k)
    assert np.array_equal(run(gemm, bf16_bits(bf16_values(padded)), bf16_bits(w), m, n, k), ref)


@pytest.mark.parametrize("m, n, k", [(40, 72, 96), (130, 16, 24)])
def test_backward_products_match_the_f64_reference(m, n, k):
    rng = np.random.default_rng(m + n)
    x, w = bf16_values(rng.standard_normal((m, k))), bf16_values(rng.standard_normal((n, k)))
    dy = bf16_values(rng.standard_normal((m, n)))
    dx_ref, dw_ref = linear_backward(x, w, dy)
    dx = run(kernel("dx"), bf16_bits(dy), bf16_bits(w), m, k, n)
    dw = run(kernel("dw"), bf16_bits(dy), bf16_bits(x), n, k, m)
    for got, ref, depth in ((dx, dx_ref, n), (dw, dw_ref, m)):
        assert np.abs(got - ref).max() <= 1e-6 * np.abs(ref).max() * np.sqrt(depth)


def test_dx_rows_do_not_depend_on_the_batch_and_dw_ignores_zero_rows():
    m, n, k = 70, 24, 40
    rng = np.random.default_rng(2)
    x, w = bf16_values(rng.standard_normal((m, k))), bf16_values(rng.standard_normal((n, k)))
    dy = bf16_values(rng.standard_normal((m, n)))
    dxk, dwk = kernel("dx"), kernel("dw")
    full = run(dxk, bf16_bits(dy), bf16_bits(w), m, k, n)
    for rows in (1, 9, 64):
        assert np.array_equal(run(dxk, bf16_bits(dy[:rows]), bf16_bits(w), rows, k, n), full[:rows])
    dw = run(dwk, bf16_bits(dy), bf16_bits(x), n, k, m)
    assert np.array_equal(run(dwk, bf16_bits(dy), bf16_bits(x), n, k, m), dw)          # run to run
    zeros = 50                                                                          # zero rows added
    dy0, x0 = np.vstack([dy, np.zeros((zeros, n))]), np.vstack([x, np.zeros((zeros, k))])
    assert np.array_equal(run(dwk, bf16_bits(dy0), bf16_bits(x0), n, k, m + zeros), dw)


@pytest.mark.parametrize("n", [24, 21])       # paired stores (n even), and one per element
def test_bf16_output_is_the_f32_sum_rounded_once(n):
    m, k = 20, 40
    rng = np.random.default_rng(5)
    a, w = bf16_values(rng.standard_normal((m, k))), bf16_values(rng.standard_normal((n, k)))
    want = bf16_bits(bf16_values(run(kernel("forward"), bf16_bits(a), bf16_bits(w), m, n, k)))
    c = np.zeros(m * n, np.uint16)
    g = load(ember.compile(SRC, defines={"O": "bf16"}, cache=False)).gemm_bf16
    g(bf16_bits(a), bf16_bits(w), c, m, n, k, grid=((n + 127) // 128, (m + 127) // 128))
    assert np.array_equal(c.reshape(m, n), want)


@pytest.mark.parametrize("product", sorted(PRODUCTS))
@pytest.mark.parametrize("extra", [{}, {"STAGES": 2}])
def test_swizzled_tiles_give_the_padded_tiles_bits(product, extra):
    """SWIZZLE stores the shared tiles unpadded and XOR-swizzled (std/swizzle.ember): the
    same mma sequence on the same values, so the same bits, for every product; a wrong
    swizzle on either side (copy or ldmatrix) would move elements and change them."""
    m, n, k = 72, 40, 200                     # partial tiles in every dimension (stored rows: multiples of 8)
    rng = np.random.default_rng(len(product))
    a_shape, b_shape = {"forward": ((m, k), (n, k)), "dx": ((m, k), (k, n)), "dw": ((k, m), (k, n))}[product]
    a, b = bf16_values(rng.standard_normal(a_shape)), bf16_values(rng.standard_normal(b_shape))
    outs = []
    for swz in (False, True):
        defines = dict(PRODUCTS[product], SWIZZLE=swz, **extra)
        g = load(ember.compile(SRC, defines=defines, cache=False)).gemm_bf16
        outs.append(run(g, bf16_bits(a), bf16_bits(b), m, n, k))
    assert np.array_equal(outs[0], outs[1])
    at = a.T if product == "dw" else a
    bt = b if product != "forward" else b.T
    ref = at.astype(np.float64) @ bt.astype(np.float64)
    assert np.abs(outs[1] - ref).max() <= 1e-6 * np.abs(ref).max() * np.sqrt(k)


def test_swizzle_needs_less_shared_memory():
    info = {s: ember.compile(SRC, defines={"SWIZZLE": s, "STAGES": 3}, cache=False).kernels["gemm_bf16"]
            for s in (False, True)}
    assert info[True].dynamic_shared == 3 * 2 * 128 * 64 * 2          # 96 KB: two blocks fit an SM
    assert ember.compile(SRC, cache=False).kernels["gemm_bf16"].dynamic_shared == info[True].dynamic_shared  # the default
    assert info[False].dynamic_shared == 3 * 2 * 136 * 72 * 2


@pytest.mark.parametrize("defines", [{"BK": 16}, {"BK": 48}, {"STAGES": 2}, {"STAGES": 4, "COPY_PARTS": 4},
                                     {"COPY_PARTS": 2}], ids=str)
def test_tile_depth_and_copy_parts_keep_the_bits(gemm, defines):
    """Each accumulator's mma chain runs over k in 16-wide steps in ascending order whatever
    the tile depth, ring depth or copy schedule: the same bits. An odd number of steps per
    tile (BK 16, 48) starts every tile from the other fragment set, which the kernel copies
    back; a wrong fragment set or a tile read before its wait would change them."""
    m, n, k = 20, 24, 208                     # 13 steps of 16: tiles of 16, 48 and 64 all end partial
    rng = np.random.default_rng(11)
    a, w = bf16_values(rng.standard_normal((m, k))), bf16_values(rng.standard_normal((n, k)))
    want = run(gemm, bf16_bits(a), bf16_bits(w), m, n, k)
    g = load(ember.compile(SRC, defines=defines, cache=False)).gemm_bf16
    assert np.array_equal(run(g, bf16_bits(a), bf16_bits(w), m, n, k), want)


@pytest.mark.parametrize("product", sorted(PRODUCTS))
def test_tiles_bypass_l1_unless_asked(product):
    """Both operands' tiles are copied with cp.async.cg by default (L2 only: a block reads
    each chunk once, and caching it in L1 too costs ldmatrix bandwidth); A_L1 and B_L1 copy
    one operand's with ca instead, and change no bit."""
    def copies(defines):
        ptx = ember.compile(SRC, defines={**PRODUCTS[product], **defines}, cache=False).ptx
        return ptx.count("cp.async.ca.shared.global"), ptx.count("cp.async.cg.shared.global")
    ca, cg = copies({})
    assert ca == 0 and cg > 0
    a_copies, b_copies = copies({"A_L1": True}), copies({"B_L1": True})
    assert a_copies[0] > 0 and b_copies[0] > 0 and a_copies[0] + b_copies[0] == cg
    assert a_copies[0] + a_copies[1] == cg and b_copies[0] + b_copies[1] == cg
    m, n, k = 24, 40, 80                       # partial tiles; stored rows multiples of 8
    rng = np.random.default_rng(5)
    a = bf16_values(rng.standard_normal((k, m) if product == "dw" else (m, k)))
    b = bf16_values(rng.standard_normal((k, n) if product != "forward" else (n, k)))
    outs = [run(load(ember.compile(SRC, defines={**PRODUCTS[product], **d}, cache=False)).gemm_bf16,
                bf16_bits(a), bf16_bits(b), m, n, k) for d in ({}, {"A_L1": True, "B_L1": True})]
    assert np.array_equal(outs[0], outs[1])


@pytest.mark.parametrize("product", ["forward", "dx"])
def test_a_rows_past_m_read_nothing(product, monkeypatch):
    """A's tile rows past M are zero-filled, not copies of its last row: with M = 1 the block
    reads each 16-byte chunk of A's row once, where the last row repeated would read it once
    per tile row (128 times) - same-address reads that L2 alone serves slowly (2.5x the time
    at M <= 16 on an H100)."""
    from ember.sim.async_copy import AsyncCopies
    reads = []
    start = AsyncCopies.start

    def record(self, op, dst, src, size, src_bytes, mask):
        for lane in np.nonzero(mask & (src_bytes > 0))[0]:
            reads.append((src.mems[src.mid[lane]].name, int(src.off[lane])))
        return start(self, op, dst, src, size, src_bytes, mask)

    monkeypatch.setattr(AsyncCopies, "start", record)
    m, n, k = 1, 16, 136                        # three tiles of 64, the last partial
    rng = np.random.default_rng(3)
    a = bf16_values(rng.standard_normal((m, k)))
    b = bf16_values(rng.standard_normal((n, k) if product == "forward" else (k, n)))
    got = run(kernel(product), bf16_bits(a), bf16_bits(b), m, n, k)
    a_reads = [off for name, off in reads if name == "a"]
    assert sorted(a_reads) == list(range(0, 2 * k, 16))
    assert np.abs(got - a.astype(np.float64) @ (b.T if product == "forward" else b)).max() <= 1e-5
