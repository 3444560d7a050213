"""Shared memory above the 48 KB a block may declare statically (ember/ir/analysis/shared.py):
the kernel's arrays move to one dynamic buffer, laid out as ptxas lays static arrays out;
KernelInfo.dynamic_shared tells launches (and the cache keeps it); the simulator runs such
kernels unchanged."""

import numpy as np

import ember
from ember import cache as C
from ember.ir.analysis.shared import dynamic_bytes, layout
from ember.sim import load

BIG = """
kernel big(x: *mut global f32) block(256) {
    shared a: [f32; 16384];
    shared odd: [u8; 3];
    shared b: [f32; 8192];
    let t = thread_idx.x;
    for i in t..16384u32 step 256 { a[i] = f32(i); }
    for i in t..8192u32 step 256 { b[i] = f32(i) * 2.0; }
    if t < 3 { odd[t] = u8(t); }
    barrier();
    x[t] = a[16383 - t] + b[8191 - t] + f32(odd[2]);
}
kernel small(x: *mut global f32) block(32) {
    shared a: [f32; 12288];
    a[thread_idx.x] = 1.0;
    barrier();
    x[thread_idx.x] = a[31 - thread_idx.x];
}
"""


def test_layout_is_declaration_order_16_byte_aligned():
    prog = ember.compile(BIG, cache=False)
    big = prog.ir.get("big")
    offsets, total = layout(big)
    assert sorted(offsets.values()) == [0, 65536, 65552]
    assert total == 65552 + 8192 * 4
    assert dynamic_bytes(big) == total == prog.kernels["big"].dynamic_shared
    assert dynamic_bytes(prog.ir.get("small")) == 0 == prog.kernels["small"].dynamic_shared


def test_the_cache_keeps_the_dynamic_size(tmp_path):
    store = C.Cache(str(tmp_path))
    first = ember.compile(BIG, cache=store)
    hit = ember.compile(BIG, cache=store)
    assert hit.cached and hit.kernels["big"].dynamic_shared == first.kernels["big"].dynamic_shared == 98320


def test_the_simulator_runs_it():
    prog = ember.compile(BIG, cache=False)
    x = np.zeros(256, np.float32)
    load(prog).big(x, grid=1)
    t = np.arange(256)
    np.testing.assert_array_equal(x, (16383 - t) + 2.0 * (8191 - t) + 2.0)
