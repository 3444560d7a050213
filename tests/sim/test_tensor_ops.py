"""Tensor-core ops in the simulator (ember/ir/ops/tensor.py): mma.m16n8k16 and ldmatrix
follow the PTX ISA's fragment layouts (checked here against formulas written out
independently of the op's tables), a kernel with a wrong layout gets wrong numbers,
partial warps are refused (S0010), and cp.async data read by ldmatrix before its wait is
S0009. tests/gpu/test_tensor_gpu.py compares all of it with the GPU."""

from pathlib import Path

import numpy as np
import pytest

import ember
from ember.ir import semantics as S
from ember.ir.types import BF16, F16
from ember.sim import load
from ember.sim.errors import SimError

TILES = (Path(__file__).parent / "mma_tiles.ember").read_text()


def operands(t: str, seed: int):
    """Random A (16x16), B (16x8) in t, C (16x8) f32; the buffers to pass and their values."""
    rng = np.random.default_rng(seed)
    ty = BF16 if t == "bf16" else F16
    a = S.round_to(rng.standard_normal(256), ty).astype(np.float64)
    b = S.round_to(rng.standard_normal(128), ty).astype(np.float64)
    c = rng.standard_normal(128).astype(np.float32)
    buf = (lambda v: S.to_bits(v.astype(np.float32), ty).astype(np.uint16)) if t == "bf16" else \
        (lambda v: v.astype(np.float16))
    return buf(a), buf(b), c, (a.reshape(16, 16) @ b.reshape(16, 8) + c.reshape(16, 8)).reshape(-1)


def tiles(t: str = "bf16", source: str = TILES):
    return ember.compile(source.replace("bf16", t), cache=False)


def by_hand(source: str, seed: int):
    """`by_hand` of `source` (mma_tiles.ember, edited) on fresh bf16 operands: (C after it, A B + C)."""
    a, b, c, want = operands("bf16", seed)
    load(tiles(source=source)).by_hand(a, b, c, grid=1)
    return c, want


@pytest.mark.parametrize("t", ["bf16", "f16"])
@pytest.mark.parametrize("kernel", ["by_hand", "by_ldmatrix"])
def test_mma_is_a_b_plus_c(t, kernel):
    a, b, c, want = operands(t, 7)
    getattr(load(tiles(t)), kernel)(a, b, c, grid=1)
    np.testing.assert_array_equal(c, want.astype(np.float32))     # exact sum, rounded once


def test_a_wrong_fragment_layout_gives_wrong_results():
    # the A fragment's two column halves swapped (a4..a7 taken for a0..a3)
    wrong = TILES.replace("+ 8 * (i / 4)];", "+ 8 * (1 - i / 4)];", 1)
    assert wrong != TILES
    c, want = by_hand(wrong, 8)
    assert np.abs(c - want).max() > 0.1


LDMATRIX = """
kernel show<const N: u32, const TRANS: bool>(m: *global u16, out: *mut global u16) block(32) {
    shared s: [u16; 256];
    let lane = thread_idx.x;
    for i in 0..8u32 { s[lane * 8 + i] = m[lane * 8 + i]; }
    barrier();
    var f: [u16; 8];
    for i in 0..8u32 { f[i] = 0u16; }
    // lane 8j + r gives row r of matrix j: matrix j is rows 8j..8j+7 of the 32 x 8 input
    if TRANS {
        if N == 1u32 { ldmatrix_x1_trans(f, 0u32, s, lane * 8); }
        if N == 2u32 { ldmatrix_x2_trans(f, 0u32, s, lane * 8); }
        if N == 4u32 { ldmatrix_x4_trans(f, 0u32, s, lane * 8); }
    } else {
        if N == 1u32 { ldmatrix_x1(f, 0u32, s, lane * 8); }
        if N == 2u32 { ldmatrix_x2(f, 0u32, s, lane * 8); }
        if N == 4u32 { ldmatrix_x4(f, 0u32, s, lane * 8); }
    }
    for i in 0..8u32 { out[lane * 8 + i] = f[i]; }
}
"""


