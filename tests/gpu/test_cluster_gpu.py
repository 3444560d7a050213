"""Thread-block clusters on an H100: ranks, cluster barriers and distributed shared memory
give what the simulator gives (tests/sim/test_cluster.py)."""

import numpy as np
import pytest

import ember
from tests.sim.cluster_programs import RING, ring_reference

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("blocks", [4, 132])
def test_ring_matches_the_simulator(blocks):
    from ember.runtime import cuda
    if cuda.context().arch != "sm_90":
        pytest.skip("clusters need sm_90")
    prog = ember.compile(RING, arch="sm_90", cache=False)
    out, sums = np.zeros(blocks * 64, np.uint32), np.zeros(blocks // 4 * 64, np.uint32)
    ember.runtime.load(prog).k(out, sums, grid=blocks)
    want_out, want_sums = ring_reference(blocks)
    np.testing.assert_array_equal(out.reshape(blocks, 64), want_out)
    np.testing.assert_array_equal(sums.reshape(-1, 64), want_sums)
