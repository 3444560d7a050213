"""Writing a benchmark's results: NAME.json (the numbers) and NAME.md (the table people
read) under bench/results/ or --out, and the table on stdout."""

from __future__ import annotations

import json
import os
from pathlib import Path


# How the Ember and hand-written PTX kernels of the A/B benchmarks became SASS: cuda.load and
# cuda.load_ptx link through nvJitLink (the runtime's default path). The same PTX through
# ptxas or the driver's JIT gives other SASS and other times (docs/sass_paths.md).
SASS_NOTE = ("SASS: Ember's and the hand-written PTX's through nvJitLink (the runtime's default; "
             "other paths give other times: docs/sass_paths.md).")


def for_device(name: str, device: str) -> str:
    """A result's file name for the GPU it was measured on: the H100's plain, others' with a
    suffix (layer_ab_h200), so that a run on another GPU does not replace the H100's figures."""
    return f"{name}_h200" if "H200" in device and not name.endswith("_h200") else name


def save(out_dir: str, name: str, result: dict, markdown: str) -> None:
    """`name`.json and .md (with the device's suffix, for_device: every benchmark's result
    names the GPU it was measured on)."""
    name = for_device(name, str(result.get("device", "")))
    os.makedirs(out_dir, exist_ok=True)
    Path(out_dir, f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")
    Path(out_dir, f"{name}.md").write_text(markdown)
    print(markdown)


def bar_chart_svg(title: str, groups: list, unit: str, limit: float | None = None) -> str:
    """A horizontal bar chart as SVG text (no plotting library needed): `groups` is a list
    of (group label, [(bar label, value), ...]); `limit` draws a dashed line (a ceiling)."""
    from html import escape
    bar_h, gap, label_w, plot_w = 16, 10, 330, 420
    top = max((v for _, bars in groups for _, v in bars), default=1.0)
    top = max(top, limit or 0.0) * 1.05
    rows, y = [], 40
    for name, bars in groups:
        rows.append(f'<text x="4" y="{y + 12}" font-weight="bold">{escape(name)}</text>')
        y += bar_h + 2
        for label, value in bars:
            w = plot_w * value / top
            rows.append(f'<text x="{label_w - 6}" y="{y + 12}" text-anchor="end">{escape(label)}</text>'
                        f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h - 2}" fill="#4878a8"/>'
                        f'<text x="{label_w + w + 4:.1f}" y="{y + 12}">{value:.3g}</text>')
            y += bar_h
        y += gap
    if limit is not None:
        x = label_w + plot_w * limit / top
        rows.append(f'<line x1="{x:.1f}" y1="30" x2="{x:.1f}" y2="{y}" stroke="#c44" stroke-dasharray="4 3"/>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{label_w + plot_w + 60}" height="{y + 24}" '
            f'font-family="sans-serif" font-size="12">'
            f'<rect width="100%" height="100%" fill="white"/>'
            f'<text x="4" y="18" font-size="14">{escape(title)} ({escape(unit)})</text>' + "".join(rows) + "</svg>\n")


def save_svg(out_dir: str, name: str, svg: str) -> None:
    os.makedirs(out_dir, exist_ok=True)
    Path(out_dir, f"{name}.svg").write_text(svg)


def refuse_stale_tables(allow: bool = False) -> str | None:
    """The error line of a benchmark that would measure with stale tuned tables (ember.ops and
    the tuned kernels would take their defaults, with only a warning among the output), or
    None: every table is current, or `allow` (--allow-stale: the defaults are what is meant)."""
    from ember.tuning.table import stale_shipped
    stale = [] if allow else stale_shipped()
    if not stale:
        return None
    return (f"bench: error: stale tuned tables ({', '.join(stale)}: a kernel or a file it imports was edited since "
            "they were made) - `ember tune KERNEL --restamp` where the PTX is unchanged, else retune; "
            "--allow-stale measures the defaults instead")