def ldmatrix_model(m: np.ndarray, n: int, trans: bool) -> np.ndarray:
    """The PTX ISA's description: for matrix j, lane l holds row l/4, columns 2(l%4), +1
    (transposed: rows 2(l%4), +1 of column l/4)."""
    mats = m.reshape(4, 8, 8)
    out = np.zeros((32, 8), np.uint16)
    for lane in range(32):
        for j in range(n):
            for e in range(2):
                r, col = (2 * (lane % 4) + e, lane // 4) if trans else (lane // 4, 2 * (lane % 4) + e)
                out[lane, 2 * j + e] = mats[j][r, col]
    return out.reshape(-1)


@pytest.mark.parametrize("n", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_layout(n, trans):
    m = np.arange(256, dtype=np.uint16) * 3 + 1
    out = np.zeros(256, np.uint16)
    prog = ember.compile(LDMATRIX, defines={"N": n, "TRANS": trans}, cache=False)
    load(prog).show(m, out, grid=1)
    np.testing.assert_array_equal(out, ldmatrix_model(m, n, trans))


def test_part_of_a_warp_is_refused():
    divergent = TILES.replace("    mma_m16n8k16(acc, 0u32, fa, 0u32, fb, 0u32);\n",
                              "    if lane < 16u32 { mma_m16n8k16(acc, 0u32, fa, 0u32, fb, 0u32); }\n", 1)
    with pytest.raises(SimError) as e:
        by_hand(divergent, 1)
    assert e.value.code == "S0010" and "lane 16 of its warp" in str(e.value)


def test_a_block_of_48_threads_has_a_partial_warp():
    prog = ember.compile(LDMATRIX.replace("block(32)", "block(48)").replace("[u16; 256]", "[u16; 384]"),
                         defines={"N": 4, "TRANS": False}, cache=False)
    with pytest.raises(SimError) as e:
        load(prog).show(np.zeros(384, np.uint16), np.zeros(384, np.uint16), grid=1)
    assert e.value.code == "S0010"


def test_ldmatrix_of_cp_async_data_before_the_wait_is_reported():
    early = LDMATRIX.replace("    for i in 0..8u32 { s[lane * 8 + i] = m[lane * 8 + i]; }\n    barrier();\n",
                             "    cp_async_16(s, lane * 8, m, lane * 8, 16u32);\n    cp_async_commit();\n")
    prog = ember.compile(early, defines={"N": 4, "TRANS": False}, cache=False)
    with pytest.raises(SimError) as e:
        load(prog).show(np.zeros(256, np.uint16), np.zeros(256, np.uint16), grid=1)
    assert e.value.code == "S0009"


def test_below_sm80_mma_is_a_located_error():
    with pytest.raises(ember.CompileError) as e:
        ember.compile(TILES, arch="sm_75", cache=False)
    text = str(e.value)
    assert "`mma_m16n8k16` needs sm_80 or newer" in text and "E0501" in text
    assert "ldmatrix" not in text          # ldmatrix is sm_75+


def test_a_fragment_read_past_its_array_names_the_first_element_outside():
    # the A fragment taken from fa[4..12): the op reads its 8 elements as one checked run
    # (Machine.load_run), and reports the first element a load of its own would
    past = TILES.replace("mma_m16n8k16(acc, 0u32, fa, 0u32, fb, 0u32);",
                         "mma_m16n8k16(acc, 0u32, fa, lane / 32u32 + 4u32, fb, 0u32);", 1)
    with pytest.raises(SimError) as e:
        by_hand(past, 2)
    assert e.value.code == "S0001" and "element 8 of 8" in str(e.value)


def test_a_fragment_may_start_at_any_element_of_its_array():
    # A from fa[2..10): a run of 8 bf16 that is not 16-byte aligned in its array - registers
    # have no alignment; the op reads the run as one access, checked element by element
    shifted = (TILES.replace("var fa: [bf16; 8];", "var fa: [bf16; 10];", 1)
               .replace("        fa[i] = a[", "        fa[i + 2u32] = a[", 1)
               .replace("mma_m16n8k16(acc, 0u32, fa, 0u32, fb, 0u32);", "mma_m16n8k16(acc, 0u32, fa, 2u32, fb, 0u32);", 1))
    assert shifted.count("fa, 2u32") == 1 and "fa[i + 2u32]" in shifted
    c, want = by_hand(shifted, 5)
    np.testing.assert_array_equal(c, want.astype(np.float32))
