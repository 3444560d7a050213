"""RMSNorm and residual-add + RMSNorm on the GPU: Ember against Triton, liger-kernel and
torch, same data, same GPU, one run (bench.gpu_timing.time_torch_graph: 20 warm-ups,
5 replays of a CUDA graph of 100 launches, median).

Ember: `rmsnorm_rows` / `add_rmsnorm_rows` (kernels_src/rmsnorm.ember, the row in
registers) at every BLOCK in BLOCKS and VEC in vecs() (the table reports each and the
best: the const parameters are the per-shape layout choice); both as ember.ops runs them
(the shipped tuned table's configuration and SASS path for this GPU, built for a
programmatic launch on sm_90); the hand-written PTX baseline for f32 rows of 4096
(kernels_src/baselines/rmsnorm_f32_4096.ptx); and the general `rmsnorm` (runtime row
length, two reads of the row). Parity of every side against the f64 reference first
(cosine, max relative error). The ceiling is bench.gpu_timing.copy_ceiling of the same
bytes. Shapes from the issue: 16384x4096, 4096x8192 (inputs 2-5x the L2), decode rows
1x3584 and 1x4096; f32 and bf16.
Writes rmsnorm_ab.json / .md."""

from __future__ import annotations

import datetime
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHAPES = [(16384, 4096), (4096, 8192), (1, 3584), (1, 4096)]
DTYPES = ["f32", "bf16"]
BLOCKS = [128, 256, 512, 1024]
EPS = 1e-6


def _torch_dtype(t):
    import torch
    return {"f32": torch.float32, "bf16": torch.bfloat16}[t]


def vecs(t: str) -> tuple:
    """Elements per access to try: 16 bytes, and for 16-bit data also 8 bytes (measured
    faster for the plain RMSNorm in bf16, slower for the residual add)."""
    return (8, 4) if t in ("f16", "bf16") else (4,)


