"""Tuned tables: per kernel, per device (name and compute capability), per shape bucket,
the configuration `ember tune` chose and the SASS path it is fastest through (nvJitLink or
the driver's JIT: docs/sass_paths.md), its time, the runner-up, Ember's version and a
content hash of the kernel's source and the files it imports. A table whose source hash no
longer matches them is refused with a warning, never used.

    {"format": 2, "kernel": "rmsnorm_rows", "source": "rmsnorm.ember", "source_hash": "...",
     "ember_version": "0.1.0", "sass_paths": ["nvjitlink", "driver"],
     "devices": {"NVIDIA H100 80GB HBM3 sm_90": {"16384x4096 f32": {
         "config": {"BLOCK": 512, "VEC": 4}, "sass_path": "driver", "us": 101.2,
         "runner_up": {...}, "best_by_path": {...},
         "toolchain": {"nvjitlink": "13.0.88", "driver": "13.0"}, ...}}}}

(Tables written before the driver's JIT was measured have one table-wide "sass_path".)
"""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path

from ..records import record

# 2: source_hash covers the files the kernel imports too (format 1 hashed the kernel's file
# alone, so an edit of an imported function left its tables in use)
FORMAT = 2


def source_files(path) -> list:
    """The kernel's file and every file it imports, directly or not, in the order the front
    end reads them (ember.frontend.imports): what its code, and so a configuration's speed,
    depends on."""
    from ..diagnostics import CompileError, Diagnostics
    from ..driver import load_source
    from ..frontend import imports, parser
    from ..import_paths import search_dirs
    diags = Diagnostics()
    module = parser.parse(load_source(Path(path)), diags)
    files = imports.resolve(module, diags, parser.parse, search_dirs([]))
    if diags.has_errors:
        raise CompileError(diags)
    return files


# path -> ((each file read, its bytes), the hash): a hash is computed again (the imports parsed)
# only when some file's bytes differ from those it was computed from
_HASHED: dict = {}


def source_hash(path) -> str:
    """sha256 of the kernel's source and of every file it imports (each file's bytes, length
    first, in reading order: not where the files are, so the same sources hash the same on
    any machine)."""
    key = str(Path(path).resolve())
    known = _HASHED.get(key)
    if known is not None and all(_bytes_of(f) == data for f, data in known[0]):
        return known[1]
    h = hashlib.sha256()
    read = []
    for f in source_files(path):
        data = f.text.encode("utf-8")
        h.update(len(data).to_bytes(8, "little") + data)
        read.append((f.path, data))
    if all(path is not None for path, _ in read):
        _HASHED[key] = (tuple(read), h.hexdigest())
    return h.hexdigest()


def _bytes_of(path) -> bytes | None:
    try:
        return Path(path).read_text(encoding="utf-8").encode("utf-8")
    except OSError:
        return None


def device_key(name: str, arch: str) -> str:
    return f"{name} {arch}"


def new_table(kernel: str, source) -> dict:
    from .. import __version__
    from ..runtime.cuda import SASS_PATHS
    return {"format": FORMAT, "kernel": kernel, "source": Path(source).name, "source_hash": source_hash(source),
            "ember_version": __version__, "sass_paths": list(SASS_PATHS), "devices": {}}


def entry_sass_path(table: dict, entry: dict) -> str:
    """The SASS path an entry's configuration was chosen through."""
    return entry.get("sass_path") or table.get("sass_path") or "nvjitlink"


@record
class Tuned:
    """What to build and load a kernel with: const parameters ({} = the defaults) and the
    SASS path (ember.runtime.load's `sass_path`)."""

    config: dict
    sass_path: str = "nvjitlink"


def read(path) -> dict:
    """A table as JSON; a file that is not one (not JSON, not an object with its kernel and
    devices) is a CommandError naming it, not a traceback."""
    from ..cli_support import CommandError
    try:
        with open(path, encoding="utf-8") as f:
            table = json.load(f)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CommandError(f"{path} is not a tuned table: {e}") from None
    problem = structure_problem(table)
    if problem:
        raise CommandError(f"{path} is not a tuned table: {problem}")
    return table


