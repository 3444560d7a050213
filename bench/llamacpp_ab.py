"""A Llama-3-8B-shaped Q4_K decoder layer: Ember against llama.cpp's own CUDA kernels, on the
same GGUF file and the same GPU, in one run.

    python -m bench llamacpp --llama-bench PATH/llama-batched-bench [--out DIR]

The model: GGUF files written here with the `gguf` package's writer - Llama-3-8B's layer
shapes (hidden 4096, 32 heads, 8 KV heads, head_dim 128, FFN 14336, RMSNorm eps 1e-5, RoPE
base 500000), every projection Q4_K - or, as a Q4_K_M file keeps them, Q6_K for V and the
down projection (MIXES) - with a trained model's statistics (ember.reference.q4k.model_like_q4k,
q6k.model_like_q6k), and a vocabulary of VOCAB tokens (tokenizer "none"),
so that the embedding and the output head cost next to nothing - in two depths, FEW and MANY
layers. Both sides read the same files:

- llama.cpp: `llama-batched-bench` (all layers on the GPU, flash attention on, f16 KV cache,
  which is what llama.cpp's CUDA back end runs by default with CUDA graphs) decodes TG tokens
  in each of B sequences after a prompt of PP tokens each; a step's time is its T_TG / TG, the
  median of REPEATS runs. Its
  per-layer time is the difference of the two depths' step times over the difference of their
  layers: what one more layer costs, with the embedding, the output head, sampling and the
  step's fixed host work taken out (llama.cpp builds and checks its graph on the host every
  step; what that costs a layer stays in, as it does in a real decode). Its step time over
  its layers (`llama.cpp step / layers`) is given beside it.
- Ember: ember.model.layer's Decoder over the MANY-layer file's weights (LayerWeights.from_gguf),
  bf16 caches at the context llama.cpp's steps pass half-way (PP + TG / 2), one CUDA graph per
  step replayed; us per layer = replay
  time / layers, with digit activations (the default) and with Q8_1 ones (llama.cpp's own
  quantisation of activations).

bench/build_llamacpp.sh builds the binary from a llama.cpp source tree; bench/results/
llamacpp_ab.md names the commit measured. Writes llamacpp_ab.json / .md (llamacpp_ab_h200.* on
an H200)."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import tempfile

HIDDEN, HEADS, KV_HEADS, FFN = 4096, 32, 8, 14336       # head_dim: HIDDEN / HEADS = 128
EPS, ROPE_BASE = 1e-5, 500000.0
VOCAB = 256
FEW, MANY = 2, 6                   # layers of the two files: 123 MB of weights a layer, no layer in L2
BATCHES = (1, 2, 4, 8)
CONTEXTS = (512, 4096)
TG = 128                           # tokens each sequence decodes (llama.cpp)
REPEATS = 3                        # llama.cpp runs a file, the median step time taken
MIXES = {"Q4_K": (), "Q4_K, Q6_K V and down": ("attn_v", "ffn_down")}   # the second as a Q4_K_M file's


def write_model(path: str, layers: int, seed: int = 0, hidden: int = HIDDEN, heads: int = HEADS,
                kv_heads: int = KV_HEADS, ffn: int = FFN, vocab: int = VOCAB, q6k: tuple = ()) -> None:
    """A Llama GGUF file that llama.cpp and ember.model.gguf_weights both load: Q4_K
    projections (Q6_K for those named in `q6k`) of a trained model's statistics, f32 norms
    around 1, f16 embedding and head."""
    import gguf
    import numpy as np

    from ember.reference.q4k import model_like_q4k
    from ember.reference.q6k import model_like_q6k
    rng = np.random.default_rng(seed)
    d = hidden // heads
    shapes = {"attn_q": (heads * d, hidden), "attn_k": (kv_heads * d, hidden), "attn_v": (kv_heads * d, hidden),
              "attn_output": (hidden, heads * d), "ffn_gate": (ffn, hidden), "ffn_up": (ffn, hidden),
              "ffn_down": (hidden, ffn)}
    w = gguf.GGUFWriter(path, "llama")
    w.add_block_count(layers)
    w.add_context_length(131072)
    w.add_embedding_length(hidden)
    w.add_feed_forward_length(ffn)
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_rope_dimension_count(d)
    w.add_layer_norm_rms_eps(EPS)
    w.add_rope_freq_base(ROPE_BASE)
    w.add_vocab_size(vocab)
    w.add_tokenizer_model("none")
    w.add_tensor("token_embd.weight", (rng.standard_normal((vocab, hidden)) * 0.02).astype(np.float16))
    w.add_tensor("output_norm.weight", rng.uniform(0.5, 1.5, hidden).astype(np.float32))
    w.add_tensor("output.weight", (rng.standard_normal((vocab, hidden)) * hidden ** -0.5).astype(np.float16))
    types = gguf.GGMLQuantizationType
    for i in range(layers):
        w.add_tensor(f"blk.{i}.attn_norm.weight", rng.uniform(0.5, 1.5, hidden).astype(np.float32))
        w.add_tensor(f"blk.{i}.ffn_norm.weight", rng.uniform(0.5, 1.5, hidden).astype(np.float32))
        for name, (rows, cols) in shapes.items():
            if name in q6k:
                w.add_tensor(f"blk.{i}.{name}.weight", model_like_q6k(rng, rows, cols, cols ** -0.5),
                             raw_dtype=types.Q6_K)
            else:
                w.add_tensor(f"blk.{i}.{name}.weight", model_like_q4k(rng, rows, cols, cols ** -0.5),
                             raw_dtype=types.Q4_K)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def llamacpp_steps(binary: str, model: str, batches=BATCHES, contexts=CONTEXTS, tg: int = TG,
                   gpu: bool = True, attempts: int = 3) -> dict:
    """{(batch, context): us per decode step} from llama-batched-bench's JSON lines. A run
    that exits before its logging thread has written its last lines (seen: the last shape's
    line missing, status 0) is run again, up to `attempts` times."""
    n_ctx = max(batches) * (max(contexts) + tg) + 256
    cmd = [binary, "-m", model, "-c", str(n_ctx), "-b", "2048", "-ub", "512", "-fa", "on",
           "-npp", ",".join(map(str, contexts)), "-ntg", str(tg), "-npl", ",".join(map(str, batches)),
           "--output-format", "jsonl", "-ngl", "99" if gpu else "0"]
    for _ in range(attempts):
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if run.returncode:
            raise RuntimeError(f"{' '.join(cmd)} exited with {run.returncode}:\n{run.stderr[-4000:]}")
        steps = {}
        for line in (run.stdout + "\n" + run.stderr).splitlines():
            line = line.strip()
            if line.startswith("{") and '"speed_tg"' in line:
                r = json.loads(line)
                steps[(r["pl"], r["pp"])] = r["t_tg"] * 1e6 / r["tg"]
        missing = [(b, c) for b in batches for c in contexts if (b, c) not in steps]
        if not missing:
            return steps
    raise RuntimeError(f"llama-batched-bench gave no result for (batch, context) {missing} in {attempts} runs:\n"
                       f"{run.stderr[-4000:]}")


def llamacpp_version(binary: str) -> str:
    run = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60)
    return " ".join((run.stdout + run.stderr).split())[:200]


def gpu_layers(path: str) -> tuple:
    """(the file's hyperparameters, its layers' weights on the GPU): loaded once a file, for
    every shape it is timed at."""
    from ember.model.gguf_weights import load
    from ember.model.layer import LayerWeights
    model = load(path)
    hp = model.hparams
    return hp, [LayerWeights.from_gguf(model.layer(i), hp) for i in range(hp.layers)]


def ember_layer_us(model: tuple, batch: int, ctx: int, activations: str, replays: int) -> float:
    """us per layer of Ember's Decoder over a file's layers (gpu_layers), one graph a step."""
    import torch

    from bench.layer_ab import _time, decoder_at
    hp, layers = model
    g = torch.Generator(device="cuda").manual_seed(batch * 7919 + ctx)
    dec = decoder_at(layers, hp, batch, ctx, g, activations)
    graph = dec.capture()
    us = _time(graph.replay, replays) / hp.layers
    del graph, dec
    torch.cuda.empty_cache()
    return us


def markdown(result: dict) -> str:
    from bench.report import SASS_NOTE
    lines = ["# A Llama-3-8B-shaped Q4_K decoder layer: Ember vs llama.cpp's CUDA kernels", "",
             f"Device: {result['device']}, {result['date']}, torch {result['torch']}; llama.cpp: "
             f"{result['llamacpp']}. The same GGUF files for both ({VOCAB}-token vocabulary; every projection "
             "Q4_K, or as a Q4_K_M file Q6_K for V and the down projection), "
             f"{FEW} and {MANY} layers; llama.cpp: llama-batched-bench, all layers on the GPU, flash "
             f"attention, f16 KV cache, {TG} tokens decoded a sequence after a prompt of the context's length, the "
             f"median of {REPEATS} runs, us per layer = (step time at {MANY} layers - at {FEW}) / {MANY - FEW}; "
             f"Ember: its Decoder over the {MANY}-layer file, bf16 caches at the context plus {TG // 2} (the middle "
             f"of llama.cpp's steps), one CUDA graph a step, us per layer = step / {MANY}, digit "
             "activations (the default) and Q8_1 ones. " + SASS_NOTE, "",
             "| weights | batch | context | Ember us/layer | Ember Q8_1 us | llama.cpp us/layer | llama.cpp step / "
             "layers | llama.cpp / Ember | llama.cpp / Ember Q8_1 |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        lines.append(f"| {r['weights']} | {r['batch']} | {r['context']} | {r['ember_us']} | {r['ember_q8_1_us']} | "
                     f"{r['llamacpp_us']} | {r['llamacpp_step_over_layers_us']} | {r['llamacpp_over_ember']} | "
                     f"{r['llamacpp_over_ember_q8_1']} |")
    return "\n".join(lines) + "\n"


def _median_steps(binary: str, model: str, contexts) -> dict:
    """Each (batch, context)'s step time: the median of REPEATS runs of llama-batched-bench."""
    import statistics
    runs = [llamacpp_steps(binary, model, contexts=contexts) for _ in range(REPEATS)]
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def main(out_dir: str, binary: str, quick: bool = False) -> int:
    if not os.path.isfile(binary) or not os.access(binary, os.X_OK):
        print(f"bench: error: --llama-bench {binary!r} is not an executable llama-batched-bench", file=sys.stderr)
        return 2
    import torch

    from bench.report import for_device, save
    replays = 3 if quick else 20
    rows = []
    for weights, q6k in MIXES.items():
        with tempfile.TemporaryDirectory() as tmp:
            few, many = os.path.join(tmp, f"l{FEW}.gguf"), os.path.join(tmp, f"l{MANY}.gguf")
            write_model(few, FEW, seed=1, q6k=q6k)
            write_model(many, MANY, seed=2, q6k=q6k)
            steps_few = _median_steps(binary, few, CONTEXTS)
            steps_many = _median_steps(binary, many, CONTEXTS)
            model = gpu_layers(many)
            for c in CONTEXTS:
                for b in BATCHES:
                    # Ember at the middle of the contexts llama.cpp's steps run through
                    ember = ember_layer_us(model, b, c + TG // 2, "digits", replays)
                    ember_q8 = ember_layer_us(model, b, c + TG // 2, "q8_1", replays)
                    per_layer = (steps_many[(b, c)] - steps_few[(b, c)]) / (MANY - FEW)
                    rows.append({"weights": weights, "batch": b, "context": c, "ember_us": round(ember, 2),
                                 "ember_q8_1_us": round(ember_q8, 2), "llamacpp_us": round(per_layer, 2),
                                 "llamacpp_step_over_layers_us": round(steps_many[(b, c)] / MANY, 2),
                                 "llamacpp_step_us": {str(FEW): round(steps_few[(b, c)], 1),
                                                      str(MANY): round(steps_many[(b, c)], 1)},
                                 "llamacpp_over_ember": round(per_layer / ember, 2),
                                 "llamacpp_over_ember_q8_1": round(per_layer / ember_q8, 2)})
                    print(rows[-1], flush=True)
            del model
    result = {"device": torch.cuda.get_device_name(), "date": datetime.date.today().isoformat(),
              "torch": torch.__version__, "llamacpp": llamacpp_version(binary), "rows": rows}
    save(out_dir, for_device("llamacpp_ab", result["device"]), result, markdown(result))
    return 0
