"""TMA in the simulator: boxes of tensor maps loaded into plain and swizzled tiles (zeros
outside the tensor, rows padded in memory), stored back (clipped), feeding wgmma; the
type's rules and the launch's checks, each naming what is wrong
(tests/gpu/test_tma_gpu.py runs the same kernels on an H100)."""

import numpy as np
import pytest

import ember
from ember.abi import LaunchError
from ember.diagnostics import CompileError
from ember.sim.errors import SimError
from tests.sim import tma_programs as P


def _x(t: str, seed: int = 0):
    """A 40 x 70 tensor whose rows are padded to 80 elements (a strided view)."""
    import ml_dtypes
    dt = {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "f32": np.float32, "u8": np.uint8}[t]
    return np.random.default_rng(seed).integers(0, 120, (40, 80)).astype(dt)[:, :70]


def _load(t, rows, cols, swizzle, row0, col0, x=None):
    x = _x(t) if x is None else x
    prog = ember.compile(P.load_source(t, rows, cols, swizzle, row0, col0), arch="sm_90", stop_after="ir-opt",
                         cache=False)
    out = np.zeros(3 * rows * cols, x.dtype)
    ember.runtime.load(prog, device="sim").k(x, out, grid=3)
    return out.reshape(-1, cols), P.load_reference(x, 3, rows, cols, row0, col0)


@pytest.mark.parametrize("t,rows,cols,swizzle,row0,col0", [
    ("bf16", 16, 64, 128, -3, 8), ("f32", 8, 8, 32, 2, -4), ("f32", 24, 16, 64, -20, 60), ("u8", 8, 16, 0, 1, 16),
    ("f16", 32, 32, 64, 5, 40)])
def test_boxes_land_in_their_tiles(t, rows, cols, swizzle, row0, col0):
    got, want = _load(t, rows, cols, swizzle, row0, col0)
    assert np.array_equal(got.astype(np.float64), want.astype(np.float64))


def test_a_store_writes_the_box_inside_the_tensor():
    x = np.random.default_rng(1).standard_normal((40, 64)).astype(np.float32)
    y = np.full((36, 68), -7, np.float32)
    want = P.store_reference(x, y.copy(), 3, 16, 32)
    prog = ember.compile(P.store_source(16, 32, 128), arch="sm_90", stop_after="ir-opt", cache=False)
    ember.runtime.load(prog, device="sim").k(x, y, grid=3)
    assert np.array_equal(y, want)


def test_tma_feeds_wgmma():
    import ml_dtypes
    rng = np.random.default_rng(2)
    a = rng.integers(-4, 5, (128, 192)).astype(ml_dtypes.bfloat16)
    b = rng.integers(-4, 5, (128, 192)).astype(ml_dtypes.bfloat16)
    prog = ember.compile(P.gemm_source(64), arch="sm_90a", stop_after="ir-opt", cache=False)
    c = np.zeros((128, 128), np.float32)
    ember.runtime.load(prog, device="sim").g(a, b, c, 128, 3, grid=(2, 2))
    assert np.array_equal(c, a.astype(np.float64) @ b.astype(np.float64).T)


def test_an_innermost_coordinate_off_16_bytes_is_reported():
    with pytest.raises(SimError) as err:
        _load("u8", 8, 16, 0, 1, 1)
    d = err.value.diagnostic
    assert d.code == "S0002" and "innermost coordinate 1 is 1 bytes into a row, not a multiple of 16" in d.message


def test_a_store_at_a_negative_coordinate_is_reported():
    prog = ember.compile(P.store_source(16, 32, 128, dr=-5), arch="sm_90", stop_after="ir-opt", cache=False)
    with pytest.raises(SimError) as err:
        ember.runtime.load(prog, device="sim").k(np.zeros((40, 64), np.float32), np.zeros((36, 68), np.float32),
                                                 grid=3)
    assert err.value.diagnostic.code == "S0001" and "never at a negative coordinate" in err.value.diagnostic.message