def structure_problem(table) -> str | None:
    """Why `table` (read from JSON, or given to ember.ops.kernels.use_table) is not a tuned
    table its readers can use, or None."""
    if not isinstance(table, dict) or not isinstance(table.get("devices"), dict) or "kernel" not in table:
        return "no kernel and devices"
    return _malformed(table)


_SCALARS = (bool, int, float, str)


def _malformed(table: dict) -> str | None:
    """What in a table's structure its readers could not use (a hand edit, a merge gone wrong),
    or None. Checked before any reader indexes it: a bucket that was not an object made
    `ember tune --restamp` fail inside Ember (exit 70), and a table without its source was
    passed over by `ember compile --tuned` without a word."""
    for key in ("kernel", "source", "source_hash"):
        if not isinstance(table.get(key), str):
            return f"`{key}` is {json.dumps(table.get(key))}, not a string"
    for device, buckets in table["devices"].items():
        if not isinstance(buckets, dict):
            return f"device {json.dumps(device)} holds {json.dumps(buckets)}, not an object of buckets"
        for bucket, e in buckets.items():
            where = f"the entry of {json.dumps(device)} at {json.dumps(bucket)}"
            if not isinstance(e, dict) or "config" not in e:
                return f"{where} is {json.dumps(e)}, not an object with a `config`"
            config = e["config"]
            if config is not None and (not isinstance(config, dict)
                                       or not all(isinstance(v, _SCALARS) for v in config.values())):
                return f"{where} has `config` {json.dumps(config)}: an object of const values, or null"
            for key, kinds in (("defines", dict), ("us", (int, float)), ("sass_path", str), ("ptx_sha256", str)):
                if e.get(key) is not None and (not isinstance(e[key], kinds) or isinstance(e[key], bool)):
                    return f"{where} has `{key}` {json.dumps(e[key])} of the wrong type"
            if e.get("sass_path") not in (None, "nvjitlink", "driver"):
                return f"{where} has `sass_path` {json.dumps(e['sass_path'])}: nvjitlink or driver"
    return None


def write(path, table: dict) -> None:
    """Sorted keys and a trailing newline: the same measurements give the same bytes.
    Written as every output of Ember's (ember.output_files: atomically, never through a
    symbolic link or into a device)."""
    from ..output_files import write_output
    write_output(str(path), json.dumps(table, indent=1, sort_keys=True) + "\n")


def merge(old: dict | None, new: dict) -> dict:
    """`new`'s device entries over `old`'s, when both were made from the same source;
    a table of other source is replaced whole (its entries are stale), with a warning that
    names what is dropped - a partial retune merged into a table of older source keeps only
    its own buckets (`ember tune -o TABLE` keeps the old entries whose code an edit left
    alone; `ember tune --restamp` stamps a table whose measured code is unchanged)."""
    if not old or old.get("kernel") != new["kernel"]:
        return new
    if old.get("source_hash") != new["source_hash"]:
        dropped = sum(1 for d, b in old.get("devices", {}).items() for k in b if k not in new["devices"].get(d, {}))
        if dropped:
            warnings.warn(f"merge: the table of `{old['kernel']}` was made from other source than the new "
                          f"measurements; its {dropped} entr{'y' if dropped == 1 else 'ies'} they do not replace "
                          "are dropped", stacklevel=2)
        return new
    devices = {d: dict(b) for d, b in old.get("devices", {}).items()}
    for d, buckets in new["devices"].items():
        devices.setdefault(d, {}).update(buckets)
    return {**new, "devices": devices}


