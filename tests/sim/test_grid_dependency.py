"""Programmatic dependent launch in the simulator: a simulated kernel runs alone, so
griddep_wait returns at once and griddep_launch_dependents does nothing - a kernel that
uses them (or is compiled with programmatic_launch) computes what it computes without."""

import numpy as np

import ember
from ember.sim import load

SRC = """
kernel k(x: *global f32, y: *mut global f32, n: u32) block(64) {
    shared s: [f32; 64];
    griddep_launch_dependents();
    s[thread_idx.x] = f32(thread_idx.x);
    barrier();
    griddep_wait();
    let i = block_idx.x * 64 + thread_idx.x;
    if i < n { y[i] = x[i] * 2.0 + s[63 - thread_idx.x]; }
}
"""


def test_the_ops_do_nothing_in_a_kernel_that_runs_alone():
    x = np.random.default_rng(3).standard_normal(200).astype(np.float32)
    want = x * np.float32(2.0) + (63 - np.arange(200) % 64).astype(np.float32)
    for prog in (ember.compile(SRC, cache=False), ember.compile(SRC.replace("griddep_wait();", ""), cache=False,
                                                                 programmatic_launch=True)):
        y = np.zeros(200, np.float32)
        load(prog).k(x, y, 200, grid=4)
        np.testing.assert_array_equal(y, want)


def test_a_global_access_before_the_wait_of_a_programmatic_kernel_is_reported():
    """The simulator checks the compiler's proof: a kernel marked programmatic (as if the
    proof had passed it) that reads global memory before griddep_wait is S0014 at the read;
    the same kernel launched plainly runs."""
    import pytest

    from ember.records import replace
    from ember.sim.errors import SimError
    src = """
kernel k(x: *global f32, y: *mut global f32) block(32) {
    let v = x[thread_idx.x];
    griddep_wait();
    y[thread_idx.x] = v;
}
"""
    prog = ember.compile(src, cache=False)
    assert not prog.kernels["k"].programmatic
    x, y = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    load(prog).k(x, y, grid=1)
    np.testing.assert_array_equal(y, x)
    prog.kernels["k"] = replace(prog.kernels["k"], programmatic=True)
    with pytest.raises(SimError, match="S0014") as e:
        load(prog).k(x, y, grid=1)
    assert "before griddep_wait" in str(e.value) and ":3:" in str(e.value)
