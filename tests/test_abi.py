"""Launch argument checks (device independent, so they run without a GPU)."""

import struct

import pytest

from ember.driver import KernelInfo, ParamInfo
from ember.ir.types import F16, F32, I32, U32, PtrType
from ember.abi import Buffer, LaunchError, check_buffers, check_launch, scalar_bytes

K = KernelInfo("k", (ParamInfo("x", PtrType(F32, "global", False)),
                     ParamInfo("y", PtrType(F32, "global", True, 16)),
                     ParamInfo("n", U32)), (64, 1, 1))


def test_launch_shape():
    assert check_launch(K, 10, None) == ((10, 1, 1), (64, 1, 1))
    with pytest.raises(LaunchError, match="compiled for block"):
        check_launch(K, (1, 2), (32,))
    with pytest.raises(LaunchError, match="positive"):
        check_launch(K, (0,), None)
    free = KernelInfo("f", (), None)
    with pytest.raises(LaunchError, match="no fixed block size"):
        check_launch(free, 1, None)
    with pytest.raises(LaunchError, match="1024"):
        check_launch(free, 1, (64, 32))


def test_scalars():
    assert scalar_bytes(7, U32, "k", "n") == struct.pack("<I", 7)
    assert scalar_bytes(-1, I32, "k", "n") == struct.pack("<i", -1)
    assert scalar_bytes(1.5, F16, "k", "h") == struct.pack("<e", 1.5)
    with pytest.raises(LaunchError, match="out of range"):
        scalar_bytes(-1, U32, "k", "n")
    with pytest.raises(LaunchError, match="got float"):
        scalar_bytes(1.5, U32, "k", "n")


def bind(x: Buffer, y: Buffer):
    return [(K.params[0], x), (K.params[1], y), (K.params[2], b"\0\0\0\0")]


def test_buffers_type_alignment_and_writability():
    ok_x, ok_y = Buffer(0x1000, 64, "f32"), Buffer(0x2000, 64, "f32")
    check_buffers(K, bind(ok_x, ok_y))
    with pytest.raises(LaunchError, match="points to `f32`, got a buffer of f64"):
        check_buffers(K, bind(Buffer(0x1000, 64, "f64"), ok_y))
    with pytest.raises(LaunchError, match="16-byte aligned"):
        check_buffers(K, bind(ok_x, Buffer(0x2008, 64, "f32")))
    with pytest.raises(LaunchError, match="read-only"):
        check_buffers(K, bind(ok_x, Buffer(0x2000, 64, "f32", readonly=True)))
    with pytest.raises(LaunchError, match="contiguous"):
        check_buffers(K, bind(Buffer(0x1000, 64, "f32", contiguous=False), ok_y))


def test_readonly_buffer_must_not_overlap_a_written_one():
    with pytest.raises(LaunchError, match="overlaps `y`"):
        check_buffers(K, bind(Buffer(0x2000, 64, "f32"), Buffer(0x2020, 64, "f32")))
    check_buffers(K, bind(Buffer(0x2000, 32, "f32"), Buffer(0x2020, 64, "f32")))  # adjacent is fine