def current(table: dict, source, stacklevel: int = 3) -> bool:
    """Was the table made from `source` and its imports as they are now? A stale table is
    refused with a warning (the kernel or a file it imports was edited after tuning: its
    entries say nothing of it), as is one of format 1, whose hash did not cover the imports."""
    kernel = table.get("kernel")
    if _made_from(table, source):
        return True
    if table.get("format", 1) < 2:
        warnings.warn(f"tuned table of `{kernel}` is of format {table.get('format', 1)}, whose source hash does not "
                      f"cover the files {Path(source).name} imports: ignored, the defaults are used; rerun "
                      f"`ember tune {kernel}`", stacklevel=stacklevel)
        return False
    warnings.warn(f"tuned table of `{kernel}` was made from another version of {Path(source).name} or of a "
                  f"file it imports (source hash differs): ignored, the defaults are used; "
                  f"rerun `ember tune {kernel}`", stacklevel=stacklevel)
    return False


def _made_from(table: dict, source) -> bool:
    """`current`'s test, without its warnings."""
    return table.get("format", 1) >= 2 and table.get("source_hash") == source_hash(source)


def stale_shipped(directory=None) -> list:
    """The kernels whose tables under `directory` (default kernels_src/tuned) `current` would
    refuse - made from another version of their source or its imports, or of format 1 - by
    name, without warning: a benchmark run with them would measure the defaults."""
    from .workloads import KERNELS_SRC
    folder = Path(directory) if directory is not None else KERNELS_SRC / "tuned"
    stale = []
    for path in sorted(folder.glob("*.json")):
        table = read(path)
        if not _made_from(table, folder.parent / table["source"]):
            stale.append(table.get("kernel", path.stem))
    return stale


def lookup(table: dict, source, device_name: str, arch: str, bucket: str) -> Tuned | None:
    """The tuned configuration and path for a device and bucket, or None: the device or bucket is not
    in the table (the caller uses its defaults), or the table was made from other source
    (refused with a warning)."""
    return _entry(table, device_name, arch, bucket) if current(table, source) else None


def _entry(table: dict, device_name: str, arch: str, bucket: str) -> Tuned | None:
    entry = table.get("devices", {}).get(device_key(device_name, arch), {}).get(bucket)
    if not entry or entry.get("config") is None:
        return None
    return Tuned(dict(entry["config"]), entry_sass_path(table, entry))


def table_path(kernel: str) -> Path:
    """Where a kernel's shipped table lives: kernels_src/tuned/KERNEL.json."""
    from .workloads import source_of
    return source_of(kernel).parent / "tuned" / f"{kernel}.json"


def config_for(kernel: str, bucket: str, device=0, **where) -> dict:
    """The const parameters to compile `kernel` with for `bucket` on a GPU: tuned_for's
    configuration ({} - the defaults - when there is none)."""
    return tuned_for(kernel, bucket, device, **where).config


def tuned_for(kernel: str, bucket: str, device=0, *, device_name: str | None = None, arch: str | None = None,
              path=None) -> Tuned:
    """How to build and load `kernel` for `bucket` on a GPU (the device's name and arch, or
    those of CUDA device `device`): the tuned table's configuration and SASS path, or the
    defaults through nvJitLink with a warning saying why (no table, the device or bucket not
    in it, a table made from other source)."""
    from .workloads import source_of
    if device_name is None or arch is None:
        from ..runtime import cuda
        ctx = cuda.context(device)
        device_name, arch = ctx.name, ctx.arch
    path = Path(path) if path else table_path(kernel)
    if not path.is_file():
        warnings.warn(f"no tuned table for `{kernel}` ({path}): its defaults are used", stacklevel=3)
        return Tuned({})
    table = read(path)
    fresh = current(table, source_of(kernel), stacklevel=4)
    tuned = _entry(table, device_name, arch, bucket) if fresh else None
    if tuned is None and fresh:
        warnings.warn(f"`{kernel}` is not tuned for {device_key(device_name, arch)} at `{bucket}` ({path}): "
                      f"its defaults are used; `ember tune {kernel} --shape '{bucket}'` on that GPU tunes it",
                      stacklevel=3)
    return tuned or Tuned({})
