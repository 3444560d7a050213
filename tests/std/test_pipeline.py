"""std/pipeline.ember: the warp-specialised ring of stages written with it runs in the
simulator (and on the GPU: tests/gpu/test_mbarrier_gpu.py), and each way of breaking it
that docs/stdlib.md lists is reported."""

import numpy as np
import pytest

from ember.sim.errors import SimError
from tests.sim.mbarrier_programs import WITH_PIPELINE
from tests.sim.mbarrier_programs import run_specialised as _specialised


@pytest.mark.parametrize("stages, tiles", [(2, 6), (4, 9)])
def test_the_standard_pipeline(stages, tiles):
    x = np.random.default_rng(stages + tiles).standard_normal(2 * tiles * 256).astype(np.float32)
    np.testing.assert_array_equal(_specialised(WITH_PIPELINE, x, STAGES=stages, TILES=tiles), 2 * x)


@pytest.mark.parametrize("change, code, message", [
    # a consumer that never releases: the producer's acquire of the stage's second use waits forever
    (("            consumer_release(empty, k, STAGES);\n", ""), "S0011", "which lacks 96 of its 96"),
    # a producer that never acquires refills stages before they are released
    (("                producer_acquire(empty, k, STAGES);\n", ""), "S0011", "`full`[0] (parity 1)"),
    # a consumer that reads before its wait
    (("            consumer_wait(full, k, STAGES);\n", ""), "S0009", "this thread has not waited"),
])
def test_what_the_pipeline_prevents(change, code, message):
    """docs/stdlib.md: each of these breaks the ring; the simulator names how."""
    src = WITH_PIPELINE.replace(*change)
    assert src != WITH_PIPELINE
    x = np.random.default_rng(2).standard_normal(2 * 6 * 256).astype(np.float32)
    with pytest.raises(SimError) as err:
        _specialised(src, x)
    d = err.value.diagnostic
    assert d.code == code and any(message in text for text in [d.message, *d.notes]), (d.message, d.notes)
