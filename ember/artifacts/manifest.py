"""`ember compile --manifest FILE.json`: what a build made, for the tools that package or
check it: per output its file, size and sha256, the source and every file read, the const
values, and per kernel and arch the registers, spills, stack and shared memory that the
assembler reported; with `--tuned`, what each variant was chosen for (`tuned_for`). Written
with sorted keys, so the same build gives the same bytes."""

from __future__ import annotations

import json
import os

from .. import __version__
from ..cache import sha256
from ..driver import define_text
from ..records import asdict


def record(job, progs: list, data, resources: dict) -> dict:
    from .. import depfile
    raw = data.encode("utf-8") if isinstance(data, str) else data
    first = progs[0]
    cwd = os.getcwd()
    kernels = []
    for k in first.kernels.values():
        kernels.append({
            "name": k.name,
            "params": [{"name": p.name, "type": str(p.type)} for p in k.params],
            "block": list(k.block) if k.block else None,
            "dynamic_shared": k.dynamic_shared,
            "sized_shared": ({"param": k.params[k.sized_shared[0]].name, "elem_bytes": k.sized_shared[1],
                              "array": k.sized_shared[2]} if k.sized_shared else None),
            "consts": {n: define_text(v) for n, v in k.consts.items()},
            "cluster": list(k.cluster) if k.cluster else None,
            "programmatic": k.programmatic,
            "archs": {arch: _resources(res[k.name]) for arch, res in resources.items() if k.name in res},
        })
    return {
        "output": job.output,
        "bytes": len(raw),
        "sha256": sha256(raw),
        "emit": job.options["emit"],
        "source": job.source,
        "reads": [depfile.shown(s, cwd) for s in depfile.dependencies(first.sources, user_only=False)],
        "defines": dict(job.defines),
        "archs": [p.arch for p in progs],
        "ptx_version": first.ptx_version,
        "opt": first.opt,
        "kernels": kernels,
    }


def add_tuned_for(records: list, rows: list, uses: list) -> None:
    """Each output of a `--tuned` build gets `tuned_for`: the table entries (kernel, device,
    shape bucket, time, SASS path) whose configuration its const values are."""
    for r in records:
        r["tuned_for"] = [u for row, us in zip(rows, uses) if row.items() <= r["defines"].items() for u in us]


def _resources(r) -> dict:
    d = asdict(r)
    d.pop("name")
    return d


def write(path: str, records: list, inputs: list) -> None:
    from ..output_files import write_output
    text = json.dumps({"ember": __version__, "outputs": records}, indent=1, sort_keys=True) + "\n"
    write_output(path, text, inputs=inputs)
