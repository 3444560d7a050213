"""The simulator takes the same launch as the GPU: `ember.runtime.load(prog, device=...)`
with "sim" or "cuda", the same positional arguments, grid and block, and the same
argument checks (ember.abi) before anything runs."""

import numpy as np
import pytest

import ember
from ember.runtime import LaunchError, load
from ember.sim import SimModule

SRC = """
kernel axpy(a: f32, x: *global f32, y: *mut global f32 align(16), n: u32) block(64) {
    let i = block_idx.x * 64 + thread_idx.x;
    if i < n { y[i] = a * x[i] + y[i]; }
}
"""


@pytest.fixture(scope="module")
def prog():
    return ember.compile(SRC)


def test_device_sim_is_the_simulator(prog):
    mod = load(prog, device="sim")
    assert isinstance(mod, SimModule)
    rng = np.random.default_rng(3)
    x = rng.standard_normal(100).astype(np.float32)
    y = rng.standard_normal(100).astype(np.float32)
    want = (np.float32(2.5) * x + y).astype(np.float32)  # no fma: two roundings
    mod.axpy(2.5, x, y, 100, grid=2)
    np.testing.assert_array_equal(y, want)


def test_unknown_device(prog):
    with pytest.raises(ValueError, match="unknown device"):
        load(prog, device="tpu")


@pytest.mark.parametrize("call, message", [
    (lambda k, x, y: k(2.0, x, y, grid=2), "takes 4 arguments"),
    (lambda k, x, y: k(2.0, x.astype(np.float64), y, 100, grid=2), "points to `f32`"),
    (lambda k, x, y: k(2.0, x, y, 100, grid="12"), "integer or a tuple"),
    (lambda k, x, y: k(2.0, x, y, 100, grid=(2.5,)), "must hold integers"),
    (lambda k, x, y: k(2.0, x, y, 100, grid=(1, 1, 70000)), "above the limit of 65535"),
    (lambda k, x, y: k(2.0, x, y, 100, grid=2, block=(1, 1, 65)), "compiled for block"),
    (lambda k, x, y: k(2.0 ** 200, x, y, 100, grid=2), "overflows it"),
    (lambda k, x, y: k(2.0, x, y[::2], 50, grid=2), "contiguous"),
    (lambda k, x, y: k(2.0, y[:50], y[50:], 50, grid=2), None),     # neighbours, no overlap: fine
    (lambda k, x, y: k(2.0, y, y, 100, grid=2), "read-only `x` overlaps `y`"),
    (lambda k, x, y: k(2.0, x, y, -1, grid=2), "out of range"),
    (lambda k, x, y: k(2.0, x, y, 100, grid=2, block=32), "compiled for block"),
    (lambda k, x, y: k(2.0, x, y, 100, grid=0), "positive"),
])
def test_launch_errors_come_before_running(prog, call, message):
    k = load(prog, device="sim").axpy
    x = np.ones(100, np.float32)
    y = np.zeros(100, np.float32)
    if message is None:
        call(k, x, y)
        return
    with pytest.raises(LaunchError, match=message):
        call(k, x, y)
    assert not y.any()


def test_numpy_grid_and_block_values(prog):
    y = np.zeros(100, np.float32)
    load(prog, device="sim").axpy(1.0, np.ones(100, np.float32), y, np.uint32(100), grid=np.int64(2))
    assert (y == 1).all()


ALIAS = """
kernel twice(a: *mut global f32 align(16), b: *mut global f32 align(16)) block(32) {
    let i = thread_idx.x;
    if i == 0 { a[0] = a[0] + 1.0; }
    barrier();
    if i == 0 { b[0] = b[0] * 10.0; }
}
"""


def test_one_array_for_two_mut_parameters_is_aliased():
    """Host arrays behave like device buffers: passing one array twice passes one buffer
    (staged once), so the kernel's writes through `a` are seen through `b` and the result
    is what the same launch gives with one device buffer."""
    k = load(ember.compile(ALIAS), device="sim").twice
    x = np.full(4, 2.0, np.float32)
    k(x, x, grid=1)
    assert x[0] == 30.0          # (2 + 1) * 10: one memory


def test_overlapping_views_alias_with_their_own_bounds_and_alignment():
    k = load(ember.compile(ALIAS), device="sim").twice
    base = np.zeros(12, np.float32)
    k(base[:8], base[4:], grid=1)            # offsets 0 and 16: aligned
    assert base[0] == 1.0 and base[4] == 0.0
    with pytest.raises(LaunchError, match="16-byte aligned"):
        k(base[:8], base[1:], grid=1)        # b starts 4 bytes into the staged allocation


def test_read_only_array_for_a_mut_parameter(prog):
    y = np.zeros(100, np.float32)
    y.flags.writeable = False
    with pytest.raises(LaunchError, match="read-only"):
        load(prog, device="sim").axpy(1.0, np.ones(100, np.float32), y, 100, grid=2)


def test_simulating_ir_before_and_after_passes(prog):
    """load_module runs any IR module, e.g. the unoptimized one."""
    from ember.sim import load_module
    unopt = ember.compile(SRC, opt=0)
    x = np.arange(64, dtype=np.float32)
    results = []
    for p in (unopt, prog):
        y = np.ones(64, np.float32)
        load_module(p.ir, p.kernels).axpy(3.0, x, y, 64, grid=1)
        results.append(y)
    np.testing.assert_array_equal(results[0], results[1])
