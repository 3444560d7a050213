"""The runtime on cuda.core: launches on torch tensors go on torch's current stream and do
not block; numpy launches block (they copy back); streams of every kind; graphs; events;
bf16 tensors (DLPack with ml_dtypes); devices named as "cuda:N"; the simulator takes the
same launch arguments."""

import numpy as np
import pytest

import ember
from ember.runtime import LaunchError, load

pytestmark = pytest.mark.gpu

SCALE = "kernel scale(x: *mut global f32, k: f32, n: u32) block(128) { let i = block_idx.x * 128 + thread_idx.x; if i < n { x[i] = x[i] * k; } }\n"
SPIN = """kernel spin(x: *mut global f32, n: u32) block(32) {
    var v = x[thread_idx.x];
    for i in 0u32..n { v = fma(v, 1.0000001, 1e-7); }
    x[thread_idx.x] = v;
}
"""


def _prog(src):
    from ember.runtime import cuda
    return ember.compile(src, arch=cuda.context().arch)


def test_torch_tensors_launch_on_torchs_current_stream_without_blocking():
    torch = pytest.importorskip("torch")
    from ember.runtime import cuda
    mod = cuda.load(_prog(SPIN))
    x = torch.ones(32, device="cuda")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        mod.spin(x, 2_000_000, grid=1)            # seconds of work, queued on `side`
        queued = side.query() is False
        side.synchronize()
    assert queued                                  # the call returned before the kernel ended
    assert torch.allclose(x, x[0].expand(32)) and float(x[0]) > 1.0


def test_numpy_launches_block_and_copy_back():
    from ember.runtime import cuda
    mod = cuda.load(_prog(SCALE), device="cuda:0")
    x = np.arange(300, dtype=np.float32)
    mod.scale(x, 2.0, 300, grid=3)
    assert (x == 2 * np.arange(300)).all()


def test_every_kind_of_stream_graphs_and_events():
    torch = pytest.importorskip("torch")
    from ember.runtime import cuda
    mod = cuda.load(_prog(SCALE))
    x = cuda.DeviceArray.from_host(np.ones(256, np.float32))
    s = cuda.Stream()
    launch = mod.scale.prepare(x, 2.0, 256, grid=2)
    launch(s)
    launch(s.core)                                 # a cuda.core Stream
    launch(torch.cuda.current_stream())            # __cuda_stream__
    launch(torch.cuda.current_stream().cuda_stream)   # a raw handle
    torch.cuda.synchronize()
    s.synchronize()
    assert (x.to_host() == 16).all()
    with cuda.Graph.capture(s) as g:
        for _ in range(3):
            launch(s)
    assert (x.to_host() == 16).all()               # captured, not run
    start, end = cuda.Event(), cuda.Event()
    start.record(s)
    g.launch()
    end.record(s)
    assert start.elapsed_ms(end) >= 0.0
    assert (x.to_host() == 128).all()


def test_bf16_tensors_and_cupy_arrays():
    torch = pytest.importorskip("torch")
    from ember.runtime import cuda
    src = "kernel dbl(x: *mut global bf16) block(32) { x[thread_idx.x] = x[thread_idx.x] * bf16(2.0); }\n"
    mod = cuda.load(_prog(src))
    t = torch.arange(32, device="cuda", dtype=torch.bfloat16)
    mod.dbl(t, grid=1)
    torch.cuda.synchronize()
    assert torch.equal(t, torch.arange(32, device="cuda", dtype=torch.bfloat16) * 2)
    with pytest.raises(LaunchError, match="points to `bf16`"):
        mod.dbl(torch.zeros(32, device="cuda"), grid=1)
    cupy = pytest.importorskip("cupy")
    f = cuda.load(_prog(SCALE))
    c = cupy.arange(200, dtype=cupy.float32)
    f.scale(c, 3.0, 200, grid=2, sync=True)
    assert (cupy.asnumpy(c) == 3 * np.arange(200)).all()


def test_another_device_is_named_or_refused():
    from ember.runtime import cuda
    n = cuda.device_count()
    with pytest.raises(cuda.CudaError, match=f"no CUDA device {n}"):
        cuda.load(_prog(SCALE), device=n)
    if n < 2:
        pytest.skip("one GPU: the cross-device check needs two")
    torch = pytest.importorskip("torch")
    mod = cuda.load(_prog(SCALE), device=1)
    with pytest.raises(LaunchError, match="lives on cuda:0"):
        mod.scale(torch.ones(128, device="cuda:0"), 1.0, 128, grid=1)


def test_a_device_array_on_another_gpu_launches_there():
    """A DeviceArray of the last GPU goes to that GPU's kernels (and is refused by the
    first's): its device read from the CUDA Array Interface's pointer query said cuda:0 for
    pool memory of cuda:1 on two H200s, which broke `ember tune` on several GPUs."""
    from ember.runtime import cuda
    n = cuda.device_count()
    if n < 2:
        pytest.skip("one GPU")
    x = cuda.DeviceArray.from_host(np.arange(128, dtype=np.float32), n - 1)
    cuda.load(_prog(SCALE), device=n - 1).scale(x, 2.0, 128, grid=1, sync=True)
    assert (x.to_host() == 2 * np.arange(128)).all()
    with pytest.raises(LaunchError, match=f"lives on cuda:{n - 1}"):
        cuda.load(_prog(SCALE), device=0).scale(x, 1.0, 128, grid=1)


@pytest.mark.parametrize("device", ["cuda", "sim"])
def test_the_same_launch_arguments_on_both(device):
    mod = load(_prog(SCALE), device=device)
    x = np.arange(128, dtype=np.float32)
    mod.scale(x, 2.0, 128, grid=1, block=128, stream=None, sync=True)
    assert (x == 2 * np.arange(128)).all()
