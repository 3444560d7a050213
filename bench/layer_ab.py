"""A Llama-3-8B-shaped decoder layer from Ember's kernels (ember.model.layer: Q4_K weights,
bf16 KV cache, one CUDA graph per decode step) against the bandwidth floor and torch, same
GPU, one run.

Shapes: hidden 4096, 32 heads, 8 KV heads, head_dim 128, FFN 14336; batch 1, 2, 4, 8 (one
new token per sequence); contexts 512, 4096 and 32768 (every sequence at the full context).
Ember: LAYERS layers of random Q4_K weights captured as one graph, replayed; us per layer =
replay time / LAYERS; with digit activations (the Decoder's default, f32-accurate), with
two digits a value (activations="digits2") and with Q8_1 ones. floor: the layer's weight bytes plus the K and V bytes its attention
reads, at the copy ceiling measured in the same run. torch: the same layer with bf16 dense
weights (F.rms_norm, F.linear, RoPE in torch ops, the cache written by index, SDPA with
enable_gqa), eager and as a CUDA graph; and SDPA alone against ember.ops.decode_attention
alone as `python -m bench attention` times them (bench.attention_ab.run_shape: caches
rotated beyond the L2, bf16 queries, CUDA graphs of 100 calls). launches: kernel launches a layer (counted by
ember.ops). Ember's layer is timed with programmatic dependent launches (ember.ops' default on
sm_90) and, for comparison, with plain launches. Writes layer_ab.json / .md / .svg (layer_ab_h200.* on an H200)."""

from __future__ import annotations

import datetime
import sys

HIDDEN, HEADS, KV_HEADS, D, FFN = 4096, 32, 8, 128, 14336
BATCHES = (1, 2, 4, 8)
CONTEXTS = (512, 4096, 32768)
LAYERS = 4            # each replay reads 4 x 123 MB of weights: no layer finds the last one's in L2
TORCH_LAYERS = 2


def _hparams():
    from ember.model.gguf_weights import HParams
    return HParams("llama", LAYERS, HIDDEN, HEADS, KV_HEADS, FFN, 1e-5, 500000.0, max(CONTEXTS))


def _time(fn, replays: int) -> float:
    """Median us of one fn() over 5 rounds of `replays` calls (events around each round)."""
    import statistics

    import torch
    fn()
    torch.cuda.synchronize()
    rounds = []
    for _ in range(5):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(replays):
            fn()
        b.record()
        b.synchronize()
        rounds.append(a.elapsed_time(b) * 1000.0 / replays)
    return statistics.median(rounds)


class TorchLayer:
    """The same layer in torch with bf16 dense weights and a [B, HKV, S, D] bf16 cache."""

    def __init__(self, batch: int, ctx: int, g):
        import torch

        def w(rows, cols):
            return (torch.randn(rows, cols, device="cuda", generator=g) / cols ** 0.5).to(torch.bfloat16)
        self.wqkv, self.wo = w(HEADS * D + 2 * KV_HEADS * D, HIDDEN), w(HIDDEN, HEADS * D)
        self.wgu, self.wd = w(2 * FFN, HIDDEN), w(HIDDEN, FFN)
        self.n1 = torch.ones(HIDDEN, device="cuda", dtype=torch.bfloat16)
        self.n2 = torch.ones(HIDDEN, device="cuda", dtype=torch.bfloat16)
        self.kc = torch.randn(batch, KV_HEADS, ctx, D, device="cuda", dtype=torch.bfloat16, generator=g)
        self.vc = torch.randn(batch, KV_HEADS, ctx, D, device="cuda", dtype=torch.bfloat16, generator=g)
        inv = 500000.0 ** (-torch.arange(0, D, 2, device="cuda", dtype=torch.float32) / D)
        self.pos = torch.full((batch,), ctx - 1, device="cuda", dtype=torch.long)
        ang = self.pos[:, None].float() * inv
        self.cos, self.sin = ang.cos()[:, None, :], ang.sin()[:, None, :]

    def rope(self, x):
        x0, x1 = x[..., 0::2].float(), x[..., 1::2].float()
        return torch_stack_pairs(x0 * self.cos - x1 * self.sin, x0 * self.sin + x1 * self.cos).to(x.dtype)

    def __call__(self, h):
        import torch
        import torch.nn.functional as F
        b = h.shape[0]
        x = F.rms_norm(h, (HIDDEN,), self.n1, 1e-5)
        qkv = F.linear(x, self.wqkv)
        q = self.rope(qkv[:, :HEADS * D].view(b, HEADS, D))
        k = self.rope(qkv[:, HEADS * D:(HEADS + KV_HEADS) * D].view(b, KV_HEADS, D))
        v = qkv[:, (HEADS + KV_HEADS) * D:].view(b, KV_HEADS, D)
        idx = torch.arange(b, device="cuda")
        self.kc[idx, :, self.pos] = k
        self.vc[idx, :, self.pos] = v
        o = F.scaled_dot_product_attention(q[:, :, None], self.kc, self.vc, enable_gqa=True)
        h = h + F.linear(o.reshape(b, HEADS * D), self.wo)
        x = F.rms_norm(h, (HIDDEN,), self.n2, 1e-5)
        gate, up = F.linear(x, self.wgu).chunk(2, dim=-1)
        return h + F.linear(F.silu(gate) * up, self.wd)