def ember_kernels(t: str, cols: int, block: int, arch: str, vec: int = 4):
    import ember
    from ember.runtime import cuda
    if cols % vec or (cols // vec) < block // 4:
        return None                       # too few chunks for this many threads
    prog = ember.compile(ROOT / "kernels_src" / "rmsnorm.ember", arch=arch,
                         defines={"T": t, "COLS": cols, "BLOCK": block, "VEC": vec})
    return cuda.load(prog)


def _ops_kernels(t: str, rows: int, cols: int) -> list:
    """rmsnorm_rows and add_rmsnorm_rows as ember.ops runs them on this GPU, each with a
    label: its shipped tuned table's entry for the type and row length nearest this size
    (configuration and SASS path), built for a programmatic launch on sm_90."""
    from ember.ops.norm import rows_kernel
    defines = {"T": t, "COLS": cols}
    out = []
    for add in (False, True):
        k, values = rows_kernel(defines, rows, cols, 0, add)
        label = " ".join(f"{n}={v}" for n, v in values.items() if n not in defines) or "defaults"
        out.append((k, f"{label}, {k.module.sass_path}"))
    return out


def parity(got, ref) -> dict:
    g = got.double().cpu().numpy().ravel()
    r = ref.ravel()
    cos = float(g @ r / (np.linalg.norm(g) * np.linalg.norm(r)))
    return {"cosine": cos, "max_rel": float((np.abs(g - r) / np.maximum(np.abs(r), 1.0)).max())}


def run_shape(t: str, rows: int, cols: int, arch: str, quick: bool) -> list:
    import torch
    from bench import triton_kernels as TK
    from bench.gpu_timing import copy_ceiling, ember_on_torch_stream, time_torch_graph
    from ember.reference.rmsnorm import rmsnorm as ref_rmsnorm
    kw = {"warmup": 5, "rounds": 3, "iters": 20} if quick else {}
    dt = _torch_dtype(t)
    gen = torch.Generator(device="cuda").manual_seed(rows * 7 + cols)
    x = (torch.randn(rows, cols, device="cuda", generator=gen) * 3).to(dt)
    r = torch.randn(rows, cols, device="cuda", generator=gen).to(dt)
    gamma = (torch.rand(cols, device="cuda", generator=gen) + 0.5).to(dt)
    y = torch.empty_like(x)
    ref = ref_rmsnorm(x.double().cpu().numpy(), gamma.double().cpu().numpy(), EPS)
    h = (x.float() + r.float()).to(dt)
    ref_add = ref_rmsnorm(h.double().cpu().numpy(), gamma.double().cpu().numpy(), EPS)
    nbytes = x.numel() * x.element_size()
    out = []

    def side(op, name, fn, check, reset=None, timed=None):
        """fn() writes y (checked); timed() is what is timed (default fn)."""
        y.zero_()
        if reset:
            reset()
        fn()
        torch.cuda.synchronize()
        p = parity(y, ref if op == "rmsnorm" else ref_add)
        if check is not None:
            p.update(check())
        t_ = time_torch_graph(timed or fn, **kw)
        moved = 2 * nbytes if op == "rmsnorm" else 4 * nbytes      # add: read x, r; write r, y
        out.append({"op": op, "dtype": t, "shape": f"{rows}x{cols}", "side": name, "us": t_["median_us"],
                    "rounds_us": t_["rounds_us"], "TBps": moved / (t_["median_us"] * 1e-6) / 1e12, **p})

    rr = r.clone()

    def reset_r():
        rr.copy_(r)

    def check_h():
        return {"h_exact": bool(torch.equal(rr, h))}

    for vec in vecs(t):
        for block in BLOCKS:
            mod = ember_kernels(t, cols, block, arch, vec)
            if mod is None:
                continue
            la = mod.rmsnorm_rows.prepare(x, gamma, y, EPS, grid=rows)
            side("rmsnorm", f"ember B{block} V{vec}", ember_on_torch_stream(la), None)
            lb = mod.add_rmsnorm_rows.prepare(x, rr, gamma, y, EPS, grid=rows)
            side("add_rmsnorm", f"ember B{block} V{vec}", ember_on_torch_stream(lb), check_h, reset_r)
    import ember
    from ember.runtime import cuda
    (plain, plain_label), (add, add_label) = _ops_kernels(t, rows, cols)
    lt = plain.prepare(x, gamma, y, EPS, grid=rows)
    side("rmsnorm", f"ember.ops, tuned ({plain_label})", ember_on_torch_stream(lt), None)
    lu = add.prepare(x, rr, gamma, y, EPS, grid=rows)
    side("add_rmsnorm", f"ember.ops, tuned ({add_label})", ember_on_torch_stream(lu), check_h, reset_r)
    if t == "f32" and cols == 4096:
        # the hand-written baseline has rmsnorm_rows<f32, 4096, 256, 4>'s signature and launch
        from bench.hand_ptx import load_pair
        hand, _ = load_pair("rmsnorm_f32_4096.ptx", arch)
        lh = hand.prepare(x, gamma, y, EPS, grid=rows)
        side("rmsnorm", "hand-ptx (B256)", ember_on_torch_stream(lh), None)
    general = cuda.load(ember.compile(ROOT / "kernels_src" / "rmsnorm.ember", arch=arch,
                                      defines={"T": t, "BLOCK": 1024}, kernels=["rmsnorm"]))
    lg = general.rmsnorm.prepare(x, gamma, y, cols, EPS, grid=rows)
    side("rmsnorm", "ember general B1024", ember_on_torch_stream(lg), None)
    side("rmsnorm", "triton", lambda: TK.rmsnorm(x, gamma, y, EPS), None)
    side("add_rmsnorm", "triton", lambda: TK.add_rmsnorm(x, rr, gamma, y, EPS), check_h, reset_r)
    try:
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction
        from liger_kernel.ops.fused_add_rms_norm import LigerFusedAddRMSNormFunction

        def liger():
            y.copy_(LigerRMSNormFunction.apply(x, gamma, EPS, 0.0, "llama", False))

        def liger_add():
            out_y, out_h = LigerFusedAddRMSNormFunction.apply(x, rr, gamma, EPS, 0.0, "llama", False)
            y.copy_(out_y)
            rr.copy_(out_h)
        # timed without the copies into the common outputs (liger allocates its own;
        # inside the captured graph that allocation is free)
        side("rmsnorm", "liger-kernel", liger, None,
             timed=lambda: LigerRMSNormFunction.apply(x, gamma, EPS, 0.0, "llama", False))
        side("add_rmsnorm", "liger-kernel", liger_add, check_h, reset_r,
             timed=lambda: LigerFusedAddRMSNormFunction.apply(x, rr, gamma, EPS, 0.0, "llama", False))
    except Exception as e:                                   # noqa: BLE001 - reported in the results
        out.append({"op": "rmsnorm", "dtype": t, "shape": f"{rows}x{cols}", "side": "liger-kernel",
                    "error": f"{type(e).__name__}: {e}"[:200]})

    def torch_rms():
        xf = x.float()
        y.copy_((xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS) * gamma.float()).to(dt))
    side("rmsnorm", "torch eager", torch_rms, None)
    ceil = copy_ceiling(nbytes, **kw)
    for o in out:
        if "us" in o:
            o["of_copy"] = o["TBps"] / ceil["TBps"]
    out.append({"op": "copy", "dtype": t, "shape": f"{rows}x{cols}", "side": "copy ceiling", **ceil})
    return out


