"""One decode step of a one-layer Llama-3-8B-shaped decoder (ember.model.layer, eager, after
two warm-up steps) between cudaProfilerStart and cudaProfilerStop, for a profiler that starts
with the profiling off - where each of the layer's kernels spends its time:

    ncu --profile-from-start off --clock-control none --metrics gpu__time_duration.sum,\\
        dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,\\
        smsp__issue_active.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active \\
        --csv python -m bench.layer_profile BATCH CONTEXT [digits|digits2|q8_1]

ncu runs the kernels one at a time with the caches flushed, so a small kernel's time is its
whole latency there, where the layer's CUDA graph overlaps each launch with the kernel before
it (programmatic dependent launch): their sum is more than the layer's time in `python -m
bench layer`. Nothing is timed here. bench/results/layer_ab.md has a profile made so."""

from __future__ import annotations

import sys
import warnings

from bench.layer_ab import FFN, HEADS, HIDDEN, KV_HEADS, decoder_at

USAGE = "usage: python -m bench.layer_profile BATCH CONTEXT [digits|digits2|q8_1]"


def main(argv: list) -> int:
    from ember.model.layer import ACTIVATIONS
    try:
        batch, context = int(argv[0]), int(argv[1])
        activations = argv[2] if len(argv) > 2 else "digits"
    except (IndexError, ValueError):
        print(USAGE, file=sys.stderr)
        return 2
    if not (1 <= batch <= 8 and 1 <= context <= 32768 and activations in ACTIVATIONS) or len(argv) > 3:
        print(f"{USAGE}\n(batch 1..8, context 1..32768)", file=sys.stderr)
        return 2
    from bench.report import refuse_stale_tables
    stale = refuse_stale_tables()             # a profile of the defaults would mislead as much as a timing
    if stale:
        print(stale, file=sys.stderr)
        return 2
    import torch

    from ember.model.gguf_weights import HParams
    from ember.model.layer import LayerWeights
    warnings.simplefilter("ignore")           # shapes without a tuned entry say so
    hp = HParams("llama", 1, HIDDEN, HEADS, KV_HEADS, FFN, 1e-5, 500000.0, context)
    g = torch.Generator(device="cuda").manual_seed(0)
    dec = decoder_at([LayerWeights.random(hp, 0)], hp, batch, context, g, activations)
    for _ in range(2):                        # compiles, loads, makes the plans
        dec.step()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    dec.step()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
