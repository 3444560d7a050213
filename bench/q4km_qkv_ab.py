"""A Q4_K_M-like decoder layer (ember.model.layer: Q4_K weights, v's and the down projection's
in Q6_K, in every layer) with v's Q6_K rows in the QKV launch (ember.ops.q4k_qkv_rope_append's
wv: one launch of q4k_digits_qkv, two rows a warp), the same with the rows a warp the Q4_K
GEMV's table chose (four at M = 2: v's loop unstaged), and apart (a GEMV of q and k, v's Q6_K
GEMV and rope_append: qkv.FUSED off). From batch 3 the tables take the tensor cores' GEMVs,
apart; "one launch" is then the layer's own choice: one launch where the attention is two
(the split pass and the merge: ember.model.layer's LAUNCH_BUDGET), else apart. LAYERS layers
as one CUDA graph, digit activations, interleaved rounds (each side's graph made again each
round), us per layer:

    python -m bench.q4km_qkv_ab [--out DIR] [--quick] [--allow-stale]

A real Q4_K_M file keeps about half its layers' V in Q6_K (llama.cpp's use_more_bits): this
layer is the one those have. Writes q4km_qkv_ab.json / .md (q4km_qkv_ab_h200.* on an H200)."""

from __future__ import annotations

import datetime
import statistics
import sys

SHAPES = ((1, 4096), (2, 512), (2, 4096), (2, 32768), (4, 4096), (4, 32768), (8, 32768))
# side: (qkv.FUSED, qkv.V_ROWS)
SIDES = {"one launch": (True, True), "one launch, the table's rows": (True, False), "apart": (False, True)}


def run(quick: bool) -> dict:
    import torch

    from bench import layer_ab as L
    from ember import ops
    from ember.model.layer import LayerWeights
    from ember.ops import qkv
    hp = L._hparams()
    weights = [LayerWeights.random(hp, s, kinds={"wv": "Q6_K", "w_down": "Q6_K"}) for s in range(L.LAYERS)]
    rows = []
    for batch, ctx in SHAPES:
        times: dict = {side: [] for side in SIDES}
        launches = {}
        for _ in range(2 if quick else 3):
            for side, (fused, v_rows) in SIDES.items():
                qkv.V_ROWS[0] = v_rows
                ops.plan.clear()                       # the plans of the other side's rows
                try:
                    g = torch.Generator(device="cuda").manual_seed(batch * 7919 + ctx)
                    us, n, dec, graph = L._ember_layer(weights, batch, ctx, g, 3 if quick else 10, "digits",
                                                       fused_qkv=fused)
                finally:
                    qkv.V_ROWS[0] = True
                times[side].append(us)
                launches[side] = n
                del dec, graph
                torch.cuda.empty_cache()
        apart = statistics.median(times["apart"])
        rows.append({"batch": batch, "context": ctx, "launches": launches,
                     "us": {side: [round(t, 2) for t in ts] for side, ts in times.items()},
                     "over_apart": {side: round(statistics.median(ts) / apart, 4) for side, ts in times.items()}})
        print(rows[-1], flush=True)
    return {"device": torch.cuda.get_device_name(), "date": datetime.date.today().isoformat(),
            "torch": torch.__version__, "layers": L.LAYERS, "quick": quick, "rows": rows}


def markdown(result: dict) -> str:
    from bench.report import SASS_NOTE
    lines = ["# A Q4_K_M layer's QKV projection: v's Q6_K rows in the QKV launch or apart", "",
             f"Device: {result['device']}, {result['date']}, torch {result['torch']}. {result['layers']} "
             "Llama-3-8B-shaped layers (Q4_K weights, V and the down projection Q6_K in every one) as one CUDA "
             "graph, digit activations, us per layer, each side's rounds (its graph made again each round) "
             "interleaved with the others' (`python -m bench.q4km_qkv_ab`). one launch: q4k_qkv_rope_append "
             "with wv (q4k_digits_qkv, two rows a warp) - from batch 3 the layer's choice: one launch where "
             "the attention is two (LAUNCH_BUDGET), else the tensor cores' GEMVs apart; the table's rows: "
             "the same with the rows a warp of "
             "q4k_digits_gemv's entry (four at M = 2, where v's loop cannot be staged); apart: q's and k's GEMV, "
             "v's Q6_K GEMV and rope_append. " + SASS_NOTE, "",
             "| batch | context | " + " | ".join(f"{s} us" for s in SIDES) + " | " +
             " | ".join(f"{s} / apart" for s in SIDES if s != "apart") + " | launches |",
             "|---|---|" + "---|" * (2 * len(SIDES))]
    for r in result["rows"]:
        us = " | ".join(", ".join(f"{t:g}" for t in r["us"][s]) for s in SIDES)
        ratio = " | ".join(f"{r['over_apart'][s]:.3f}" for s in SIDES if s != "apart")
        n = " / ".join(f"{r['launches'][s]:g}" for s in SIDES)
        lines.append(f"| {r['batch']} | {r['context']} | {us} | {ratio} | {n} |")
    return "\n".join(lines) + "\n"


def main(argv: list) -> int:
    import argparse
    p = argparse.ArgumentParser(prog="python -m bench.q4km_qkv_ab", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="bench/results", help="directory for the JSON and markdown results")
    p.add_argument("--quick", action="store_true", help="fewer rounds and replays (smoke test)")
    p.add_argument("--allow-stale", action="store_true",
                   help="measure even where a tuned table is stale (its kernel then runs its defaults)")
    args = p.parse_args(argv)
    from bench.report import refuse_stale_tables, save
    stale = refuse_stale_tables(args.allow_stale)
    if stale:
        print(stale, file=sys.stderr)
        return 2
    result = run(args.quick)
    save(args.out, "q4km_qkv_ab", result, markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
