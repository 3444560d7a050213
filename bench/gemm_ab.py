"""GEMM A/B on the GPU: the SIMT f32 GEMM (kernels_src/gemm_f32.ember) against its hand-written
PTX and cuBLAS f32 without TF32, and Ember's batch-invariant bf16 GEMM (kernels_src/gemm_bf16.ember,
c = a w^T, f32 accumulate and output) against its hand-written PTX (kernels_src/baselines/
gemm_bf16.ptx), cuBLAS (torch.mm, bf16) and a Triton matmul
with one fixed configuration (no autotuning), TFLOP/s in one run, CUDA-graph timing
(bench.gpu_timing). Parity of every side against f64 on sampled rows. The backward products
(dx, dw) at every shape against cuBLAS and Triton on mma.sync, the forward at 4096^3 timed
in interleaved rounds against cuBLAS (a clock drift during the run then reaches both
sides), and other tile configurations of the forward kernel.

Shapes: 4096^3, 8192^3, and M in {1, 16, 128, 2048, 4096} x (N, K) in {(4096, 4096),
(14336, 4096), (4096, 14336)}. Writes gemm_ab.json and gemm_ab.md.
"""

from __future__ import annotations

import datetime
import statistics
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SQUARE = [(4096, 4096, 4096), (8192, 8192, 8192)]
LAYER = [(m, n, k) for (n, k) in ((4096, 4096), (14336, 4096), (4096, 14336)) for m in (1, 16, 128, 2048, 4096)]


def _triton_matmul(mma_sync: bool = False):
    """Triton's matmul with one configuration: 128 x 128 x 64, 3 stages, 8 warps; on sm_90 it
    uses wgmma, Hopper's warpgroup instruction, which Ember does not emit. With `mma_sync`
    the same source is compiled with Triton's DISABLE_MMA_V3 (the instructions Ember uses:
    mma.sync, ldmatrix, cp.async) and 4 warps, its fastest warp count there (H100, 4096^3:
    4 warps 326-366 TFLOP/s, 8 warps 323). The flag is set around each call; it is part of
    Triton's cache key, and each variant is its own jit function (its own in-memory cache)."""
    import os

    import triton
    import triton.language as tl

    @triton.jit
    def kernel(a, w, c, M, N, K, sam, sak, swk, swn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        # c[m, n] = sum over k of a[m * sam + k * sak] w[k * swk + n * swn]
        pid_m, pid_n = tl.program_id(1), tl.program_id(0)
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            ta = tl.load(a + rm[:, None] * sam + (k0 + rk)[None, :] * sak,
                         mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
            tw = tl.load(w + rn[None, :] * swn + (k0 + rk)[:, None] * swk,
                         mask=(rn[None, :] < N) & ((k0 + rk)[:, None] < K), other=0.0)
            acc += tl.dot(ta, tw)
        tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))

    def run(a, w, c, m, n, k, strides=None, warps=8):
        # the forward's layouts by default: a [M, K], w [N, K] (Triton specializes a stride of 1)
        sam, sak, swk, swn = strides or (k, 1, 1, k)
        kernel[(triton.cdiv(n, 128), triton.cdiv(m, 128))](a, w, c, m, n, k, sam, sak, swk, swn, BM=128, BN=128,
                                                           BK=64, num_warps=warps, num_stages=3)

    def run_mma_sync(a, w, c, m, n, k, strides=None):
        before = os.environ.get("DISABLE_MMA_V3")
        os.environ["DISABLE_MMA_V3"] = "1"
        try:
            run(a, w, c, m, n, k, strides, warps=4)
        finally:
            if before is None:
                del os.environ["DISABLE_MMA_V3"]
            else:
                os.environ["DISABLE_MMA_V3"] = before
    return run_mma_sync if mma_sync else run