def markdown(result: dict) -> str:
    from bench.report import SASS_NOTE
    lines = ["# RMSNorm: Ember vs Triton vs liger-kernel vs torch", "",
             f"Device: {result['device']}, {result['date']}. One run; time per launch is the median of 5 replays "
             "of a CUDA graph of 100 launches. TB/s counts bytes read + written; `of copy` is against the "
             "copy ceiling (fastest of a D2D memcpy and a copy kernel moving the same bytes, same run). "
             "liger-kernel allocates its outputs (from the graph's pool): it is timed alone, and checked "
             "through a copy into the common output. `ember.ops`: the kernels as ember.ops builds and "
             "loads them - the shipped tuned table's configuration and SASS path for this GPU (named in "
             "the side) and, on sm_90, a programmatic launch, so that in the graph each launch overlaps "
             "the end of the one before: where a kernel lasts a few microseconds (the decode rows) that "
             "is most of its lead; add_rmsnorm by its own table, or where that has no entry for this GPU "
             "by rmsnorm_rows's (ember.ops.norm.rows_kernel). Other sides: plain launches, SASS through "
             "nvJitLink. " + SASS_NOTE, ""]
    lines += ["## Summary: best Ember BLOCK, and what ember.ops runs (the tuned table's entry), against the best peer",
              "",
              "| op | dtype | shape | Ember best | us | ember.ops us | hand PTX us | Triton us | liger-kernel us "
              "| Ember / best peer | ember.ops / best peer |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    keys = []
    for r in result["rows"]:
        if "us" in r and r["op"] != "copy" and (r["op"], r["dtype"], r["shape"]) not in keys:
            keys.append((r["op"], r["dtype"], r["shape"]))
    for op, dt, shape in keys:
        rows = [r for r in result["rows"] if (r.get("op"), r.get("dtype"), r.get("shape")) == (op, dt, shape)
                and "us" in r]
        ember_rows = [r for r in rows if r["side"].startswith("ember B")]
        peers = [r for r in rows if r["side"].startswith(("triton", "liger"))]
        hand = next((r["us"] for r in rows if r["side"].startswith("hand-ptx")), float("nan"))
        if not ember_rows or not peers:
            continue
        best = min(ember_rows, key=lambda r: r["us"])
        peer = min(peers, key=lambda r: r["us"])
        tri = next((r["us"] for r in peers if r["side"] == "triton"), float("nan"))
        lig = next((r["us"] for r in peers if r["side"].startswith("liger")), float("nan"))
        ops_us = next((r["us"] for r in rows if r["side"].startswith("ember.ops")), float("nan"))
        lines.append(f"| {op} | {dt} | {shape} | {best['side']} | {best['us']:.2f} | {ops_us:.2f} | {hand:.2f} "
                     f"| {tri:.2f} | {lig:.2f} | {best['us'] / peer['us']:.3f} | {ops_us / peer['us']:.3f} |")
    lines.append("")
    for op in ("rmsnorm", "add_rmsnorm"):
        lines += [f"## {op}", "", "| dtype | shape | side | us | TB/s | of copy | cosine | max rel err |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in result["rows"]:
            if r.get("op") != op:
                continue
            if "error" in r:
                lines.append(f"| {r['dtype']} | {r['shape']} | {r['side']} | {r['error']} | | | | |")
                continue
            lines.append(f"| {r['dtype']} | {r['shape']} | {r['side']} | {r['us']:.2f} | {r['TBps']:.2f} "
                         f"| {100 * r['of_copy']:.0f}% | {r['cosine']:.9f} | {r['max_rel']:.2g} |")
        lines.append("")
    lines += ["## Copy ceiling", "", "| dtype | shape | memcpy us | copy kernel us | TB/s |", "|---|---|---|---|---|"]
    for r in result["rows"]:
        if r.get("op") == "copy":
            lines.append(f"| {r['dtype']} | {r['shape']} | {r['memcpy_us']:.2f} | {r['copy_kernel_us']:.2f} "
                         f"| {r['TBps']:.2f} |")
    return "\n".join(lines) + "\n"


def main(out_dir: str, quick: bool = False) -> int:
    import torch
    from ember.runtime import cuda
    ctx = cuda.context()
    result = {"benchmark": "rmsnorm_ab", "device": torch.cuda.get_device_name(), "arch": ctx.arch,
              "date": datetime.date.today().isoformat(), "rows": []}
    for t in DTYPES:
        for rows, cols in SHAPES:
            result["rows"] += run_shape(t, rows, cols, ctx.arch, quick)
    from bench.report import save
    save(out_dir, "rmsnorm_ab", result, markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "bench/results"))
