"""The Q4_K family on the GPU: Ember against Triton and torch, same data, same GPU, one run.

Sides, per shape N x K (the issue's: 14336x4096, 4096x14336, 18944x3584, 1536x8960) and
M = 1, 4, 8 activation rows:
- ember f32: kernels_src/q4k_gemv.ember q4k_gemv (f32 activations read from L1), and
  q4k_gemv_smem.ember (staged in padded shared memory) where M * K fits its 48 KB;
- ember dp4a: kernels_src/q4k_dp4a.ember q4k_q8_gemv on Q8_1 activations at UNROLL 1, 2, 4 (split layout;
  quantize_q8_1 timed on its own row, and checked bit for bit against the reference);
- triton f32: bench/triton_kernels.py q4k_gemv (f32 activations, dequantised in registers);
- torch bf16 dense: cuBLAS on the dequantised weights in bf16 (3.6x the bytes: a reference
  point for what the quantised kernels save, not the same operation);
- fused: rmsnorm_q4k_gemv (M = 1, K <= 12288) and the gate/up SwiGLU on dp4a.
Weights rotate among enough copies (>= 200 MB in all) that every launch reads them from
DRAM; the copy ceiling is bench.gpu_timing.copy_ceiling of the weight bytes, and
`of copy` compares weight bytes per second with it. Parity: the f32 sides against the f64
product of the dequantised weights and the activations, the dp4a side against the
Q8_1 emulation (ember.reference.q4k.gemv_q8_1), as cosine and max |diff| / max |ref|.
Writes q4k_ab.json / .md."""

from __future__ import annotations

import datetime
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHAPES = [(14336, 4096), (4096, 14336), (18944, 3584), (1536, 8960)]
MS = [1, 4, 8]
WARPS = 4
UNROLLS = (1, 2, 4)     # super-blocks per lane per step in q4k_q8_gemv
ROTATE_BYTES = 200e6


def score(got, ref) -> dict:
    g = np.asarray(got, np.float64).ravel()
    r = np.asarray(ref, np.float64).ravel()
    return {"cosine": float(g @ r / (np.linalg.norm(g) * np.linalg.norm(r))),
            "max_diff_rel": float(np.abs(g - r).max() / np.abs(r).max())}


