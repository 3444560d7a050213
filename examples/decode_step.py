"""A whole decode step of a Llama model from Ember's kernels: every layer (Q4_K weights, and
Q6_K where a Q4_K_M file has them) captured once as a CUDA graph and replayed per token.

    python examples/decode_step.py                          # Llama-3-8B shapes, random weights
    python examples/decode_step.py --gguf model.Q4_K_M.gguf # a model's own weights
    python examples/decode_step.py --batch 8 --context 32768

Prints the time per token (the graph of all layers; the embedding lookup and the output
head are not part of it) and per layer. Needs a GPU, torch, and `gguf` for --gguf."""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gguf", help="a Llama GGUF file (Q4_K / Q6_K projections); default: random weights")
    p.add_argument("--batch", type=int, default=1, help="sequences decoded together (1..8)")
    p.add_argument("--context", type=int, default=4096, help="tokens already in each sequence's cache")
    p.add_argument("--layers", type=int, default=32, help="layers of random weights (ignored with --gguf)")
    p.add_argument("--steps", type=int, default=50, help="replays timed")
    p.add_argument("--activations", choices=("digits", "digits2", "q8_1"), default="digits",
                   help="what the Q4_K GEMVs read: three digits a value (f32-accurate), two, or Q8_1")
    args = p.parse_args()

    import torch

    from ember.model.gguf_weights import HParams, load
    from ember.model.layer import Decoder, LayerWeights
    t0 = time.perf_counter()
    if args.gguf:
        model = load(args.gguf)
        hp = model.hparams
        layers = [LayerWeights.from_gguf(model.layer(i), hp) for i in range(hp.layers)]
        source = args.gguf
    else:
        hp = HParams("llama", args.layers, 4096, 32, 8, 14336, 1e-5, 500000.0, 131072)
        layers = [LayerWeights.random(hp, seed) for seed in range(hp.layers)]
        source = "random Q4_K weights of Llama-3-8B's shapes"
    print(f"{len(layers)} layers ({source}) on {torch.cuda.get_device_name()} in {time.perf_counter() - t0:.1f} s")
    dec = Decoder(layers, hp, args.batch, args.context + 1, activations=args.activations)
    for layer in dec.layers:                    # a context already in the caches
        layer.k_cache.normal_()
        layer.v_cache.normal_()
    graph = dec.capture()
    dec.h.copy_(torch.randn(args.batch, hp.hidden, device="cuda"))
    dec.delta.zero_()
    dec.positions.fill_(args.context)
    dec.lengths.fill_(args.context + 1)
    graph.replay()
    dec.finish()
    torch.cuda.synchronize()
    print(f"one step: |h| = {float(dec.h.norm()):.4g}, all finite: {bool(torch.isfinite(dec.h).all())}")
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(args.steps):
        graph.replay()
    end.record()
    end.synchronize()
    us = start.elapsed_time(end) * 1000.0 / args.steps
    weights = sum(getattr(w, n).data.numel() for w in layers for n in ("wq", "wk", "wv", "wo", "w_gate", "w_up",
                                                                     "w_down"))
    kv = 2 * len(layers) * args.batch * (args.context + 1) * hp.kv_heads * hp.head_dim * 2
    print(f"batch {args.batch}, context {args.context}: {us:.1f} us per step ({us / args.batch:.1f} us per token), "
          f"{us / len(layers):.2f} us per layer; {(weights + kv) / us / 1e6:.2f} TB/s of weights and KV cache read")
    return 0 if np.isfinite(float(dec.h.norm())) else 1


if __name__ == "__main__":
    raise SystemExit(main())
