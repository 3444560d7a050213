"""Thread-block clusters in the simulator: ranks, cluster barriers ordering the cluster's
blocks, distributed shared memory read and written by rank, and each misuse reported
(tests/gpu/test_cluster_gpu.py runs the same kernel on an H100)."""

import numpy as np
import pytest

import ember
from ember.abi import LaunchError
from ember.diagnostics import CompileError
from ember.sim.errors import SimError
from tests.sim.cluster_programs import RING, ring, ring_reference


def _run(src, blocks, *arrays):
    prog = ember.compile(src, arch="sm_90", stop_after="ir-opt", cache=False)
    ember.runtime.load(prog, device="sim").k(*arrays, grid=blocks)


@pytest.mark.parametrize("n", [4, 16])
def test_blocks_of_a_cluster_read_and_write_each_others_arrays(n):
    """Clusters of 4 blocks, and of 16 (past the portable 8: sm_90's largest)."""
    out, sums = np.zeros(2 * n * 64, np.uint32), np.zeros(2 * 64, np.uint32)
    _run(ring(n), 2 * n, out, sums)
    want_out, want_sums = ring_reference(2 * n, n)
    np.testing.assert_array_equal(out.reshape(2 * n, 64), want_out)
    np.testing.assert_array_equal(sums.reshape(2, 64), want_sums)


def test_a_read_no_cluster_barrier_orders_is_a_race():
    src = RING.replace("    acc[thread_idx.x] = 0u32;\n    cluster_barrier();\n", "    acc[thread_idx.x] = 0u32;\n")
    with pytest.raises(SimError) as err:
        _run(src, 8, np.zeros(8 * 64, np.uint32), np.zeros(128, np.uint32))
    d = err.value.diagnostic
    assert d.code == "S0004" and "of block (1, 0, 0) wrote with nothing in between" in d.message


# Each block reads the next block's array once (after a cluster barrier) and, with
# VARIANT 0, passes another cluster barrier before it exits.
LAST_READ = """kernel k<const VARIANT: u32 = 0>(out: *mut global u32) block(32) cluster(2) {
    shared s: [u32; 32];
    s[thread_idx.x] = block_idx.x * 100u32 + thread_idx.x;
    cluster_barrier();
    out[block_idx.x * 32u32 + thread_idx.x] = dsmem_load(s, thread_idx.x, 1u32 - cluster_rank);
    if VARIANT == 0u32 {
        cluster_barrier();
    }
}
"""


def test_a_block_may_not_exit_while_another_reads_its_array():
    """A block's shared memory goes with it: the other block's read must be ordered before
    its exit by a cluster barrier both pass after the read (S0015 at the read otherwise)."""
    out = np.zeros(4 * 32, np.uint32)
    prog = ember.compile(LAST_READ, arch="sm_90", cache=False)
    ember.runtime.load(prog, device="sim").k(out, grid=4)
    want = (np.arange(4) ^ 1)[:, None] * 100 + np.arange(32)[None, :]
    np.testing.assert_array_equal(out.reshape(4, 32), want)
    prog = ember.compile(LAST_READ, arch="sm_90", defines={"VARIANT": 1}, cache=False)
    with pytest.raises(SimError) as err:
        ember.runtime.load(prog, device="sim").k(out, grid=4)
    d = err.value.diagnostic
    assert d.code == "S0015"
    assert "of block (1, 0, 0) reads the shared memory of block (0, 0, 0) of its cluster" in d.message
    assert d.span is not None and "dsmem_load" in d.render()


# Thread 0 of each block arrives on the other block's barrier (phase 0 needs one arrival);
# VARIANT 1: every thread then waits for its own barrier's phase 0; 2: a cluster barrier.
LAST_ARRIVE = """import "std/mbarrier.ember";

kernel k<const VARIANT: u32 = 0>(out: *mut global u32) block(32) cluster(2) {
    shared bar: [u64; 1];
    if thread_idx.x == 0u32 { mbarrier_init(bar, 0, 1u32); }
    cluster_barrier();
    if thread_idx.x == 0u32 { mbarrier_arrive_cluster(bar, 0, 1u32 - cluster_rank); }
    if VARIANT == 1u32 { mbarrier_wait(bar, 0, 0u32); }
    if VARIANT == 2u32 { cluster_barrier(); }
    out[block_idx.x * 32u32 + thread_idx.x] = 1u32;
}
"""


