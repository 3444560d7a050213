"""kernels_src/gemm_wgmma.ember (wgmma + TMA, warp-specialised, persistent) in the simulator
with every check on: the f64 reference, and the batch-invariance contract at CI sizes - a
row's output is bitwise the same for every M, every chunking of the batch and whatever
the other rows hold; K a multiple of 64 or not (TMA's zeros past K). The simulator runs
the producer and the consumer warpgroups concurrently, TMA in the tiles' swizzle order
and wgmma from the descriptors; tests/gpu/test_gemm_wgmma_gpu.py runs the same contract on
an H100 at real sizes."""

from pathlib import Path

import numpy as np
import pytest

import ember
from ember.reference.gemm import bf16_bits, bf16_values, linear, linear_backward
from ember.sim import load

SRC = Path(__file__).resolve().parents[2] / "kernels_src" / "gemm_wgmma.ember"
# the three products of a linear layer: which operand is stored transposed (K outermost)
PRODUCTS = {"forward": {}, "dx": {"B_MN": True}, "dw": {"A_MN": True, "B_MN": True}}


def kernel(product: str, bn: int = 64):
    """A small configuration (BN-column tiles, 2 stages) so that every path runs quickly."""
    defines = {"BN": bn, "STAGES": 2, **PRODUCTS[product]}
    return load(ember.compile(SRC, arch="sm_90a", defines=defines, cache=False)).gemm_wgmma


@pytest.fixture(scope="module")
def gemm():
    return kernel("forward")


