"""Bulk stores (shared to global with the copy engine) in the simulator: the right data,
and each way of misusing them reported - no fence_proxy_async after ordinary writes (S0012),
no barrier between the writers and the issuing thread (S0004), the source overwritten or
the destination read before the thread waits (S0009)."""

import numpy as np
import pytest

import ember
from ember.sim.errors import SimError

STORE = """kernel k(x: *global f32, y: *mut global f32 align(16)) block(128) {
    shared t: [f32; 512];
    let base = block_idx.x * 512u32;
    for i in thread_idx.x..512u32 step 128u32 { t[i] = 2.0 * x[base + i]; }
    fence_proxy_async();
    barrier();
    if thread_idx.x == 0u32 {
        cp_async_bulk_store(y, base, t, 0, 2048u32);
        cp_async_bulk_commit();
        cp_async_bulk_wait_read(0);
        t[0] = 0.0;
        cp_async_bulk_wait(0);
        y[base] = y[base] + 1.0;
    }
}"""


def _run(src: str):
    x = np.random.default_rng(3).standard_normal(2048).astype(np.float32)
    y = np.zeros_like(x)
    prog = ember.compile(src, name="store.ember", stop_after="ir-opt", cache=False)
    ember.runtime.load(prog, device="sim").k(x, y, grid=4)
    return x, y


def test_a_bulk_store():
    x, y = _run(STORE)
    want = 2 * x
    want[::512] += 1.0
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("change, code, message", [
    (("    fence_proxy_async();\n", ""), "S0012", "written by an ordinary store that the copy engine need not see"),
    (("    barrier();\n", ""), "S0004", "data race on shared array `t`"),
    (("        cp_async_bulk_wait_read(0);\n", ""), "S0009", "which a bulk store or a wgmma may still be reading"),
    (("        cp_async_bulk_wait(0);\n", ""), "S0009", "which an asynchronous copy is still writing"),
])
def test_misuse_is_reported(change, code, message):
    src = STORE.replace(*change)
    assert src != STORE
    with pytest.raises(SimError) as err:
        _run(src)
    assert err.value.diagnostic.code == code and message in err.value.diagnostic.message, err.value.diagnostic.message


def test_the_ptx():
    ptx = ember.compile(STORE, name="store.ember", cache=False).ptx
    for text in ("fence.proxy.async.shared::cta;", "cp.async.bulk.global.shared::cta.bulk_group",
                 "cp.async.bulk.commit_group;", "cp.async.bulk.wait_group.read 0;", "cp.async.bulk.wait_group 0;"):
        assert text in ptx
