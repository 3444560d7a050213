"""ember/std/swizzle.ember in the simulator: every (row, col) of a tile gets its offset;
the layout is a permutation of the tile that keeps each 16-byte chunk whole and aligned,
and the eight rows a warp's ldmatrix reads at one column land in eight different groups of
banks when rows are 128 bytes or longer."""

import numpy as np
import pytest

import ember
from ember.sim import load

SRC = """
import "std/swizzle.ember";
kernel k<const WIDTH: u32 = 64, const CHUNK: u32 = 8>(out: *mut global u32, rows: u32) {
    let i = block_idx.x * 64 + thread_idx.x;
    if i < rows * WIDTH {
        out[i] = swizzle(i / WIDTH, i % WIDTH, WIDTH, CHUNK);
    }
}
"""


def offsets(width: int, chunk: int, rows: int) -> np.ndarray:
    out = np.zeros(rows * width, np.uint32)
    kern = load(ember.compile(SRC, defines={"WIDTH": width, "CHUNK": chunk}, cache=False)).k
    kern(out, rows, grid=(rows * width + 63) // 64, block=64)
    return out.reshape(rows, width).astype(np.int64)


@pytest.mark.parametrize("width, chunk", [(64, 8), (128, 8), (32, 4), (64, 4), (32, 8), (16, 8), (8, 8), (48, 8), (24, 8),
                                          (96, 8), (40, 4), (192, 8)])
def test_a_permutation_of_whole_chunks(width, chunk):
    rows = 24
    got = offsets(width, chunk, rows)
    assert sorted(got.ravel()) == list(range(rows * width))               # every slot once
    r, c = np.meshgrid(np.arange(rows), np.arange(width), indexing="ij")
    assert (got // width == r).all()                                      # rows stay rows
    assert (got % chunk == c % chunk).all()                               # chunks stay whole
    per_row = width // chunk
    group = min(per_row & -per_row, 8)        # the largest power of two <= 8 dividing the chunks of a row
    want = r * width + ((c // chunk) ^ (r % group)) * chunk + c % chunk
    assert (got == want).all()


@pytest.mark.parametrize("width, chunk", [(64, 8), (128, 8), (32, 4), (64, 4)])
def test_eight_rows_of_one_column_use_eight_bank_groups(width, chunk):
    """Rows of 128 bytes or more: the 16-byte pieces of rows r0..r0+7 at one column are in
    eight different groups of four 4-byte banks (no ldmatrix conflict); unswizzled they
    would all be in one."""
    elem = 16 // chunk
    got = offsets(width, chunk, 16)
    for r0 in (0, 8):
        for c in range(0, width, chunk):
            groups = {(int(got[r0 + i, c]) * elem // 16) % 8 for i in range(8)}
            assert len(groups) == 8
    assert len({(r * width * elem // 16) % 8 for r in range(8)}) == 1     # unswizzled: one group
