"""The Hopper GEMM on the GPU (`python -m bench hopper`): kernels_src/gemm_wgmma.ember (wgmma +
TMA, warp-specialised, persistent; c = a w^T, f32 accumulate and output) against the
mma.sync GEMM (kernels_src/gemm_bf16.ember), cuBLAS (torch.mm: bf16 out, and f32 out - the
f32 sides' peer - with out_dtype) and a Triton
matmul on wgmma (bench.gemm_ab's, 128x128x64, 8 warps, 3 stages), TFLOP/s of CUDA-graph
timing with every shape's sides in interleaved rounds (bench.gemm_ab._in_rounds); parity
of every side against f64 on sampled rows; the batch-invariance contract on the GPU (each
row of a 4096-row product bitwise equal to the same row computed alone and in chunks);
and the kernel's tile and pipeline configurations at 4096^3 (decode shapes:
bench/gemm_wgmma_decode.py). Writes gemm_wgmma_ab.json
and gemm_wgmma_ab.md (the PTX through nvJitLink, as Ember's runtime loads it)."""

from __future__ import annotations

import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SQUARE = [(4096, 4096, 4096), (8192, 8192, 8192)]
LAYER = [(m, n, k) for (n, k) in ((4096, 4096), (14336, 4096), (4096, 14336)) for m in (1, 16, 128, 2048, 4096)]
SHAPES = SQUARE + LAYER
CONFIGS = [{}, {"GROUP_M": 8}, {"GROUP_M": 16}, {"STAGES": 3}, {"BN": 128}, {"BN": 192}, {"BULK_STORE": True},
           {"PINGPONG": True, "BN": 128, "STAGES": 6}, {"PINGPONG": True, "BN": 128, "STAGES": 6, "GROUP_M": 8}]


def _tuned() -> tuple:
    """(configuration, SASS path) of kernels_src/tuned/gemm_wgmma.json's 4096^3 bucket for this
    GPU (on the H100: GROUP_M = 8 through the driver's JIT; docs/sass_paths.md), the defaults
    through nvJitLink when the GPU is not in it (with a warning)."""
    from ember.tuning import tuned_for
    t = tuned_for("gemm_wgmma", "4096x4096x4096")
    return t.config, t.sass_path


