"""The Hopper GEMM at decode shapes (`python -m bench hopper_decode`): y = x w^T with M <= 16
rows of activations against Llama-3-8B's weight matrices, where the time is the weights'
bytes (M x N x K flops are nothing). kernels_src/gemm_wgmma.ember's tile configurations
(the default 128 x 256 tiles, and one consumer warpgroup with narrow tiles and deep rings:
N / BN blocks stream the weights, each with STAGES slices in flight) beside cuBLAS (torch.mm)
and the Triton matmul of bench.gemm_ab, in interleaved rounds, each side rotating among
copies of the weights that together exceed the L2 (a 32 MB matrix would otherwise be read
from the 50 MB L2 after its first launch). The weights' bytes per second are set against
the copy ceiling measured in the same run. Every configuration's output is compared with
the default's, bit for bit: the tile does not enter the sums (tests/gpu/test_gemm_wgmma_gpu.py).
Writes gemm_wgmma_decode.json / .md / .svg (the PTX through nvJitLink)."""

from __future__ import annotations

import datetime
import math

SHAPES = [(m, n, k) for (n, k) in ((4096, 4096), (14336, 4096), (4096, 14336)) for m in (1, 8, 16)]
# {name: -D defines}; the default first (the bitwise comparisons are against it). A name
# starting "swap" runs the kernel on the swapped operands, y^T = w x^T (the weights fill the
# 64-row wgmma operand, the M activation rows a BN-column tile), C_T storing y itself.
CONFIGS = {"default": {},
           "C1 BN32 S16": {"CONSUMERS": 1, "BN": 32, "STAGES": 16},
           "C1 BN128 S8": {"CONSUMERS": 1, "BN": 128, "STAGES": 8},
           "swap C1 BN16 S12": {"C_T": True, "CONSUMERS": 1, "BN": 16, "STAGES": 12},
           "swap C1 BN16 S16": {"C_T": True, "CONSUMERS": 1, "BN": 16, "STAGES": 16},
           "swap C1 BN16 S20": {"C_T": True, "CONSUMERS": 1, "BN": 16, "STAGES": 20},
           "swap C2 BN16 S10": {"C_T": True, "CONSUMERS": 2, "BN": 16, "STAGES": 10},
           "swap C1 BN8 S16": {"C_T": True, "CONSUMERS": 1, "BN": 8, "STAGES": 16},
           # the swap inside the kernel, from the forward's arguments: what the tuned table may choose
           "SWAP C1 BN16 S16": {"SWAP": True, "CONSUMERS": 1, "BN": 16, "STAGES": 16}}
TUNED = ("the tuned table's configuration for this GPU at the bucket nearest the shape "
         "(kernels_src/tuned/gemm_wgmma.json), through its SASS path")
ROTATE_BYTES = 200e6            # the weights each side cycles through: four times the L2


def _tuned(m: int, n: int, k: int) -> tuple:
    """(configuration, SASS path) of the tuned table's entry for this GPU at the bucket m x n x
    k, else at the bucket nearest its size, or the defaults through nvJitLink."""
    from ember.ops.kernels import pick_entry
    from ember.runtime import cuda
    from ember.tuning import table as T
    from ember.tuning.workloads import source_of
    table = T.read(T.table_path("gemm_wgmma"))
    ctx = cuda.context()
    key = T.device_key(ctx.name, ctx.arch)
    fresh = T.current(table, source_of("gemm_wgmma"))
    exact = table["devices"].get(key, {}).get(f"{m}x{n}x{k}") if fresh else None
    entry = exact if exact and exact.get("config") is not None else pick_entry(table if fresh else None, key, {},
                                                                                m * n * k)
    return ({}, "nvjitlink") if entry is None else (dict(entry["config"]), T.entry_sass_path(table, entry))


def _rotating(fns: list):
    """One function calling each of `fns` in turn (captured into a graph call by call)."""
    state = {"i": 0}

    def fn():
        fns[state["i"] % len(fns)]()
        state["i"] += 1
    return fn


def run_shape(prepared: dict, m: int, n: int, k: int, copy_tbps: float, quick: bool) -> dict:
    import torch

    from bench.gemm_ab import _in_rounds, _triton_matmul
    from bench.gpu_timing import ember_on_torch_stream
    g = torch.Generator(device="cuda").manual_seed(m * 7 + n + k)
    copies = max(1, math.ceil(ROTATE_BYTES / (2 * n * k)))
    ws = [torch.randn(n, k, device="cuda", generator=g).to(torch.bfloat16) for _ in range(copies)]
    a = torch.randn(m, k, device="cuda", generator=g).to(torch.bfloat16)
    outs = {name: torch.empty(m, n, device="cuda") for name in (*prepared, "triton")}
    sides = {name: _rotating([ember_on_torch_stream(prep(w, a, outs[name], n, m, k) if name.startswith("swap")
                                                    else prep(a, w, outs[name], m, n, k)) for w in ws])
             for name, prep in prepared.items()}
    triton_mm = _triton_matmul()
    sides["cublas"] = _rotating([lambda w=w: torch.mm(a, w.t()) for w in ws])
    sides["triton"] = _rotating([lambda w=w: triton_mm(a, w, outs["triton"], m, n, k) for w in ws])
    row = {"m": m, "n": n, "k": k, "weight_copies": copies, "sides": {}}
    ref = a.double() @ ws[0].double().t()
    for name in (*prepared, "triton"):
        outs[name].fill_(float("nan"))
        sides[name]()                           # the first call uses ws[0]
        torch.cuda.synchronize()
        err = float((outs[name].double() - ref).abs().max() / ref.abs().max())
        row["sides"][name] = {"max_rel_err": err}
        if name in prepared:
            row["sides"][name]["same_bits_as_default"] = bool(torch.equal(outs[name], outs["default"]))
    row["sides"]["cublas"] = {}
    for name, t in _in_rounds(sides, 20 if quick else 100).items():
        tbps = 2.0 * n * k / t / 1e6
        row["sides"][name].update({"us": round(t, 2), "weights_TBps": round(tbps, 3),
                                   "of_copy": round(tbps / copy_tbps, 3)})
    print(row, flush=True)
    return row


