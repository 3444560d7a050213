"""The memory-ordering kernels of tests/sim/ordering_programs.py on the GPU: the correct
forms compute what the f64 reference (or the simulator) says, with many blocks running at
once and repeated launches, so a release or acquire lowered wrongly would show as a wrong
sum sooner or later (the broken forms are the simulator's to report: on the GPU they
usually pass, which is why the simulator checks happens-before rather than outcomes)."""

import numpy as np
import pytest

import ember
from tests.sim import ordering_programs as P

pytestmark = pytest.mark.gpu


def _module(src: str, variant: int, name: str):
    from ember.runtime import cuda
    prog = ember.compile(src, name=name, arch=cuda.context().arch, defines={"VARIANT": variant}, cache=False)
    return ember.runtime.load(prog, device="cuda")


@pytest.mark.parametrize("variant", [0, 1], ids=["fences", "acq_rel-ticket"])
def test_the_last_block_merges(variant):
    from ember.runtime.cuda import DeviceArray
    x, blocks = P.last_block_inputs(seed=11 + variant, n=1 << 20)
    mod = _module(P.LAST_BLOCK, variant, "last_block.ember")
    dx = DeviceArray.from_host(x)
    partial, count, out = (DeviceArray.from_host(np.zeros(blocks, np.float32)),
                           DeviceArray.from_host(np.zeros(1, np.uint32)), DeviceArray.from_host(np.zeros(1, np.float32)))
    ref = P.last_block_reference(x)
    for _ in range(20):           # the counter is reset by the last block: each launch starts clean
        mod.total(dx, partial, count, out, len(x), grid=blocks)
        got = float(out.to_host()[0])
        assert got == pytest.approx(ref, rel=1e-4, abs=1e-2)
        assert int(count.to_host()[0]) == 0


def test_the_last_cluster_merges():
    from ember.runtime import cuda
    from ember.runtime.cuda import DeviceArray
    if cuda.context().compute_capability < (9, 0):
        pytest.skip("thread-block clusters need sm_90")
    clusters = 512
    x = np.random.default_rng(14).standard_normal(clusters * 2 * 64).astype(np.float32)
    mod = _module(P.LAST_CLUSTER, 0, "last_cluster.ember")
    dx, partial = DeviceArray.from_host(x), DeviceArray.from_host(np.zeros_like(x))
    count, out = DeviceArray.from_host(np.zeros(1, np.uint32)), DeviceArray.from_host(np.zeros(64, np.float32))
    ref = (2 * x.astype(np.float64)).reshape(-1, 64).sum(axis=0)
    for i in range(20):
        dx.copy_from_host(x * (i + 1))
        mod.columns(dx, partial, count, out, grid=clusters * 2)
        np.testing.assert_allclose(out.to_host(), ref * (i + 1), rtol=1e-4, atol=1e-2)
        assert int(count.to_host()[0]) == 0


def test_a_lock_and_a_handoff():
    x = np.random.default_rng(12).standard_normal(512).astype(np.float32)
    acc = np.zeros(1, np.float32)
    _module(P.LOCK, 0, "lock.ember").locked(np.zeros(1, np.uint32), acc, x, grid=512)
    assert acc[0] == pytest.approx(float(x.astype(np.float64).sum()), rel=1e-4, abs=1e-3)
    xs = np.random.default_rng(13).integers(0, 1000, 32).astype(np.uint32)
    out = np.zeros(32, np.uint32)
    _module(P.HANDOFF, 0, "handoff.ember").handoff(xs, out, grid=1)
    seen_all = out != 0           # the consumer warp reads only if it saw all 32 adds (timing)
    np.testing.assert_array_equal(out[seen_all], np.roll(xs * 3, -1)[seen_all])
