"""Memory ordering in the simulator (ember.sim.ordering): kernels that are correct only
with the right fences, orders and scopes pass, with the right result; the same kernels
with a fence missing, a scope too narrow or relaxed atomics are reported as races at the
access that is not ordered - the same whether the blocks run together in one batch or one
after another, since the report follows happens-before, not the timing."""

import numpy as np
import pytest

import ember
from ember.sim.errors import SimError

from . import ordering_programs as P

BATCHINGS = [pytest.param(1 << 15, id="one-batch"), pytest.param(128, id="block-by-block")]


def _load(src: str, variant: int, name: str):
    prog = ember.compile(src, name=name, defines={"VARIANT": variant}, stop_after="ir-opt")
    return ember.runtime.load(prog, device="sim")


def _last_block(variant: int, max_lanes: int, seed: int):
    x, blocks = P.last_block_inputs(seed)
    partial = np.zeros(blocks, np.float32)
    count = np.zeros(1, np.uint32)
    out = np.zeros(1, np.float32)
    _load(P.LAST_BLOCK, variant, "last_block.ember").total(x, partial, count, out, len(x), grid=blocks,
                                                          max_lanes=max_lanes)
    return x, out, count


@pytest.mark.parametrize("max_lanes", BATCHINGS)
@pytest.mark.parametrize("variant", [0, 1], ids=["fences", "acq_rel-ticket"])
def test_the_last_block_merges_with_a_release_and_an_acquire(variant, max_lanes):
    x, out, count = _last_block(variant, max_lanes, seed=variant * 7 + max_lanes)
    assert out[0] == pytest.approx(P.last_block_reference(x), rel=1e-5, abs=1e-4)
    assert count[0] == 0          # the last block reset the ticket counter


@pytest.mark.parametrize("max_lanes", BATCHINGS)
def test_a_missing_fence_is_a_race_at_the_last_blocks_read(max_lanes):
    with pytest.raises(SimError) as err:
        _last_block(2, max_lanes, seed=3)
    d = err.value.diagnostic
    assert d.code == "S0004" and "data race on buffer `partial`" in d.message
    assert "of block (7, 0, 0) reads element 0, which thread (0, 0, 0) of block (0, 0, 0) wrote" in d.message
    assert d.span.line_col[0] == P.LAST_BLOCK_READ_LINE
    assert any("docs/memory_model.md" in n for n in d.notes)


@pytest.mark.parametrize("max_lanes", BATCHINGS)
def test_a_cta_scoped_fence_does_not_reach_other_blocks(max_lanes):
    with pytest.raises(SimError) as err:
        _last_block(3, max_lanes, seed=4)
    d = err.value.diagnostic
    assert d.code == "S0004" and d.span.line_col[0] == P.LAST_BLOCK_READ_LINE
    assert any("had `cta` scope, which reaches only the threads of one block" in n for n in d.notes), d.notes


def _last_cluster(variant: int, max_lanes: int, clusters: int = 5):
    x = np.random.default_rng(variant).standard_normal(clusters * 2 * 64).astype(np.float32)
    partial = np.zeros_like(x)
    count = np.zeros(1, np.uint32)
    out = np.zeros(64, np.float32)
    prog = ember.compile(P.LAST_CLUSTER, name="last_cluster.ember", arch="sm_90", defines={"VARIANT": variant},
                         stop_after="ir-opt")
    ember.runtime.load(prog, device="sim").columns(x, partial, count, out, grid=clusters * 2, max_lanes=max_lanes)
    return x, out, count


@pytest.mark.parametrize("max_lanes", BATCHINGS)
def test_a_cluster_barrier_passes_on_what_its_blocks_acquired(max_lanes):
    """The last cluster merges: rank 1 reads the partials that rank 0's thread 0 acquired
    with the last ticket, learning of them only through the cluster barrier after it (the
    barrier's release and acquire are cumulative, as the PTX memory model's causality order
    is transitive)."""
    x, out, count = _last_cluster(0, max_lanes)
    np.testing.assert_allclose(out, (2 * x.astype(np.float64)).reshape(-1, 64).sum(axis=0), rtol=1e-5, atol=1e-4)
    assert count[0] == 0


