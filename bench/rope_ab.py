"""RoPE: Ember against the hand-written PTX baseline, on one GPU, same data, same grid.

1. Parity of every side against the f64 reference (ember.reference.rope): cosine and
   max |diff|, at decode positions (1 token up to position 32767), a prefill batch with
   positions up to 32k, and a sweep over every position 0..32767; base 1e6 (Qwen2.5)
   and 1e4.
2. Time per launch (bench.gpu_timing: 20 warm-ups, 5 x 100 launches, CUDA events,
   median) at the decode shape 1x28x128, the prefill shape 4096x32x128 and a prefill
   4x the L2 size, with a device-to-device copy of the same bytes timed in the same run.

Sides: Ember accurate (f64 angle, the default), Ember fast (FAST=true: f32 with the
hardware approximations, like the baseline), Ember accurate compiled with LLVM's full -O3
pipeline instead of the default cleanup, and the baseline
kernels_src/baselines/rope_adjacent_f32_d128.ptx. Writes rope_ab.json and rope_ab.md.
"""

from __future__ import annotations

import datetime
import math
import platform
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
HEAD_DIM = 128
HEADS_PER_THREAD = (4, 8)      # both Ember and the baseline exist for each
SHAPES = {"decode": (1, 28), "prefill": (4096, 32), "prefill-4xL2": (16384, 32)}
DECODE_POSITIONS = (0, 1, 100, 4095, 8191, 16383, 32767)


def build(arch: str, hpt: int):
    import ember
    from ember import KernelInfo
    from ember.runtime import cuda
    src = ROOT / "kernels_src" / "rope.ember"
    sides = {}
    # ember-llvm-full: the default kernel with LLVM's whole -O3 pipeline instead of the
    # cleanup that runs after Ember's passes (docs/passes.md): expected the same speed.
    for name, fast, pipeline in (("ember", False, "cleanup"), ("ember-fast", True, "cleanup"),
                                 ("ember-llvm-full", False, "full")):
        prog = ember.compile(src, arch=arch, defines={"HEAD_DIM": HEAD_DIM, "FAST": fast,
                                                       "HEADS_PER_THREAD": hpt}, llvm_pipeline=pipeline)
        sides[name] = cuda.load(prog).rope
    ember_sig = sides["ember"].info
    fname = f"rope_adjacent_f32_d128_h{hpt}.ptx"
    hand_ptx = (ROOT / "kernels_src" / "baselines" / fname).read_text()
    info = KernelInfo("rope_hand", ember_sig.params, ember_sig.block, {})
    sides["hand-ptx"] = cuda.load_ptx(hand_ptx, {"rope_hand": info}, name=fname).rope_hand
    return sides


def grid(tokens: int, heads: int, hpt: int):
    return (math.ceil(heads / hpt), tokens)


def run_once(kernel, x: np.ndarray, positions: np.ndarray, base: float, hpt: int) -> np.ndarray:
    from ember.runtime.cuda import DeviceArray
    tokens, heads, _ = x.shape
    dx = DeviceArray.from_host(x)
    dp = DeviceArray.from_host(positions)
    kernel(dx, dp, heads, base, grid=grid(tokens, heads, hpt))
    return dx.to_host()


def parity(sides, rng, hpt: int) -> list:
    from ember.reference.rope import parity as score, rope as reference
    cases = []
    for base in (1e6, 1e4):
        for p in DECODE_POSITIONS:
            cases.append(("decode", base, np.array([p], dtype=np.int32), 28))
        cases.append(("prefill", base, np.sort(rng.integers(0, 32768, 4096)).astype(np.int32), 32))
    cases.append(("sweep-all-positions", 1e6, np.arange(32768, dtype=np.int32), 2))
    rows = {}
    for label, base, positions, heads in cases:
        x = rng.standard_normal((len(positions), heads, HEAD_DIM)).astype(np.float32)
        ref = reference(x, positions, float(np.float32(base)))
        for side, kernel in sides.items():
            got = run_once(kernel, x, positions, base, hpt)
            s = score(got, ref)
            key = (label, base, side)
            r = rows.setdefault(key, {"case": label, "base": base, "side": side, "hpt": hpt, "cosine": 1.0,
                                      "max_abs_diff": 0.0, "max_pos": int(positions.max())})
            r["cosine"] = min(r["cosine"], s["cosine"])
            r["max_pos"] = max(r["max_pos"], int(positions.max()))
            if s["max_abs_diff"] >= r["max_abs_diff"]:
                r["max_abs_diff"] = s["max_abs_diff"]
                if label == "sweep-all-positions":
                    diff = np.abs(got.astype(np.float64) - ref).max(axis=(1, 2))
                    r["worst_position"] = int(np.argmax(diff))
    return list(rows.values())


