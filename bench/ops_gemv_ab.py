"""ember.ops.q4k_gemv on f32 activations: quantized to digits by the op and run on the digits
GEMV (the default, ember.ops.gemv.DIGITS_FOR_F32) against q4k_gemv.ember's f32 products, and
the Q8_1 path (quantize_q8_1 + the DP4A or tensor-core GEMV) beside them - each side the whole
op as a decode loop calls it (its launches in a CUDA graph, weights rotating among copies
beyond the L2), against the copy ceiling of the weight bytes in the same run. Parity: each
side against the f64 product of the dequantised weights (max |diff| / max |ref|).
Writes ops_gemv_ab.json / .md (ops_gemv_ab_h200.* on an H200)."""

from __future__ import annotations

import datetime
import sys

SHAPES = [(1, 14336, 4096), (1, 4096, 14336), (4, 14336, 4096), (8, 14336, 4096), (8, 4096, 14336)]
ROTATE_BYTES = 256 << 20


def _side(ops, ws, xs, outs, digits: bool, q8: bool):
    """A function enqueueing one call (the next weight copy each time, into its own output)."""
    from ember.ops import gemv
    state = {"i": 0}
    q8s = [ops.Q8Activations.empty(x, x.shape[0], x.shape[1]) for x in xs] if q8 else None

    def call():
        i = state["i"] % len(ws)
        state["i"] += 1
        gemv.DIGITS_FOR_F32[0] = digits
        try:
            x = ops.quantize_q8_1(xs[i], out=q8s[i]) if q8 else xs[i]
            ops.q4k_gemv(ws[i], x, out=outs[i])
        finally:
            gemv.DIGITS_FOR_F32[0] = True
    return call


def run_shape(m: int, n: int, k: int, ceiling_tbps: float, quick: bool) -> list:
    import numpy as np
    import torch

    from bench.gpu_timing import time_torch_graph
    from ember import ops
    from ember.reference import q4k as Q
    rng = np.random.default_rng(m * n + k)
    w0 = Q.model_like_q4k(rng, n, k, k ** -0.5)
    wbytes = w0.nbytes
    copies = max(2, -(-ROTATE_BYTES // wbytes))
    ws = [torch.from_numpy(w0).cuda() for _ in range(copies)]
    x0 = rng.standard_normal((m, k)).astype(np.float32)
    xs = [torch.from_numpy(x0).cuda() for _ in range(copies)]
    exact = Q.gemv(w0, x0)
    rows = []
    for label, digits, q8 in (("f32 x as digits (default)", True, False), ("f32 x, q4k_gemv.ember", False, False),
                              ("Q8_1 (quantize_q8_1 + GEMV)", True, True)):
        outs = [torch.empty(m, n, device="cuda") for _ in range(copies)]
        fn = _side(ops, ws, xs, outs, digits, q8)
        before = ops.plan.launched()
        fn()
        launches = ops.plan.launched() - before
        torch.cuda.synchronize()
        got = outs[0].cpu().numpy().astype(np.float64)
        us = time_torch_graph(fn, iters=20 if quick else 100)["median_us"]
        tbps = wbytes / (us * 1e-6) / 1e12
        rows.append({"m": m, "n": n, "k": k, "side": label, "launches": launches, "us": round(us, 2),
                     "weight_TBps": round(tbps, 3), "of_copy": round(tbps / ceiling_tbps, 3),
                     "max_rel_diff": float(np.abs(got - exact).max() / np.abs(exact).max())})
        print(rows[-1], flush=True)
    ops.plan.clear()
    return rows


def markdown(result: dict) -> str:
    from bench.report import SASS_NOTE
    lines = ["# ember.ops.q4k_gemv on f32 activations: as digits, as f32 products, and Q8_1", "",
             f"Device: {result['device']}, {result['date']}, torch {result['torch']}; copy ceiling "
             f"{result['copy_TBps']:.2f} TB/s (read + written, same run). Each side is the whole op as a decode loop "
             "calls it - its launches (launches column) in a CUDA graph of 100 calls, median of 5, weights rotating "
             "among copies beyond the L2; `of copy`: weight bytes per second over the copy ceiling; max rel diff: "
             "against the f64 product of the dequantised weights and the f32 activations. " + SASS_NOTE, "",
             "| M x N x K | side | launches | us | weight TB/s | of copy | max rel diff |",
             "|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        lines.append(f"| {r['m']}x{r['n']}x{r['k']} | {r['side']} | {r['launches']} | {r['us']} | {r['weight_TBps']} | "
                     f"{r['of_copy']:.0%} | {r['max_rel_diff']:.1e} |")
    return "\n".join(lines) + "\n"


def main(out_dir: str, quick: bool = False) -> int:
    import warnings

    import torch

    from bench.gpu_timing import copy_ceiling
    from bench.report import save
    warnings.simplefilter("ignore")
    ceiling = copy_ceiling(256 << 20)["TBps"]
    rows = []
    for m, n, k in SHAPES:
        rows += run_shape(m, n, k, ceiling, quick)
    result = {"device": torch.cuda.get_device_name(), "date": datetime.date.today().isoformat(),
              "torch": torch.__version__, "copy_TBps": ceiling, "rows": rows}
    save(out_dir, "ops_gemv_ab", result, markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "bench/results"))