@pytest.mark.parametrize("variant", [1, 2], ids=["no-fence", "cluster-scope"])
def test_the_last_clusters_read_needs_a_gpu_scoped_release_and_acquire(variant):
    with pytest.raises(SimError) as err:
        _last_cluster(variant, 1 << 15)
    d = err.value.diagnostic
    assert d.code == "S0004" and "data race on buffer `partial`" in d.message
    assert d.span.line_col[0] == P.LAST_CLUSTER_READ_LINE


def test_cta_scoped_atomics_of_different_blocks_are_reported():
    src = """kernel k(count: *mut global u32) block(32) {
        if thread_idx.x == 0u32 { atomic_add(count, 0, 1u32, relaxed, SCOPE); }
    }"""
    count = np.zeros(1, np.uint32)
    ember.runtime.load(ember.compile(src.replace("SCOPE", "gpu"), stop_after="ir-opt"), device="sim").k(
        count, grid=4)
    assert count[0] == 4
    with pytest.raises(SimError) as err:
        ember.runtime.load(ember.compile(src.replace("SCOPE", "cta"), stop_after="ir-opt"), device="sim").k(
            np.zeros(1, np.uint32), grid=4)
    d = err.value.diagnostic
    assert d.code == "S0004" and "atomically, but at `cta` scope" in d.message
    assert "block (1, 0, 0)" in d.message and "block (0, 0, 0)" in d.message


def test_a_lock_orders_its_critical_sections_only_with_acquire_and_release():
    x = np.random.default_rng(5).standard_normal(6).astype(np.float32)
    acc = np.zeros(1, np.float32)
    # a spin-wait on another block: one block per batch (docs/simulator.md)
    _load(P.LOCK, 0, "lock.ember").locked(np.zeros(1, np.uint32), acc, x, grid=6, max_lanes=32)
    assert acc[0] == pytest.approx(float(x.astype(np.float64).sum()), rel=1e-5)
    with pytest.raises(SimError) as err:
        _load(P.LOCK, 1, "lock.ember").locked(np.zeros(1, np.uint32), np.zeros(1, np.float32), x, grid=6,
                                             max_lanes=32)
    assert err.value.diagnostic.code == "S0004" and "buffer `acc`" in err.value.diagnostic.message


def test_a_release_sequence_of_adds_hands_a_shared_array_to_another_warp():
    x = np.random.default_rng(6).integers(0, 1000, 32).astype(np.uint32)
    out = np.zeros(32, np.uint32)
    _load(P.HANDOFF, 0, "handoff.ember").handoff(x, out, grid=1)
    np.testing.assert_array_equal(out, np.roll(x * 3, -1))
    with pytest.raises(SimError) as err:
        _load(P.HANDOFF, 1, "handoff.ember").handoff(x, np.zeros(32, np.uint32), grid=1)
    d = err.value.diagnostic
    assert d.code == "S0004" and "shared array `data`" in d.message and "reads element 1" in d.message


def test_only_acquires_that_read_a_release_order_anything():
    """A release that nobody acquires orders nothing: the same flag kernel without the
    consumer's acquire races, and with it passes (the producer's release alone is not enough)."""
    src = """kernel k<const ACQ: bool = true>(data: *mut global u32, flag: *mut global u32, out: *mut global u32)
             block(32) {
        if block_idx.x == 0u32 {
            data[thread_idx.x] = thread_idx.x + 1u32;
            barrier();
            if thread_idx.x == 0u32 { atomic_store(flag, 0, 1u32, release, gpu); }
        } else if thread_idx.x == 0u32 {
            var seen = 0u32;
            if ACQ { seen = atomic_load(flag, 0, acquire, gpu); } else { seen = atomic_load(flag, 0); }
            if seen == 1u32 {
                var s = 0u32;
                for i in 0u32..32u32 { s += data[i]; }
                out[0] = s;
            }
        }
    }"""
    out = np.zeros(1, np.uint32)
    prog = ember.compile(src, stop_after="ir-opt")
    ember.runtime.load(prog, device="sim").k(np.zeros(32, np.uint32), np.zeros(1, np.uint32), out, grid=2,
                                             max_lanes=32)
    assert out[0] == 32 * 33 // 2
    with pytest.raises(SimError):
        prog = ember.compile(src, defines={"ACQ": False}, stop_after="ir-opt")
        ember.runtime.load(prog, device="sim").k(np.zeros(32, np.uint32), np.zeros(1, np.uint32),
                                                 np.zeros(1, np.uint32), grid=2, max_lanes=32)
