"""cp.async in the simulator (ember/sim/async_copy.py): copies land at the wait for their
group, with zero fill; any access to bytes still being copied is S0009 at the access; after
landing they are the copying thread's writes (a read by another thread needs a barrier);
bounds, alignment and source sizes are checked at the copy's line."""

import numpy as np
import pytest

import ember
from ember.sim import load
from ember.sim.errors import SimError

STAGE = """
kernel stage<const SIZE: u32 = 16>(x: *global f32, y: *mut global f32, n: u32) block(64) {{
    shared tile: [f32; 256];
    let t = thread_idx.x;
    let per = SIZE / 4;
    for k in 0..4 / per {{
        let e = t * 4 + k * per;
        let g = u64(block_idx.x) * 256 + u64(e);
        let left = select(g < u64(n), u32(min(u64(n) - g, u64(per))) * 4, 0u32);
        {copy}(tile, e, x, g, left);
    }}
    cp_async_commit();
    {wait}
    {barrier}
    y[u64(block_idx.x) * 256 + u64(t)] = tile[255 - t] * 2.0;
}}
"""


def build(copy="cp_async_16", wait="cp_async_wait(0);", barrier="barrier();", size=16):
    src = STAGE.format(copy=copy, wait=wait, barrier=barrier)
    return ember.compile(src, defines={"SIZE": size}, cache=False)


def reference(x, n):
    xs = np.where(np.arange(len(x)) < n, x, 0).astype(np.float32)
    y = np.zeros_like(x)
    for b in range(len(x) // 256):
        for t in range(64):
            y[b * 256 + t] = xs[b * 256 + 255 - t] * 2
    return y


@pytest.mark.parametrize("copy, size", [("cp_async_4", 4), ("cp_async_8", 8), ("cp_async_16", 16),
                                        ("cp_async_16_cg", 16)])
@pytest.mark.parametrize("n", [512, 509, 300, 0])
def test_copies_land_at_the_wait_with_zero_fill(copy, size, n):
    x = np.random.default_rng(n).standard_normal(512).astype(np.float32)
    y = np.full(512, 7.0, np.float32)
    load(build(copy, size=size)).stage(x, y, n, grid=2)
    np.testing.assert_array_equal(y[[b * 256 + t for b in range(2) for t in range(64)]],
                                  reference(x, n)[[b * 256 + t for b in range(2) for t in range(64)]])


@pytest.mark.parametrize("wait, barrier, code, line", [
    ("", "barrier();", "S0009", 15),                        # never waited for
    ("cp_async_wait(1);", "barrier();", "S0009", 15),        # its group is the newest: still in flight
    ("cp_async_wait(0);", "", "S0004", 15),                  # landed, but another thread reads without a barrier
])
def test_reading_too_early_is_reported(wait, barrier, code, line):
    x = np.ones(512, np.float32)
    with pytest.raises(SimError) as e:
        load(build(wait=wait, barrier=barrier)).stage(x, np.zeros(512, np.float32), 512, grid=2)
    assert e.value.code == code and f":{line}:" in str(e.value)


PIPELINE = """
kernel sums(x: *global f32, y: *mut global f32) block(32) {
    shared buf: [f32; 256];              // two stages of 128
    let t = thread_idx.x;
    cp_async_16(buf, t * 4, x, u64(t) * 4, 16);
    cp_async_commit();
    var acc: f32 = 0.0;
    for k in 0..7u32 {
        let next = (k + 1) % 2;
        cp_async_16(buf, next * 128 + t * 4, x, u64(k + 1) * 128 + u64(t) * 4, 16);
        cp_async_commit();
        cp_async_wait(1);                // stage k has landed, k + 1 is in flight
        acc += buf[(k % 2) * 128 + t * 4];
    }
    cp_async_wait(0);
    acc += buf[128 + t * 4];
    y[t] = acc;
}
"""


def test_a_double_buffered_pipeline():
    x = np.random.default_rng(3).standard_normal(8 * 128).astype(np.float32)
    y = np.zeros(32, np.float32)
    load(ember.compile(PIPELINE, cache=False)).sums(x, y, grid=1)
    want = np.zeros(32, np.float32)
    for k in range(8):
        want += x[k * 128 + np.arange(32) * 4]
    np.testing.assert_array_equal(y, want)


def test_overwriting_a_stage_still_in_flight_is_reported():
    bad = PIPELINE.replace("cp_async_wait(1);                // stage k has landed, k + 1 is in flight",
                           "cp_async_wait(2);")
    with pytest.raises(SimError) as e:
        load(ember.compile(bad, cache=False)).sums(np.ones(1024, np.float32), np.zeros(32, np.float32), grid=1)
    assert e.value.code == "S0009"


@pytest.mark.parametrize("change, code, what", [
    ("cp_async_16(tile, e % 252 + 1, x, g, left);", "S0002", "misaligned"),
    ("cp_async_16(tile, e + 256, x, g, left);", "S0001", "out-of-bounds"),
    ("cp_async_16(tile, e, x, g, left * 2u32);", "S0001", "at most the copy's size"),
])
def test_copies_are_checked_where_they_start(change, code, what):
    src = STAGE.format(copy="cp_async_16", wait="cp_async_wait(0);", barrier="barrier();").replace(
        "{copy}(tile, e, x, g, left);".format(copy="cp_async_16"), change)
    with pytest.raises(SimError) as e:
        load(ember.compile(src, cache=False)).stage(np.ones(512, np.float32), np.zeros(512, np.float32), 512, grid=2)
    assert e.value.code == code and what in str(e.value) and ":10:" in str(e.value)


SHARED_RING = """
kernel ring(x: *global f32, y: *mut global f32) block(32) {
    shared buf: [f32; 256];              // two stages of 128: each thread copies 4, reads another's
    let t = thread_idx.x;
    cp_async_16(buf, t * 4, x, u64(t) * 4, 16);
    cp_async_commit();
    var acc: f32 = 0.0;
    for k in 0..7u32 {
        REFILL_BARRIER
        cp_async_16(buf, (k + 1) % 2 * 128 + t * 4, x, u64(k + 1) * 128 + u64(t) * 4, 16);
        cp_async_commit();
        cp_async_wait(1);
        barrier();                       // stage k has landed, for every thread
        acc += buf[k % 2 * 128 + (31 - t) * 4];
    }
    cp_async_wait(0);
    barrier();
    acc += buf[128 + (31 - t) * 4];
    y[t] = acc;
}
"""


def test_refilling_a_stage_another_thread_may_still_read_is_a_race():
    """A copy may write its bytes at any time after it starts, so the stage it refills must
    be done with - by every thread that read it - before the copy starts, not only before
    it lands: without the barrier before the refill thread t's copy races thread 31 - t's
    read of the last round, at the copy."""
    x = np.random.default_rng(4).standard_normal(8 * 128).astype(np.float32)
    want = np.zeros(32, np.float32)
    for k in range(8):
        want += x[k * 128 + (31 - np.arange(32)) * 4]
    y = np.zeros(32, np.float32)
    load(ember.compile(SHARED_RING.replace("REFILL_BARRIER", "barrier();"), cache=False)).ring(x, y, grid=1)
    np.testing.assert_array_equal(y, want)
    with pytest.raises(SimError) as e:
        load(ember.compile(SHARED_RING.replace("REFILL_BARRIER", ""), cache=False)).ring(x, y, grid=1)
    assert e.value.code == "S0004" and ":10:" in str(e.value) and "read" in str(e.value)
