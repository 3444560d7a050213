"""`min_blocks(N)` reaches ptxas: N blocks of the kernel's size must fit on one SM, so the
assembler caps registers per thread at 65536 / (N * threads)."""

import ember
from ember.artifacts.validate import validate

# enough independent values live at once that, unbounded, ptxas uses more than 32 registers
SRC = """
kernel k<const B: u32 = 1>(x: *global f32, y: *mut global f32) block(1024) min_blocks(B) {
    var v: [f32; 48];
    unroll for i in 0..48u32 {
        v[i] = x[thread_idx.x * 48u32 + i];
    }
    var s: f32 = 0.0;
    unroll for i in 0..48u32 {
        s += v[i] * v[47u32 - i] + v[(i * 7u32) % 48u32];
    }
    y[thread_idx.x] = s;
}
"""


def registers(blocks: int) -> int:
    ptx = ember.compile(SRC, defines={"B": blocks}).ptx
    return validate(ptx, "sm_90").kernels["k"].registers


def test_min_blocks_caps_registers():
    assert registers(1) <= 64                 # 1024 threads: the block size alone caps at 64
    assert registers(2) <= 32
    assert ".minnctapersm 2" in ember.compile(SRC, defines={"B": 2}).ptx
