"""Launch argument checks (device independent, so they run without a GPU)."""

import struct

import numpy as np
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
    import numpy as np
    for flag in (True, False, np.bool_(True)):       # no parameter is a bool: a flag passed as a count
        for t in (U32, I32, F16):
            with pytest.raises(LaunchError, match=f"`n` is `{t}`, got bool {bool(flag)}"):
                scalar_bytes(flag, t, "k", "n")


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


ELEMS = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64"]
DTYPES = [np.dtype(c).newbyteorder(o) for c in ("i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8",
                                                 "?") for o in "<>"]


@pytest.mark.parametrize("elem", ELEMS + ["bf16"])
def test_a_buffer_is_accepted_only_when_its_bytes_mean_the_parameters_type(elem):
    """Every numpy dtype and byte order against every element type: a buffer the launch
    accepts holds little-endian values of the parameter's type (bf16 takes its bits as
    u16), so nothing is read wrongly - a big-endian `>f4` for an f32 is refused."""
    from ember.abi import elem_name_of_typestr
    from ember.ir import semantics as S
    from ember.ir.types import SCALARS
    k = KernelInfo("k", (ParamInfo("x", PtrType(SCALARS[elem], "global", False)),), (32, 1, 1))
    want = np.dtype(np.uint16 if elem == "bf16" else S.dtype(SCALARS[elem])).newbyteorder("<")
    for dt in DTYPES:
        buf = Buffer(0x1000, 64, elem_name_of_typestr(dt.str))
        try:
            check_buffers(k, [(k.params[0], buf)])
            accepted = True
        except LaunchError as e:
            accepted = False
            if dt.byteorder == ">" and dt.itemsize > 1:
                assert "big-endian" in str(e)
        same = (dt.newbyteorder("<") == want and (dt.byteorder != ">" or dt.itemsize == 1)) or \
            (elem == "u8" and dt.kind == "b")          # numpy bools are the bytes 0 and 1
        assert accepted == same, (elem, dt.str)


def test_a_byte_swapped_bfloat16_is_named_big_endian():
    """ml_dtypes' bfloat16 has a bare `V2` typestr, named by its dtype's name: a byte-swapped
    one (`>V2`) was named plain bf16 and accepted (ember.ops in the simulator wrote a KV
    cache of it little-endian, until 2026-11-27)."""
    import ml_dtypes
    from ember.abi import BIG_ENDIAN, elem_name_of_dtype
    bf16 = np.dtype(ml_dtypes.bfloat16)
    assert elem_name_of_dtype(bf16) == elem_name_of_dtype(bf16.newbyteorder("<")) == "bf16"
    assert elem_name_of_dtype(bf16.newbyteorder(">")) == "bf16" + BIG_ENDIAN


def test_a_big_endian_file_is_refused_by_ember_run(tmp_path):
    import subprocess
    import sys
    (tmp_path / "k.ember").write_text("kernel k(x: *mut global f32) block(32) { x[thread_idx.x] = 2.0 * x[thread_idx.x]; }\n")
    np.save(tmp_path / "be.npy", np.arange(32, dtype=">f4"))
    r = subprocess.run([sys.executable, "-m", "ember", "run", "k.ember", "--grid", "1", "x=be.npy"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 2 and "big-endian f32" in r.stderr