def test_reading_the_tile_before_the_phase_completes_is_reported():
    src = P.load_source("f32", 8, 8, 32, 0, 0).replace("    mbarrier_wait(bar, 0, 0u32);\n", "")
    prog = ember.compile(src, arch="sm_90", stop_after="ir-opt", cache=False)
    with pytest.raises(SimError) as err:
        ember.runtime.load(prog, device="sim").k(_x("f32"), np.zeros(3 * 64, np.float32), grid=3)
    assert err.value.diagnostic.code == "S0009"


@pytest.mark.parametrize("a, message", [
    (np.zeros((40, 70), np.float32), "the stride of dimension 0 is 280 bytes; TMA needs a positive multiple of 16"),
    (np.zeros((4, 40, 72), np.float32), "needs a 2-dimensional tensor, got 3 dimension(s) (4, 40, 72)"),
    (np.zeros((40, 72), np.int32), "needs a tensor of f32, got i32"),
    (np.zeros((72, 40), np.float32).T, "the innermost dimension must be contiguous (4-byte stride), got a 160-byte"),
    ([1.0, 2.0], "needs a numpy array in the simulator, got list"),
])
def test_launch_checks_name_the_tensor(a, message):
    prog = ember.compile(P.load_source("f32", 8, 8, 32, 0, 0), arch="sm_90", stop_after="ir-opt", cache=False)
    with pytest.raises(LaunchError) as err:
        ember.runtime.load(prog, device="sim").k(a, np.zeros(3 * 64, np.float32), grid=3)
    assert "`x` (tensormap<f32, [8, 8], swizzle(32)>)" in str(err.value) or "`x`" in str(err.value)
    assert message in str(err.value)


KERNEL = """import "std/mbarrier.ember";
kernel k(x: {map}, o: *mut global f32) block(32) {{
    shared t: {tile};
    shared bar: [u64; 1];
    {body}
    o[0] = 0.0;
}}"""


@pytest.mark.parametrize("map_, tile, body, message", [
    ("tensormap<f32, [8, 8], swizzle(32)>", "[[f32; 8]; 16] swizzle(32)", "tma_load(t, x, bar, 0, 0, 0);",
     "the tile `[[f32; 8]; 16] swizzle(32)` is not the box of `tensormap<f32, [8, 8], swizzle(32)>`: "
     "`[[f32; 8]; 8] swizzle(32)`"),
    ("tensormap<f32, [8, 8], swizzle(32)>", "[[f32; 8]; 8]", "tma_load(t, x, bar, 0, 0, 0);",
     "the tile must be declared `swizzle(32)`"),
    ("tensormap<f32, [8, 8]>", "[[f32; 8]; 8]", "tma_load(t, x, bar, 0, 0);",
     "takes 2 coordinates (outermost first), not 1"),
    ("tensormap<f32, [8, 8]>", "[[f32; 8]; 8]", "tma_load(t, x, bar, 0, 0u32, 0);", "mismatched types"),
    ("tensormap<f32, [8, 12], swizzle(32)>", "[[f32; 8]; 8]", "", "is 32 bytes (one row of its tile); 12 `f32` are 48"),
    ("tensormap<u8, [8, 12]>", "[[f32; 8]; 8]", "", "the innermost box dimension is a multiple of 16 bytes"),
    ("tensormap<f32, [8, 300]>", "[[f32; 8]; 8]", "", "a box dimension is 1..256 elements, not 300"),
    ("tensormap<f32, [1, 1, 1, 1, 1, 4]>", "[[f32; 8]; 8]", "", "1 to 5 dimensions, not 6"),
    ("tensormap<bool, [8, 8]>", "[[f32; 8]; 8]", "", "a tensor map holds non-bool scalars"),
    ("*global f32", "[[f32; 8]; 8]", "tma_load(t, x, bar, 0, 0, 0);", "the map is a `tensormap<T, [..]>`"),
])
def test_type_errors_are_located(map_, tile, body, message):
    with pytest.raises(CompileError) as err:
        ember.compile(KERNEL.format(map=map_, tile=tile, body=body), arch="sm_90", cache=False)
    assert message in err.value.diagnostics.render()


def test_a_tensor_map_is_a_kernel_parameter_only():
    src = "fn f(x: tensormap<f32, [8, 8]>) {}\nkernel k(o: *mut global f32) block(32) { o[0] = 0.0; }"
    with pytest.raises(CompileError, match="a tensor map is a kernel parameter, passed by the host"):
        ember.compile(src, arch="sm_90", cache=False)


