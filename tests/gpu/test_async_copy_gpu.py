"""cp.async on the GPU computes what the simulator does: every size and cache mode, zero
fill at the end of the input, and a double-buffered pipeline with wait_group 1."""

import numpy as np
import pytest

import ember
from ember.runtime import load
from tests.sim.test_async_copy import PIPELINE, STAGE

pytestmark = pytest.mark.gpu


def _both(prog, kernel, *args, grid):
    outs = []
    for device in ("cuda", "sim"):
        copies = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
        getattr(load(prog, device=device), kernel)(*copies, grid=grid)
        outs.append(copies)
    return outs


@pytest.mark.parametrize("copy, size", [("cp_async_4", 4), ("cp_async_8", 8), ("cp_async_16", 16),
                                        ("cp_async_16_cg", 16)])
@pytest.mark.parametrize("n", [2048, 2045, 1000])
def test_stage_matches_the_simulator(copy, size, n):
    from ember.runtime import cuda
    src = STAGE.format(copy=copy, wait="cp_async_wait(0);", barrier="barrier();")
    prog = ember.compile(src, arch=cuda.context().arch, defines={"SIZE": size}, cache=False)
    x = np.random.default_rng(n).standard_normal(2048).astype(np.float32)
    gpu, sim = _both(prog, "stage", x, np.zeros(2048, np.float32), n, grid=8)
    np.testing.assert_array_equal(gpu[1], sim[1])


def test_pipeline_matches_the_simulator():
    from ember.runtime import cuda
    prog = ember.compile(PIPELINE, arch=cuda.context().arch, cache=False)
    x = np.random.default_rng(5).standard_normal(1024).astype(np.float32)
    gpu, sim = _both(prog, "sums", x, np.zeros(32, np.float32), grid=1)
    np.testing.assert_array_equal(gpu[1], sim[1])
