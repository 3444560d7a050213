"""The Q6_K GEMVs on the GPU against the copy ceiling and torch, same data, same GPU, one run:
kernels_src/q6k_gemv.ember (f32 activations) and q6k_dp4a.ember (dp4a on Q8_1 activations
and on three digits a value, the activations a decoder layer makes; `quarters`: QUARTERS, a
lane's 8 weights of four quarters, `pairs`: 16 of two; `staged`: STAGED, the warp's
super-blocks copied whole into shared memory (cp.async, 8-byte pieces) and read there; parity against the f64 product with
the values they stand for: Q8_1's, and x itself for the digits).

Shapes N x K: Llama-3-8B's tensors that a Q4_K_M file keeps in 6 bits - the FFN down
projection (4096 x 14336) and the attention value projection (1024 x 4096) - and the
transposed FFN shape (14336 x 4096); M = 1 and 8 activation rows; ROWS (output rows per
warp) 1 and 2. Weights rotate among copies (>= 200 MB in all) so each launch reads DRAM;
`of copy` is weight bytes per second against bench.gpu_timing.copy_ceiling of the same
bytes in the same run. torch bf16 dense: cuBLAS on the dequantised weights in bf16 (2.4x
the bytes: a reference point, not the same operation). Parity: cosine and max |diff| /
max |ref| against the f64 product of the dequantised weights (ember.reference.q6k).
There is no hand-written PTX baseline of Q6_K (the seeds have none). The PTX becomes SASS
through nvJitLink (Ember's runtime). Writes q6k_ab.json / .md."""

from __future__ import annotations

import datetime
import itertools
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHAPES = [(4096, 14336), (14336, 4096), (1024, 4096)]
MS = [1, 8]
ROWS = (1, 2)
WARPS = 4
ROTATE_BYTES = 200e6


def run_shape(n: int, k: int, arch: str, quick: bool, rng) -> list:
    import torch

    import ember
    from bench.gpu_timing import ember_on_torch_stream
    from bench.q4k_ab import rotating, weight_sides
    from ember.reference import q4k as R4
    from ember.reference import q6k as R
    from ember.runtime import cuda
    w_host = R.random_q6k(rng, n, k)
    w_f64 = R.dequantize_q6k(w_host)
    ws, dense, out, record, _ = weight_sides(w_host, w_f64, n, k, quick)

    for m in MS:
        x_host = (rng.standard_normal((m, k)) * rng.uniform(0.5, 2.0, (m, 1))).astype(np.float32)
        x = torch.from_numpy(x_host).cuda()
        ref = x_host.astype(np.float64) @ w_f64.T
        y = torch.zeros(m, n, device="cuda")
        for rows in ROWS:
            mod = cuda.load(ember.compile(ROOT / "kernels_src" / "q6k_gemv.ember", arch=arch,
                                          defines={"M": m, "WARPS": WARPS, "ROWS": rows}))
            grid = (n + WARPS * rows - 1) // (WARPS * rows)
            launches = [ember_on_torch_stream(mod.q6k_gemv.prepare(wi.view(torch.uint16), x, y, n, k, grid=grid))
                        for wi in ws]
            record(f"ember f32 (ROWS {rows})", m, rotating(launches), lambda y=y: y, ref)
        # the DP4A kernels on the activations a decoder layer makes (quantized on the host
        # as quantize_q8_1 / quantize_digits store them)
        q8 = R4.quantize_q8_1(x_host)
        digits_words = R4.split_digits(*R4.quantize_digits(x_host))
        for label, kern, (aq, ads), want in (("dp4a Q8_1", "q6k_q8_gemv", R4.split_q8_1(q8), R.gemv_q8_1(w_host, q8)),
                                             ("dp4a digits", "q6k_digits_gemv", digits_words, ref)):
            aq_d, ads_d = (torch.from_numpy(np.ascontiguousarray(a).view(np.int32)).cuda().view(torch.uint32)
                           if a.dtype == np.uint32 else torch.from_numpy(a).cuda() for a in (aq, ads))
            for quarters, rows, staged in itertools.product((True, False), ROWS, (False, True)):
                defines = {"M": m, "WARPS": WARPS, "ROWS": rows, "QUARTERS": quarters, "STAGED": staged}
                mod = cuda.load(ember.compile(ROOT / "kernels_src" / "q6k_dp4a.ember", arch=arch, defines=defines,
                                              kernels=[kern]))
                grid = (n + WARPS * rows - 1) // (WARPS * rows)
                launches = [ember_on_torch_stream(getattr(mod, kern).prepare(wi.view(torch.uint16), aq_d, ads_d, y,
                                                                             n, k, grid=grid)) for wi in ws]
                share = ("quarters" if quarters else "pairs") + (", staged" if staged else "")
                record(f"ember {label} (ROWS {rows}, {share})", m, rotating(launches), lambda y=y: y, want)
        xb = x.to(torch.bfloat16)
        yb = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        record("torch bf16 dense (cuBLAS)", m, lambda: torch.matmul(xb, dense.T, out=yb), lambda: yb, ref)
    return out


def markdown(result: dict) -> str:
    from bench.q4k_ab import weight_table
    lines = ["# Q6_K GEMV: Ember vs the copy ceiling and torch", "",
             f"Device: {result['device']}, {result['date']}; PTX to SASS by nvJitLink. One run; median of 5 "
             "replays of a CUDA graph of 100 launches; weights rotate among copies (>= 200 MB). `of copy`: "
             "weight bytes per second against the copy ceiling (read + written bytes per second of the fastest "
             "of a memcpy and a copy kernel moving the weight bytes, same run).", "",
             *weight_table(result["rows"])]
    return "\n".join(lines) + "\n"


def main(out_dir: str, quick: bool = False) -> int:
    import torch
    from ember.runtime import cuda
    ctx = cuda.context()
    rng = np.random.default_rng(2026)
    result = {"benchmark": "q6k_ab", "device": torch.cuda.get_device_name(), "arch": ctx.arch,
              "date": datetime.date.today().isoformat(), "rows": []}
    for n, k in SHAPES:
        result["rows"] += run_shape(n, k, ctx.arch, quick, rng)
    from bench.report import save
    save(out_dir, "q6k_ab", result, markdown(result))
    print(markdown(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "bench/results"))
