"""The compiled kernels behind ember.ops: a kernel of kernels_src/ compiled with the const
values of the call's shape and the configuration its tuned table chose for this GPU, loaded
through the table's SASS path, once per kernel, values and GPU.

The table entry used is the one of this GPU whose const values (M, COLS, T, ...) are the
call's and whose shape is nearest in size (the buckets of `ember tune --list`); without one
the kernel's defaults are used through nvJitLink, with a warning once.

On sm_90 and newer every kernel is compiled with programmatic_launch: it starts by waiting
for the kernel before it on the stream, so the runtime launches it as a programmatic
dependent launch, whose launch overlaps that kernel's end (in a CUDA graph too); the small
kernels (SIGNAL_EARLY) also let the next kernel launch at their start; a few configurations
(PLAIN_CONFIGS) are launched plainly.
`programmatic_launch(False)` turns this off (for an A/B measurement: bench/layer_ab.py)."""

from __future__ import annotations

import functools
import math
import warnings

from ..tuning import table as T
from ..tuning.pick import load, values_key
from ..tuning.workloads import KERNELS_SRC


_PROGRAMMATIC = [True]
# Kernels of a few blocks an SM at most, which signal the next kernel at their start
# (programmatic_launch="signal"): the GEMV or attention after them is dispatched while they
# run, onto SMs that are mostly free. H100, a decoder layer (2026-11-26): 1-3.5% less time
# than every kernel only waiting; every kernel signalling was up to 15% slower
# (ember/ir/analysis/grid_dependency.py). Not the attention's merge: decode_attention called
# again and again (the split after the merge) took 20% longer at 32768 keys when it
# signalled - the split, sized to about two blocks an SM, was dispatched onto the SMs the
# merge left free and ran unevenly spread. Nor the split pass, so that its merge would be
# resident before it ends: H100, 2026-11-27, batch 1 at 32768 keys 52.0 -> 53.4 us alone and
# 115.7 -> 117.5 us a layer.
SIGNAL_EARLY = frozenset({"add_rmsnorm_q8_parts", "add_rmsnorm_q8", "rope_append", "quantize_digits",
                          "quantize_q8_1"})
# Configurations launched plainly even where the others are programmatic: q4k_imma.ember's
# SHARE_X kernels (a block per 64 or 128 rows, every block resident at once, each streaming
# the whole of k). Dispatched while the kernel before them ends, they ran far slower than
# alone. H100, a decoder layer, 2026-11-27, us a layer (the split kernels / SHARE_X
# programmatic / SHARE_X plain, the rest programmatic in all three): batch 8 at 512 keys,
# digits 109.1-109.4 / 117.6-121.1 / 104.5-107.4, two digits 101.6-102.1 / 110.6-111.3 /
# 97.0-97.6; batch 4, two digits 93.6-93.8 / 102.3-102.5 / 89.8-90.0.
PLAIN_CONFIGS = (("SHARE_X", True),)
SHARED_TOO_LARGE = "E0405"       # the checker's code for a kernel past its GPU's shared memory


def programmatic_launch(on: bool) -> None:
    """Whether the kernels loaded from now on are programmatic dependent launches where the
    GPU has them (sm_90+; the default). Loaded kernels are kept per setting; the ops' plans
    (which hold launches of the kernels of the old setting) are dropped."""
    if not isinstance(on, bool):
        raise TypeError(f"programmatic_launch takes a bool, not {type(on).__name__}")
    from . import plan
    if _PROGRAMMATIC[0] != on:
        plan.clear()
    _PROGRAMMATIC[0] = on


def _size(bucket: str) -> int:
    return math.prod(int(d) for d in bucket.split(" ")[0].split("x"))