def torch_stack_pairs(y0, y1):
    import torch
    return torch.stack((y0, y1), dim=-1).flatten(-2)


def run_shape(weights, batch: int, ctx: int, copy_tbps: float, quick: bool) -> dict:
    import torch

    from bench.attention_ab import run_shape as attention_alone

    g = torch.Generator(device="cuda").manual_seed(batch * 7919 + ctx)
    replays = 3 if quick else 20
    q8_us = _ember_layer(weights, batch, ctx, g, replays, "q8_1")[0]
    torch.cuda.empty_cache()
    two_us = _ember_layer(weights, batch, ctx, g, replays, "digits2")[0]
    torch.cuda.empty_cache()
    plain_us = _ember_layer(weights, batch, ctx, g, replays, "digits", programmatic=False)[0]
    torch.cuda.empty_cache()
    ember_us, launches, dec, graph = _ember_layer(weights, batch, ctx, g, replays, "digits")
    del dec, graph
    torch.cuda.empty_cache()
    apart_us, apart_launches = _ember_layer(weights, batch, ctx, g, replays, "digits", fused_qkv=False)[:2]
    w_bytes = sum(x.data.numel() for x in (weights[0].wq, weights[0].wk, weights[0].wv, weights[0].wo,
                                          weights[0].w_gate, weights[0].w_up, weights[0].w_down))
    kv_bytes = 2 * batch * ctx * KV_HEADS * D * 2
    floor_us = (w_bytes + kv_bytes) / (copy_tbps * 1e12) * 1e6
    torch.cuda.empty_cache()
    attn = attention_alone(batch, ctx, quick)
    attn_e, attn_t = attn["ember_us"], attn["torch_sdpa_us"]
    eager_us, graph_us = _torch_layer(batch, ctx, g, quick)
    return {"batch": batch, "context": ctx, "ember_us": round(ember_us, 2), "ember_q8_1_us": round(q8_us, 2),
            "ember_two_digits_us": round(two_us, 2),
            "ember_without_pdl_us": round(plain_us, 2),
            "ember_qkv_rope_apart_us": round(apart_us, 2) if apart_launches != launches else None,
            "floor_us": round(floor_us, 2),
            "ember_of_floor": round(floor_us / ember_us, 3), "ember_per_token_32_layers_us": round(ember_us * 32, 1),
            "launches_per_layer": launches, "torch_bf16_eager_us": round(eager_us, 2),
            "torch_bf16_graph_us": round(graph_us, 2), "ember_attention_us": round(attn_e, 2),
            "torch_sdpa_us": round(attn_t, 2), "attention_ember_over_sdpa": round(attn_e / attn_t, 3),
            "weight_MB": round(w_bytes / 1e6, 1), "kv_MB": round(kv_bytes / 1e6, 1)}


def _ember_layer(weights, batch: int, ctx: int, g, replays: int, activations: str,
                 programmatic: bool = True, fused_qkv: bool = True) -> tuple:
    """(us per layer, launches per layer, the Decoder, its graph) of LAYERS layers; with
    programmatic=False every kernel is a plain launch (no programmatic dependent launch), with
    fused_qkv=False the QKV projection and rope_append are two launches wherever
    q4k_qkv_rope_append would make them one."""
    from ember import ops
    from ember.ops import qkv
    ops.programmatic_launch(programmatic)
    qkv.FUSED[0] = fused_qkv
    try:
        return _ember_layer_with(weights, batch, ctx, g, replays, activations)
    finally:
        ops.programmatic_launch(True)
        qkv.FUSED[0] = True


def decoder_at(weights, hp, batch: int, ctx: int, g, activations: str):
    """A Decoder over `weights` whose caches hold `ctx` keys of random data (generator g),
    every sequence's new token at position ctx - 1."""
    from ember.model.layer import Decoder
    dec = Decoder(weights, hp, batch, ctx, activations=activations)
    for layer in dec.layers:
        layer.k_cache.normal_(generator=g)
        layer.v_cache.normal_(generator=g)
    dec.h.normal_(generator=g)
    dec.positions.fill_(ctx - 1)
    dec.lengths.fill_(ctx)
    return dec


def _ember_layer_with(weights, batch: int, ctx: int, g, replays: int, activations: str) -> tuple:
    from ember import ops
    dec = decoder_at(weights, _hparams(), batch, ctx, g, activations)
    before = ops.plan.launched()
    dec.step()
    launches = (ops.plan.launched() - before) / LAYERS
    graph = dec.capture()
    return _time(graph.replay, replays) / LAYERS, launches, dec, graph


