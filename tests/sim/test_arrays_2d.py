"""Multi-dimensional arrays (`shared tile: [[f32; 33]; 32]`, `var a: [[[i32; 3]; 2]; 2]`):
laid out row by row, each index checked against its own dimension - in the checker for
constants, in the simulator for every access (an index past a row's end is out of
bounds, not the next row's first element)."""

import numpy as np
import pytest

import ember
from ember.sim.errors import SimError

from .arrays_2d_programs import TRANSPOSE, cube_reference


def _sim(src: str, **kw):
    return ember.runtime.load(ember.compile(src, name="arrays.ember", stop_after="ir-opt", **kw), device="sim")


def test_a_padded_tile_transposes():
    n = 64
    x = np.random.default_rng(1).standard_normal(n * n).astype(np.float32)
    y = np.zeros_like(x)
    _sim(TRANSPOSE).transpose(x, y, n, grid=(2, 2))
    np.testing.assert_array_equal(y.reshape(n, n), x.reshape(n, n).T)


def test_a_three_dimensional_per_thread_array():
    x = np.random.default_rng(2).integers(-1000, 1000, 64).astype(np.int32)
    out = np.zeros(128, np.int32)
    _sim(TRANSPOSE).cube(x, out, grid=1)
    np.testing.assert_array_equal(out, cube_reference(x))


READS = """kernel k(x: *mut global f32, r: u32, c: u32) block(32) {
    shared tile: [[f32; 33]; 32];
    for i in 0u32..32u32 {
        tile[i][thread_idx.x] = 1.0;
        if thread_idx.x == 0u32 { tile[i][32] = 1.0; }
    }
    barrier();
    x[thread_idx.x] = tile[r][c];
}"""


@pytest.mark.parametrize("r, c, message", [
    (0, 33, "index 33 of row 0, which has 33 elements (`[[f32; 33]; 32]`)"),
    (3, -1 & 0xFFFFFFFF, "index 4294967295 of row 3"),
    (32, 0, "row 32 of `[[f32; 33]; 32]`, which has 32 rows"),
])
def test_each_index_is_checked_against_its_dimension(r, c, message):
    with pytest.raises(SimError) as err:
        _sim(READS).k(np.zeros(32, np.float32), r, c, grid=1)
    assert err.value.diagnostic.code == "S0001"
    assert message in err.value.diagnostic.message


def test_in_bounds_reads_pass():
    x = np.zeros(32, np.float32)
    _sim(READS).k(x, 31, 32, grid=1)
    assert (x == 1.0).all()


def test_the_ir_indexes_rows():
    from ember.ir.printer import print_module
    ir = print_module(ember.compile(TRANSPOSE, stop_after="ir-opt", kernels=["transpose"]).ir)
    assert "mem.shared {length = 1056, name = tile} : *mut shared f32" in ir
    assert "mem.row %tile" in ir and "{length = 33, rows = 32}" in ir


def test_rows_of_diverged_lanes():
    """Rows taken and accessed by part of the lanes (odd lanes in a loop, even lanes not):
    each lane's row bounds are its own (the fuzzer found them mixed up between lanes)."""
    src = """kernel k(out: *mut global u32) block(64) {
        var g: [[u32; 2]; 3];
        let t = thread_idx.x;
        if t % 2u32 == 1u32 {
            for r in 0u32..3u32 { for c in 0u32..2u32 { g[r][c] = t + r * 2u32 + c; } }
        } else {
            g[t % 3u32][1] = t;
        }
        out[t] = g[2][1] + g[t % 3u32][1];
    }"""
    out = np.zeros(64, np.uint32)
    _sim(src).k(out, grid=1)
    t = np.arange(64)
    odd = t % 2 == 1
    want = np.where(odd, (t + 5) + (t + (t % 3) * 2 + 1), np.where(t % 3 == 2, t, 0) + t)
    np.testing.assert_array_equal(out, want.astype(np.uint32))
