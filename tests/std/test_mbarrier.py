"""std/mbarrier.ember: stage_parity is the parity of the k-th use of a ring of buffers
(the pipelines that wait with it: tests/sim/test_mbarrier.py, tests/std/test_pipeline.py)."""

import numpy as np

import ember


def test_stage_parity():
    src = """import "std/mbarrier.ember";
kernel k(out: *mut global u32, stages: u32) block(64) {
    out[thread_idx.x] = stage_parity(thread_idx.x, stages);
}"""
    prog = ember.compile(src, stop_after="ir-opt", cache=False)
    for stages in (1, 2, 3, 5):
        out = np.zeros(64, np.uint32)
        ember.runtime.load(prog, device="sim").k(out, stages, grid=1)
        np.testing.assert_array_equal(out, (np.arange(64) // stages) % 2)