def pick_entry(table: dict | None, device: str, defines: dict, size: int, shape: str | None = None) -> dict | None:
    """The entry of `device` made with these const values whose bucket is nearest `size`
    (ties: the bucket of the call's own `shape`, as buckets write it - `1x4096x14336` where
    `1x14336x4096` is as large - then the smaller bucket, then the name), or None."""
    if not table:
        return None
    want = values_key(defines)
    fits = [(b, e) for b, e in table.get("devices", {}).get(device, {}).items()
            if e.get("config") is not None and values_key(e.get("defines", {})) == want]
    if not fits:
        return None
    return min(fits, key=lambda be: (abs(math.log(_size(be[0]) / max(size, 1))), be[0].split(" ")[0] != shape,
                                     _size(be[0]), be[0]))[1]


def first_entry(tables: list, device: str, defines: dict, size: int, shape: str | None = None) -> tuple:
    """(table, entry): pick_entry's entry in the first of `tables` that has one, with its
    table; (None, None) if none has."""
    for table in tables:
        entry = pick_entry(table, device, defines, size, shape)
        if entry is not None:
            return table, entry
    return None, None


def kernel(source: str, name: str, defines: dict, size: int, device: int = 0, table_of: str | tuple | None = None,
           plus: dict | None = None, or_as: dict | None = None, shape: str | None = None, fixed: dict | None = None):
    """(the loaded kernel, the values of its const parameters): `name` of kernels_src/SOURCE
    for a call of `size` (the product of its shape), tuned by the table of `table_of` (a
    kernel of the same file that does the same work; default `name`), or by the first of
    several such tables that has an entry for this GPU and these const values. `plus`: const values
    of `name` that `table_of`'s kernel does not have, so its table's entries do not name
    them (q4k_digits_qkv's head_dim and cache type: the loop q4k_digits_gemv's table
    measured is the same). `or_as`: the const values whose entry the call takes where no
    table has one for `defines` (the digits kernels' PLANES 2 on a GPU their tables hold
    no two-plane entries for: the three planes' configuration). `shape`: the call's own, as
    buckets write it (pick_entry). `fixed`: tuned values that replace the entry's (q4k_digits_qkv
    with a Q6_K v: two rows a warp). In the simulator (ember.ops.on_simulator): the kernel's
    defaults, simulated."""
    from .args import simulated_arch, simulating
    if simulating():
        return _simulated(source, name, values_key({**defines, **(plus or {}), **(fixed or {})}), simulated_arch())
    tables = (table_of,) if isinstance(table_of, str) else tuple(table_of or (name,))
    return _pick(source, name, values_key(defines), size, device, tables, _PROGRAMMATIC[0], values_key(plus or {}),
                 None if or_as is None else values_key(or_as), shape, values_key(fixed or {}))


def fits(source: str, name: str, defines: dict, size: int, device: int = 0, **lookup) -> bool:
    """Whether `kernel` gives `name` for this call on this GPU: False where the configuration
    it would take needs more shared memory than the GPU gives a block (E0405: the tensor-core
    GEMVs' rings at M = 8 on an sm_86, sm_89 or sm_120, 99 KB), so that the caller runs its other
    kernel; any other compile error is raised. A configuration found too large is remembered,
    so that a plan made again (an op called without `out`) does not compile it again."""
    from ..diagnostics import CompileError
    from .args import simulated_arch, simulating
    key = (source, name, values_key(defines), size, device, simulating() and simulated_arch(),
           repr(sorted(lookup.items())))
    if key in _TOO_LARGE:
        return False
    try:
        kernel(source, name, defines, size, device, **lookup)
    except CompileError as e:
        if any(d.is_error and d.code == SHARED_TOO_LARGE for d in e.diagnostics.items):
            _TOO_LARGE.add(key)
            return False
        raise
    return True


_TOO_LARGE: set = set()           # fits()'s calls whose configuration did not fit


def fastest(names: tuple, defines: dict, size: int, device: int, otherwise: int, or_as: dict | None = None,
            shape: str | None = None) -> int:
    """Which of `names` (kernels doing the same work, each with a tuned table under
    kernels_src/tuned/) to run: the one whose table entry for this GPU, these const values
    and the bucket nearest `size` took the least time - where every one has an entry of
    the same bucket, measured the same way by `ember tune`; else the same for the const
    values `or_as` (as `kernel`'s); else (another GPU, a stale table, the simulator)
    `otherwise`, the index of the caller's measured rule. `shape` as `kernel`'s."""
    from .args import simulating
    if simulating():
        return otherwise
    if or_as is not None:
        otherwise = _fastest(names, values_key(or_as), size, device, otherwise, shape)
    return _fastest(names, values_key(defines), size, device, otherwise, shape)


