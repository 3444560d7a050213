"""Shared arrays sized at launch (`shared row: [f32; cols];`): the array lies after the
kernel's other shared arrays in its dynamic shared memory, each launch gives the bytes its
`cols` asks for (checked against what a block may use), and the simulator bounds every
access by that launch's length."""

import numpy as np
import pytest

import ember
from ember.abi import LaunchError
from ember.sim.errors import SimError

from . import sized_shared_programs as P


def _sim(src: str):
    return ember.runtime.load(ember.compile(src, name="sized.ember", stop_after="ir-opt"), device="sim")


@pytest.mark.parametrize("cols", [1, 255, 257, 1000])
def test_softmax_of_any_width_reads_its_input_once(cols):
    rows = 3
    x = P.inputs(rows, cols, seed=cols)
    y = np.zeros_like(x)
    _sim(P.SOFTMAX).softmax(x, y, cols, grid=rows)
    np.testing.assert_allclose(y, P.reference(x, rows, cols), rtol=2e-6, atol=1e-9)


def test_the_kernel_describes_what_each_launch_adds():
    k = ember.compile(P.SOFTMAX, name="sized.ember").kernels["softmax"]
    assert k.dynamic_shared == 32            # `partial` first, then the sized `row`
    assert k.sized_shared == (2, 4, "row")   # parameter 2 (`cols`), 4 bytes an element


def test_a_launch_asking_for_more_than_a_block_may_use_is_refused():
    with pytest.raises(LaunchError, match=r"`cols` = 100000 makes shared array `row` 400000 bytes \(400032 bytes"):
        _sim(P.SOFTMAX).softmax(np.zeros(100000, np.float32), np.zeros(100000, np.float32), 100000, grid=1)


def test_accesses_are_bounded_by_the_launchs_length():
    src = """kernel k(y: *mut global u32, n: u32, at: u32) block(32) {
        shared a: [u32; n];
        a[thread_idx.x % n] = thread_idx.x;
        barrier();
        if thread_idx.x == 0u32 { y[0] = a[at]; }
    }"""
    y = np.zeros(1, np.uint32)
    _sim(src).k(y, 40, 31, grid=1)
    assert y[0] == 31
    with pytest.raises(SimError, match=r"element 40 of 40"):
        _sim(src).k(y, 40, 40, grid=1)


def test_ir_and_ptx():
    from ember.ir.printer import print_module
    prog = ember.compile(P.SOFTMAX, name="sized.ember")
    assert "mem.shared_sized %cols {name = row} : *mut shared f32" in print_module(
        ember.compile(P.SOFTMAX, name="sized.ember", stop_after="ir-opt").ir)
    assert ".extern .shared .align 16 .b8 ember_dynamic_shared[];" in prog.ptx