# the default: unpadded XOR-swizzled tiles, 3 stages of 128x128x64 in 96 KB, two blocks per SM
CONFIGS = [{}, {"COPY_PARTS": 2}, {"COPY_PARTS": 4}, {"STAGES": 2}, {"STAGES": 4}, {"BK": 32, "STAGES": 4},
           {"A_L1": True}, {"B_L1": True}, {"BN": 256, "WARPS_N": 4}, {"BM": 256, "WARPS_M": 4}, {"BM": 64, "BN": 64, "BK": 32, "WARPS_M": 2, "WARPS_N": 2},
           # eight warps of 64 x 32 or 32 x 64 on the 128 x 128 tile (Triton's choice for its mma.sync matmul)
           {"WARPS_N": 4}, {"WARPS_M": 4}, {"WARPS_N": 4, "STAGES": 4},
           # rows padded by 16 bytes instead (3 stages: 117 KB, one block per SM)
           {"SWIZZLE": False}, {"SWIZZLE": False, "STAGES": 2}]


def _in_rounds(sides: dict, iters: int) -> dict:
    """Each side's time per launch (us): SHAPE_ROUNDS rounds, each timing every side once, in
    the opposite order every other round; each side's median round. A small kernel's time
    moves by 10-15% with the GPU's clock from one second to the next; rounds give every side
    the same drift."""
    from bench.gpu_timing import time_torch_graph
    times = {name: [] for name in sides}
    for r in range(SHAPE_ROUNDS):
        for name in (list(sides) if r % 2 == 0 else list(sides)[::-1]):
            times[name].append(time_torch_graph(sides[name], iters=iters)["median_us"])
    return {name: statistics.median(ts) for name, ts in times.items()}