def _gemm(arch: str, defines: dict | None = None, sass_path: str = "nvjitlink"):
    """A launcher (a, w, c, m, n, k) -> prepared launch on a persistent grid, the SASS made
    through `sass_path`."""
    import ember
    from ember.runtime import cuda
    prog = ember.compile(ROOT / "kernels_src" / "gemm_wgmma.ember", arch=arch, defines=defines or {}, cache=False)
    kernel = cuda.load(prog, sass_path=sass_path).gemm_wgmma
    consts = prog.kernels["gemm_wgmma"].consts
    bn, bm, swap = consts["BN"], consts["BM"], consts["SWAP"]
    import torch
    sms = torch.cuda.get_device_properties(cuda.context().ordinal).multi_processor_count

    def prepare(a, w, c, m, n, k):
        tiles = -(-(n if swap else m) // bm) * -(-(m if swap else n) // bn)      # SWAP tiles c^T
        return kernel.prepare(a, w, c, m, n, k, grid=(min(sms, tiles),))
    return prepare


BACKWARD = SHAPES


def _backward(torch, quick: bool) -> list:
    """A linear layer's backward products (y = x w^T, x [M, K], w [N, K]): dx = dy w (an
    M x K x N GEMM, w transposed for it: gemm_wgmma<B_MN>) and dw = dy^T x (N x K x M, both
    transposed: gemm_wgmma<A_MN, B_MN>) against cuBLAS and the mma.sync kernel's
    (gemm_bf16<B_T>, <A_T, B_T, COPY_PARTS 2>), interleaved rounds; error on sampled rows."""
    import ember
    from bench.gemm_ab import _in_rounds
    from bench.gpu_timing import ember_on_torch_stream
    from ember.runtime import cuda
    wg = {"dx": _gemm("sm_90a", {"B_MN": True}), "dw": _gemm("sm_90a", {"A_MN": True, "B_MN": True})}
    wg_bf16 = {"dx": _gemm("sm_90a", {"B_MN": True, "O": "bf16"}),
               "dw": _gemm("sm_90a", {"A_MN": True, "B_MN": True, "O": "bf16"})}
    config, path = _tuned()
    tuned = {"dx": _gemm("sm_90a", {"B_MN": True, **config}, path),
             "dw": _gemm("sm_90a", {"A_MN": True, "B_MN": True, **config}, path)}
    sync = {p: cuda.load(ember.compile(ROOT / "kernels_src" / "gemm_bf16.ember", arch=cuda.context().arch,
                                       defines=d, cache=False)).gemm_bf16
            for p, d in (("dx", {"B_T": True}), ("dw", {"A_T": True, "B_T": True, "COPY_PARTS": 2}))}
    out = []
    for (m, n, k) in (BACKWARD[:1] if quick else BACKWARD):
        g = torch.Generator(device="cuda").manual_seed(7 + m + n + k)
        x = torch.randn(m, k, device="cuda", generator=g).to(torch.bfloat16)
        w = torch.randn(n, k, device="cuda", generator=g).to(torch.bfloat16)
        dy = torch.randn(m, n, device="cuda", generator=g).to(torch.bfloat16)
        for product, a, b, (pm, pn, pk), peer, ref in (
                ("dx", dy, w, (m, k, n), lambda **f32: torch.mm(dy, w, **f32), lambda: dy[:8].double() @ w.double()),
                ("dw", dy, x, (n, k, m), lambda **f32: torch.mm(dy.t(), x, **f32),
                 lambda: dy[:, :8].double().t() @ x.double())):
            c, cs = torch.empty(pm, pn, device="cuda"), torch.empty(pm, pn, device="cuda")
            ct = torch.empty(pm, pn, device="cuda")
            cb = torch.empty(pm, pn, device="cuda", dtype=torch.bfloat16)
            sides = {"wgmma": ember_on_torch_stream(wg[product](a, b, c, pm, pn, pk)),
                     "wgmma_bf16": ember_on_torch_stream(wg_bf16[product](a, b, cb, pm, pn, pk)),
                     "wgmma_tuned": ember_on_torch_stream(tuned[product](a, b, ct, pm, pn, pk)),
                     "mma_sync": ember_on_torch_stream(sync[product].prepare(
                         a, b, cs, pm, pn, pk, grid=((pn + 127) // 128, (pm + 127) // 128))),
                     "cublas": peer, "cublas_f32": lambda: peer(out_dtype=torch.float32)}
            flops = 2.0 * m * n * k
            t = _in_rounds(sides, 10)
            want = ref()
            row = {"product": product, "m": m, "n": n, "k": k,
                   **{side: round(flops / us / 1e6, 1) for side, us in t.items()},
                   # each output type against cuBLAS's of the same type
                   "wgmma_vs_cublas": round(t["cublas_f32"] / t["wgmma"], 3),
                   "tuned_vs_cublas": round(t["cublas_f32"] / t["wgmma_tuned"], 3), "tuned_same_bits": bool(torch.equal(c, ct)),
                   "bf16_is_f32_rounded": bool(torch.equal(cb, c.to(torch.bfloat16))),
                   "err": float((c[:8].double() - want).abs().max() / want.abs().max())}
            out.append(row)
            print(row, flush=True)
    return out


def _invariance(prepare, torch) -> dict:
    """Rows of a 4096 x 4096 x 4096 product, bitwise, against the same rows computed with
    M = 1, 7, 128, 1000 and in two chunks."""
    m = n = k = 4096
    g = torch.Generator(device="cuda").manual_seed(7)
    a = torch.randn(m, k, device="cuda", generator=g).to(torch.bfloat16)
    w = torch.randn(n, k, device="cuda", generator=g).to(torch.bfloat16)
    full = torch.empty(m, n, device="cuda")
    prepare(a, w, full, m, n, k)(torch.cuda.current_stream().cuda_stream)
    differing = checked = 0
    for rows in (1, 7, 128, 1000, 2048):
        for start in (0, m - rows):
            part = torch.empty(rows, n, device="cuda")
            sub = a[start:start + rows].contiguous()
            prepare(sub, w, part, rows, n, k)(torch.cuda.current_stream().cuda_stream)
            torch.cuda.synchronize()
            differing += int((part != full[start:start + rows]).any(dim=1).sum())
            checked += rows
    return {"rows_checked": checked, "rows_differing": differing}


def main(out_dir: str, quick: bool = False) -> int:
    import torch

    import ember
    from bench.gemm_ab import _in_rounds, _triton_matmul
    from bench.gpu_timing import ember_on_torch_stream, time_torch_graph
    from bench.hand_ptx import load_pair
    from bench.report import for_device, save, save_svg
    from ember.runtime import cuda
    arch = cuda.context().arch
    if arch not in ("sm_90", "sm_90a"):
        print(f"bench hopper: needs an sm_90 GPU, this is {arch}")
        return 2
    wg, wg_bf16 = _gemm("sm_90a"), _gemm("sm_90a", {"O": "bf16"})
    tuned = _tuned()
    wg_tuned = _gemm("sm_90a", *tuned)
    hand, _ = load_pair("gemm_wgmma.ptx", arch)     # kernels_src/baselines/gemm_wgmma.ptx, same launch
    sms = torch.cuda.get_device_properties(cuda.context().ordinal).multi_processor_count
    sync = cuda.load(ember.compile(ROOT / "kernels_src" / "gemm_bf16.ember", arch=arch, cache=False)).gemm_bf16
    triton_mm = _triton_matmul()
    rows = []
    for (m, n, k) in (SHAPES[:1] if quick else SHAPES):
        g = torch.Generator(device="cuda").manual_seed(m + n + k)
        a = torch.randn(m, k, device="cuda", generator=g).to(torch.bfloat16)
        w = torch.randn(n, k, device="cuda", generator=g).to(torch.bfloat16)
        outs = {name: torch.empty(m, n, device="cuda") for name in ("wgmma", "wgmma_tuned", "hand", "mma_sync", "triton")}
        outs["wgmma_bf16"] = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        grid = (min(sms, -(-m // 128) * -(-n // 256)),)
        sides = {"wgmma": ember_on_torch_stream(wg(a, w, outs["wgmma"], m, n, k)),
                 "wgmma_bf16": ember_on_torch_stream(wg_bf16(a, w, outs["wgmma_bf16"], m, n, k)),
                 "wgmma_tuned": ember_on_torch_stream(wg_tuned(a, w, outs["wgmma_tuned"], m, n, k)),
                 "hand": ember_on_torch_stream(hand.prepare(a, w, outs["hand"], m, n, k, grid=grid)),
                 "mma_sync": ember_on_torch_stream(sync.prepare(a, w, outs["mma_sync"], m, n, k,
                                                                grid=((n + 127) // 128, (m + 127) // 128))),
                 "cublas": lambda: torch.mm(a, w.t()),
                 "cublas_f32": lambda: torch.mm(a, w.t(), out_dtype=torch.float32),
                 "triton": lambda: triton_mm(a, w, outs["triton"], m, n, k)}
        flops = 2.0 * m * n * k
        row = {"m": m, "n": n, "k": k}
        pick = torch.randint(0, m, (min(m, 8),), device="cuda", generator=g)
        ref = a[pick].double() @ w.double().t()
        for name, fn in sides.items():
            res = fn()                      # cuBLAS's sides return their output
            torch.cuda.synchronize()
            got = (outs[name] if name in outs else res)[pick].double()
            if name == "wgmma_bf16":        # the f32 sums rounded once: the f32 side's, rounded
                assert torch.equal(outs[name], outs["wgmma"].to(torch.bfloat16))
            row[name] = {"max_rel_err": float((got - ref).abs().max() / ref.abs().max())}
        for name, t in _in_rounds(sides, 10 if flops > 1e12 else 100).items():
            row[name].update({"us": round(t, 2), "tflops": round(flops / t / 1e6, 1)})
        # each output type against cuBLAS's of the same type
        row["wgmma_vs_cublas"] = round(row["cublas_f32"]["us"] / row["wgmma"]["us"], 3)
        row["wgmma_bf16_vs_cublas"] = round(row["cublas"]["us"] / row["wgmma_bf16"]["us"], 3)
        row["tuned_vs_cublas"] = round(row["cublas_f32"]["us"] / row["wgmma_tuned"]["us"], 3)
        row["tuned_same_bits"] = bool(torch.equal(outs["wgmma"], outs["wgmma_tuned"]))
        row["time_vs_hand"] = round(row["wgmma"]["us"] / row["hand"]["us"], 3)
        row["bitwise_hand"] = bool(torch.equal(outs["wgmma"], outs["hand"]))
        rows.append(row)
        print(row, flush=True)
    configs = []
    m = n = k = 4096
    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    w = torch.randn(n, k, device="cuda").to(torch.bfloat16)
    c = torch.empty(m, n, device="cuda")
    for d in (CONFIGS[:2] if quick else CONFIGS):
        t = time_torch_graph(ember_on_torch_stream(_gemm("sm_90a", d)(a, w, c, m, n, k)), iters=20)["median_us"]
        configs.append({"defines": d or "default", "tflops": round(2.0 * m * n * k / t / 1e6, 1)})
        print(configs[-1], flush=True)
    invariance = _invariance(wg, torch)
    print(invariance, flush=True)
    backward = _backward(torch, quick)
    result = {"benchmark": "gemm_wgmma_ab", "date": datetime.date.today().isoformat(),
              "device": torch.cuda.get_device_name(), "arch": arch, "torch": torch.__version__, "sass": f"nvJitLink (tuned: {tuned[1]})",
              "rows": rows, "configs_4096": configs, "invariance": invariance, "backward": backward,
              "note": "wgmma: kernels_src/gemm_wgmma.ember (128 x 256 tiles, 4 stages of 64-wide K slices by TMA, "
                      "2 consumer warpgroups, persistent grid, f32 out; bf16 out: O = bf16, whose epilogue by default stages rows for the copy engine (BULK_STORE); tuned: the tuned table's configuration "
                      f"and SASS path for this GPU's 4096^3 bucket, {tuned[0]} through {tuned[1]}); hand: kernels_src/baselines/gemm_wgmma.ptx "
                      "(the same tile, K order and launch); mma_sync: kernels_src/gemm_bf16.ember "
                      "(defaults, f32 out); cublas: torch.mm bf16 (bf16 out; cuBLAS f32: out_dtype=torch.float32, the "
                      "f32 sides' peer: each ratio sets an output type against cuBLAS's of the same type); "
                      "triton: 128x128x64, 8 warps, "
                      "3 stages, wgmma (f32 out)"}
    lines = ["# Hopper GEMM (bf16 in, f32 accumulate): Ember wgmma + TMA vs Ember mma.sync vs cuBLAS vs Triton", "",
             f"{result['date']}, {result['device']} ({arch}), torch {torch.__version__}, Ember's PTX through "
             f"nvJitLink (the tuned side: {tuned[1]}); one run, CUDA graphs, every shape's sides in interleaved rounds (the median round). "
             + result["note"] + ".", "",
             "| M | N | K | wgmma TFLOP/s | wgmma bf16 out | wgmma tuned | hand PTX TFLOP/s | "
             "mma.sync TFLOP/s | cuBLAS TFLOP/s | cuBLAS f32 out | Triton TFLOP/s | "
             "wgmma / cuBLAS (f32 out, bf16 out, tuned) | time / hand | = hand bitwise | max rel err (wgmma / cuBLAS) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['m']} | {r['n']} | {r['k']} | {r['wgmma']['tflops']} | {r['wgmma_bf16']['tflops']} | "
              f"{r['wgmma_tuned']['tflops']} | "
              f"{r['hand']['tflops']} | {r['mma_sync']['tflops']} | {r['cublas']['tflops']} | "
              f"{r['cublas_f32']['tflops']} | {r['triton']['tflops']} | "
              f"{r['wgmma_vs_cublas']:.2f}, {r['wgmma_bf16_vs_cublas']:.2f}, {r['tuned_vs_cublas']:.2f} | "
              f"{r['time_vs_hand']:.2f} | "
              f"{r['bitwise_hand']} | "
              f"{r['wgmma']['max_rel_err']:.1e} / {r['cublas']['max_rel_err']:.1e} |" for r in rows]
    forward = {(r["m"], r["n"], r["k"]): r for r in rows}

    def of_forward(r, side, fwd_side):
        f = forward.get((r["m"], r["n"], r["k"]))
        return f"{r[side] / f[fwd_side]['tflops']:.2f}" if f else "-"
    lines += ["", ("Backward products of a linear layer y = x w^T (x [M, K], w [N, K]; f32 out, and bf16 out with "
                   "its default staged epilogue): dx = dy w, an "
                   "M x K x N GEMM with w transposed for it (gemm_wgmma<B_MN>), and dw = dy^T x, N x K x M with both "
                   "operands transposed (gemm_wgmma<A_MN, B_MN>), against the mma.sync kernel's and cuBLAS, "
                   "interleaved rounds; `of forward`: TFLOP/s over the forward's at the same layer shape, f32 out "
                   "and bf16 out (the table above, the same run):"), "",
              "| product | M | N | K | wgmma TFLOP/s | wgmma bf16 out | wgmma tuned | mma.sync TFLOP/s | cuBLAS TFLOP/s | "
              "cuBLAS f32 out | wgmma / cuBLAS (default, bf16 out, tuned) | of forward (f32, bf16 out) | max rel err |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['product']} | {r['m']} | {r['n']} | {r['k']} | {r['wgmma']} | {r['wgmma_bf16']} | {r['wgmma_tuned']} | "
              f"{r['mma_sync']} | {r['cublas']} | {r['cublas_f32']} | {r['wgmma_vs_cublas']:.2f}, "
              f"{r['wgmma_bf16'] / r['cublas']:.2f}, "
              f"{r['tuned_vs_cublas']:.2f} | {of_forward(r, 'wgmma', 'wgmma')}, {of_forward(r, 'wgmma_bf16', 'wgmma_bf16')} | "
              f"{r['err']:.1e} |" for r in backward]
    lines += ["", "Configurations at 4096^3 (`-D`):", "", "| defines | TFLOP/s |", "|---|---|"]
    lines += [f"| {cfg['defines']} | {cfg['tflops']} |" for cfg in configs]
    lines += ["", f"Batch invariance on the GPU: {invariance['rows_checked']} rows computed with M = 1, 7, 128, "
                  f"1000, 2048 (first and last rows) against the same rows of the 4096-row product: "
                  f"{invariance['rows_differing']} differ. The tuned side's output is bitwise the default's at every "
                  f"shape and product: {all(r['tuned_same_bits'] for r in rows + backward)}; every backward bf16 "
                  f"output is the f32 one rounded: {all(r['bf16_is_f32_rounded'] for r in backward)}."]
    name = for_device("gemm_wgmma_ab", result["device"])
    save(out_dir, name, result, "\n".join(lines) + "\n")
    save_svg(out_dir, name, plot(result))
    return 0


def plot(result: dict) -> str:
    """gemm_wgmma_ab.svg: each forward shape's sides as a fraction of cuBLAS's throughput."""
    from bench.report import bar_chart_svg
    groups = [(f"M {r['m']}, N {r['n']}, K {r['k']}",
               [(side, r[side]["tflops"] / r["cublas"]["tflops"])
                for side in ("wgmma", "wgmma_bf16", "wgmma_tuned", "hand", "mma_sync", "cublas_f32", "triton")])
              for r in result["rows"]]
    return bar_chart_svg(f"bf16 GEMM on Hopper, {result['device']}, {result['date']}: TFLOP/s / cuBLAS's", groups,
                         "cuBLAS = 1, dashed", 1.0)
