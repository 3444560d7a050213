"""The runtime's pick from the tuned tables: a kernel of kernels_src/ compiled with the
configuration its table chose for this GPU and shape, and loaded through the SASS path the
table measured fastest (nvJitLink or the driver's JIT). Without an entry the kernel's
defaults are loaded through nvJitLink, with a warning. ember.ops loads its kernels here too
(choosing the entry by its own rule: ember.ops.kernels)."""

from __future__ import annotations

import functools

from .table import Tuned, tuned_for


def load_tuned(kernel: str, bucket: str, defines: dict | None = None, device=0) -> tuple:
    """(the loaded Kernel, its Tuned): `kernel` compiled with the shape's const values
    `defines` (like {"M": 1}) and the tuned configuration for `bucket` on GPU `device`;
    the Tuned names the value of every tuned parameter (what a launch's grid needs).
    Compiled and loaded once per kernel, bucket, values and GPU."""
    from ..runtime.cuda import device_ordinal
    from .workloads import source_of
    ordinal = device_ordinal(device)
    tuned: Tuned = tuned_for(kernel, bucket, ordinal)
    kern, consts = load(str(source_of(kernel)), kernel, values_key(defines or {}), values_key(tuned.config),
                        tuned.sass_path, ordinal)
    return kern, Tuned({p: consts[p] for p in kern.info.tunables}, tuned.sass_path)    # the defaults spelled out


def values_key(values: dict) -> tuple:
    """Const values as (name, text) pairs sorted by name, each written as `-D` takes it
    (define_text): the cache key of a compiled kernel, and its defines."""
    from ..driver import define_text
    return tuple(sorted((k, define_text(v)) for k, v in values.items()))


@functools.lru_cache(maxsize=None)
def load(path: str, name: str, defines: tuple, config: tuple, sass_path: str, device: int,
         programmatic: bool | str = False) -> tuple:
    """(the loaded Kernel, its const values): kernel `name` of `path` compiled with
    `defines` and `config` ((name, value) pairs) for GPU `device` and loaded through
    `sass_path`; once per arguments. `programmatic`: compiled with programmatic_launch
    of that value (the runtime then launches it as a programmatic dependent launch)."""
    import ember
    from ..runtime import cuda
    program = ember.compile(path, arch=cuda.context(device).arch, defines={**dict(defines), **dict(config)},
                            kernels=[name], programmatic_launch=programmatic)
    return cuda.load(program, device, sass_path=sass_path)[name], dict(program.kernels[name].consts)