def tuned_config(name: str, defines: dict, size: int, device: int, or_as: dict | None = None,
                 shape: str | None = None) -> dict:
    """The configuration the current table of kernel `name` chose on this GPU for a call of
    these const values and `size` (as `kernel` picks it, with its `or_as` and `shape`), without
    compiling it; {} where there is none (another GPU, a stale or missing table, the
    simulator): the caller's defaults. For a kernel that runs another's loop
    (q4k_digits_qkv's Q6_K v: q6k_digits_gemv's)."""
    from .args import simulating
    if simulating():
        return {}
    return dict(_tuned_config(name, values_key(defines), size, device, None if or_as is None else values_key(or_as),
                              shape))


@functools.lru_cache(maxsize=None)
def _tuned_config(name: str, defines: tuple, size: int, device: int, or_as: tuple | None, shape: str | None) -> tuple:
    from ..runtime import cuda
    ctx = cuda.context(device)
    _, entry = _call_entry([_current_table(name, None)], T.device_key(ctx.name, ctx.arch), defines, size, or_as,
                           shape)
    return () if entry is None else tuple(sorted(entry["config"].items()))


def _call_entry(tables: list, device: str, defines: tuple, size: int, or_as: tuple | None, shape: str | None):
    """(table, entry) a call takes: first_entry's for `defines`, else for `or_as` (see `kernel`)."""
    table, entry = first_entry(tables, device, dict(defines), size, shape)
    if entry is None and or_as is not None:
        table, entry = first_entry(tables, device, dict(or_as), size, shape)
    return table, entry


def tuned_us(name: str, defines: dict, size: int, device: int) -> float | None:
    """What the current table of kernel `name` measured on this GPU for these const values at
    a bucket of this `size` (us), or None: no such entry, another GPU, a stale or missing
    table, the simulator."""
    from .args import simulating
    if simulating():
        return None
    return _tuned_us(name, values_key(defines), size, device)


@functools.lru_cache(maxsize=None)
def _tuned_us(name: str, defines: tuple, size: int, device: int) -> float | None:
    from ..runtime import cuda
    ctx = cuda.context(device)
    table = _current_table(name, None)
    entry = pick_entry(table, T.device_key(ctx.name, ctx.arch), dict(defines), size)
    if entry is None:
        return None
    bucket = next(b for b, e in table["devices"][T.device_key(ctx.name, ctx.arch)].items() if e is entry)
    return entry["us"] if _size(bucket) == size else None


@functools.lru_cache(maxsize=None)
def _fastest(names: tuple, defines: tuple, size: int, device: int, otherwise: int, shape: str | None) -> int:
    from ..runtime import cuda
    ctx = cuda.context(device)
    tables = [_current_table(name, None) for name in names]
    return fastest_of(tables, T.device_key(ctx.name, ctx.arch), dict(defines), size, otherwise, shape)


_TABLES: dict = {}        # use_table's tables, by kernel


def use_table(kernel: str, table: dict | None) -> None:
    """ember.ops takes `table` for `kernel` from now on instead of kernels_src/tuned/KERNEL.json
    (None: that one again) - to measure a retuned table in a whole decoder layer before it
    ships (bench/table_ab.py: a table chosen on the kernel alone can lose there). The table
    must be one of `kernel`, made from its source as it is now. The ops' plans and cached
    choices are dropped (the kernels loaded stay)."""
    from . import plan
    if table is not None:
        if T.structure_problem(table) or table.get("kernel") != kernel:
            raise ValueError(f"use_table: not a tuned table of `{kernel}`")
        if not T.current(table, KERNELS_SRC / table["source"], stacklevel=3):
            raise ValueError(f"use_table: the table of `{kernel}` was made from another version of its source")
        _TABLES[kernel] = table
    else:
        _TABLES.pop(kernel, None)
    for cached in (_pick, _fastest, _tuned_us, _tuned_config):
        cached.cache_clear()
    plan.clear()


