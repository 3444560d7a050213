"""Programmatic dependent launch on the GPU (sm_90): a chain of kernels, each reading what
the one before wrote, launched as programmatic dependents (each starts by letting the next
one launch, then waits) gives exactly the serial result - on a stream, in an Ember graph
and in a torch graph - where without its wait the next kernel's blocks would start while
the previous kernel's last wave still writes."""

import numpy as np
import pytest

import ember

pytestmark = pytest.mark.gpu

BUMP = """
kernel bump(x: *global u32, y: *mut global u32, n: u32) block(256) {
    let i = block_idx.x * 256 + thread_idx.x;
    if i < n {
        // a little work per element, more in some blocks, so that the last wave is ragged
        var v = x[i];
        for j in 0..(block_idx.x % 7) * 4 { v = v * 1664525u32 + 1013904223u32; }
        y[i] = v + 1u32;
    }
}
"""
# The same, first prefetching into L2 the very element the kernel before is writing: the
# inserted wait comes after the prefetch (it touches no memory for the proof), and what the
# kernel reads after the wait is the kernel before's write - L2 is where the two meet.
BUMP_PREFETCHING = BUMP.replace("    let i = block_idx.x * 256 + thread_idx.x;\n",
                                "    let i = block_idx.x * 256 + thread_idx.x;\n"
                                "    prefetch_l2(x, min(i, n - 1u32));\n")
N = 1 << 22
STEPS = 24


def _chain(src=BUMP):
    from ember.runtime import cuda
    ctx = cuda.context()
    if ctx.compute_capability < (9, 0):
        pytest.skip("programmatic dependent launch needs sm_90")
    prog = ember.compile(src, arch=ctx.arch, programmatic_launch=True)
    assert prog.kernels["bump"].programmatic
    if "prefetch_l2" in src:
        assert prog.ptx.index("prefetch.global.L2") < prog.ptx.index("griddepcontrol.wait;")
    kern = cuda.load(prog).bump
    x0 = np.random.default_rng(7).integers(0, 1 << 32, N, dtype=np.uint32)
    a, b = cuda.DeviceArray.from_host(x0), cuda.DeviceArray((N,), np.uint32)
    launches = [kern.prepare(a, b, N, grid=N // 256), kern.prepare(b, a, N, grid=N // 256)]
    assert all(launch.programmatic for launch in launches)
    # the serial result, step by step (u32 arithmetic wraps as the kernel's does)
    want = x0.copy()
    reps = (np.arange(N) // 256 % 7) * 4
    for _ in range(STEPS):
        v = want.copy()
        for r in range(int(reps.max())):
            v = np.where(reps > r, v * np.uint32(1664525) + np.uint32(1013904223), v)
        want = v + np.uint32(1)
    return cuda, a, b, launches, x0, want


@pytest.mark.parametrize("src", [BUMP, BUMP_PREFETCHING], ids=["plain", "prefetching"])
def test_a_chain_of_programmatic_launches_is_serial_on_a_stream_and_in_graphs(src):
    cuda, a, b, launches, x0, want = _chain(src)
    s = cuda.Stream()
    for t in range(STEPS):
        launches[t % 2](s)
    s.synchronize()
    assert np.array_equal(a.to_host(), want)

    a.copy_from_host(x0)
    with cuda.Graph.capture(s) as g:
        for t in range(STEPS):
            launches[t % 2](s)
    g.launch()
    s.synchronize()
    assert np.array_equal(a.to_host(), want)

    torch = pytest.importorskip("torch")
    a.copy_from_host(x0)
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    with torch.cuda.graph(graph, stream=side):
        for t in range(STEPS):
            launches[t % 2](torch.cuda.current_stream())
    graph.replay()
    torch.cuda.synchronize()
    assert np.array_equal(a.to_host(), want)


def test_a_kernel_without_the_wait_is_a_plain_launch():
    from ember.runtime import cuda
    prog = ember.compile(BUMP, arch=cuda.context().arch)
    assert not prog.kernels["bump"].programmatic
    kern = cuda.load(prog).bump
    x, y = cuda.DeviceArray.from_host(np.ones(256, np.uint32)), cuda.DeviceArray((256,), np.uint32)
    assert not kern.prepare(x, y, 256, grid=1).programmatic
