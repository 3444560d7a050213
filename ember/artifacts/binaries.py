"""PTX -> cubin (nvJitLink) and cubins + PTX -> fatbin (nvFatbin), both cached by content:
a cubin is a function of the PTX bytes, the arch and the assembler's version only, so
its key is exactly those (ember.cache)."""

from __future__ import annotations

import os
import sys

from .. import cache as cache_mod
from ..records import asdict
from .validate import KernelResources, ValidatorUnavailable, library_missing, validate


class FatbinError(Exception):
    """nvFatbin refused the inputs (a bug in Ember: the cubins and PTX are its own)."""


NVFATBIN_MISSING = ("nvFatbin (libnvfatbin) is not installed: `pip install nvidia-nvfatbin` (--emit fatbin, and "
                    "--emit header with the default --image fatbin, need it; --image cubin or ptx do not)")


_VERSIONS: dict = {}


def _version(dist: str, fallback) -> str:
    """A toolkit library's version for cache keys, without loading the library: the name
    of the wheel's `NAME-VERSION.dist-info` directory on sys.path (what importlib.metadata
    reads too, at 15-40 ms of imports a cache hit cannot afford), else the library's own
    answer."""
    if dist not in _VERSIONS:
        prefix = dist.replace("-", "_") + "-"
        found = None
        for entry in sys.path:
            try:
                names = os.listdir(entry or ".")
            except OSError:
                continue
            hits = [n for n in names if n.startswith(prefix) and n.endswith(".dist-info")]
            if hits:
                found = hits[0][len(prefix):-len(".dist-info")]
                break
        _VERSIONS[dist] = found or ".".join(map(str, fallback()))
    return _VERSIONS[dist]


def nvjitlink_version() -> str:
    def loaded():
        from cuda.bindings import nvjitlink
        return nvjitlink.version()
    return _version("nvidia-nvjitlink", loaded)


def _nvfatbin_version() -> str:
    def loaded():
        from cuda.bindings import nvfatbin
        return nvfatbin.version()
    return _version("nvidia-nvfatbin", loaded)


def cubin(ptx: str, arch: str, store=None) -> tuple[bytes, dict]:
    """The cubin of `ptx` for `arch` and each kernel's resources (name -> KernelResources).
    Raises ValidationError when the PTX does not assemble."""
    key = None
    if store is not None:
        key = cache_mod.make_key("cubin", {"arch": arch, "nvjitlink": nvjitlink_version()}, ptx.encode())
        entry = store.get(key)
        if entry is not None:
            return entry.blobs["cubin"], {n: KernelResources(**r) for n, r in entry.meta["resources"].items()}
    v = validate(ptx, arch, "nvjitlink")
    if store is not None:
        store.put(key, {"resources": {n: asdict(r) for n, r in v.kernels.items()}}, {"cubin": v.cubin})
    return v.cubin, v.kernels


def sm_number(arch: str) -> str:
    """sm_90a -> 90a: how nvFatbin names an architecture."""
    return arch[3:]


def fatbin(cubins: list, ptx_arch: str, ptx: str, store=None) -> bytes:
    """A fatbin holding each (arch, cubin) and the PTX of `ptx_arch` (for the driver to
    JIT on newer GPUs)."""
    key = None
    if store is not None:
        parts = [p for arch, c in cubins for p in (arch.encode(), c)] + [ptx_arch.encode(), ptx.encode()]
        key = cache_mod.make_key("fatbin", {"nvfatbin": _nvfatbin_version()}, *parts)
        entry = store.get(key)
        if entry is not None:
            return entry.blobs["fatbin"]
    try:
        from cuda.bindings import nvfatbin
        handle = nvfatbin.create([], 0)
    except Exception as e:
        if library_missing(e):
            raise ValidatorUnavailable(NVFATBIN_MISSING) from None
        raise
    try:
        for arch, data in cubins:
            nvfatbin.add_cubin(handle, data, len(data), sm_number(arch), f"ember.{arch}")
        text = ptx.encode() + b"\0"
        nvfatbin.add_ptx(handle, text, len(text), sm_number(ptx_arch), f"ember.{ptx_arch}.ptx", "")
        out = bytearray(nvfatbin.size(handle))
        nvfatbin.get(handle, out)
    except nvfatbin.nvFatbinError as e:
        raise FatbinError(f"nvFatbin: {e}") from None
    finally:
        nvfatbin.destroy(handle)
    data = bytes(out)
    if store is not None:
        store.put(key, {}, {"fatbin": data})
    return data
