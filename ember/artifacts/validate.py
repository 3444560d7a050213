"""PTX -> cubin, to prove the PTX is valid and to report what it costs.

nvJitLink (pip: nvidia-nvjitlink, through cuda.bindings) needs no GPU and no CUDA
install; `ptxas` is used instead when asked for (or when nvJitLink is missing and
ptxas is on PATH). The info log gives registers, spills and shared memory per kernel.
"""

from __future__ import annotations

import os
import re

from ..cli_support import CommandError
from ..records import field, record


class ValidationError(Exception):
    def __init__(self, arch: str, log: str):
        self.arch = arch
        self.log = log.strip()
        super().__init__(f"PTX does not assemble for {arch}:\n{self.log}")


class ValidatorUnavailable(CommandError):
    """The assembler asked for is not installed (exit status 1, with what to install)."""


NVJITLINK_MISSING = ("nvJitLink (libnvJitLink) is not installed: `pip install nvidia-nvjitlink`, or put the CUDA "
                     "toolkit's ptxas on PATH and use --validator ptxas")


def library_missing(e: BaseException) -> bool:
    """`e` says a toolkit library (nvJitLink, nvFatbin) or its binding is not installed:
    an ImportError, or cuda.pathfinder's DynamicLibNotFoundError (matched by name, so
    that this test needs no import of cuda.pathfinder)."""
    return isinstance(e, ImportError) or any(c.__name__ == "DynamicLibNotFoundError" for c in type(e).__mro__)


@record
class KernelResources:
    name: str
    registers: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    stack: int = 0
    shared: int = 0
    barriers: int = 0

    def summary(self) -> str:
        return (f"{self.registers} registers, {self.spill_stores + self.spill_loads} bytes spilled, "
                f"{self.stack} bytes stack, {self.shared} bytes shared")


@record
class Validation:
    arch: str
    tool: str
    cubin: bytes
    kernels: dict = field(default_factory=dict)   # name -> KernelResources
    log: str = ""


# ptxas -v style lines (nvJitLink forwards them with -Xptxas=-v)
_FUNC = re.compile(r"Compiling entry function '([^']+)'|Function properties for (\S+)")
_STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(?:, used (\d+) barriers)?(?:, (\d+) bytes smem)?")


def parse_info_log(log: str) -> dict:
    kernels: dict = {}
    current = None
    for line in log.splitlines():
        m = _FUNC.search(line)
        if m:
            name = m.group(1) or m.group(2)
            current = kernels.setdefault(name, KernelResources(name))
            continue
        if current is None:
            continue
        m = _STACK.search(line)
        if m:
            current.stack, current.spill_stores, current.spill_loads = (int(x) for x in m.groups())
            continue
        m = _USED.search(line)
        if m:
            current.registers = int(m.group(1))
            current.barriers = int(m.group(2) or 0)
            current.shared = int(m.group(3) or 0)
    return kernels


def nvjitlink_available() -> bool:
    try:
        from cuda.bindings import nvjitlink  # noqa: F401
        nvjitlink.version()
        return True
    except Exception:
        return False


def ptxas_path() -> str | None:
    import shutil
    return shutil.which("ptxas")


def validate(ptx: str, arch: str, tool: str = "auto") -> Validation:
    """Assemble `ptx` for `arch`. tool: 'nvjitlink', 'ptxas' or 'auto'."""
    if tool == "auto":
        tool = "nvjitlink" if nvjitlink_available() else ("ptxas" if ptxas_path() else "none")
    if tool == "nvjitlink":
        return _nvjitlink(ptx, arch)
    if tool == "ptxas":
        return _ptxas(ptx, arch)
    raise ValidatorUnavailable("no PTX assembler: `pip install nvidia-nvjitlink`, or put the CUDA toolkit's ptxas "
                               "on PATH")


def _nvjitlink(ptx: str, arch: str) -> Validation:
    data = ptx.encode()
    options = [f"-arch={arch}", "-Xptxas=-v"]
    try:
        from cuda.bindings import nvjitlink
        handle = nvjitlink.create(len(options), options)
    except Exception as e:
        if library_missing(e):
            raise ValidatorUnavailable(NVJITLINK_MISSING) from None
        raise
    try:
        try:
            nvjitlink.add_data(handle, nvjitlink.InputType.PTX, data, len(data), "ember.ptx")
            nvjitlink.complete(handle)
        except nvjitlink.nvJitLinkError:
            raise ValidationError(arch, _log(nvjitlink, handle, error=True)) from None
        info = _log(nvjitlink, handle, error=False)
        size = nvjitlink.get_linked_cubin_size(handle)
        cubin = bytearray(size)
        nvjitlink.get_linked_cubin(handle, cubin)
    finally:
        nvjitlink.destroy(handle)
    return Validation(arch, "nvjitlink", bytes(cubin), parse_info_log(info), info)


def _log(nvjitlink, handle, error: bool) -> str:
    size = (nvjitlink.get_error_log_size if error else nvjitlink.get_info_log_size)(handle)
    buf = bytearray(size)
    if size:
        (nvjitlink.get_error_log if error else nvjitlink.get_info_log)(handle, buf)
    return buf.decode(errors="replace").rstrip("\x00")


def _ptxas(ptx: str, arch: str) -> Validation:
    import subprocess
    import tempfile
    exe = ptxas_path()
    if exe is None:
        raise ValidatorUnavailable("ptxas is not on PATH (it comes with the CUDA toolkit); --validator nvjitlink "
                                   "needs no toolkit (`pip install nvidia-nvjitlink`)")
    with tempfile.TemporaryDirectory() as d:
        src, out = os.path.join(d, "ember.ptx"), os.path.join(d, "ember.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        r = subprocess.run([exe, f"-arch={arch}", "-v", src, "-o", out], capture_output=True, text=True)
        if r.returncode != 0:
            raise ValidationError(arch, r.stderr or r.stdout)
        with open(out, "rb") as f:
            cubin = f.read()
    log = r.stdout + r.stderr
    return Validation(arch, "ptxas", cubin, parse_info_log(log), log)
