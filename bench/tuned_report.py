"""The tuned tables (kernels_src/tuned/, written by `ember tune`) as one report: per
device and shape bucket, the kernel's default configuration and the tuned one side by
side, each with its time and bandwidth, beside the copy ceiling of the same bytes measured
on this GPU (bench.gpu_timing.copy_ceiling: a device-to-device copy reading and writing
half the bytes each, rotated over 200 MB so that it reads DRAM like the kernels).

On a GPU the ceilings of this device are measured and merged into tuned_ceilings.json;
without one the report is rebuilt from the tables and the ceilings already measured.
Writes tuned.md."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

from ember.tuning.table import entry_sass_path

ROOT = Path(__file__).resolve().parents[1]


def _tables() -> dict:
    return {p.stem: json.loads(p.read_text()) for p in sorted((ROOT / "kernels_src" / "tuned").glob("*.json"))}


def measure_ceilings(tables: dict, path: Path) -> dict:
    from bench.gpu_timing import copy_ceiling
    from ember.runtime import cuda
    ctx = cuda.context()
    key = f"{ctx.name} {ctx.arch}"
    ceilings = json.loads(path.read_text()) if path.is_file() else {}
    mine = ceilings.setdefault(key, {})
    for t in tables.values():
        for bucket, e in t["devices"].get(key, {}).items():
            nbytes = e["moved_bytes"] // 2
            if str(nbytes) not in mine:
                mine[str(nbytes)] = round(copy_ceiling(nbytes, rotate_bytes=200e6)["TBps"], 3)
    path.write_text(json.dumps(ceilings, indent=1, sort_keys=True) + "\n")
    return ceilings


def _cfg(c) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted((c or {}).items())) or "-"


def report(tables: dict, ceilings: dict) -> str:
    lines = [f"# Tuned configurations against the defaults ({datetime.date.today().isoformat()})", "",
             "From `kernels_src/tuned/*.json`, written by `ember tune KERNEL` (every admissible configuration "
             "checked against the f64 reference, then timed: CUDA graphs of 100 launches, median of 5, inputs "
             "rotated beyond twice the L2). Each configuration's SASS made by nvJitLink (Ember's runtime's default) "
             "and, for the fastest, by the driver's JIT too; `path` is the one chosen (docs/sass_paths.md), `best "
             "nvJitLink` / `best driver` the fastest through each. The default is timed through nvJitLink. Ceiling: "
             "the copy ceiling of the same bytes on the same GPU; % = tuned TB/s / ceiling.", ""]
    for kernel, t in tables.items():
        for device, buckets in sorted(t["devices"].items()):
            lines += [f"## {kernel} on {device} (Ember {t['ember_version']})", "",
                      "| shape | default | us | tuned | path | us | TB/s | ceiling TB/s | % | speedup "
                      "| best nvJitLink us | best driver us | wrong |",
                      "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
            for bucket, e in buckets.items():
                ceil = ceilings.get(device, {}).get(str(e["moved_bytes"] // 2))
                pct = f"{100 * e['TBps'] / ceil:.0f}%" if ceil and e.get("TBps") else "-"
                speed = f"{e['default_us'] / e['us']:.3f}x" if e.get("default_us") and e.get("us") else "-"
                by_path = e.get("best_by_path", {})
                best = [by_path.get(p, {}).get("us", "-") for p in ("nvjitlink", "driver")]
                lines.append(f"| {bucket} | {_cfg(e.get('default'))} | {e.get('default_us') or '-'} | {_cfg(e['config'])} "
                             f"| {entry_sass_path(t, e)} | {e['us']} | {e.get('TBps', '-')} | {ceil or '-'} | {pct} "
                             f"| {speed} | {best[0]} | {best[1]} | {len(e['wrong'])} |")
            lines.append("")
    return "\n".join(lines)


def main(out: str, quick: bool = False) -> int:
    outdir = Path(out)
    outdir.mkdir(parents=True, exist_ok=True)
    tables = _tables()
    path = outdir / "tuned_ceilings.json"
    try:
        from ember.runtime import cuda
        on_gpu = cuda.available()
    except Exception:                  # noqa: BLE001 - no driver: the report alone
        on_gpu = False
    ceilings = measure_ceilings(tables, path) if on_gpu else (json.loads(path.read_text()) if path.is_file() else {})
    (outdir / "tuned.md").write_text(report(tables, ceilings) + "\n")
    print(f"wrote {outdir / 'tuned.md'}")
    return 0