def main(out_dir: str, quick: bool = False) -> int:
    import torch

    from bench.gemm_wgmma_ab import _gemm
    from bench.gpu_timing import copy_ceiling
    from bench.report import for_device, save, save_svg
    from ember.runtime import cuda
    arch = cuda.context().arch
    if arch not in ("sm_90", "sm_90a"):
        print(f"bench hopper_decode: needs an sm_90 GPU, this is {arch}")
        return 2
    copy_tbps = copy_ceiling(256 << 20)["TBps"]
    # the same bytes moved as a shape's weights (half read, half written), rotating past the L2
    same_bytes = {n * k: copy_ceiling(n * k, rotate_bytes=ROTATE_BYTES)["TBps"] for (_, n, k) in SHAPES}
    prepared = {name: _gemm("sm_90a", d) for name, d in CONFIGS.items()}
    rows = []
    for (m, n, k) in (SHAPES[:3] if quick else SHAPES):
        config, path = _tuned(m, n, k)
        rows.append(run_shape({**prepared, "tuned": _gemm("sm_90a", config, path)}, m, n, k, copy_tbps, quick))
        rows[-1]["tuned"] = {"config": config, "sass_path": path}
    for r in rows:
        r["same_bytes_copy_TBps"] = same_bytes[r["n"] * r["k"]]
    result = {"benchmark": "gemm_wgmma_decode", "date": datetime.date.today().isoformat(),
              "device": torch.cuda.get_device_name(), "arch": arch, "torch": torch.__version__, "sass": "nvJitLink",
              "copy_TBps": copy_tbps, "configs": {**CONFIGS, "tuned": TUNED}, "rows": rows}
    name = for_device("gemm_wgmma_decode", result["device"])
    save(out_dir, name, result, markdown(result))
    save_svg(out_dir, name, plot(result))
    return 0


def markdown(result: dict) -> str:
    names = [*result["configs"], "cublas", "triton"]
    lines = ["# Hopper GEMM at decode shapes: the weights' bandwidth", "",
             f"{result['date']}, {result['device']} ({result['arch']}), torch {result['torch']}, Ember's PTX through "
             f"{result['sass']}; copy ceiling {result['copy_TBps']:.2f} TB/s (same run). y = x w^T, x [M, K] bf16, "
             "w [N, K] bf16, f32 out (cuBLAS: bf16 out); CUDA graphs, every shape's sides in interleaved rounds "
             "(the median round), each side cycling through copies of w that together exceed the L2. "
             "Configurations of kernels_src/gemm_wgmma.ember (`-D`): "
             + "; ".join(f"{name}: {d or 'the defaults (128 x 256 tiles, 4 stages)'}"
                         for name, d in result["configs"].items()) + ".", "",
             "Weights TB/s (fraction of the copy ceiling):", "",
             "| M | N | K | same-bytes copy TB/s | " + " | ".join(names) + " |",
             "|---|---|---|---|" + "---|" * len(names)]
    for r in result["rows"]:
        cells = [f"{r['sides'][s]['weights_TBps']:.2f} ({r['sides'][s]['of_copy']:.2f})" for s in names]
        lines.append(f"| {r['m']} | {r['n']} | {r['k']} | {r['same_bytes_copy_TBps']:.2f} | " + " | ".join(cells) + " |")
    same = all(r["sides"][s]["same_bits_as_default"] for r in result["rows"] for s in result["configs"])
    worst = max(r["sides"][s]["max_rel_err"] for r in result["rows"] for s in result["configs"])
    lines += ["", f"Every configuration's output bitwise equal to the default's at every shape: {same}. "
                  f"Largest error against the f64 product (normwise): {worst:.1e}."]
    if all("tuned" in r for r in result["rows"]):
        lines += ["", "The tuned side's configuration per shape: " + "; ".join(
            f"{r['m']} x {r['n']} x {r['k']}: {r['tuned']['config'] or 'the defaults'} ({r['tuned']['sass_path']})"
            for r in result["rows"]) + "."]
    return "\n".join(lines) + "\n"


def plot(result: dict) -> str:
    from bench.report import bar_chart_svg
    names = [*result["configs"], "cublas", "triton"]
    groups = [(f"M {r['m']}, N {r['n']}, K {r['k']}", [(s, r["sides"][s]["of_copy"]) for s in names])
              for r in result["rows"]]
    return bar_chart_svg(f"bf16 GEMM at decode shapes, {result['device']}, {result['date']}: weights' bytes / copy ceiling",
                         groups, "copy ceiling = 1, dashed", 1.0)
