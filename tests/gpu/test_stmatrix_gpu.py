"""stmatrix on an H100: the shared layout the simulator computes, bit for bit."""

import numpy as np
import pytest

from tests.sim.test_stmatrix import model, run

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("n", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix_matches_the_simulator(n, trans):
    from ember.runtime import cuda
    if cuda.context().arch != "sm_90":
        pytest.skip("stmatrix needs sm_90")
    x, out, back = run(n, trans, device="cuda")
    np.testing.assert_array_equal(out, model(x, n, trans))
    np.testing.assert_array_equal(back[:, :2 * n], x.reshape(32, 8)[:, :2 * n])
