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