def timing(sides, rng, quick: bool, hpt: int) -> list:
    from ember.runtime.cuda import DeviceArray, Stream, copy_device
    from bench.gpu_timing import time_per_launch
    stream = Stream()
    kw = {"warmup": 5, "rounds": 3, "iters": 20} if quick else {}
    out = []
    for shape, (tokens, heads) in SHAPES.items():
        x = rng.standard_normal((tokens, heads, HEAD_DIM)).astype(np.float32)
        positions = (np.arange(tokens, dtype=np.int32) if tokens > 1 else np.array([31999], dtype=np.int32))
        nbytes = x.nbytes
        row = {"shape": f"{tokens}x{heads}x{HEAD_DIM}", "name": shape, "hpt": hpt, "bytes_moved": 2 * nbytes}
        for side, kernel in sides.items():
            dx, dp = DeviceArray.from_host(x), DeviceArray.from_host(positions)
            launch = kernel.prepare(dx, dp, heads, 1e6, grid=grid(tokens, heads, hpt))
            t = time_per_launch(launch, stream, **kw)
            row[side] = {"us": t["median_us"], "rounds_us": t["rounds_us"],
                         "TBps": 2 * nbytes / (t["median_us"] * 1e-6) / 1e12}
        src, dst = DeviceArray.from_host(x), DeviceArray((tokens, heads, HEAD_DIM), np.float32)
        t = time_per_launch(lambda s: copy_device(dst, src, s), stream, **kw)
        row["copy"] = {"us": t["median_us"], "rounds_us": t["rounds_us"],
                       "TBps": 2 * nbytes / (t["median_us"] * 1e-6) / 1e12}
        for side in sides:
            row[side]["vs_hand"] = row[side]["us"] / row["hand-ptx"]["us"]
            row[side]["of_copy_bw"] = row[side]["TBps"] / row["copy"]["TBps"]
        out.append(row)
    return out


def markdown(result: dict) -> str:
    from bench.report import SASS_NOTE
    lines = ["# RoPE: Ember vs hand-written PTX", "",
             f"Device: {result['device']} ({result['arch']}), driver {result['driver']}, {result['date']}. "
             f"Ember {result['ember']}, {result['llvm']}. HEAD_DIM {HEAD_DIM}, base 1e6 for timing; "
             "HPT = heads per thread (both sides use the same launch shape). " + SASS_NOTE, "",
             "## Time per launch (median of 5 x 100, CUDA events, graph-replayed)", "",
             "| HPT | shape | Ember | Ember fast | hand PTX | copy | Ember/hand | fast/hand | Ember % of copy BW "
             "| Ember, LLVM full -O3 |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in result["timing"]:
        lines.append(
            f"| {r['hpt']} | {r['name']} {r['shape']} | {r['ember']['us']:.2f} us ({r['ember']['TBps']:.2f} TB/s) "
            f"| {r['ember-fast']['us']:.2f} us | {r['hand-ptx']['us']:.2f} us ({r['hand-ptx']['TBps']:.2f} TB/s) "
            f"| {r['copy']['us']:.2f} us ({r['copy']['TBps']:.2f} TB/s) | {r['ember']['vs_hand']:.3f} "
            f"| {r['ember-fast']['vs_hand']:.3f} | {100 * r['ember']['of_copy_bw']:.1f}% "
            f"| {r['ember-llvm-full']['us']:.2f} us |")
    lines += ["", "## Parity against the f64 reference", "",
              "| HPT | case | base | side | cosine | max abs diff |", "|---|---|---|---|---|---|"]
    for r in result["parity"]:
        extra = f" (worst at position {r['worst_position']})" if "worst_position" in r else ""
        lines.append(f"| {r['hpt']} | {r['case']} (positions up to {r['max_pos']}) | {r['base']:g} | {r['side']} "
                     f"| {r['cosine']:.9f} | {r['max_abs_diff']:.3g}{extra} |")
    return "\n".join(lines) + "\n"


def main(out_dir: str, quick: bool = False) -> int:
    import llvmlite.binding as llvm

    import ember
    from ember.runtime import cuda
    from cuda.bindings import driver as drv
    ctx = cuda.context()
    rng = np.random.default_rng(2026)
    result = {
        "benchmark": "rope_ab", "device": ctx.name, "arch": ctx.arch,
        "driver": drv.cuDriverGetVersion()[1], "date": datetime.date.today().isoformat(),
        "ember": ember.__version__, "llvm": "LLVM " + ".".join(map(str, llvm.llvm_version_info)),
        "python": platform.python_version(), "head_dim": HEAD_DIM, "heads_per_thread": list(HEADS_PER_THREAD),
        "parity": [], "timing": [],
    }
    for hpt in HEADS_PER_THREAD:
        sides = build(ctx.arch, hpt)
        result["parity"] += parity(sides, rng, hpt)
        result["timing"] += timing(sides, rng, quick, hpt)
    from bench.report import save
    save(out_dir, "rope_ab", result, markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "bench/results"))