def run(gemm, a, w, blocks: int = 2, shape=None, bn: int = 64):
    """c = a w^T for the forward; the backward products give (m, n, k)."""
    m, n, k = shape or (a.shape[0], w.shape[0], a.shape[1])
    c = np.full(m * n, np.nan, np.float32)
    tiles = -(-m // 128) * -(-n // bn)
    gemm(bf16_bits(a), bf16_bits(w), c, m, n, k, grid=(min(blocks, tiles),))
    return c.reshape(m, n)


# N a multiple of 8: the staged epilogue (bulk stores of whole rows); 76 and 75: the stores from
# registers, in pairs and one by one
@pytest.mark.parametrize("m, n, k", [(130, 72, 200), (5, 136, 64), (33, 76, 64), (9, 75, 72)])
def test_matches_the_f64_reference(gemm, m, n, k):
    rng = np.random.default_rng(m + n + k)
    a, w = bf16_values(rng.standard_normal((m, k))), bf16_values(rng.standard_normal((n, k)))
    ref = linear(a, w)
    got = run(gemm, a, w)
    assert np.abs(got - ref).max() <= 1e-6 * np.abs(ref).max() * np.sqrt(k)


@pytest.mark.parametrize("k", [128, 72])          # whole 64-wide slices, and a tail of zeros
def test_rows_do_not_depend_on_the_batch(gemm, k):
    rows, n = 140, 72
    rng = np.random.default_rng(k)
    a, w = bf16_values(rng.standard_normal((rows, k))), bf16_values(rng.standard_normal((n, k)))
    full = run(gemm, a, w)
    for m in (1, 9, 128):                          # every M gives the same rows, bit for bit
        assert np.array_equal(run(gemm, a[:m], w), full[:m])
    parts = [run(gemm, a[s:e], w, blocks=1) for s, e in ((0, 37), (37, rows))]   # chunks, one block
    assert np.array_equal(np.concatenate(parts), full)


def test_other_rows_do_not_change_a_row(gemm):
    m, n, k = 3, 64, 64
    rng = np.random.default_rng(3)
    a, w = bf16_values(rng.standard_normal((m, k))), bf16_values(rng.standard_normal((n, k)))
    ref = run(gemm, a, w)
    crowd = np.vstack([a, np.full((60, k), np.inf), bf16_values(rng.standard_normal((65, k)))])
    assert np.array_equal(run(gemm, crowd, w)[:m], ref)


@pytest.mark.parametrize("m, n, k", [(70, 64, 136), (130, 72, 64)])
def test_backward_products_match_the_f64_reference(m, n, k):
    """dx = dy w (w stored [N, K]: B transposed) and dw = dy^T x (dy and x stored with the
    batch outermost: both transposed), each at partial tiles."""
    rng = np.random.default_rng(m + n + k)
    x, w = bf16_values(rng.standard_normal((m, k))), bf16_values(rng.standard_normal((n, k)))
    dy = bf16_values(rng.standard_normal((m, n)))
    dx_ref, dw_ref = linear_backward(x, w, dy)
    dx = run(kernel("dx"), dy, w, shape=(m, k, n))
    dw = run(kernel("dw", 128), dy, x, shape=(n, k, m), bn=128)
    for got, ref, depth in ((dx, dx_ref, n), (dw, dw_ref, m)):
        assert np.abs(got - ref).max() <= 1e-6 * np.abs(ref).max() * np.sqrt(depth)


def test_dx_rows_do_not_depend_on_the_batch_and_dw_ignores_zero_rows():
    m, n, k = 70, 64, 64
    rng = np.random.default_rng(2)
    x, w = bf16_values(rng.standard_normal((m, k))), bf16_values(rng.standard_normal((n, k)))
    dy = bf16_values(rng.standard_normal((m, n)))
    dxk, dwk = kernel("dx"), kernel("dw")
    full = run(dxk, dy, w, shape=(m, k, n))
    for rows in (1, 9):
        assert np.array_equal(run(dxk, dy[:rows], w, shape=(rows, k, n)), full[:rows])
    dw = run(dwk, dy, x, shape=(n, k, m))
    assert np.array_equal(run(dwk, dy, x, shape=(n, k, m)), dw)                 # run to run
    zeros = 50                                                                     # zero rows added
    dy0, x0 = np.vstack([dy, np.zeros((zeros, n))]), np.vstack([x, np.zeros((zeros, k))])
    assert np.array_equal(run(dwk, dy0, x0, shape=(n, k, m + zeros)), dw)


def test_bf16_output_is_the_f32_sum_rounded_once(gemm):
    m, n, k = 20, 72, 64
    rng = np.random.default_rng(5)
    a, w = bf16_values(rng.standard_normal((m, k))), bf16_values(rng.standard_normal((n, k)))
    want = bf16_bits(bf16_values(run(gemm, a, w)))
    g = load(ember.compile(SRC, arch="sm_90a", defines={"BN": 64, "STAGES": 2, "O": "bf16"},
                           cache=False)).gemm_wgmma
    c = np.zeros(m * n, np.uint16)
    g(bf16_bits(a), bf16_bits(w), c, m, n, k, grid=(1,))
    assert np.array_equal(c.reshape(m, n), want)


def test_a_grouped_tile_order_changes_no_bits(gemm):
    """GROUP_M walks the tiles in bands of rows (for L2): the same tiles, the same sums."""
    m, n, k = 300, 200, 64
    rng = np.random.default_rng(6)
    a, w = bf16_values(rng.standard_normal((m, k))), bf16_values(rng.standard_normal((n, k)))
    grouped = load(ember.compile(SRC, arch="sm_90a", defines={"BN": 64, "STAGES": 2, "GROUP_M": 2},
                                 cache=False)).gemm_wgmma
    assert np.array_equal(run(grouped, a, w, blocks=5), run(gemm, a, w, blocks=5))


@pytest.mark.parametrize("product", sorted(PRODUCTS))
def test_one_consumer_warpgroup(product):
    """CONSUMERS = 1 (64-row tiles, for decode shapes): the same reference, every product."""
    m, n, k = 70, 64, 136
    rng = np.random.default_rng(len(product) + 10)
    x, w = bf16_values(rng.standard_normal((m, k))), bf16_values(rng.standard_normal((n, k)))
    dy = bf16_values(rng.standard_normal((m, n)))
    defines = {"BN": 64, "STAGES": 2, "CONSUMERS": 1, **PRODUCTS[product]}
    g = load(ember.compile(SRC, arch="sm_90a", defines=defines, cache=False)).gemm_wgmma
    a, b, shape, ref = {"forward": (x, w, (m, n, k), linear(x, w)),
                        "dx": (dy, w, (m, k, n), dy @ w),
                        "dw": (dy, x, (n, k, m), dy.T @ x)}[product]
    pm, pn, pk = shape
    c = np.full(pm * pn, np.nan, np.float32)
    g(bf16_bits(a), bf16_bits(b), c, pm, pn, pk, grid=(2,))
    assert np.abs(c.reshape(pm, pn) - ref).max() <= 1e-6 * np.abs(ref).max() * np.sqrt(pk)


BROKEN = [
    # consumers multiplying a stage before its TMA phase completed: a read of bytes in flight
    ("                consumer_wait(full, use, STAGES);\n", "", "S0009"),
    # a stage released before the wgmmas reading it are done (no wait for the previous group):
    # the producer's TMA overwrites bytes an in-flight wgmma still reads
    ("                wgmma_wait(1);                   // the previous stage's wgmmas are done: release it\n", "",
     "S0009"),
    # a consumer that never releases the tile's last stage: the producer waits forever
    ("            consumer_release(empty, use - 1u32, STAGES);\n            let (tm, tn)",
     "            let (tm, tn)", "S0011"),
    # the epilogue's staging overwritten before the copy engine has read the last tile's rows
    ("                        cp_async_bulk_wait_read(0);\n", "", "S0009"),
    # staged values the copy engine need not see yet: no async-proxy fence
    ("                        fence_proxy_async();\n", "", "S0012"),
    # lanes 0-15 storing rows their warp-mates wrote, unordered
    ("                        fence_proxy_async();\n                        warp_barrier();\n",
     "                        fence_proxy_async();\n", "S0004"),
    # ping-pong without the turns: a warpgroup waits for a stage's phase two ahead, whose parity
    # is the current one's - it takes stale data and releases the other's stage (then deadlock)
    ("            if PINGPONG && i > 0u32 {", "            if false {", "S0011"),
]


@pytest.mark.parametrize("old, new, code", BROKEN, ids=["read-before-data", "overwrite-under-wgmma", "lost-release", "staging-overwritten",
                                              "staging-unfenced", "staging-unordered", "ping-pong-out-of-turn"])
def test_the_kernel_broken_on_purpose_is_reported(old, new, code):
    """The pipeline's mistakes in the real kernel, each reported by the simulator (the fixed
    twin is every other test here)."""
    from ember.sim.errors import SimError
    src = SRC.read_text()
    assert old in src
    # the staged epilogue on; the ping-pong consumers for their own mistake
    defines = {"BN": 64, "STAGES": 2, "BULK_STORE": True, "PINGPONG": "PINGPONG" in old}
    prog = ember.compile(src.replace(old, new), arch="sm_90a", defines=defines, cache=False,
                         include_dirs=[str(SRC.parent)])
    rng = np.random.default_rng(9)
    a, w = bf16_values(rng.standard_normal((130, 320))), bf16_values(rng.standard_normal((128, 320)))
    with pytest.raises(SimError) as err:
        run(load(prog).gemm_wgmma, a, w, blocks=1)
    assert err.value.diagnostic.code == code


def test_narrow_tiles_and_deep_rings_give_the_default_bits(gemm):
    """The decode configurations (one consumer warpgroup, BN = 32 or 8 columns - any multiple
    of 8 for a K-major B - and rings deeper than the K loop) sum every output in the same K
    order as the 128 x 64 tiles: the same bits, so a tile is a speed choice, never a result."""
    m, n, k = 20, 72, 200
    rng = np.random.default_rng(8)
    a, w = bf16_values(rng.standard_normal((m, k))), bf16_values(rng.standard_normal((n, k)))
    want = run(gemm, a, w)
    for bn, stages in ((32, 5), (8, 3)):
        narrow = load(ember.compile(SRC, arch="sm_90a", defines={"BN": bn, "STAGES": stages, "CONSUMERS": 1},
                                    cache=False)).gemm_wgmma
        assert np.array_equal(run(narrow, a, w, blocks=3, bn=bn), want)


@pytest.mark.parametrize("swap", ["C_T", "SWAP"])
@pytest.mark.parametrize("m", [1, 5, 20])
def test_swapped_operands_store_y_with_the_default_bits(gemm, m, swap):
    """The decode call: y^T = w x^T with the weights in the 64-row operand, x's rows in a
    16-column tile, y [M, N] stored - the defaults' bits (M > 16: several tiles). C_T: the
    caller exchanges the operands (a = w, b = x, N, M, K) and c is stored transposed; SWAP:
    the kernel does both itself from the forward's own arguments, so that a tuned table can
    choose it for decode shapes."""
    n, k = 136, 200
    rng = np.random.default_rng(m)
    a, w = bf16_values(rng.standard_normal((m, k))), bf16_values(rng.standard_normal((n, k)))
    kernel = load(ember.compile(SRC, arch="sm_90a", defines={swap: True, "BN": 16, "STAGES": 6, "CONSUMERS": 1},
                                cache=False)).gemm_wgmma
    y = np.full(m * n, np.nan, np.float32)
    if swap == "C_T":
        kernel(bf16_bits(w), bf16_bits(a), y, n, m, k, grid=(3,))
    else:
        kernel(bf16_bits(a), bf16_bits(w), y, m, n, k, grid=(3,))
    assert np.array_equal(y.reshape(m, n), run(gemm, a, w))


def test_a_transposed_b_keeps_64_column_blocks():
    """B_MN reads 64-column blocks of a transposed B: a narrower tile is refused by the
    kernel's static_assert, which the tuner reads as a constraint."""
    with pytest.raises(ember.CompileError, match="static assertion"):
        ember.compile(SRC, arch="sm_90a", defines={"BN": 32, "B_MN": True}, cache=False)


@pytest.mark.parametrize("product, pingpong, bulk", [(p, True, False) for p in sorted(PRODUCTS)]
                         + [("forward", False, True), ("forward", True, True)])
def test_ping_pong_and_bulk_stores_give_the_default_bits(product, pingpong, bulk):
    """Ping-pong consumers (each warpgroup multiplies every other tile of its block, all of its
    rows) and the staged epilogue (whole rows stored by the copy engine) change who computes
    and who stores, never a sum: the defaults' bits, for each product - with N a multiple of
    8 (staged) or not (the stores from registers), and blocks of several tiles each, so that
    both warpgroups take turns on one ring."""
    rng = np.random.default_rng(11)
    defaults = kernel(product)
    other = load(ember.compile(SRC, arch="sm_90a", cache=False, defines={
        "BN": 64, "STAGES": 3, "PINGPONG": pingpong, "BULK_STORE": bulk, **PRODUCTS[product]})).gemm_wgmma
    # 6 tiles on 2 blocks: each warpgroup's turn comes again; a transposed operand's rows are a
    # multiple of 8 elements (TMA), so only the forward's N may be any (76: stores from registers)
    shapes = ((200, 136, 72), (70, 76, 64)) if product == "forward" else ((136, 136, 72),)
    for (pm, pn, pk) in shapes:
        a = bf16_values(rng.standard_normal((pk, pm) if product == "dw" else (pm, pk)))
        b = bf16_values(rng.standard_normal((pk, pn) if product != "forward" else (pn, pk)))
        want = run(defaults, a, b, blocks=2, shape=(pm, pn, pk))
        assert np.array_equal(run(other, a, b, blocks=2, shape=(pm, pn, pk)), want)
