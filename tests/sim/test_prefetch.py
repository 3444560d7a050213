"""prefetch_l2 in the simulator: a hint that changes no value and reads nothing into the
thread - so it is no access before griddep_wait (S0014) and no read of uninitialised or
racing memory - but its address must lie inside the buffer (S0001), as PTX requires."""

import numpy as np
import pytest

import ember
from ember.sim import load
from ember.sim.errors import SimError

SRC = """
kernel k(w: *global f32, y: *mut global f32, n: u32, lines: u32) block(64) {
    let i = block_idx.x * 64u32 + thread_idx.x;
    if i < lines {
        prefetch_l2(w, u64(i) * 32u64);
    }
    if i < n { y[i] = w[i] * 2.0; }
}
"""


def test_a_prefetch_changes_nothing_and_is_no_access_before_the_wait():
    prog = ember.compile(SRC, cache=False, programmatic_launch=True)
    assert prog.kernels["k"].programmatic            # the wait comes after the prefetch
    assert "mem.prefetch_l2" in ember.compile(SRC, cache=False, stop_after="ir").stage("ir")
    w = np.random.default_rng(5).standard_normal(256).astype(np.float32)
    y = np.zeros(256, np.float32)
    load(prog).k(w, y, 256, 8, grid=4)               # lines 0..7: elements 0, 32, .., 224
    np.testing.assert_array_equal(y, w * np.float32(2.0))


def test_a_prefetch_outside_its_buffer_is_reported():
    prog = ember.compile(SRC, cache=False)
    with pytest.raises(SimError, match="S0001"):
        load(prog).k(np.ones(256, np.float32), np.zeros(256, np.float32), 256, 9, grid=4)   # line 8: element 256
