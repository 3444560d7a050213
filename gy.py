"""Temporary GPU experiment (not committed): cp.async cache policy per operand."""
import statistics
from pathlib import Path
import torch
import ember
from ember.runtime import cuda
from bench.gpu_timing import ember_on_torch_stream, time_torch_graph
ROOT = Path(__file__).resolve().parent
arch = cuda.context().arch
VARIANTS = {"A ca, B cg": {}, "both ca": {"B_L1": True}, "both cg": {"A_L1": False}}
progs = {(name, bt): cuda.load(ember.compile(ROOT / "kernels_src/gemm_bf16.ember", arch=arch, cache=False,
                                             defines={**d, **({"B_T": True} if bt else {})})).gemm_bf16
         for name, d in VARIANTS.items() for bt in (False, True)}
keep = []
for (m, n, k, bt) in [(4096, 4096, 4096, False), (8192, 8192, 8192, False), (2048, 14336, 4096, False), (128, 14336, 4096, False),
                      (16, 14336, 4096, False), (1, 14336, 4096, False), (1, 4096, 4096, False), (16, 4096, 14336, False),
                      (4096, 4096, 4096, True), (16, 4096, 4096, True)]:
    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    w = (torch.randn(k, n, device="cuda") if bt else torch.randn(n, k, device="cuda")).to(torch.bfloat16)
    sides = {}
    outs = {}
    for name in VARIANTS:
        c = torch.empty(m, n, device="cuda")
        keep.append(c); outs[name] = c
        sides[name] = ember_on_torch_stream(progs[(name, bt)].prepare(a, w, c, m, n, k, grid=((n + 127) // 128, (m + 127) // 128)))
    sides["cublas"] = (lambda: torch.mm(a, w)) if bt else (lambda: torch.mm(a, w.t()))
    times = {s: [] for s in sides}
    for r in range(3):
        for s in (list(sides) if r % 2 == 0 else list(sides)[::-1]):
            times[s].append(time_torch_graph(sides[s], iters=10 if m * n * k > 1e9 else 100)["median_us"])
    torch.cuda.synchronize()
    same = all(torch.equal(outs[x], outs["A ca, B cg"]) for x in VARIANTS)
    f = 2.0 * m * n * k
    print(f"M {m} N {n} K {k} {'dx' if bt else 'fwd'} bitwise-equal {same}: " + "  ".join(
        f"{s} {f / statistics.median(t) / 1e6:.1f}" for s, t in times.items()), flush=True)
