"""GPU timing as the benchmark method prescribes: 20 warm-up launches, then 5 rounds of
100 launches timed with CUDA events; the result is the median time per launch.

The 100 launches of a round are captured in a CUDA graph and replayed, so they run back to
back on the GPU: launching from Python takes longer than a small kernel runs, and timing
plain launches would measure Python. Both sides of an A/B are timed the same way."""

from __future__ import annotations

import statistics

from ember.runtime.cuda import Stream   # noqa: F401 (time_per_launch's signature)
from ember.tuning.timing import time_launches


def time_per_launch(enqueue, stream: Stream, warmup: int = 20, rounds: int = 5, iters: int = 100) -> dict:
    """enqueue(stream) issues one launch. Returns median and per-round microseconds."""
    return time_launches([enqueue], stream, warmup, rounds, iters)


def time_torch_graph(fn, warmup: int = 20, rounds: int = 5, iters: int = 100) -> dict:
    """The same method for work that mixes Ember launches with Triton, liger-kernel and
    torch: `fn()` enqueues one launch on torch's current stream (an Ember launch:
    `lambda: launch(torch.cuda.current_stream().cuda_stream)`); the 100 launches are
    captured in a torch CUDA graph, so every side is timed the same way."""
    import torch
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(warmup):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(iters):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    per_launch = []
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        per_launch.append(start.elapsed_time(end) * 1000.0 / iters)
    return {"median_us": statistics.median(per_launch), "rounds_us": per_launch}


def ember_on_torch_stream(launch):
    """An Ember Launch as a no-argument function enqueueing on torch's current stream."""
    import torch
    return lambda: launch(torch.cuda.current_stream().cuda_stream)


def copy_ceiling(nbytes: int, rotate_bytes: float = 0.0, **kw) -> dict:
    """The bandwidth ceiling: the fastest of a device-to-device memcpy and a plain copy
    kernel (an elementwise torch kernel) that read `nbytes` and write as many, rotating
    among enough buffer pairs to read at least `rotate_bytes` in all (so a copy smaller
    than the L2 still reads DRAM, like the kernel it is compared with). TBps counts read
    + written bytes."""
    import math

    import torch
    n = max(nbytes // 4, 1)
    pairs = max(1, math.ceil(rotate_bytes / (2 * 4 * n)))
    bufs = [(torch.randn(n, device="cuda"), torch.empty(n, device="cuda")) for _ in range(pairs)]
    state = {"i": 0}

    def rotate(op):
        def fn():
            src, dst = bufs[state["i"] % pairs]
            state["i"] += 1
            op(src, dst)
        return fn
    memcpy = time_torch_graph(rotate(lambda s, d: d.copy_(s)), **kw)                  # cudaMemcpyAsync D2D
    kernel = time_torch_graph(rotate(lambda s, d: torch.add(s.view(-1, 4), 0.0, out=d.view(-1, 4))), **kw)
    best = min(memcpy["median_us"], kernel["median_us"])
    return {"memcpy_us": memcpy["median_us"], "copy_kernel_us": kernel["median_us"], "us": best,
            "buffer_pairs": pairs, "TBps": 2 * n * 4 / (best * 1e-6) / 1e12}
