"""A plan is made once per signature of the arguments (addresses, shapes, strides, dtypes,
scalars) and found again for the same signature; any difference makes a new one, an
argument with no signature (a host array) is checked every call."""

import numpy as np

from ember.ops import plan


class CudaArray:
    def __init__(self, ptr, shape=(4, 4), typestr="<f4"):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (ptr, False),
                                         "strides": None, "version": 3}


class Counter:
    def __init__(self):
        self.builds, self.launched = 0, 0

    def build(self):
        self.builds += 1
        return [self.launch]

    def launch(self, stream):
        assert stream is None             # no torch tensor among the arguments: the default stream
        self.launched += 1


def test_the_same_signature_finds_the_plan():
    plan.clear()
    c = Counter()
    for _ in range(3):
        plan.run("op", (CudaArray(0x1000), 1e-5), c.build)
    assert (c.builds, c.launched) == (1, 3)
    plan.run("op", (CudaArray(0x2000), 1e-5), c.build)          # another address
    plan.run("op", (CudaArray(0x1000, (2, 8)), 1e-5), c.build)  # another shape
    plan.run("op", (CudaArray(0x1000, typestr="<f2"), 1e-5), c.build)
    plan.run("op", (CudaArray(0x1000), 1e-6), c.build)          # another scalar
    plan.run("op", (CudaArray(0x1000), 1), c.build)             # 1 is not 1.0: checked again
    plan.run("other", (CudaArray(0x1000), 1e-5), c.build)
    assert (c.builds, c.launched) == (7, 9)


def test_host_arrays_are_checked_every_call_and_the_cache_is_bounded(monkeypatch):
    plan.clear()
    c = Counter()
    a = np.zeros(4)
    plan.run("op", (a,), c.build)
    plan.run("op", (a,), c.build)
    assert c.builds == 2
    monkeypatch.setattr(plan, "MAX_PLANS", 4)
    for ptr in range(10):
        plan.run("op", (CudaArray(ptr * 256),), c.build)
    assert len(plan._plans) == 4
    plan.clear()


def test_only_plans_a_graph_recorded_keep_their_buffers_past_clear():
    """A plan's own buffers (Keep) outlive clear() only where its launches went into a CUDA
    graph being captured (tests/gpu/test_ops_gpu.py captures one); the legacy default
    stream (None, 0) is never captured, so nothing is kept from it."""
    from ember.runtime.cuda import capturing
    assert not any(capturing(s) for s in (None, 0, False))
    plan.clear()
    plan.forget_captured()
    buffer = np.zeros(4)
    plan.run("op", (CudaArray(0x3000),), lambda: [plan.Keep(buffer), lambda stream: None])
    plan.clear()
    assert plan._captured == {}
