"""ember.sim.races's filter for accesses whose lanes share a byte (_lanes_overlap): it may
say yes where no byte is shared (the callers then look byte by byte), never no where one
is - checked against the byte-by-byte answer on random accesses, lanes' runs of consecutive
bytes and not."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ember.sim.races import _lanes_overlap


@given(st.integers(1, 40), st.sampled_from([1, 2, 4, 8, 16]), st.integers(0, 2 ** 32 - 1),
       st.booleans(), st.integers(1, 3))
def test_never_no_where_two_lanes_share_a_byte(lanes, size, seed, runs, rows):
    rng = np.random.default_rng(seed)
    width = 64
    start = rng.integers(0, width - size + 1, lanes)
    row = rng.integers(0, rows, lanes)
    cols = start[:, None] + np.arange(size) if runs else rng.integers(0, width, (lanes, size))
    r, c = np.repeat(row, size), cols.reshape(-1)
    flat = r * width + c
    shared = len(np.unique(flat)) < len(flat)
    assert _lanes_overlap(r, c, size, width) or not shared
    if runs:                              # runs within a row: the answer is exact
        assert _lanes_overlap(r, c, size, width) == shared
