"""The CUDA driver through cuda-python's bindings, for the few calls cuda.core has no object
for (host <-> device copies, kernel attributes, tensor maps, launches with 128-byte
arguments): the module, and each call's result checked."""

from __future__ import annotations


class CudaError(RuntimeError):
    pass


def driver():
    from cuda.bindings import driver as d
    return d


def check(ret):
    """A cuda.bindings driver call's result, raising CudaError on failure."""
    drv = driver()
    err, *rest = ret if isinstance(ret, tuple) else (ret,)
    if err != drv.CUresult.CUDA_SUCCESS:
        _, name = drv.cuGetErrorName(err)
        _, text = drv.cuGetErrorString(err)
        raise CudaError(f"{name.decode() if name else err}: {text.decode() if text else ''}")
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else tuple(rest)