def _multicast(src, device="sim"):
    import ml_dtypes
    prog = ember.compile(src, arch="sm_90a", cache=False)
    x = np.random.default_rng(4).standard_normal((64, 64)).astype(ml_dtypes.bfloat16)
    out = np.zeros(4 * 1024, ml_dtypes.bfloat16)
    ember.runtime.load(prog, device=device).k(x, out, grid=4)
    return x, out.reshape(4, 16, 64)


def test_a_multicast_load_fills_every_block_of_the_mask():
    x, out = _multicast(P.MULTICAST)
    for b in range(4):
        np.testing.assert_array_equal(out[b].astype(np.float32), x[16 * (b // 2):16 * (b // 2) + 16].astype(np.float32))


def test_a_multicast_before_the_other_blocks_barrier_exists_is_reported():
    """Without the cluster barrier after mbarrier_init, rank 0 may signal rank 1's barrier
    before rank 1 initialized it: nothing orders rank 1's init before rank 0's copy (S0004)."""
    src = P.MULTICAST.replace("    cluster_barrier();                           // every block's", "    // ")
    with pytest.raises(SimError) as err:
        _multicast(src)
    d = err.value.diagnostic
    assert d.code == "S0004" and "shared array `bar`" in d.message and "of block (1, 0, 0) wrote" in d.message


def _multicast_ring(src, uses=5, device="sim"):
    import ml_dtypes
    prog = ember.compile(src, arch="sm_90a", cache=False)
    x = np.random.default_rng(5).standard_normal((16 * uses, 64)).astype(ml_dtypes.bfloat16)
    out = np.zeros(2 * uses * 1024, ml_dtypes.bfloat16)
    ember.runtime.load(prog, device=device).k(x, out, uses, grid=2)
    return x, out.reshape(2, uses * 16, 64)


def test_a_ring_a_cluster_fills_by_multicast_reaches_both_blocks():
    x, out = _multicast_ring(P.MULTICAST_RING)
    for b in range(2):
        np.testing.assert_array_equal(out[b].astype(np.float32), x.astype(np.float32))


@pytest.mark.parametrize("old, new, code, says", [
    # refilled once this block's consumers are done: the other block's may still read the stage
    ("producer_acquire_cluster(empty, clear, u, 2u32, 2u32);", "producer_acquire(empty, u, 2u32);",
     "S0004", "which thread (128, 0, 0) of block (1, 0, 0) read"),
    # `clear` counting one producer's forward: its phase ends at the first block's forward, so a
    # stage is refilled while the other block's consumers still read it (each block's warpgroups
    # run apart in the simulator, as on the GPU: the refill comes before the phases lose step)
    ("pipeline_init_cluster(full, empty, clear, 2u32, 128u32, 2u32);",
     "pipeline_init_cluster(full, empty, clear, 2u32, 128u32, 1u32);", "S0004", "read with nothing in between"),
])
def test_a_cluster_ring_without_its_cluster_acquire_is_reported(old, new, code, says):
    src = P.MULTICAST_RING
    assert old in src
    with pytest.raises(SimError) as err:
        _multicast_ring(src.replace(old, new))
    d = err.value.diagnostic
    assert d.code == code and says in d.message, d.message


def test_a_cluster_acquire_at_cta_scope_is_reported():
    """The forwards waited for at cta scope: the other block's consumers' reads are not ordered
    before the refill (the note names the scope)."""
    from pathlib import Path
    std = (Path(ember.__file__).parent / "std" / "pipeline.ember").read_text()
    body = std[std.index("fn producer_acquire_cluster"):].replace("mbarrier_wait_cluster(clear", "mbarrier_wait(clear")
    src = P.MULTICAST_RING.replace("producer_acquire_cluster(", "producer_acquire_cta(") + "\n" + body.replace(
        "fn producer_acquire_cluster", "fn producer_acquire_cta")
    with pytest.raises(SimError) as err:
        _multicast_ring(src)
    d = err.value.diagnostic
    assert d.code == "S0004" and any("had `cta` scope" in n for n in d.notes), d
