"""GPU targets: which `sm_XX` Ember compiles for, with which PTX ISA version, and the
per-architecture limits the checker enforces (shared memory, per-thread arrays).

LLVM aborts the whole process on an (sm, PTX) pair it does not support, and silently
ignores a `+ptxNN` feature it does not know, so every pair is checked here first and the
`.version` of the emitted PTX is checked afterwards. Every layer may read this module
(it imports nothing of Ember's).
"""

from __future__ import annotations

from .records import record

# arch -> (SM number, minimum PTX version). The minimum is also the default: it asks the
# least of the driver that will load the PTX. Measured against LLVM 22's NVPTX back end.
_ARCHS: dict[str, tuple[int, tuple[int, int]]] = {
    "sm_75": (75, (6, 3)),
    "sm_80": (80, (7, 0)),
    "sm_86": (86, (7, 1)),
    "sm_87": (87, (7, 4)),
    "sm_89": (89, (7, 8)),
    "sm_90": (90, (7, 8)),
    "sm_90a": (90, (8, 0)),
    "sm_100": (100, (8, 6)),
    "sm_100a": (100, (8, 6)),
    "sm_103": (103, (8, 8)),
    "sm_120": (120, (8, 7)),
    "sm_120a": (120, (8, 7)),
    "sm_121": (121, (8, 8)),
}

# PTX ISA versions LLVM 22 can emit.
PTX_VERSIONS: tuple[tuple[int, int], ...] = (
    (6, 3), (6, 4), (6, 5),
    (7, 0), (7, 1), (7, 2), (7, 3), (7, 4), (7, 5), (7, 6), (7, 7), (7, 8),
    (8, 0), (8, 1), (8, 2), (8, 3), (8, 4), (8, 5), (8, 6), (8, 7), (8, 8),
    (9, 0),
)

DEFAULT_ARCH = "sm_90"

# Shared memory a block may declare statically (every architecture), and the most it may
# use with dynamic shared memory (opted into per kernel), by SM number (CUDA programming
# guide, "Technical Specifications per Compute Capability").
STATIC_SHARED_BYTES = 48 * 1024
_DYNAMIC_SHARED_BYTES = {75: 64 * 1024, 80: 163 * 1024, 86: 99 * 1024, 87: 163 * 1024, 89: 99 * 1024,
                         90: 227 * 1024, 100: 227 * 1024, 103: 227 * 1024, 120: 99 * 1024, 121: 99 * 1024}
# Local memory (per-thread arrays that do not fit in registers) per thread.
LOCAL_BYTES_PER_THREAD = 512 * 1024


class TargetError(ValueError):
    """An unknown arch or an unsupported (arch, PTX version) pair: a usage error."""


@record(frozen=True)
class Target:
    arch: str
    sm: int
    ptx: tuple[int, int]

    @property
    def ptx_feature(self) -> str:
        return f"+ptx{self.ptx[0]}{self.ptx[1]}"

    @property
    def ptx_text(self) -> str:
        return f"{self.ptx[0]}.{self.ptx[1]}"

    @property
    def has_native_bf16_convert_from_int(self) -> bool:
        return self.sm >= 90

    @property
    def static_shared_bytes(self) -> int:
        return STATIC_SHARED_BYTES

    @property
    def max_shared_bytes(self) -> int:
        """The most shared memory one block may use (static plus opted-in dynamic)."""
        return _DYNAMIC_SHARED_BYTES[self.sm]

    @property
    def local_bytes_per_thread(self) -> int:
        return LOCAL_BYTES_PER_THREAD


def archs() -> list[str]:
    return list(_ARCHS)


def parse_ptx_version(text: str) -> tuple[int, int]:
    try:
        major, minor = text.split(".")
        return int(major), int(minor)
    except ValueError:
        raise TargetError(f"invalid PTX version `{text}` (expected MAJOR.MINOR, e.g. 8.0)") from None


def resolve(arch: str, ptx: str | tuple[int, int] | None = None) -> Target:
    if arch not in _ARCHS:
        raise TargetError(f"unknown target `{arch}`; known targets: {', '.join(_ARCHS)}")
    sm, minimum = _ARCHS[arch]
    if ptx is None:
        version = minimum
    else:
        version = parse_ptx_version(ptx) if isinstance(ptx, str) else tuple(ptx)
        if version not in PTX_VERSIONS:
            known = ", ".join(f"{a}.{b}" for a, b in PTX_VERSIONS)
            raise TargetError(f"PTX version {version[0]}.{version[1]} is not supported; known: {known}")
        if version < minimum:
            raise TargetError(f"{arch} needs PTX {minimum[0]}.{minimum[1]} or newer "
                              f"(asked for {version[0]}.{version[1]})")
    return Target(arch, sm, version)
