"""Bulk copies on mbarriers on the GPU: the pipelines of tests/sim/mbarrier_programs.py give
what the simulator gives (the data doubled), stages reused over several rounds, with all
threads waiting and with a warp-specialised producer and consumers."""

import numpy as np
import pytest

import ember
from tests.sim.mbarrier_programs import PIPELINE, SPECIALISED, WITH_PIPELINE

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("stages, rounds", [(2, 3), (3, 5), (1, 4)])
def test_a_pipeline_of_bulk_copies(stages, rounds):
    from ember.runtime import cuda
    if cuda.context().compute_capability < (9, 0):
        pytest.skip("bulk copies need sm_90")
    prog = ember.compile(PIPELINE, name="pipeline.ember", arch=cuda.context().arch, cache=False,
                         defines={"STAGES": stages, "ROUNDS": rounds})
    blocks = 264
    x = np.random.default_rng(stages + rounds).standard_normal(blocks * stages * rounds * 512).astype(np.float32)
    y = np.zeros_like(x)
    ember.runtime.load(prog, device="cuda").doubled(x, y, grid=blocks)
    np.testing.assert_array_equal(y, 2 * x)


@pytest.mark.parametrize("src", [SPECIALISED, WITH_PIPELINE], ids=["by-hand", "std-pipeline"])
@pytest.mark.parametrize("stages, tiles", [(2, 6), (3, 50), (1, 3)])
def test_warp_specialised_producer_and_consumers(src, stages, tiles):
    from ember.runtime import cuda
    if cuda.context().compute_capability < (9, 0):
        pytest.skip("bulk copies need sm_90")
    prog = ember.compile(src, name="specialised.ember", arch=cuda.context().arch, cache=False,
                         defines={"STAGES": stages, "TILES": tiles})
    blocks = 264
    x = np.random.default_rng(stages * 7 + tiles).standard_normal(blocks * tiles * 256).astype(np.float32)
    y = np.zeros_like(x)
    for _ in range(3):
        ember.runtime.load(prog, device="cuda").specialised(x, y, grid=blocks)
        np.testing.assert_array_equal(y, 2 * x)


def test_a_bulk_store():
    from ember.runtime import cuda
    from tests.sim.test_bulk_store import STORE
    if cuda.context().compute_capability < (9, 0):
        pytest.skip("bulk copies need sm_90")
    prog = ember.compile(STORE, name="store.ember", arch=cuda.context().arch, cache=False)
    x = np.random.default_rng(9).standard_normal(512 * 264).astype(np.float32)
    y = np.zeros_like(x)
    ember.runtime.load(prog, device="cuda").k(x, y, grid=264)
    want = 2 * x
    want[::512] += 1.0
    np.testing.assert_array_equal(y, want)
