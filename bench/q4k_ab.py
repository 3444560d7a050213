"""The Q4_K family on the GPU: Ember against hand-written PTX, Triton and torch, same data,
same GPU, one run.

Sides, per shape N x K (the issue's: 14336x4096, 4096x14336, 18944x3584, 1536x8960) and
M = 1, 4, 8 activation rows (ROWS: output rows per warp, UNROLL: super-blocks per lane
per step - the const parameters that choose the layout per shape, each timed):
- ember f32: kernels_src/q4k_gemv.ember q4k_gemv (f32 activations read from L1), and
  q4k_gemv_smem.ember (staged in padded shared memory) where M * K fits its 48 KB;
- ember dp4a: kernels_src/q4k_dp4a.ember q4k_q8_gemv on Q8_1 activations (split layout;
  quantize_q8_1 timed on its own row, and checked bit for bit against the reference), and
  q4k_dp4a_smem.ember (the activations staged in shared memory, 8 warps a block);
- ember f32 as digits on dp4a: kernels_src/q4k_digits.ember, the f32 activations as three
  8-bit digits per block of 32 (quantize_digits, timed on its own row, checked bit for bit)
  against the 4-bit quants on dp4a; parity against the same f64 product as ember f32;
- ember mma Q8_1 / mma f32: kernels_src/q4k_mma.ember, the GEMVs on tensor cores (16
  weight rows by all 8 activation rows per mma: the same time for any M), after
  quantize_q8_1_mma / split_bf16x3 (timed on their own rows, checked bit for bit);
- hand PTX (M = 1): kernels_src/baselines/q4k_gemv_m1.ptx, q4k_q8_gemv_m1.ptx and
  rmsnorm_q4k_4096.ptx, each with the signature and launch of the Ember configuration named;
- triton f32: bench/triton_kernels.py q4k_gemv (f32 activations, dequantised in registers),
  and triton dp4a path: q4k_q8_gemv (integer dot products on the same Q8_1 values); the
  fused kernels too (rmsnorm_q4k_gemv, q4k_q8_swiglu);
- torch bf16 dense: cuBLAS on the dequantised weights in bf16 (3.6x the bytes: a reference
  point for what the quantised kernels save, not the same operation);
- fused: rmsnorm_q4k_gemv (M = 1) and the gate/up SwiGLU on dp4a.
Weights rotate among enough copies (>= 200 MB in all) that every launch reads them from
DRAM; the copy ceiling is bench.gpu_timing.copy_ceiling of the weight bytes, and
`of copy` compares weight bytes per second with it. Parity: the f32 sides against the f64
product of the dequantised weights and the activations, the dp4a side against the
Q8_1 emulation (ember.reference.q4k.gemv_q8_1), as cosine and max |diff| / max |ref|.
Then, at 14336x4096 and M = 1, the f32-digits configurations and the DP4A kernel again,
on fresh data, timed in interleaved rounds with the copy ceiling (interleaved_m1).
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
UNROLLS = (1, 2)        # super-blocks per lane per step in q4k_q8_gemv
ROWS = {1: (1, 2, 4), 4: (1, 2), 8: (1, 2)}   # output rows per warp, per M
ROTATE_BYTES = 200e6
SHARED_BYTES = 227 * 1024     # a block's shared memory on sm_90 (above 48 KB: dynamic)


def score(got, ref) -> dict:
    g = np.asarray(got, np.float64).ravel()
    r = np.asarray(ref, np.float64).ravel()
    return {"cosine": float(g @ r / (np.linalg.norm(g) * np.linalg.norm(r))),
            "max_diff_rel": float(np.abs(g - r).max() / np.abs(r).max())}


def rotating(launches):
    """One launch per call, cycling through `launches` (one per weight copy)."""
    state = {"i": 0}

    def fn():
        launches[state["i"] % len(launches)]()
        state["i"] += 1
    return fn


def weight_sides(w_host, w_f64, n: int, k: int, quick: bool):
    """What a quantised GEMV benchmark of one N x K shape shares (bench/q6k_ab.py too): the
    weights in enough copies to rotate through DRAM, the dequantised weights in bf16 for
    cuBLAS, the rows of results starting with the copy ceiling of the weight bytes, a
    `record(name, m, fn, got, ref)` that checks and times one side into them, and the
    timing options. Returns (copies, dense, rows, record, timing options)."""
    import torch
    from bench.gpu_timing import copy_ceiling, time_torch_graph
    kw = {"warmup": 5, "rounds": 3, "iters": 20} if quick else {}
    wbytes = w_host.nbytes
    copies = max(2, math.ceil(ROTATE_BYTES / wbytes))
    ws = [torch.from_numpy(w_host).cuda() for _ in range(copies)]
    dense = torch.from_numpy(w_f64).to(torch.bfloat16).cuda()
    ceil = copy_ceiling(wbytes, rotate_bytes=ROTATE_BYTES, **kw)
    out = [{"shape": f"{n}x{k}", "M": 0, "side": "copy ceiling", "weight_bytes": wbytes, **ceil}]

    def record(name, m, fn, got, ref):
        fn()
        torch.cuda.synchronize()
        p = score(got().float().cpu().numpy(), ref)
        t = time_torch_graph(fn, **kw)
        tbps = wbytes / (t["median_us"] * 1e-6) / 1e12
        out.append({"shape": f"{n}x{k}", "M": m, "side": name, "us": t["median_us"], "rounds_us": t["rounds_us"],
                    "TBps": tbps, "of_copy": tbps / ceil["TBps"], **p})

    record.out = out
    return ws, dense, out, record, kw


def run_shape(n: int, k: int, arch: str, quick: bool, rng) -> list:
    import torch

    import ember
    from bench import triton_kernels as TK
    from bench.gpu_timing import ember_on_torch_stream, time_torch_graph
    from ember.reference import q4k as R
    from bench.hand_ptx import load_pair
    from ember.runtime import cuda
    w_host = R.random_q4k(rng, n, k)
    w_f64 = R.dequantize_q4k(w_host)
    ws, dense, out, record, kw = weight_sides(w_host, w_f64, n, k, quick)

    def ember_module(source, defines, kernels=None):
        return cuda.load(ember.compile(ROOT / "kernels_src" / source, arch=arch, defines=defines, kernels=kernels))

    for m in MS:
        x_host = (rng.standard_normal((m, k)) * rng.uniform(0.5, 2.0, (m, 1))).astype(np.float32)
        x = torch.from_numpy(x_host).cuda()
        ref = x_host.astype(np.float64) @ w_f64.T
        y = torch.zeros(m, n, device="cuda")

        def grid(rows_per_block, n=n):
            return (n + rows_per_block - 1) // rows_per_block

        for rows in ROWS[m]:
            f32 = ember_module("q4k_gemv.ember", {"M": m, "WARPS": WARPS, "ROWS": rows})
            launches = [ember_on_torch_stream(f32.q4k_gemv.prepare(wi.view(torch.uint32), x, y, n, k,
                                                                   grid=grid(WARPS * rows))) for wi in ws]
            record(f"ember f32 (ROWS {rows})", m, rotating(launches), lambda y=y: y, ref)
            if m * k * 4.25 <= SHARED_BYTES:
                sm = ember_module("q4k_gemv_smem.ember", {"M": m, "K": k, "WARPS": 8, "ROWS": rows})
                launches = [ember_on_torch_stream(sm.q4k_gemv_smem.prepare(wi.view(torch.uint32), x, y, n,
                                                                           grid=grid(8 * rows))) for wi in ws]
                record(f"ember f32 x in shared (ROWS {rows})", m, rotating(launches), lambda y=y: y, ref)
        digits_rows(m, x, x_host, ws, y, ref, record, ember_module, kw)
        if m == 1:
            hand, _ = load_pair("q4k_gemv_m1.ptx", arch)
            launches = [ember_on_torch_stream(hand.prepare(wi.view(torch.uint32), x, y, n, k, grid=grid(WARPS)))
                        for wi in ws]
            record("hand PTX f32 (as ember ROWS 1)", m, rotating(launches), lambda y=y: y, ref)
        dp = ember_module("q4k_dp4a.ember", {"M": m, "WARPS": WARPS})
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
        q8_args = (aq.view(torch.uint32), ads.view(torch.uint32), y, n, k)
        for unroll in UNROLLS:
            for rows in ROWS[m]:
                mod = ember_module("q4k_dp4a.ember", {"M": m, "WARPS": WARPS, "UNROLL": unroll, "ROWS": rows},
                                   ["q4k_q8_gemv"])
                launches = [ember_on_torch_stream(mod.q4k_q8_gemv.prepare(wi.view(torch.uint32), *q8_args,
                                                                          grid=grid(WARPS * rows))) for wi in ws]
                record(f"ember dp4a (UNROLL {unroll}, ROWS {rows})", m, rotating(launches), lambda y=y: y, ref8)
                out[-1]["q8_1_bit_exact"] = exact_q8
        if m * k * 1.125 <= SHARED_BYTES:       # activations staged in shared memory (q4k_dp4a_smem.ember)
            for rows in ROWS[m]:
                mod = ember_module("q4k_dp4a_smem.ember", {"M": m, "K": k, "WARPS": 8, "ROWS": rows})
                launches = [ember_on_torch_stream(mod.q4k_q8_gemv_smem.prepare(wi.view(torch.uint32), *q8_args[:-1],
                                                                               grid=grid(8 * rows))) for wi in ws]
                record(f"ember dp4a (a in shared, ROWS {rows})", m, rotating(launches), lambda y=y: y, ref8)
                out[-1]["q8_1_bit_exact"] = exact_q8
        if m == 1:
            mod = ember_module("q4k_dp4a.ember", {"M": 1, "WARPS": 8, "UNROLL": 1, "ROWS": 1}, ["q4k_q8_gemv"])
            launches = [ember_on_torch_stream(mod.q4k_q8_gemv.prepare(wi.view(torch.uint32), *q8_args, grid=grid(8)))
                        for wi in ws]
            record("ember dp4a (UNROLL 1, ROWS 1, WARPS 8)", m, rotating(launches), lambda y=y: y, ref8)
            out[-1]["q8_1_bit_exact"] = exact_q8
            hand, _ = load_pair("q4k_q8_gemv_m1.ptx", arch)
            launches = [ember_on_torch_stream(hand.prepare(wi.view(torch.uint32), *q8_args, grid=grid(WARPS)))
                        for wi in ws]
            record("hand PTX dp4a (as ember UNROLL 1, ROWS 1)", m, rotating(launches), lambda y=y: y, ref8)
        tensor_core_rows(m, x, x_host, q8_host, ws, y, ref, ref8, record, ember_module, kw)
        q8i, d8f = R.q8_1_fields(q8_host)
        aq8 = torch.from_numpy(q8i.astype(np.int8)).cuda()
        d8 = torch.from_numpy(d8f.astype(np.float32)).cuda()
        s8 = torch.from_numpy(q8i.reshape(m, -1, 32).sum(-1).astype(np.int32)).cuda()
        yq = torch.zeros(m, n, device="cuda")
        launches = [(lambda wi=wi, yq=yq: TK.q4k_q8_gemv(wi, aq8, d8, s8, yq, n, k)) for wi in ws]
        record("triton dp4a path (int8 dots)", m, rotating(launches), lambda yq=yq: yq, ref8)
        t = time_torch_graph(quant, **kw)
        out.append({"shape": f"{n}x{k}", "M": m, "side": "ember quantize_q8_1 (activations)", "us": t["median_us"]})
        yt = torch.zeros(m, n, device="cuda")
        launches = [(lambda wi=wi, yt=yt, x=x: TK.q4k_gemv(wi, x, yt, n, k)) for wi in ws]
        record("triton f32", m, rotating(launches), lambda yt=yt: yt, ref)
        xb = x.to(torch.bfloat16)
        yd = torch.zeros(m, n, device="cuda", dtype=torch.bfloat16)
        record("torch bf16 dense (3.6x bytes)", m, lambda xb=xb, yd=yd: torch.matmul(xb, dense.t(), out=yd),
               lambda yd=yd: yd.float(), ref)
        # gate/up + SwiGLU on dp4a: two matrices of this shape
        if n > k:
            wu_host = R.random_q4k(rng, n, k)
            wus = [torch.from_numpy(wu_host).cuda() for _ in range(len(ws))]
            g8, u8 = R.gemv_q8_1(w_host, q8_host), R.gemv_q8_1(wu_host, q8_host)
            ys = torch.zeros(m, n, device="cuda")
            launches = [ember_on_torch_stream(dp.q4k_q8_swiglu.prepare(
                wi.view(torch.uint32), wu.view(torch.uint32), aq.view(torch.uint32), ads.view(torch.uint32), ys, n, k,
                grid=grid(WARPS)))
                for wi, wu in zip(ws, wus)]
            record("ember dp4a gate/up+SwiGLU (2 matrices)", m, rotating(launches), lambda ys=ys: ys,
                   g8 / (1 + np.exp(-g8)) * u8)
            out[-1]["of_copy"] *= 2          # two matrices' bytes
            out[-1]["TBps"] *= 2
            yts = torch.zeros(m, n, device="cuda")
            launches = [(lambda wi=wi, wu=wu, yts=yts: TK.q4k_q8_swiglu(wi, wu, aq8, d8, s8, yts, n, k))
                        for wi, wu in zip(ws, wus)]
            record("triton dp4a gate/up+SwiGLU (2 matrices)", m, rotating(launches), lambda yts=yts: yts,
                   g8 / (1 + np.exp(-g8)) * u8)
            out[-1]["of_copy"] *= 2
            out[-1]["TBps"] *= 2
            del wus
        if m == 1 and k * 4.25 <= SHARED_BYTES:
            from ember.reference.rmsnorm import rmsnorm
            gamma_host = rng.uniform(0.5, 1.5, k).astype(np.float32)
            gamma = torch.from_numpy(gamma_host).cuda()
            fused = ember_module("rmsnorm_q4k.ember", {"K": k, "WARPS": 8})
            yf = torch.zeros(n, device="cuda")
            reff = (rmsnorm(x_host, gamma_host, 1e-6) @ w_f64.T)[0]
            launches = [ember_on_torch_stream(fused.rmsnorm_q4k_gemv.prepare(
                x[0], gamma, wi.view(torch.uint32), yf, n, 1e-6, grid=grid(8))) for wi in ws]
            record("ember fused RMSNorm+Q4_K f32", m, rotating(launches), lambda yf=yf: yf, reff)
            ytf = torch.zeros(n, device="cuda")
            launches = [(lambda wi=wi, ytf=ytf: TK.rmsnorm_q4k_gemv(x[0], gamma, wi, ytf, n, k, 1e-6)) for wi in ws]
            record("triton fused RMSNorm+Q4_K f32", m, rotating(launches), lambda ytf=ytf: ytf, reff)
            if k == 4096:
                hand, _ = load_pair("rmsnorm_q4k_4096.ptx", arch)
                launches = [ember_on_torch_stream(hand.prepare(x[0], gamma, wi.view(torch.uint32), yf, n, 1e-6,
                                                               grid=grid(8))) for wi in ws]
                record("hand PTX fused RMSNorm+Q4_K f32 (seed 001)", m, rotating(launches), lambda yf=yf: yf, reff)
    return out


# (WARPS, ROWS, MIN_BLOCKS) of q4k_digits_gemv, per M (ROWS 1: slower everywhere; two
# super-blocks per step, all their weights requested first: 1.1x the time)
DIGIT_CONFIGS = {1: ((4, 2, 1), (4, 3, 1), (4, 2, 7), (2, 2, 14)), 4: ((4, 2, 1),), 8: ((4, 2, 1),)}


def digits_rows(m, x, x_host, ws, y, ref, record, ember_module, kw) -> None:
    """kernels_src/q4k_digits.ember: the f32 activations as three 8-bit digits per block
    (quantize_digits, timed on its own row and checked bit for bit), dotted on dp4a."""
    import torch

    from bench.gpu_timing import ember_on_torch_stream, time_torch_graph
    from ember.reference import q4k as R
    n, k = y.shape[1], x.shape[1]
    blocks = m * k // 32
    aq = torch.zeros(3 * blocks * 8, dtype=torch.int32, device="cuda").view(torch.uint32)
    ds = torch.zeros(2 * blocks, device="cuda")
    prep = ember_module("q4k_digits.ember", {"M": m, "WARPS": 4}, ["quantize_digits"])
    quant = ember_on_torch_stream(prep.quantize_digits.prepare(x, aq, ds, blocks, grid=(blocks + 3) // 4))
    quant()
    torch.cuda.synchronize()
    want_q, want_ds = R.split_digits(*R.quantize_digits(x_host))
    exact = bool((aq.cpu().numpy().view(np.uint32) == want_q).all() and (ds.cpu().numpy() == want_ds).all())
    t = time_torch_graph(quant, **kw)
    record.out.append({"shape": f"{n}x{k}", "M": m, "side": "ember quantize_digits (activations)",
                       "us": t["median_us"]})
    for warps, rows, min_blocks in DIGIT_CONFIGS[m]:
        mod = ember_module("q4k_digits.ember", {"M": m, "WARPS": warps, "ROWS": rows, "MIN_BLOCKS": min_blocks},
                           ["q4k_digits_gemv"])
        launches = [ember_on_torch_stream(mod.q4k_digits_gemv.prepare(wi.view(torch.uint32), aq, ds, y, n, k,
                                                                      grid=(n + warps * rows - 1) // (warps * rows)))
                    for wi in ws]
        record(f"ember f32 as digits on dp4a (WARPS {warps}, ROWS {rows}, MIN_BLOCKS {min_blocks})", m,
               rotating(launches), lambda: y, ref)
        record.out[-1]["digits_bit_exact"] = exact


MMA_CONFIGS = ((4, 4), (8, 2))   # (WARPS, MIN_BLOCKS) of q4k_mma.ember's GEMVs: the best of 8 tried


def tensor_core_rows(m, x, x_host, q8_host, ws, y, ref, ref8, record, ember_module, kw) -> None:
    """kernels_src/q4k_mma.ember: both GEMVs on tensor cores (16 weight rows x all 8
    activation rows per mma), after their activation preparation (timed on its own row,
    and checked bit for bit against ember.reference.q4k)."""
    import torch

    from bench.gpu_timing import ember_on_torch_stream, time_torch_graph
    from ember.reference import q4k as R
    n, k = y.shape[1], x.shape[1]
    prep = ember_module("q4k_mma.ember", {"WARPS": 4}, ["quantize_q8_1_mma", "split_bf16x3"])
    pgrid = (8 * k // 32 + 3) // 4
    xb8 = torch.zeros(k // 16 * 8 * 16, dtype=torch.bfloat16, device="cuda")
    xs8 = torch.zeros(k // 32 * 16, device="cuda")
    xb3 = torch.zeros(k // 16 * 3 * 8 * 16, dtype=torch.bfloat16, device="cuda")
    xs3 = torch.zeros(k // 32 * 8, device="cuda")
    quant = ember_on_torch_stream(prep.quantize_q8_1_mma.prepare(x, xb8, xs8, m, k, grid=pgrid))
    split = ember_on_torch_stream(prep.split_bf16x3.prepare(x, xb3, xs3, m, k, grid=pgrid))
    quant()
    split()
    torch.cuda.synchronize()
    want_b, want_s = R.q8_1_mma_layout(q8_host)
    exact8 = bool((xb8.view(torch.uint16).cpu().numpy() == want_b).all() and (xs8.cpu().numpy() == want_s).all())
    exact3 = bool((xb3.view(torch.uint16).cpu().numpy() == R.bf16_bits(R.mma_b_layout(R.split_bf16x3(x_host)))).all())
    for name, fn in (("ember quantize_q8_1_mma (activations)", quant), ("ember split_bf16x3 (activations)", split)):
        t = time_torch_graph(fn, **kw)
        record.out.append({"shape": f"{n}x{k}", "M": m, "side": name, "us": t["median_us"]})
    for warps, min_blocks in MMA_CONFIGS:
        mod = ember_module("q4k_mma.ember", {"WARPS": warps, "MIN_BLOCKS": min_blocks}, ["q4k_q8_mma", "q4k_f32_mma"])
        grid = (n + 15) // 16
        launches = [ember_on_torch_stream(mod.q4k_q8_mma.prepare(wi.view(torch.uint32), xb8, xs8, y, m, n, k,
                                                                 grid=grid)) for wi in ws]
        record(f"ember mma Q8_1 (WARPS {warps}, MIN_BLOCKS {min_blocks})", m, rotating(launches), lambda: y, ref8)
        record.out[-1]["q8_1_bit_exact"] = exact8
        launches = [ember_on_torch_stream(mod.q4k_f32_mma.prepare(wi.view(torch.uint32), xb3, xs3, y, m, n, k,
                                                                  grid=grid)) for wi in ws]
        record(f"ember mma f32 (WARPS {warps}, MIN_BLOCKS {min_blocks})", m, rotating(launches), lambda: y, ref)
        record.out[-1]["split_exact"] = exact3


INTERLEAVED_ROUNDS = 4


def interleaved_m1(arch: str, rng, n: int = 14336, k: int = 4096) -> list:
    """n x k at M = 1, on fresh data: the copy ceiling, every f32-digits configuration and
    the DP4A kernel (UNROLL 1, ROWS 2) timed in INTERLEAVED_ROUNDS rounds, each side once
    per round, so that a drift during the run reaches every side alike; `of copy` from the
    median rounds. The activations are prepared on the host by ember.reference.q4k (bit for
    bit what the Ember quantisers write: checked in the main table)."""
    import statistics

    import torch

    import ember
    from bench.gpu_timing import copy_ceiling, ember_on_torch_stream, time_torch_graph
    from ember.reference import q4k as R
    from ember.runtime import cuda
    w_host = R.random_q4k(rng, n, k)
    wbytes = w_host.nbytes
    ws = [torch.from_numpy(w_host).cuda() for _ in range(max(2, math.ceil(ROTATE_BYTES / wbytes)))]
    x_host = (rng.standard_normal((1, k)) * rng.uniform(0.5, 2.0)).astype(np.float32)
    ref = x_host.astype(np.float64) @ R.dequantize_q4k(w_host).T
    q8 = R.quantize_q8_1(x_host)
    ref8 = R.gemv_q8_1(w_host, q8)

    def device_u32(a):
        return torch.from_numpy(np.ascontiguousarray(a, np.uint32).view(np.int32)).cuda().view(torch.uint32)
    dq, dds = R.split_digits(*R.quantize_digits(x_host))
    digit_args = (device_u32(dq), torch.from_numpy(dds).cuda())
    q8_args = tuple(device_u32(a) for a in R.split_q8_1(q8))
    y = torch.zeros(1, n, device="cuda")

    def rotated(kernel, args, defines, rows_per_block):
        prog = ember.compile(ROOT / "kernels_src" / kernel[0], arch=arch, defines=defines, kernels=[kernel[1]])
        fn = getattr(cuda.load(prog), kernel[1])
        return rotating([ember_on_torch_stream(fn.prepare(wi.view(torch.uint32), *args, y, n, k,
                                                          grid=(n + rows_per_block - 1) // rows_per_block))
                         for wi in ws])
    sides = {}
    for warps, rows, min_blocks in DIGIT_CONFIGS[1]:
        sides[f"ember f32 as digits on dp4a (WARPS {warps}, ROWS {rows}, MIN_BLOCKS {min_blocks})"] = (
            rotated(("q4k_digits.ember", "q4k_digits_gemv"), digit_args,
                    {"M": 1, "WARPS": warps, "ROWS": rows, "MIN_BLOCKS": min_blocks}, warps * rows), ref)
    sides["ember dp4a (UNROLL 1, ROWS 2)"] = (
        rotated(("q4k_dp4a.ember", "q4k_q8_gemv"), q8_args, {"M": 1, "WARPS": WARPS, "UNROLL": 1, "ROWS": 2},
                2 * WARPS), ref8)
    errors = {}
    for name, (launch, want) in sides.items():
        launch()
        torch.cuda.synchronize()
        errors[name] = score(y.cpu().numpy(), want)
    times = {name: [] for name in ["copy ceiling", *sides]}
    for _ in range(INTERLEAVED_ROUNDS):
        times["copy ceiling"].append(copy_ceiling(wbytes, rotate_bytes=ROTATE_BYTES)["us"])
        for name, (launch, _) in sides.items():
            times[name].append(time_torch_graph(launch)["median_us"])
    copy_us = statistics.median(times["copy ceiling"])
    out = [{"shape": f"{n}x{k}", "side": "copy ceiling", "rounds_us": times["copy ceiling"], "us": copy_us}]
    for name in sides:
        us = statistics.median(times[name])
        out.append({"shape": f"{n}x{k}", "side": name, "rounds_us": times[name], "us": us,
                    "of_copy": copy_us / (2 * us), **errors[name]})      # the ceiling moves 2 x wbytes
    return out


def weight_table(rows: list) -> list:
    """The markdown table of a quantised GEMV benchmark's rows (the copy ceiling's, and each
    side's time, weight bandwidth, fraction of the ceiling and parity); bench/q6k_ab.py too."""
    lines = ["| shape N x K | M | side | us | weight TB/s | of copy | cosine | max diff / max ref |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["side"] == "copy ceiling":
            lines.append(f"| {r['shape']} | | copy ceiling ({r['weight_bytes'] / 1e6:.1f} MB each way) "
                         f"| {r['us']:.2f} | {r['TBps']:.2f} (read + write) | 100% | | |")
        elif "cosine" not in r:
            lines.append(f"| {r['shape']} | {r['M']} | {r['side']} | {r['us']:.2f} | | | | |")
        else:
            lines.append(f"| {r['shape']} | {r['M']} | {r['side']} | {r['us']:.2f} | {r['TBps']:.2f} "
                         f"| {100 * r['of_copy']:.0f}% | {r['cosine']:.7f} | {r['max_diff_rel']:.2g} |")
    return lines


def markdown(result: dict) -> str:
    from bench.report import SASS_NOTE
    lines = ["# Q4_K GEMV family: Ember vs hand-written PTX vs Triton vs torch", "",
             f"Device: {result['device']}, {result['date']}. One run; median of 5 replays of a CUDA graph of 100 "
             "launches; weights rotate among copies (>= 200 MB) so each launch reads DRAM. `of copy`: weight "
             "bytes per second against the copy ceiling (bytes read + written per second by the fastest of a "
             "memcpy and a copy kernel moving the weight bytes, rotating the same way, same run). "
             "Plot: q4k_ab.svg (M = 1, the best configuration of each Ember kernel). " + SASS_NOTE, "",
             *weight_table(result["rows"])]
    if result.get("interleaved_m1"):
        lines += ["", f"M = 1 in {INTERLEAVED_ROUNDS} interleaved rounds (fresh data; each side, the copy ceiling "
                  "included, once per round; `of copy` from the median rounds):", "",
                  "| shape N x K | side | us per round | of copy | cosine | max diff / max ref |", "|---|---|---|---|---|---|"]
        for r in result["interleaved_m1"]:
            rounds = " / ".join(f"{t:.2f}" for t in r["rounds_us"])
            if "of_copy" in r:
                lines.append(f"| {r['shape']} | {r['side']} | {rounds} | {100 * r['of_copy']:.1f}% "
                             f"| {r['cosine']:.7f} | {r['max_diff_rel']:.2g} |")
            else:
                lines.append(f"| {r['shape']} | {r['side']} | {rounds} | 100% | | |")
    return "\n".join(lines) + "\n"


def plot_groups(rows: list) -> list:
    """Per shape at M = 1: the best of each kind of side (Ember's by its const parameters)."""
    kinds = [("ember f32 (best)", "ember f32"), ("hand PTX f32", "hand PTX f32"), ("triton f32", "triton f32"),
             ("ember dp4a (best)", "ember dp4a ("), ("hand PTX dp4a", "hand PTX dp4a"),
             ("triton dp4a path", "triton dp4a"),
             ("torch bf16 dense", "torch bf16")]
    groups = []
    for shape in dict.fromkeys(r["shape"] for r in rows):
        bars = []
        for label, prefix in kinds:
            got = [r["of_copy"] for r in rows if r["shape"] == shape and r["M"] == 1
                   and r["side"].startswith(prefix) and "of_copy" in r]
            if got:
                bars.append((label, 100 * max(got)))
        groups.append((shape, bars))
    return groups


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
    if not quick and shapes is None:
        result["interleaved_m1"] = interleaved_m1(ctx.arch, rng)
    from bench.report import bar_chart_svg, save, save_svg
    save(out_dir, "q4k_ab", result, markdown(result))
    save_svg(out_dir, "q4k_ab", bar_chart_svg(f"Q4_K GEMV, M = 1, {result['device']}, {result['date']}",
                                              plot_groups(result["rows"]), "% of the copy ceiling", 100.0))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "bench/results"))
