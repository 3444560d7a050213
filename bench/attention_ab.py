"""Decode attention (kernels_src/decode_attention_mma.ember through ember.ops.decode_attention:
attention_cluster_mma where a KV head's splits fit a cluster, else attention_split_mma and
the merge kernel - both columns in the same run) against torch's
scaled_dot_product_attention on the same data, same GPU, one run.

Llama-3-8B's attention: 32 query heads, 8 KV heads, head_dim 128, bf16 cache; batch 1, 2,
4 and 8; contexts 512 to 32768; M = 1 query per sequence. Ember reads the cache as
[B, S, HKV, D] (token-major: an append writes one contiguous row); torch gets its own
layout [B, HKV, L, D] (contiguous copies, `enable_gqa=True`), so each side reads its best
layout. Both are captured in a CUDA graph of 100 calls (bench.gpu_timing.time_torch_graph),
median of 5 replays; caches of >= 200 MB in all rotate so each call reads DRAM. `floor`:
the cache bytes read (K and V) at the copy ceiling measured in the same run. Parity: max
|diff| against the f64 reference (ember.reference.attention) at the smallest shape of each
batch. No hand-written PTX baseline (the seeds have none). Writes attention_ab.json / .md."""

from __future__ import annotations

import datetime
import sys


HQ, HKV, D = 32, 8, 128
BATCHES = (1, 2, 4, 8)
CONTEXTS = (512, 4096, 8192, 16384, 32768)
ROTATE_BYTES = 200e6


def run_shape(batch: int, ctx: int, quick: bool) -> dict:
    import torch
    import torch.nn.functional as F

    import ember.ops as ops
    from bench.gpu_timing import copy_ceiling, time_torch_graph
    kv_bytes = 2 * batch * ctx * HKV * D * 2
    copies = max(1, min(16, int(ROTATE_BYTES // kv_bytes) + 1))
    g = torch.Generator(device="cuda").manual_seed(batch * 100003 + ctx)
    q = torch.randn(batch, 1, HQ, D, device="cuda", dtype=torch.bfloat16, generator=g)
    caches = [(torch.randn(batch, ctx, HKV, D, device="cuda", dtype=torch.bfloat16, generator=g),
               torch.randn(batch, ctx, HKV, D, device="cuda", dtype=torch.bfloat16, generator=g)) for _ in range(copies)]
    lengths = torch.full((batch,), ctx, device="cuda", dtype=torch.int32)
    outs = [torch.empty_like(q) for _ in range(copies)]
    tq = q.transpose(1, 2).contiguous()                                     # [B, HQ, 1, D]
    tcaches = [(k.transpose(1, 2).contiguous(), v.transpose(1, 2).contiguous()) for k, v in caches]
    i = {"e": 0, "t": 0}

    def ember_call():
        k, v = caches[i["e"] % copies]
        ops.decode_attention(q, k, v, lengths, out=outs[i["e"] % copies], max_length=ctx)
        i["e"] += 1

    def torch_call():
        k, v = tcaches[i["t"] % copies]
        F.scaled_dot_product_attention(tq, k, v, enable_gqa=True)
        i["t"] += 1
    ember_call()
    got = outs[0].float()
    want = F.scaled_dot_product_attention(tq.float(), tcaches[0][0].float(), tcaches[0][1].float(),
                                          enable_gqa=True).transpose(1, 2)
    err = float((got - want).abs().max())
    kw = {"rounds": 3, "iters": 20} if quick else {}
    e = time_torch_graph(ember_call, **kw)["median_us"]
    e_merge = _split_and_merge(lambda: time_torch_graph(ember_call, **kw)["median_us"])
    t = time_torch_graph(torch_call, **kw)["median_us"]
    ceiling = copy_ceiling(kv_bytes // 2, rotate_bytes=ROTATE_BYTES)["TBps"]
    floor = kv_bytes / (ceiling * 1e12) * 1e6
    return {"batch": batch, "context": ctx, "ember_us": round(e, 2), "ember_split_merge_us": round(e_merge, 2),
            "torch_sdpa_us": round(t, 2),
            "ember_over_torch": round(e / t, 3), "floor_us": round(floor, 2), "ember_of_floor": round(floor / e, 3),
            "kv_MB": round(kv_bytes / 1e6, 1), "max_abs_diff_vs_f32_sdpa": err}


def _split_and_merge(timed):
    """`timed()` with decode_attention as the split pass and the merge kernel, as where a KV
    head's splits do not fit one cluster (ember.ops.attention.MAX_CLUSTER 0)."""
    import ember.ops as ops
    from ember.ops import attention
    keep = attention.MAX_CLUSTER
    attention.MAX_CLUSTER = 0
    ops.plan.clear()
    try:
        return timed()
    finally:
        attention.MAX_CLUSTER = keep
        ops.plan.clear()


def markdown(result: dict) -> str:
    from bench.report import SASS_NOTE
    lines = ["# Decode attention: Ember vs torch SDPA", "",
             f"Device: {result['device']}, {result['date']}, torch {result['torch']}. 32 query heads, 8 KV heads, "
             "head_dim 128, bf16, one query per sequence; CUDA graphs of 100 calls, median of 5; caches rotated "
             "over >= 200 MB. floor: the K and V bytes at the copy ceiling of the same run. "
             "max diff: Ember's output against torch's SDPA in f32 on the same data. Ember: one launch "
             "where a KV head's splits fit a thread-block cluster (attention_cluster_mma, up to 8 splits), else "
             "the split pass and the merge kernel; 'split + merge': the latter always, in the same run. "
             + SASS_NOTE, "",
             "| batch | context | KV MB | Ember us | split + merge us | torch SDPA us | Ember / torch | floor us "
             "| Ember of floor | max diff |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        lines.append(f"| {r['batch']} | {r['context']} | {r['kv_MB']} | {r['ember_us']} | "
                     f"{r.get('ember_split_merge_us', '-')} | {r['torch_sdpa_us']} | "
                     f"{r['ember_over_torch']} | {r['floor_us']} | {r['ember_of_floor']:.0%} | "
                     f"{r['max_abs_diff_vs_f32_sdpa']:.2e} |")
    return "\n".join(lines) + "\n"


def main(out_dir: str, quick: bool = False) -> int:
    import warnings

    import torch

    from bench.report import save
    warnings.simplefilter("ignore")           # shapes without a tuned entry say so
    rows = [run_shape(b, c, quick) for b in BATCHES for c in CONTEXTS]
    result = {"device": torch.cuda.get_device_name(), "date": datetime.date.today().isoformat(),
              "torch": torch.__version__, "rows": rows}
    save(out_dir, "attention_ab", result, markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "bench/results"))