@pytest.mark.parametrize("variant", [1, 2])
def test_an_arrival_on_another_blocks_barrier_before_it_exits(variant):
    """Ordered before the target's exit by its wait for the arrival's phase, or by a
    cluster barrier after it."""
    out = np.zeros(4 * 32, np.uint32)
    prog = ember.compile(LAST_ARRIVE, arch="sm_90", defines={"VARIANT": variant}, cache=False)
    ember.runtime.load(prog, device="sim").k(out, grid=4)
    assert (out == 1).all()


def test_an_arrival_nothing_orders_before_the_targets_exit_is_reported():
    """The last releases a ring forwards to the cluster's producers, which never wait for
    them again: without a cluster barrier at the end the producer's block may be gone."""
    prog = ember.compile(LAST_ARRIVE, arch="sm_90", cache=False)
    with pytest.raises(SimError) as err:
        ember.runtime.load(prog, device="sim").k(np.zeros(4 * 32, np.uint32), grid=4)
    d = err.value.diagnostic
    assert d.code == "S0015" and "arrives on mbarrier `bar`[0] of block (1, 0, 0) of its cluster" in d.message


def test_a_cluster_barrier_some_block_skips_is_divergent():
    src = RING.replace("    cluster_barrier();               // no block exits",
                       "    if cluster_rank != 3u32 { cluster_barrier(); }  // no block exits")
    with pytest.raises(SimError) as err:
        _run(src, 4, np.zeros(4 * 64, np.uint32), np.zeros(64, np.uint32))
    d = err.value.diagnostic
    assert d.code == "S0005" and "but block (3, 0, 0) of its cluster does not reach it" in d.message


def test_a_rank_past_the_cluster_is_out_of_bounds():
    src = RING.replace("% cluster_size;", "% cluster_size + 4u32;")
    with pytest.raises(SimError) as err:
        _run(src, 4, np.zeros(4 * 64, np.uint32), np.zeros(64, np.uint32))
    assert err.value.diagnostic.code == "S0001" and "rank 5 of its cluster, which has 4 blocks" in err.value.diagnostic.message


def test_the_grid_is_a_multiple_of_the_cluster():
    with pytest.raises(LaunchError, match=r"runs in clusters of \(4, 1, 1\) blocks: the grid \(6, 1, 1\) must be"):
        _run(RING, 6, np.zeros(6 * 64, np.uint32), np.zeros(128, np.uint32))


@pytest.mark.parametrize("src, arch, message", [
    (RING, "sm_80", "clusters need sm_90 or newer; the target is sm_80"),
    (RING.replace("cluster(4)", "cluster(4, 5)"), "sm_90", "a cluster of 4x5x1 blocks exceeds the 16 blocks"),
    (RING.replace("cluster(4)", "cluster(0)"), "sm_90", "cluster dimensions must be positive"),
    ("kernel k(o: *mut global u32) block(32) { o[0] = cluster_rank; }", "sm_80",
     "`cluster_rank` needs sm_90 or newer"),
])
def test_located_errors(src, arch, message):
    with pytest.raises(CompileError, match=message):
        ember.compile(src, arch=arch, cache=False)


def test_cluster_dimensions_reach_the_ptx_and_the_kernel_description():
    prog = ember.compile(RING, arch="sm_90", cache=False)
    assert ".reqnctapercluster 4, 1, 1" in prog.ptx and "mapa.shared::cluster.u32" in prog.ptx
    assert prog.kernels["k"].cluster == (4, 1, 1)


def test_a_cluster_of_one_block_is_no_cluster():
    """`cluster(C)` with C = 1 (a const parameter's value) compiles as a kernel without it."""
    src = "kernel k<const C: u32 = 1>(o: *mut global u32) block(32) cluster(C) { o[thread_idx.x] = cluster_rank; }"
    one = ember.compile(src, arch="sm_90", cache=False)
    assert one.kernels["k"].cluster is None and ".reqnctapercluster" not in one.ptx
    two = ember.compile(src, arch="sm_90", defines={"C": 2}, cache=False)
    assert two.kernels["k"].cluster == (2, 1, 1) and ".reqnctapercluster 2, 1, 1" in two.ptx