def _torch_layer(batch: int, ctx: int, g, quick: bool) -> tuple:
    """us per layer of TORCH_LAYERS bf16 layers, eager and as a CUDA graph."""
    import torch
    layers = [TorchLayer(batch, ctx, g) for _ in range(TORCH_LAYERS)]
    h = torch.randn(batch, HIDDEN, device="cuda", dtype=torch.bfloat16, generator=g)

    def step():
        x = h
        for layer in layers:
            x = layer(x)
        return x
    eager = _time(step, 3 if quick else 10) / TORCH_LAYERS
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    return eager, _time(graph.replay, 3 if quick else 20) / TORCH_LAYERS


def _repetitions(quick: bool) -> str:
    """How the layers were timed: `--quick` runs fewer replays, and says so."""
    if quick:
        return ("Timed with --quick: every layer figure the median of 5 rounds of 3 calls or graph replays "
                "(20 without --quick, torch eager 10); the attention-alone columns are the noisiest at 32768 keys.")
    return "Every layer figure the median of 5 rounds of 20 graph replays (torch eager: 10 calls)."


def markdown(result: dict) -> str:
    from bench.report import SASS_NOTE
    lines = ["# A Llama-3-8B-shaped decoder layer: Ember (Q4_K) vs the floor and torch (bf16)", "",
             f"Device: {result['device']}, {result['date']}, torch {result['torch']}, copy ceiling "
             f"{result['copy_TBps']:.2f} TB/s (same run). Ember: {LAYERS} layers of Q4_K weights and bf16 caches as "
             "one CUDA graph, us per layer, with digit activations (the default), with two digits a value "
             "(activations=\"digits2\") and with Q8_1 ones; floor: weight + K/V bytes at the copy ceiling; torch: bf16 dense "
             f"weights ({TORCH_LAYERS} layers), eager and graph; Ember's kernels are programmatic dependent "
             "launches (each launched while the kernel before it finishes, waiting for it at its start; "
             "'plain launches': the same digits layer without; 'QKV, RoPE apart': the same digits layer with the "
             "QKV projection and rope_append as two launches where ember.ops.q4k_qkv_rope_append makes them one, "
             "'-' where it does not); attention alone: ember.ops.decode_attention and "
             "torch SDPA as `python -m bench attention` times them (bf16 queries, caches rotated beyond the L2, "
             + ("graphs of 20 calls, median of 3" if result.get("quick") else "graphs of 100 calls, median of 5")
             + "). " + _repetitions(result.get("quick", False)) + " Every sequence at the full context, one new token "
             "each. " + SASS_NOTE, "",
             "| batch | context | Ember us/layer | Ember 2 digits us | Ember Q8_1 us | Ember plain launches | QKV, RoPE "
             "apart | floor us | of floor | launches | torch eager | torch graph | Ember attn us | SDPA us | attn / SDPA |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        lines.append(f"| {r['batch']} | {r['context']} | {r['ember_us']} | {r.get('ember_two_digits_us', '-')} | "
                     f"{r['ember_q8_1_us']} | "
                     f"{r['ember_without_pdl_us']} | {r.get('ember_qkv_rope_apart_us') or '-'} | {r['floor_us']} | "
                     f"{r['ember_of_floor']:.0%} | {r['launches_per_layer']:g} | {r['torch_bf16_eager_us']} | "
                     f"{r['torch_bf16_graph_us']} | {r['ember_attention_us']} | {r['torch_sdpa_us']} | "
                     f"{r['attention_ember_over_sdpa']} |")
    return "\n".join(lines) + "\n"


def main(out_dir: str, quick: bool = False, contexts=CONTEXTS, batches=BATCHES) -> int:
    import warnings

    import torch

    from bench.gpu_timing import copy_ceiling
    from bench.report import bar_chart_svg, for_device, save, save_svg
    from ember.model.layer import LayerWeights
    warnings.simplefilter("ignore")           # shapes without a tuned entry say so
    hp = _hparams()
    weights = [LayerWeights.random(hp, seed) for seed in range(LAYERS)]
    copy_tbps = copy_ceiling(256 << 20)["TBps"]
    rows = []
    for c in contexts:
        for b in batches:
            rows.append(run_shape(weights, b, c, copy_tbps, quick))
            print(rows[-1], flush=True)
    result = {"device": torch.cuda.get_device_name(), "date": datetime.date.today().isoformat(),
              "torch": torch.__version__, "copy_TBps": copy_tbps, "quick": quick, "rows": rows}
    name = for_device("layer_ab", result["device"])
    save(out_dir, name, result, markdown(result))
    groups = [(f"B{r['batch']} {r['context'] // 1024 or r['context']}{'k' if r['context'] >= 1024 else ''}",
               [("Ember", r["ember_us"]), ("floor", r["floor_us"]), ("torch graph", r["torch_bf16_graph_us"])])
              for r in rows]
    save_svg(out_dir, name, bar_chart_svg("Decoder layer, us per layer (lower is better)", groups, "us"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "bench/results"))
