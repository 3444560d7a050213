"""GPU timing as the benchmark method prescribes (../DESIGN.md): warm-up launches, then
rounds of launches captured in a CUDA graph and replayed, each round timed with CUDA
events; the median time per launch. Launching from Python takes longer than a small kernel
runs: the graph makes the launches run back to back. The launches cycle through the given
list, so that inputs rotated among copies larger than the L2 are read from memory."""

from __future__ import annotations

import statistics


def time_launches(launches: list, stream, warmup: int = 20, rounds: int = 5, iters: int = 100) -> dict:
    """launches: callables enqueueing one launch on a stream, used in turn. Returns the
    median and per-round microseconds per launch."""
    from ..runtime.cuda import Event, Graph
    for i in range(warmup):
        launches[i % len(launches)](stream)
    stream.synchronize()
    with Graph.capture(stream) as graph:
        for i in range(iters):
            launches[i % len(launches)](stream)
    graph.launch()   # one untimed replay (the first uploads the graph)
    stream.synchronize()
    per_launch = []
    for _ in range(rounds):
        start, end = Event(stream.ctx.ordinal), Event(stream.ctx.ordinal)     # the stream's GPU's events
        start.record(stream)
        graph.launch()
        end.record(stream)
        per_launch.append(start.elapsed_ms(end) * 1000.0 / iters)
    return {"median_us": statistics.median(per_launch), "rounds_us": per_launch}
