"""Temporary GPU experiment (not committed): GEMM bottleneck analysis."""
import json, os, statistics, sys
from pathlib import Path
import torch
import triton, triton.language as tl
import ember
from ember.runtime import cuda
from bench.gpu_timing import ember_on_torch_stream, time_torch_graph

ROOT = Path(__file__).resolve().parent
M = N = K = int(os.environ.get("GX_SIZE", "4096"))

def make_tri():
    @triton.jit
    def mm_tri(a, w, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pid_m, pid_n = tl.program_id(1), tl.program_id(0)
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            ta = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :], mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
            tw = tl.load(w + rn[None, :] * K + (k0 + rk)[:, None], mask=(rn[None, :] < N) & ((k0 + rk)[:, None] < K), other=0.0)
            acc += tl.dot(ta, tw)
        tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
    return mm_tri

g = torch.Generator(device="cuda").manual_seed(1)
a = torch.randn(M, K, device="cuda", generator=g).to(torch.bfloat16)
w = torch.randn(N, K, device="cuda", generator=g).to(torch.bfloat16)
arch = cuda.context().arch
keep = []

def ember_side(defines, src="gemm_bf16.ember"):
    prog = ember.compile(ROOT / "kernels_src" / src, arch=arch, defines=defines, cache=False)
    info = prog.kernels["gemm_bf16"]
    bm, bn = info.consts["BM"], info.consts["BN"]
    c = torch.empty(M, N, device="cuda", dtype=torch.float32)
    keep.append(c)
    launch = cuda.load(prog).gemm_bf16.prepare(a, w, c, M, N, K, grid=((N + bn - 1) // bn, (M + bm - 1) // bm))
    return ember_on_torch_stream(launch), c

def tri_side(mma_sync, warps=8, stages=3, bm=128, bn=128, bk=64):
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    if mma_sync:
        os.environ["DISABLE_MMA_V3"] = "1"
    else:
        os.environ.pop("DISABLE_MMA_V3", None)
    fn = make_tri()
    c = torch.empty(M, N, device="cuda", dtype=torch.float32)
    keep.append(c)
    compiled = fn[(triton.cdiv(N, bn), triton.cdiv(M, bm))](a, w, c, M, N, K, BM=bm, BN=bn, BK=bk, num_warps=warps, num_stages=stages)
    torch.cuda.synchronize()
    ptx = compiled.asm["ptx"]
    info = {"wgmma": ptx.count("wgmma.mma_async"), "mma.sync": ptx.count("mma.sync"), "regs": compiled.n_regs,
            "spills": compiled.n_spills, "shared": compiled.metadata.shared}
    out = os.environ.get("OUT")
    if out:
        tag = f"tri_{'mma' if mma_sync else 'wg'}_{warps}_{stages}_{bm}x{bn}x{bk}"
        Path(out, tag + ".cubin").write_bytes(compiled.asm["cubin"])
    return (lambda: fn[(triton.cdiv(N, bn), triton.cdiv(M, bm))](a, w, c, M, N, K, BM=bm, BN=bn, BK=bk, num_warps=warps, num_stages=stages)), c, info

def sides():
    s, infos = {}, {}
    s["ember"], _ = ember_side({})
    s["ember BN256"], _ = ember_side({"BN": 256, "WARPS_N": 4})
    s["ember BM256"], _ = ember_side({"BM": 256, "WARPS_M": 4})
    s["ember cg"], _ = ember_side({}, "gemm_bf16_cg.ember")
    s["ember cg BN256"], _ = ember_side({"BN": 256, "WARPS_N": 4}, "gemm_bf16_cg.ember")
    s["ember cg 2 stages"], _ = ember_side({"STAGES": 2}, "gemm_bf16_cg.ember")
    s["ember cg parts2"], _ = ember_side({"COPY_PARTS": 2}, "gemm_bf16_cg.ember")
    for name, kw in (("tri mma 4w3s", dict(mma_sync=True, warps=4)),):
        try:
            s[name], _, infos[name] = tri_side(**kw)
        except Exception as e:
            infos[name] = repr(e)[:300]
    s["cublas"] = lambda: torch.mm(a, w.t())
    return s, infos

mode = sys.argv[1]
if mode == "one":
    which = sys.argv[2]
    if which.startswith("ember"):
        fn, _ = ember_side(json.loads(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else "gemm_bf16.ember")
    elif which == "tri_mma":
        fn, _, _ = tri_side(True)
    elif which == "tri_wg":
        fn, _, _ = tri_side(False)
    else:
        fn = lambda: torch.mm(a, w.t())
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
else:
    s, infos = sides()
    print(json.dumps(infos, indent=1), flush=True)
    rounds = {k: [] for k in s}
    for r in range(4):
        for name in (list(s) if r % 2 == 0 else list(s)[::-1]):
            rounds[name].append(time_torch_graph(s[name], iters=20)["median_us"])
    cub = statistics.median(rounds["cublas"])
    flops = 2.0 * M * N * K
    for name, ts in rounds.items():
        med = statistics.median(ts)
        print(f"{name:24s} {flops / med / 1e6:7.1f} TFLOP/s  {cub / med:5.3f} of cuBLAS  rounds {[round(t, 1) for t in ts]}", flush=True)
