"""Without a GPU (or a CUDA driver), the GPU runtime says so in Ember's words and points
at the simulator, instead of a traceback from the driver loader."""

import numpy as np
import pytest

import ember
from ember.runtime import cuda_available, load

pytestmark = pytest.mark.skipif(cuda_available(), reason="this machine has a GPU")


def test_loading_on_a_machine_without_a_gpu_names_the_simulator():
    from ember.runtime.cuda import CudaError, NoGPUError
    prog = ember.compile("kernel k(x: *mut global f32) block(32) { x[thread_idx.x] = 1.0; }")
    with pytest.raises(NoGPUError) as e:
        load(prog).k(np.zeros(32, np.float32), grid=1)
    assert isinstance(e.value, CudaError)
    assert 'device="sim"' in str(e.value) and "no NVIDIA GPU" in str(e.value)
    assert e.value.__cause__ is None and e.value.__suppress_context__
