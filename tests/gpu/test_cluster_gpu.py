"""Thread-block clusters on an H100: ranks, cluster barriers and distributed shared memory
give what the simulator gives (tests/sim/test_cluster.py)."""

import numpy as np
import pytest

import ember
from tests.sim.cluster_programs import ring, ring_reference

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("blocks, n", [(4, 4), (132, 4), (128, 16)])
def test_ring_matches_the_simulator(blocks, n):
    """Clusters of 4, and of 16: past the portable 8, which the runtime opts the kernel in to."""
    from ember.runtime import cuda
    if cuda.context().arch != "sm_90":
        pytest.skip("clusters need sm_90")
    prog = ember.compile(ring(n), arch="sm_90", cache=False)
    out, sums = np.zeros(blocks * 64, np.uint32), np.zeros(blocks // n * 64, np.uint32)
    ember.runtime.load(prog).k(out, sums, grid=blocks)
    want_out, want_sums = ring_reference(blocks, n)
    np.testing.assert_array_equal(out.reshape(blocks, 64), want_out)
    np.testing.assert_array_equal(sums.reshape(-1, 64), want_sums)