def _configs(arch) -> list:
    """The kernel's time at 4096^3 for other tile configurations (the default first)."""
    import torch

    import ember
    from bench.gpu_timing import ember_on_torch_stream, time_torch_graph
    from ember.runtime import cuda
    m = n = k = 4096
    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    w = torch.randn(n, k, device="cuda").to(torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.float32)
    out = []
    for d in CONFIGS:
        prog = ember.compile(ROOT / "kernels_src" / "gemm_bf16.ember", arch=arch, defines=d, cache=False)
        info = prog.kernels["gemm_bf16"]
        bm, bn = info.consts["BM"], info.consts["BN"]
        launch = cuda.load(prog).gemm_bf16.prepare(a, w, c, m, n, k, grid=(n // bn, m // bm))
        t = time_torch_graph(ember_on_torch_stream(launch), iters=20)["median_us"]
        out.append({"defines": d or "default", "tflops": round(2.0 * m * n * k / t / 1e6, 1),
                    "dynamic_shared": info.dynamic_shared})
    return out


ROUNDS = 4
SHAPE_ROUNDS = 3


def _interleaved(arch, torch) -> list:
    """4096^3 forward, Ember (f32 and bf16 output; the copies in one part, the default, and in
    two, as dw uses; A's tiles copied through L2 only, the default, or cached in L1 too),
    Triton on mma.sync and cuBLAS timed in ROUNDS interleaved rounds (each side once per
    round), so that a drift of the GPU's clocks during the run
    reaches every side: the per-round times and the ratio of the median rounds."""
    import ember
    from bench.gpu_timing import ember_on_torch_stream, time_torch_graph
    from ember.runtime import cuda
    m = n = k = 4096
    g = torch.Generator(device="cuda").manual_seed(1)
    a = torch.randn(m, k, device="cuda", generator=g).to(torch.bfloat16)
    w = torch.randn(n, k, device="cuda", generator=g).to(torch.bfloat16)
    sides, outputs = {}, []         # a prepared launch holds no reference to its output
    for out_type, dtype, parts, a_l1 in (("f32", torch.float32, 1, False), ("bf16", torch.bfloat16, 1, False),
                                         ("f32", torch.float32, 2, False), ("f32", torch.float32, 1, True)):
        prog = ember.compile(ROOT / "kernels_src" / "gemm_bf16.ember", arch=arch,
                             defines={"O": out_type, "COPY_PARTS": parts, "A_L1": a_l1}, cache=False)
        c = torch.empty(m, n, device="cuda", dtype=dtype)
        outputs.append(c)
        launch = cuda.load(prog).gemm_bf16.prepare(a, w, c, m, n, k, grid=(n // 128, m // 128))
        sides[f"ember, {out_type} out" + (f", COPY_PARTS {parts}" if parts > 1 else "")
              + (", A_L1 true" if a_l1 else "")] = ember_on_torch_stream(launch)
    ct = torch.empty(m, n, device="cuda", dtype=torch.float32)
    triton_sync = _triton_matmul(mma_sync=True)
    sides["triton mma.sync, f32 out"] = lambda: triton_sync(a, w, ct, m, n, k)
    sides["cublas, bf16 out"] = lambda: torch.mm(a, w.t())
    rounds = {name: [] for name in sides}
    for _ in range(ROUNDS):
        for name, fn in sides.items():
            rounds[name].append(round(time_torch_graph(fn, iters=20)["median_us"], 1))
    cublas = statistics.median(rounds["cublas, bf16 out"])
    return [{"side": name, "us": ts, "tflops": round(2.0 * m * n * k / statistics.median(ts) / 1e6, 1),
             "vs_cublas": round(cublas / statistics.median(ts), 3)} for name, ts in rounds.items()]


def _backward(arch, torch, shapes) -> list:
    """The two backward products of a linear layer y = x w^T (x [M, K], w [N, K]) at each
    shape: dx = dy w, a GEMM of M x K x N (gemm_bf16<B_T>), and dw = dy^T x, N x K x M
    (gemm_bf16<A_T, B_T, COPY_PARTS 2>: its grid is the weight's shape whatever the batch),
    against cuBLAS (torch.mm) and Triton on mma.sync with the same operand layouts, in
    SHAPE_ROUNDS interleaved rounds; Ember's error on 8 sampled rows against f64."""
    import ember
    from bench.gpu_timing import ember_on_torch_stream
    from ember.runtime import cuda
    triton_sync = _triton_matmul(mma_sync=True)
    kernels = {product: cuda.load(ember.compile(ROOT / "kernels_src" / "gemm_bf16.ember", arch=arch, defines=d,
                                                cache=False)).gemm_bf16
               for product, d in (("dx", {"B_T": True}), ("dw", {"A_T": True, "B_T": True, "COPY_PARTS": 2}))}
    out = []
    for (m, n, k) in shapes:
        g = torch.Generator(device="cuda").manual_seed(7 + m + n + k)
        x = torch.randn(m, k, device="cuda", generator=g).to(torch.bfloat16)
        w = torch.randn(n, k, device="cuda", generator=g).to(torch.bfloat16)
        dy = torch.randn(m, n, device="cuda", generator=g).to(torch.bfloat16)
        pick_m = torch.randint(0, m, (min(m, 8),), device="cuda", generator=g)
        pick_n = torch.randint(0, n, (8,), device="cuda", generator=g)
        # (product, Ember's operands, GEMM shape, cuBLAS, Triton's strides, rows of the result, their f64 values)
        for product, a, b, (pm, pn, pk), peer, strides, pick, ref in (
                ("dx", dy, w, (m, k, n), lambda: torch.mm(dy, w), (n, 1, k, 1), pick_m,
                 lambda: dy[pick_m].double() @ w.double()),
                ("dw", dy, x, (n, k, m), lambda: torch.mm(dy.t(), x), (1, n, k, 1), pick_n,
                 lambda: dy[:, pick_n].double().t() @ x.double())):
            c = torch.empty(pm, pn, device="cuda", dtype=torch.float32)
            ct = torch.empty(pm, pn, device="cuda", dtype=torch.float32)
            launch = kernels[product].prepare(a, b, c, pm, pn, pk, grid=((pn + 127) // 128, (pm + 127) // 128))
            sides = {"ember": ember_on_torch_stream(launch), "cublas": peer,
                     "triton_mma": lambda a=a, b=b, ct=ct, pm=pm, pn=pn, pk=pk, strides=strides:
                         triton_sync(a, b, ct, pm, pn, pk, strides)}
            flops = 2.0 * m * n * k
            t = _in_rounds(sides, 10 if flops > 1e12 else 100)
            want = ref()
            row = {"product": product, "m": m, "n": n, "k": k,
                   **{side: round(flops / us / 1e6, 1) for side, us in t.items()},
                   "ember_vs_cublas": round(t["cublas"] / t["ember"], 3),
                   "ember_vs_triton": round(t["triton_mma"] / t["ember"], 3)}
            for side, got in (("err", c), ("triton_err", ct)):
                row[side] = float((got[pick].double() - want).abs().max() / want.abs().max())
            out.append(row)
            print(row, flush=True)
    return out


def _simt_f32(arch, torch) -> list:
    """kernels_src/gemm_f32.ember against its hand-written PTX (kernels_src/baselines/gemm_f32.ptx)
    and cuBLAS f32 (TF32 off), c = a w^T."""
    from bench.gpu_timing import ember_on_torch_stream
    from bench.hand_ptx import load_pair
    torch.backends.cuda.matmul.allow_tf32 = False
    hand, mine = load_pair("gemm_f32.ptx", arch)
    out = []
    for size in (2048, 4096):
        m = n = k = size
        g = torch.Generator(device="cuda").manual_seed(size)
        a = torch.randn(m, k, device="cuda", generator=g)
        w = torch.randn(n, k, device="cuda", generator=g)
        c = torch.empty(m, n, device="cuda")
        ref = a[:8].double() @ w.double().t()
        ch = torch.empty(m, n, device="cuda")
        grid = (n // 128, m // 128)
        t = _in_rounds({"ember": ember_on_torch_stream(mine.prepare(a, w, c, m, n, k, grid=grid)),
                        "hand": ember_on_torch_stream(hand.prepare(a, w, ch, m, n, k, grid=grid)),
                        "cublas": lambda: torch.mm(a, w.t())}, iters=10)
        torch.cuda.synchronize()
        flops = 2.0 * m * n * k
        row = {"size": size, **{side: round(flops / us / 1e6, 1) for side, us in t.items()},
               "ratio": t["cublas"] / t["ember"], "time_vs_hand": round(t["ember"] / t["hand"], 3),
               "err": float((c[:8].double() - ref).abs().max() / ref.abs().max()),
               "hand_err": float((ch[:8].double() - ref).abs().max() / ref.abs().max())}
        out.append(row)
        print(out[-1], flush=True)
    return out


def plot(result: dict) -> str:
    """gemm_ab.svg: each shape's sides as a fraction of cuBLAS's throughput in the same run
    (TFLOP/s from 0.7 at M = 1 to 700 do not share one linear axis)."""
    from bench.report import bar_chart_svg
    groups = [(f"M {r['m']}, N {r['n']}, K {r['k']}",
               [(side, r[side]["tflops"] / r["cublas"]["tflops"]) for side in ("ember", "hand", "triton_mma", "triton")])
              for r in result["rows"]]
    return bar_chart_svg(f"bf16 GEMM, {result['device']}, {result['date']}: TFLOP/s / cuBLAS's", groups,
                         "cuBLAS = 1, dashed", 1.0)


def main(out_dir: str, quick: bool = False) -> int:
    import torch

    import ember
    from bench.gpu_timing import ember_on_torch_stream
    from bench.hand_ptx import load_pair
    from bench.report import SASS_NOTE, save, save_svg
    from ember.runtime import cuda
    arch = cuda.context().arch
    mod = cuda.load(ember.compile(ROOT / "kernels_src" / "gemm_bf16.ember", arch=arch, cache=False))
    hand, _ = load_pair("gemm_bf16.ptx", arch)      # kernels_src/baselines/gemm_bf16.ptx, same launch
    triton_mm, triton_sync = _triton_matmul(), _triton_matmul(mma_sync=True)
    shapes = SQUARE[:1] + LAYER[:3] if quick else SQUARE + LAYER
    rows = []
    for (m, n, k) in shapes:
        g = torch.Generator(device="cuda").manual_seed(m + n + k)
        a = torch.randn(m, k, device="cuda", generator=g).to(torch.bfloat16)
        w = torch.randn(n, k, device="cuda", generator=g).to(torch.bfloat16)
        c = torch.empty(m, n, device="cuda", dtype=torch.float32)
        ct = torch.empty(m, n, device="cuda", dtype=torch.float32)
        cs = torch.empty(m, n, device="cuda", dtype=torch.float32)
        ch = torch.empty(m, n, device="cuda", dtype=torch.float32)
        grid = ((n + 127) // 128, (m + 127) // 128)
        launch = mod.gemm_bf16.prepare(a, w, c, m, n, k, grid=grid)
        sides = {"ember": ember_on_torch_stream(launch),
                 "hand": ember_on_torch_stream(hand.prepare(a, w, ch, m, n, k, grid=grid)),
                 "cublas": lambda: torch.mm(a, w.t()),
                 "triton_mma": lambda: triton_sync(a, w, cs, m, n, k),
                 "triton": lambda: triton_mm(a, w, ct, m, n, k)}
        flops = 2.0 * m * n * k
        iters = 10 if flops > 1e12 else 100
        row = {"m": m, "n": n, "k": k}
        # parity on 8 sampled rows against f64
        pick = torch.randint(0, m, (min(m, 8),), device="cuda", generator=g)
        ref = (a[pick].double() @ w.double().t())
        for name, fn in sides.items():
            fn()
            torch.cuda.synchronize()
            out = {"ember": c, "hand": ch, "triton_mma": cs, "triton": ct}.get(name)
            got = (out[pick].double() if out is not None else torch.mm(a, w.t())[pick].double())
            row[name] = {"max_rel_err": float((got - ref).abs().max() / ref.abs().max())}
        for name, t in _in_rounds(sides, iters).items():
            row[name].update({"us": round(t, 2), "tflops": round(flops / t / 1e6, 1)})
        row["ember_vs_cublas"] = round(row["cublas"]["us"] / row["ember"]["us"], 3)
        row["ember_time_vs_hand"] = round(row["ember"]["us"] / row["hand"]["us"], 3)
        row["bitwise_hand"] = bool(torch.equal(c, ch))
        rows.append(row)
        print(row, flush=True)
    interleaved = _interleaved(arch, torch)
    configs = _configs(arch) if not quick else []
    backward = _backward(arch, torch, SQUARE[:1] + LAYER[:3] if quick else SQUARE + LAYER)
    simt = _simt_f32(arch, torch)
    result = {"benchmark": "gemm_ab", "interleaved_4096": interleaved, "configs_4096": configs, "backward": backward, "simt_f32": simt, "date": datetime.date.today().isoformat(),
              "device": torch.cuda.get_device_name(), "arch": arch, "torch": torch.__version__,
              "rows": rows, "note": "ember: gemm_bf16 (128x128 tile, 4 warps of 64x64, BK 64, 3 stages of XOR-swizzled tiles, both copied with cp.async.cg, A's rows past M zero-filled, f32 out); "
                                    "hand: kernels_src/baselines/gemm_bf16.ptx (the same tile and launch); "
                                    "cublas: torch.mm bf16 (bf16 out); triton: 128x128x64, 8 warps, 3 stages (f32 out; wgmma on sm_90); "
                                    "triton mma.sync: the same kernel with DISABLE_MMA_V3 (mma.sync, ldmatrix, cp.async, as Ember), 4 warps"}
    lines = ["# GEMM (bf16 in, f32 accumulate): Ember vs hand PTX vs cuBLAS vs Triton", "",
             f"{result['date']}, {result['device']} ({arch}), torch {torch.__version__}; one run, CUDA graphs; every shape's sides timed in {SHAPE_ROUNDS} interleaved rounds (the median round). "
             + result["note"] + ". " + SASS_NOTE, "",
             ("| M | N | K | Ember TFLOP/s | hand PTX TFLOP/s | cuBLAS TFLOP/s | Triton mma.sync TFLOP/s | "
              "Triton wgmma TFLOP/s | Ember / cuBLAS | Ember time / hand | Ember = hand bitwise | max rel err (E / cuBLAS / T) |"),
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['m']} | {r['n']} | {r['k']} | {r['ember']['tflops']} | {r['hand']['tflops']} | "
                     f"{r['cublas']['tflops']} | {r['triton_mma']['tflops']} | {r['triton']['tflops']} | "
                     f"{r['ember_vs_cublas']:.2f} | "
                     f"{r['ember_time_vs_hand']:.2f} | {r['bitwise_hand']} | {r['ember']['max_rel_err']:.1e} / "
                     f"{r['cublas']['max_rel_err']:.1e} / {r['triton']['max_rel_err']:.1e} |")
    lines += ["", ("SIMT f32 (kernels_src/gemm_f32.ember, 128x128 tile, 8x8 per thread) against its hand-written PTX "
                   "(kernels_src/baselines/gemm_f32.ptx) and cuBLAS f32 without TF32:"),
              "", ("| M = N = K | Ember TFLOP/s | hand PTX TFLOP/s | cuBLAS f32 TFLOP/s | Ember / cuBLAS | "
                   "Ember time / hand | max rel err (Ember / hand) |"), "|---|---|---|---|---|---|---|"]
    lines += [f"| {r['size']} | {r['ember']} | {r['hand']} | {r['cublas']} | {r['ratio']:.2f} | "
              f"{r['time_vs_hand']:.2f} | {r['err']:.1e} / {r['hand_err']:.1e} |" for r in simt]
    lines += ["", f"Forward at 4096^3 in {ROUNDS} interleaved rounds (each side once per round; us per launch by "
                  "round, TFLOP/s and ratio from the median round):", "",
              "| side | us per round | TFLOP/s | / cuBLAS |", "|---|---|---|---|"]
    lines += [f"| {r['side']} | {' / '.join(str(t) for t in r['us'])} | {r['tflops']} | {r['vs_cublas']:.2f} |"
              for r in interleaved]
    lines += ["", ("Backward products of a linear layer y = x w^T (x [M, K], w [N, K]; f32 out): dx = dy w, an "
                   "M x K x N GEMM (gemm_bf16<B_T>), and dw = dy^T x, N x K x M (gemm_bf16<A_T, B_T, COPY_PARTS 2>), "
                   f"against cuBLAS and Triton on mma.sync with the same layouts, {SHAPE_ROUNDS} interleaved rounds:"), "",
              ("| product | M | N | K | Ember TFLOP/s | cuBLAS TFLOP/s | Triton mma.sync TFLOP/s | Ember / cuBLAS | "
               "Ember / Triton | max rel err (Ember / Triton) |"), "|---|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['product']} | {r['m']} | {r['n']} | {r['k']} | {r['ember']} | {r['cublas']} | {r['triton_mma']} | "
              f"{r['ember_vs_cublas']:.2f} | {r['ember_vs_triton']:.2f} | {r['err']:.1e} / {r['triton_err']:.1e} |"
              for r in backward]
    if configs:
        lines += ["", "Tile configurations tried at 4096^3 (const parameters; the default is the first):", "",
                  "| configuration | TFLOP/s | dynamic shared bytes |", "|---|---|---|"]
        lines += [f"| {c['defines']} | {c['tflops']} | {c['dynamic_shared']} |" for c in configs]
    lines += ["", "Plot: gemm_ab.svg (each shape's Ember, hand PTX and Triton (mma.sync, wgmma) throughput over cuBLAS's)."]
    save(out_dir, "gemm_ab", result, "\n".join(lines) + "\n")
    save_svg(out_dir, "gemm_ab", plot(result))
    return 0
