"""GPU timing as the benchmark method prescribes: 20 warm-up launches, then 5 rounds of
100 launches timed with CUDA events; the result is the median time per launch.

The 100 launches of a round are captured in a CUDA graph and replayed, so they run back to
back on the GPU: launching from Python takes longer than a small kernel runs, and timing
plain launches would measure Python. Both sides of an A/B are timed the same way."""

from __future__ import annotations

import statistics

from ember.runtime.cuda import Event, Graph, Stream


def time_per_launch(enqueue, stream: Stream, warmup: int = 20, rounds: int = 5, iters: int = 100) -> dict:
    """enqueue(stream) issues one launch. Returns median and per-round microseconds."""
    for _ in range(warmup):
        enqueue(stream)
    stream.synchronize()
    with Graph.capture(stream) as graph:
        for _ in range(iters):
            enqueue(stream)
    graph.launch()   # one untimed replay (first replay uploads the graph)
    stream.synchronize()
    per_launch = []
    for _ in range(rounds):
        start, end = Event(), Event()
        start.record(stream)
        graph.launch()
        end.record(stream)
        per_launch.append(start.elapsed_ms(end) * 1000.0 / iters)
    return {"median_us": statistics.median(per_launch), "rounds_us": per_launch}
