"""Loads through a `stream` parameter: inline PTX with cache qualifiers where the target
has them (PTX ISA 7.4: .L1::no_allocate; sm_80: .L2::256B), valid PTX on every target, and
the same values as the plain load (tests/gpu runs the Q4_K kernels that use it)."""

import pytest

import ember
from ember.artifacts.validate import validate
from ember.targets import TargetError, archs, parse_ptx_version, resolve

# every width a streamed load can have: 128-bit (merged), 64-bit vector and scalar, 32, 16, 8
SRC = """
kernel k(x: *global f32 align(16) stream, v: *global u16 align(8) stream, b: *global u8 stream,
         h: *global bf16 stream, d: *global f64 stream, s: *global i32 stream, y: *mut global f32) block(64) {
    let i = u64(thread_idx.x) * 4u64;
    let a = x[i] + x[i + 1u64] + x[i + 2u64] + x[i + 3u64];
    let c = f32(v[i] ^ v[i + 1u64] ^ v[i + 2u64] ^ v[i + 3u64]);
    y[thread_idx.x] = a + c + f32(b[i]) + f32(h[i]) + f32(d[i]) + f32(s[i]);
}
"""


def loads(ptx: str) -> list:
    return [line.split()[0] for line in ptx.splitlines() if line.strip().startswith("ld.global")]


@pytest.mark.parametrize("arch", archs())
@pytest.mark.parametrize("ptx_version", [None, "7.4"])
def test_streamed_loads_are_valid_everywhere(arch, ptx_version):
    try:
        target = resolve(arch, ptx_version)
    except TargetError:
        pytest.skip(f"{arch} needs a newer PTX than {ptx_version}")
    prog = ember.compile(SRC, arch=arch, ptx_version=ptx_version)
    got = loads(prog.ptx)
    assert len(got) == 6
    hinted = parse_ptx_version(prog.ptx_version) >= (7, 4)
    for op in got:
        assert ("L1::no_allocate" in op) == hinted
        assert ("L2::256B" in op) == (hinted and target.sm >= 80)
    validate(prog.ptx, arch)


def test_widths():
    got = sorted(loads(ember.compile(SRC, arch="sm_90").ptx))
    assert got == sorted("ld.global.nc.L1::no_allocate.L2::256B" + k
                         for k in (".v4.b32", ".v2.b32", ".u8", ".b16", ".b64", ".b32"))
