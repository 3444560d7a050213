"""`ember compile FILE --tuned DEVICE`: one variant per configuration the tuned tables next to
FILE (`tuned/KERNEL.json`, written by `ember tune`) chose for DEVICE, each with the const
values of its shape bucket. A configuration the table measured fastest through the driver's
JIT is named in a warning: what is built here is nvJitLink's cubin unless the PTX is
embedded. A stale table (its kernel was edited after tuning) is skipped with a warning; a
device with no entries compiles the defaults, with a note."""

from __future__ import annotations

import warnings
from pathlib import Path

from ..cli_support import UsageError
from ..driver import define_text


def tuned_rows(file: str, kernels: list | None, device: str) -> tuple[list, list]:
    """([{NAME: VALUE}], uses): the variants the tables of FILE's kernels (those of `kernels`,
    if given) hold for the one device whose name contains DEVICE (case-insensitive), and for
    each what it was chosen for - [{kernel, device, bucket, us, sass_path}], sorted - which
    `--manifest` records, so that a host program knows which variant serves which shape."""
    from ..tuning import table as T
    if file == "-":
        raise UsageError("--tuned reads the tables next to the source file: it needs a file, not standard input")
    source = Path(file)
    paths = sorted((source.parent / "tuned").glob("*.json"))
    rows: list = []
    uses: list = []
    found = False
    for path in paths:
        t = T.read(path)
        if t.get("source") != source.name or (kernels and t.get("kernel") not in kernels):
            continue
        if not T.current(t, source):            # warns: a stale table is not used
            continue
        matches = [k for k in t["devices"] if device.lower() in k.lower()]
        if len(matches) > 1:
            raise UsageError(f"--tuned {device} matches several devices of {path}: {', '.join(matches)}")
        if not matches:
            continue
        found = True
        for bucket, e in sorted(t["devices"][matches[0]].items()):
            if e.get("config") is None:
                continue
            row = {n: define_text(v) for n, v in {**e.get("defines", {}), **e["config"]}.items()}
            if row not in rows:
                rows.append(row)
                uses.append([])
            uses[rows.index(row)].append({"kernel": t["kernel"], "device": matches[0], "bucket": bucket,
                                          "us": e.get("us"), "sass_path": T.entry_sass_path(t, e)})
            if T.entry_sass_path(t, e) == "driver":
                nvj = e.get("best_by_path", {}).get("nvjitlink", {}).get("us", "?")
                warnings.warn(f"{t['kernel']} at `{bucket}` on {matches[0]} was fastest through the driver's JIT "
                              f"({e['us']} us; its best through nvJitLink {nvj} us): a cubin or fatbin built here "
                              f"is nvJitLink's, a header with --image ptx gets the driver's SASS "
                              f"(docs/sass_paths.md)", stacklevel=2)
    if not found:
        warnings.warn(f"no tuned table next to {file} has entries for `{device}`: the defaults are compiled",
                      stacklevel=2)
        return [{}], [[]]
    for u in uses:
        u.sort(key=lambda x: (x["kernel"], x["bucket"]))
    return rows, uses