def _current_table(name: str, source) -> dict | None:
    """kernels_src/tuned/NAME.json if there is one made from its kernel's source (`source`,
    default the file the table names) as it is now (or use_table's); a stale one is refused
    with a warning."""
    if name in _TABLES:
        return _TABLES[name]
    path = KERNELS_SRC / "tuned" / f"{name}.json"
    if not path.is_file():
        return None
    table = T.read(path)
    return table if T.current(table, source or KERNELS_SRC / table["source"], stacklevel=5) else None


def fastest_of(tables: list, device: str, defines: dict, size: int, otherwise: int, shape: str | None = None) -> int:
    """fastest's choice among current tables (None: missing or stale)."""
    times = []
    for table in tables:
        entry = pick_entry(table, device, defines, size, shape)
        if entry is None:
            return otherwise
        bucket = next(b for b, e in table["devices"][device].items() if e is entry)
        times.append((bucket, entry["us"]))
    if len({b for b, _ in times}) != 1:
        return otherwise
    return min(range(len(tables)), key=lambda i: (times[i][1], i))


@functools.lru_cache(maxsize=None)
def _pick(source: str, name: str, defines: tuple, size: int, device: int, tables: tuple, programmatic: bool,
          plus: tuple = (), or_as: tuple | None = None, shape: str | None = None, fixed: tuple = ()):
    """The kernel and its const values for a call (see `kernel`)."""
    from ..runtime import cuda
    ctx = cuda.context(device)
    path = KERNELS_SRC / source
    key = T.device_key(ctx.name, ctx.arch)
    current = [_current_table(t, path) for t in tables]
    table, entry = _call_entry(current, key, defines, size, or_as, shape)
    config, sass_path = ({}, "nvjitlink") if entry is None else (dict(entry["config"]), T.entry_sass_path(table, entry))
    config.update(fixed)
    kern, consts = load(str(path), name, tuple(sorted(defines + plus)), values_key(config), sass_path, device,
                        _launch_mode(name, programmatic, ctx, config))
    if entry is None and set(kern.info.tunables) - {k for k, _ in defines + plus}:
        values = " ".join(f"{k}={v}" for k, v in defines + plus)
        warnings.warn(f"ember.ops: `{name}` is not tuned for {key} with {values or 'its defaults'}: its default "
                      f"configuration is used (`ember tune` makes the table)", stacklevel=4)
    return kern, consts


def _launch_mode(name: str, programmatic: bool, ctx, config: dict | None = None) -> bool | str:
    """How kernel `name` in configuration `config` is compiled for programmatic dependent
    launch on this GPU."""
    if not programmatic or ctx.compute_capability < (9, 0):
        return False
    if any((config or {}).get(k) == v for k, v in PLAIN_CONFIGS):
        return False
    return "signal" if name in SIGNAL_EARLY else "wait"


class _SimKernel:
    """A simulated kernel with the launch interface of the runtime's: prepare() packs the
    arguments, calling the result (with any stream) runs the kernel to its end."""

    def __init__(self, kern):
        self.kern, self.info = kern, kern.info

    def prepare(self, *args, grid, block=None):
        return lambda stream: self.kern(*args, grid=grid, block=block)

    def max_active_clusters(self, grid, block=None) -> int:
        """The simulator runs any cluster (the runtime Kernel's query, for the ops' choices)."""
        return 1


@functools.lru_cache(maxsize=None)
def _simulated(source: str, name: str, defines: tuple, arch: str):
    import ember
    from ..sim import load as sim_load
    program = ember.compile(str(KERNELS_SRC / source), arch=arch, defines=dict(defines), kernels=[name])
    return _SimKernel(sim_load(program).kernels[name]), dict(program.kernels[name].consts)
