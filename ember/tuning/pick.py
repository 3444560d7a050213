"""The runtime's pick from the tuned tables: a kernel of kernels_src/ compiled with the
configuration its table chose for this GPU and shape bucket, and loaded through the SASS
path the table measured fastest (nvJitLink or the driver's JIT). Without an entry the
kernel's defaults are loaded through nvJitLink, with the warning of tuned_for."""

from __future__ import annotations

import functools

from .table import Tuned, tuned_for


def load_tuned(kernel: str, bucket: str, defines: dict | None = None, device=0) -> tuple:
    """(the loaded Kernel, its Tuned): `kernel` compiled with the shape's const values
    `defines` (like {"M": 1}) and the tuned configuration for `bucket` on GPU `device`;
    the Tuned names the value of every tuned parameter (what a launch's grid needs).
    Compiled and loaded once per kernel, bucket, values and GPU."""
    from ..runtime.cuda import device_ordinal
    key = tuple(sorted((defines or {}).items()))
    return _load(kernel, bucket, key, device_ordinal(device))


@functools.lru_cache(maxsize=None)
def _load(kernel: str, bucket: str, defines: tuple, device: int) -> tuple:
    import ember
    from ..runtime import cuda
    from .workloads import source_of
    tuned: Tuned = tuned_for(kernel, bucket, device)
    program = ember.compile(source_of(kernel), arch=cuda.context(device).arch,
                            defines={**dict(defines), **tuned.config}, kernels=[kernel])
    info = program.kernels[kernel]
    chosen = Tuned({p: info.consts[p] for p in info.tunables}, tuned.sass_path)     # the defaults spelled out
    return cuda.load(program, device, sass_path=tuned.sass_path)[kernel], chosen
