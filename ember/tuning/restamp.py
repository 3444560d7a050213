"""`ember tune KERNEL --restamp`: keep a tuned table whose kernel source was edited without
changing the code it measured.

A table is tied to a hash of its kernel's source and imports (ember.tuning.table), so any
edit - a comment, a function the kernel does not call - makes it stale, and the runtime
refuses it. Each entry also records the sha256 of the PTX its configuration compiled to
when it was measured (`ptx_sha256`, with the target `arch`). Restamping recompiles every
entry's configuration from the source as it is now: where every one gives the PTX it was
measured with, the measurements still describe the kernel, and the table takes the new
source hash; where any differs (or was recorded before the hashes were), the table stays
stale and the entries are named - retune those. On a table that is current it records the
hashes of entries that lack them, so that a later edit can be restamped. Either way an entry
whose recorded default configuration is no longer the source's takes the new one, the old
one's time dropped (new_defaults). No GPU is needed: PTX is the same bytes on any machine (docs/determinism.md)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..records import record


def ptx_sha256(source, arch: str, defines: dict, kernel: str) -> str:
    """sha256 of the PTX of `kernel` in `source` for `arch` with these const values (through
    the compile cache)."""
    import ember
    program = ember.compile(Path(source), arch=arch, defines=dict(defines), kernels=[kernel])
    return hashlib.sha256(program.ptx.encode("utf-8")).hexdigest()


def entry_ptx(kernel: str, device: str, entry: dict, source) -> tuple[str, str]:
    """(arch, sha256 of the PTX) that table entry `entry` of `device` compiles to from
    `source` as it is now: what its recorded `ptx_sha256` is compared with."""
    from .workloads import tuning_arch
    arch = entry.get("arch") or tuning_arch(kernel, device.rsplit(" ", 1)[-1])
    return arch, ptx_sha256(source, arch, {**entry.get("defines", {}), **entry["config"]}, kernel)


@record
class Restamp:
    """What restamping a table found: `table`, the table to write (None: leave it as it is);
    `lines`, a line per finding; `ok`, whether the table is (now) current."""

    table: object
    lines: list
    ok: bool


def restamp(kernel: str, table: dict, source) -> Restamp:
    """Restamp `table` of `kernel` (made from `source`, kernels_src/SOURCE) - see above."""
    from . import table as T
    now = T.source_hash(source)
    fresh = table.get("source_hash") == now and table.get("format", 1) >= T.FORMAT
    devices = {d: {b: dict(e) for b, e in buckets.items()} for d, buckets in table.get("devices", {}).items()}
    lines, changed, unknown, recorded = [], [], [], 0
    for device, buckets in devices.items():
        for bucket, e in buckets.items():
            if e.get("config") is None:
                continue
            arch, digest = entry_ptx(kernel, device, e, source)
            where = f"{device}, {bucket}"
            if e.get("ptx_sha256") is None:
                if fresh:
                    e["arch"], e["ptx_sha256"] = arch, digest
                    recorded += 1
                else:
                    unknown.append(where)
            elif e["ptx_sha256"] != digest:
                changed.append(where)
    name = Path(source).name
    if fresh:
        if changed:
            lines.append(f"{kernel}: the table is current, but {entries(len(changed))} now compile to other "
                         f"PTX than was measured (another compiler?): " + "; ".join(changed))
        lines.append(f"{kernel}: the table is current; PTX hashes recorded for {entries(recorded)}"
                     if recorded else f"{kernel}: the table is current")
        moved = new_defaults(kernel, devices, source)
        if moved:
            lines.append(_moved_line(kernel, moved))
        return Restamp({**table, "devices": devices} if recorded or moved else None, lines, True)
    for where in changed:
        lines.append(f"{kernel}: {where}: the configuration now compiles to other PTX than was measured")
    for where in unknown:
        lines.append(f"{kernel}: {where}: no PTX hash recorded (tuned before they were): cannot be checked")
    if changed or unknown:
        lines.append(f"{kernel}: not restamped: {name} (or a file it imports) changed the code of "
                     f"{entries(len(changed) + len(unknown))}; "
                     f"rerun `ember tune {kernel}`")
        return Restamp(None, lines, False)
    count = sum(1 for b in devices.values() for e in b.values() if e.get("config") is not None)
    lines.append(f"{kernel}: restamped: every entry ({count}) compiles to the PTX it was measured with from "
                 f"{name} as it is now")
    moved = new_defaults(kernel, devices, source)
    if moved:
        lines.append(_moved_line(kernel, moved))
    return Restamp({**table, "devices": devices, "source_hash": now, "format": T.FORMAT}, lines, True)


def _moved_line(kernel: str, moved: int) -> str:
    return (f"{kernel}: the kernel's defaults changed: {entries(moved)} now name the new default "
            f"configuration, its time dropped (the old default's) unless the entry timed it")


def new_defaults(kernel: str, devices: dict, source) -> int:
    """Entries (of `devices`, changed in place) whose recorded `default` is no longer the
    source's default configuration: they take the new one, and `default_us` None - the time
    recorded was the old default's, and a table that shows it beside the new one would
    mislead (bench/results/tuned.md) - or the entry's fastest time through nvJitLink where
    the new default is that configuration. The number changed. A default that only lacks
    parameters added since (their default the code it was measured with: every entry
    restamped to its PTX) is completed and keeps its time."""
    from .space import tune_space
    from .workloads import tuning_arch
    moved, defaults = 0, {}
    for device, buckets in devices.items():
        for e in buckets.values():
            if "default" not in e or e.get("config") is None:
                continue
            arch = e.get("arch") or tuning_arch(kernel, device.rsplit(" ", 1)[-1])
            key = (arch, tuple(sorted(e.get("defines", {}).items())))
            if key not in defaults:
                defaults[key] = tune_space(Path(source), arch=arch, kernel=kernel,
                                           defines=dict(e.get("defines", {})))[kernel].default
            now = defaults[key]
            if e["default"] == now:
                continue
            if all(now.get(p) == v for p, v in e["default"].items()):
                e["default"] = now          # a parameter added since, at the value that kept the code
            else:
                # timed after all where it is the fastest through nvJitLink (defaults are timed so)
                best = e.get("best_by_path", {}).get("nvjitlink", {})
                e["default"], e["default_us"] = now, best.get("us") if best.get("config") == now else None
                moved += 1
    return moved


def still_measured(kernel: str, table: dict, source) -> tuple[dict, list]:
    """The entries of a stale `table` that still describe the kernel of `source` as it is
    now (each configuration compiles to the PTX it was measured with), and the (device,
    bucket) of the others: a retune of some buckets after an edit keeps the rest
    of the table where the edit left their code alone, and drops (and names) the ones it
    changed. Entries without a PTX hash, or of no configuration, cannot be checked: dropped."""
    kept, dropped = {}, []
    for device, buckets in table.get("devices", {}).items():
        for bucket, e in buckets.items():
            same = (e.get("config") is not None and e.get("ptx_sha256") is not None
                    and e["ptx_sha256"] == entry_ptx(kernel, device, e, source)[1])
            if same:
                kept.setdefault(device, {})[bucket] = dict(e)
            else:
                dropped.append((device, bucket))
    return kept, dropped


def entries(n: int) -> str:
    return f"{n} entr{'y' if n == 1 else 'ies'}"