def run_shape(n: int, k: int, arch: str, quick: bool, rng) -> list:
    import torch

    import ember
    from bench import triton_kernels as TK
    from bench.gpu_timing import copy_ceiling, ember_on_torch_stream, time_torch_graph
    from ember.reference import q4k as R
    from ember.runtime import cuda
    kw = {"warmup": 5, "rounds": 3, "iters": 20} if quick else {}
    w_host = R.random_q4k(rng, n, k)
    wbytes = w_host.nbytes
    copies = max(2, math.ceil(ROTATE_BYTES / wbytes))
    ws = [torch.from_numpy(w_host).cuda() for _ in range(copies)]
    dense = torch.from_numpy(R.dequantize_q4k(w_host)).to(torch.bfloat16).cuda()
    w_f64 = R.dequantize_q4k(w_host)
    out = []
    ceil = copy_ceiling(wbytes, rotate_bytes=ROTATE_BYTES, **kw)
    out.append({"shape": f"{n}x{k}", "M": 0, "side": "copy ceiling", "weight_bytes": wbytes, **ceil})

    def rotating(launches):
        state = {"i": 0}

        def fn():
            launches[state["i"] % len(launches)]()
            state["i"] += 1
        return fn

    def record(name, m, fn, got, ref):
        fn()
        torch.cuda.synchronize()
        p = score(got().cpu().numpy(), ref)
        t = time_torch_graph(fn, **kw)
        out.append({"shape": f"{n}x{k}", "M": m, "side": name, "us": t["median_us"], "rounds_us": t["rounds_us"],
                    "TBps": wbytes / (t["median_us"] * 1e-6) / 1e12,
                    "of_copy": (wbytes / (t["median_us"] * 1e-6) / 1e12) / ceil["TBps"], **p})

    for m in MS:
        x_host = (rng.standard_normal((m, k)) * rng.uniform(0.5, 2.0, (m, 1))).astype(np.float32)
        x = torch.from_numpy(x_host).cuda()
        ref = x_host.astype(np.float64) @ w_f64.T
        y = torch.zeros(m, n, device="cuda")
        grid = (n + WARPS - 1) // WARPS
        f32 = cuda.load(ember.compile(ROOT / "kernels_src" / "q4k_gemv.ember", arch=arch,
                                      defines={"M": m, "WARPS": WARPS}))
        launches = [ember_on_torch_stream(f32.q4k_gemv.prepare(wi.view(torch.uint32), x, y, n, k, grid=grid))
                    for wi in ws]
        record("ember f32", m, rotating(launches), lambda: y, ref)
        if m * k * 4.25 <= 48 * 1024:
            sm = cuda.load(ember.compile(ROOT / "kernels_src" / "q4k_gemv_smem.ember", arch=arch,
                                         defines={"M": m, "K": k, "WARPS": 8}))
            launches = [ember_on_torch_stream(sm.q4k_gemv_smem.prepare(wi.view(torch.uint32), x, y, n,
                                                                       grid=(n + 7) // 8)) for wi in ws]
            record("ember f32 (x in shared memory)", m, rotating(launches), lambda: y, ref)
        dp = cuda.load(ember.compile(ROOT / "kernels_src" / "q4k_dp4a.ember", arch=arch,
                                     defines={"M": m, "WARPS": WARPS}))
        dps = {u: cuda.load(ember.compile(ROOT / "kernels_src" / "q4k_dp4a.ember", arch=arch,
                                          defines={"M": m, "WARPS": WARPS, "UNROLL": u}, kernels=["q4k_q8_gemv"]))
               for u in UNROLLS}
        blocks = m * k // 32
        aq = torch.zeros(blocks * 8, dtype=torch.int32, device="cuda")
        ads = torch.zeros(blocks, dtype=torch.int32, device="cuda")
        quant = ember_on_torch_stream(dp.quantize_q8_1.prepare(x, aq.view(torch.uint32), ads.view(torch.uint32),
                                                                blocks, grid=(blocks + WARPS - 1) // WARPS))
        quant()
        torch.cuda.synchronize()
        q8_host = R.quantize_q8_1(x_host)
        want_q, want_ds = R.split_q8_1(q8_host)
        exact_q8 = bool((aq.cpu().numpy().view(np.uint32) == want_q).all()
                        and (ads.cpu().numpy().view(np.uint32) == want_ds).all())
        ref8 = R.gemv_q8_1(w_host, q8_host)
        for u, mod in dps.items():
            launches = [ember_on_torch_stream(mod.q4k_q8_gemv.prepare(wi.view(torch.uint32), aq.view(torch.uint32),
                                                                      ads.view(torch.uint32), y, n, k, grid=grid))
                        for wi in ws]
            record(f"ember dp4a (UNROLL {u})", m, rotating(launches), lambda: y, ref8)
            out[-1]["q8_1_bit_exact"] = exact_q8
        t = time_torch_graph(quant, **kw)
        out.append({"shape": f"{n}x{k}", "M": m, "side": "ember quantize_q8_1 (activations)", "us": t["median_us"]})
        yt = torch.zeros(m, n, device="cuda")
        launches = [(lambda wi=wi: TK.q4k_gemv(wi, x, yt, n, k)) for wi in ws]
        record("triton f32", m, rotating(launches), lambda: yt, ref)
        xb = x.to(torch.bfloat16)
        yd = torch.zeros(m, n, device="cuda", dtype=torch.bfloat16)
        record("torch bf16 dense (3.6x bytes)", m, lambda: torch.matmul(xb, dense.t(), out=yd), lambda: yd.float(), ref)
        # gate/up + SwiGLU on dp4a: two matrices of this shape
        if n > k:
            wu_host = R.random_q4k(rng, n, k)
            wus = [torch.from_numpy(wu_host).cuda() for _ in range(copies)]
            g8, u8 = R.gemv_q8_1(w_host, q8_host), R.gemv_q8_1(wu_host, q8_host)
            ys = torch.zeros(m, n, device="cuda")
            launches = [ember_on_torch_stream(dp.q4k_q8_swiglu.prepare(
                wi.view(torch.uint32), wu.view(torch.uint32), aq.view(torch.uint32), ads.view(torch.uint32), ys, n, k,
                grid=grid))
                for wi, wu in zip(ws, wus)]
            record("ember dp4a gate/up+SwiGLU (2 matrices)", m, rotating(launches), lambda: ys,
                   g8 / (1 + np.exp(-g8)) * u8)
            out[-1]["of_copy"] *= 2          # two matrices' bytes
            out[-1]["TBps"] *= 2
            del wus
        if m == 1 and k <= 12288:
            gamma_host = rng.uniform(0.5, 1.5, k).astype(np.float32)
            gamma = torch.from_numpy(gamma_host).cuda()
            fused = cuda.load(ember.compile(ROOT / "kernels_src" / "rmsnorm_q4k.ember", arch=arch,
                                            defines={"K": k, "WARPS": 8}))
            yf = torch.zeros(n, device="cuda")
            from ember.reference.rmsnorm import rmsnorm
            reff = (rmsnorm(x_host, gamma_host, 1e-6) @ w_f64.T)[0]
            launches = [ember_on_torch_stream(fused.rmsnorm_q4k_gemv.prepare(
                x[0], gamma, wi.view(torch.uint32), yf, n, 1e-6, grid=(n + 7) // 8)) for wi in ws]
            record("ember fused RMSNorm+Q4_K f32", m, rotating(launches), lambda: yf, reff)
    return out


def markdown(result: dict) -> str:
    lines = ["# Q4_K GEMV family: Ember vs Triton vs torch", "",
             f"Device: {result['device']}, {result['date']}. One run; median of 5 replays of a CUDA graph of 100 "
             "launches; weights rotate among copies (>= 200 MB) so each launch reads DRAM. `of copy`: weight "
             "bytes per second against the copy ceiling (bytes read + written per second by the fastest of a "
             "memcpy and a copy kernel moving the weight bytes, rotating the same way, same run). Hand-written PTX baselines for these kernels do not exist yet (issue 8 notes).", "",
             "| shape N x K | M | side | us | weight TB/s | of copy | cosine | max diff / max ref |",
             "|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        if r["side"] == "copy ceiling":
            lines.append(f"| {r['shape']} | | copy ceiling ({r['weight_bytes'] / 1e6:.1f} MB each way) "
                         f"| {r['us']:.2f} | {r['TBps']:.2f} (read + write) | 100% | | |")
        elif "cosine" not in r:
            lines.append(f"| {r['shape']} | {r['M']} | {r['side']} | {r['us']:.2f} | | | | |")
        else:
            lines.append(f"| {r['shape']} | {r['M']} | {r['side']} | {r['us']:.2f} | {r['TBps']:.2f} "
                         f"| {100 * r['of_copy']:.0f}% | {r['cosine']:.7f} | {r['max_diff_rel']:.2g} |")
    return "\n".join(lines) + "\n"


def main(out_dir: str, quick: bool = False, shapes=None) -> int:
    import torch
    from ember.runtime import cuda
    ctx = cuda.context()
    rng = np.random.default_rng(2026)
    result = {"benchmark": "q4k_ab", "device": torch.cuda.get_device_name(), "arch": ctx.arch,
              "date": datetime.date.today().isoformat(), "rows": []}
    for n, k in (shapes or SHAPES):
        result["rows"] += run_shape(n, k, ctx.arch, quick, rng)
        print(markdown(result).splitlines()[-1], flush=True)
    from bench.report import save
    save(out_dir, "q4k_ab", result, markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "bench/results"))
