"""A retuned table against the shipped one in the whole decoder layer, before it ships: `ember
tune` times each kernel alone with plain launches, and a configuration that wins there can
lose where the layer overlaps its launches (programmatic dependent launch) or runs the kernel
in another role (bench/results/layer_ab.md: ROWS 3 for the QKV projection, 0.86-0.95x alone,
up to 1.04x slower in the layer).

    python -m bench.table_ab TABLE.json [--batch B]... [--context C]... [--activations A]
                             [--q4-k-m] [--rounds N] [--out DIR] [--allow-stale]

TABLE.json: a table of one kernel of kernels_src/ (`ember tune K -o TABLE.json`), made from
its source as it is now. Both sides run LAYERS Llama-3-8B-shaped layers (ember.model.layer;
with --q4-k-m V and the down projection in Q6_K, as a Q4_K_M file keeps them) as one CUDA
graph, us per layer, in interleaved rounds (each side's graph made again each round):
`shipped` with kernels_src/tuned/K.json, `candidate` with TABLE.json
(ember.ops.kernels.use_table). Writes table_ab_K.json / .md (table_ab_K_digits2, _q8_1, _q4_k_m
with those options; _h200 on an H200)."""

from __future__ import annotations

import datetime
import statistics
import sys


def run(table: dict, batches, contexts, activations: str, q4_k_m: bool, rounds: int) -> dict:
    import torch

    from bench import layer_ab as L
    from ember.model.layer import LayerWeights
    from ember.ops import kernels
    kernel = table["kernel"]
    hp = L._hparams()
    kinds = {"wv": "Q6_K", "w_down": "Q6_K"} if q4_k_m else {}
    weights = [LayerWeights.random(hp, s, kinds=kinds) for s in range(L.LAYERS)]
    rows = []
    for batch in batches:
        for ctx in contexts:
            times: dict = {"shipped": [], "candidate": []}
            launches = {}
            for _ in range(rounds):
                for side in times:
                    kernels.use_table(kernel, table if side == "candidate" else None)
                    try:
                        g = torch.Generator(device="cuda").manual_seed(batch * 7919 + ctx)
                        us, n, dec, graph = L._ember_layer(weights, batch, ctx, g, 10, activations)
                    finally:
                        kernels.use_table(kernel, None)
                    times[side].append(us)
                    launches[side] = n
                    del dec, graph
                    torch.cuda.empty_cache()
            rows.append({"batch": batch, "context": ctx, "launches": launches,
                         "us": {s: [round(t, 2) for t in ts] for s, ts in times.items()},
                         "candidate_over_shipped": round(statistics.median(times["candidate"])
                                                         / statistics.median(times["shipped"]), 4)})
            print(rows[-1], flush=True)
    return {"device": torch.cuda.get_device_name(), "date": datetime.date.today().isoformat(),
            "torch": torch.__version__, "kernel": kernel, "layers": L.LAYERS, "activations": activations,
            "q4_k_m": q4_k_m, "rounds": rounds, "rows": rows}


def markdown(result: dict) -> str:
    from bench.report import SASS_NOTE
    weights = "Q4_K weights, V and the down projection Q6_K" if result["q4_k_m"] else "Q4_K weights"
    lines = [f"# `{result['kernel']}`: a candidate table against the shipped one in the decoder layer", "",
             f"Device: {result['device']}, {result['date']}, torch {result['torch']}. {result['layers']} "
             f"Llama-3-8B-shaped layers ({weights}, {result['activations']} activations) as one CUDA graph, us per "
             f"layer, {result['rounds']} interleaved rounds (each side's graph made again each round; "
             "`python -m bench.table_ab`). shipped: kernels_src/tuned's table; candidate: the table given. "
             + SASS_NOTE, "",
             "| batch | context | shipped us | candidate us | candidate / shipped | launches |",
             "|---|---|---|---|---|---|"]
    for r in result["rows"]:
        us = " | ".join(", ".join(f"{t:g}" for t in r["us"][s]) for s in ("shipped", "candidate"))
        n = " / ".join(f"{r['launches'][s]:g}" for s in ("shipped", "candidate"))
        lines.append(f"| {r['batch']} | {r['context']} | {us} | {r['candidate_over_shipped']:.3f} | {n} |")
    return "\n".join(lines) + "\n"


def main(argv: list) -> int:
    import argparse
    p = argparse.ArgumentParser(prog="python -m bench.table_ab", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("table", help="the candidate table (ember tune K -o TABLE.json)")
    p.add_argument("--batch", type=int, action="append", help="batch (repeatable; default 1 and 8)")
    p.add_argument("--context", type=int, action="append", help="keys a sequence (repeatable; default 4096)")
    p.add_argument("--activations", default="digits", choices=["digits", "digits2", "q8_1"])
    p.add_argument("--q4-k-m", action="store_true", help="V and the down projection in Q6_K")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    p.add_argument("--out", default="bench/results", help="directory for the JSON and markdown results")
    p.add_argument("--allow-stale", action="store_true",
                   help="measure even where another tuned table is stale (its kernel then runs its defaults)")
    args = p.parse_args(argv)
    from bench.report import refuse_stale_tables, save
    from ember.cli_support import CommandError
    from ember.tuning import table as T
    try:
        table = T.read(args.table)
    except (OSError, CommandError) as e:
        print(f"bench.table_ab: error: {e}", file=sys.stderr)
        return 2
    batches, contexts = args.batch or [1, 8], args.context or [4096]
    if not all(1 <= b <= 8 for b in batches) or not all(1 <= c <= 32768 for c in contexts) or args.rounds < 1:
        print("bench.table_ab: error: batches 1..8, contexts 1..32768, rounds >= 1", file=sys.stderr)
        return 2
    stale = refuse_stale_tables(args.allow_stale)
    if stale:
        print(stale, file=sys.stderr)
        return 2
    from ember.ops import kernels
    try:
        kernels.use_table(table["kernel"], table)        # refused here, before a GPU is touched, if stale
    except ValueError as e:
        print(f"bench.table_ab: error: {e}", file=sys.stderr)
        return 2
    finally:
        kernels.use_table(table["kernel"], None)
    result = run(table, batches, contexts, args.activations, args.q4_k_m, args.rounds)
    which = "".join(f"_{w}" for w, on in ((args.activations, args.activations != "digits"),
                                            ("q4_k_m", args.q4_k_m)) if on)
    save(args.out, f"table_ab_{table['kernel']}{which}", result, markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
