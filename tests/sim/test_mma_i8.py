"""mma_m16n8k32 and mma_m16n8k16_i8 (gpu.mma_i8, ember/ir/ops/tensor.py) in the simulator: 8-bit integer
products in i32, in the PTX ISA's fragment layouts (checked against formulas written out
here independently of the op's tables), signed or unsigned as the words' types say, sums
that wrap to 32 bits; a wrong layout gives wrong results, a partial warp is S0010, sm_75
is refused at compile time. tests/gpu/test_tensor_gpu.py compares it with the GPU."""

import numpy as np
import pytest

import ember
from ember.sim import load
from ember.sim.errors import SimError

# A [16, 32] row-major and B^T [8, 32] (B column-major) as words of four bytes; lane (g, t)
# holds A rows g, g + 8 at k = 4t.., 16 + 4t.. and B column g at k = 4t.., 16 + 4t...
BY_HAND = """
kernel by_hand(a: *global AT, b: *global BT, c: *mut global i32) block(32) {
    let lane = thread_idx.x;
    let g = lane / 4;
    let t = lane % 4;
    var fa: [AT; 4];
    var fb: [BT; 2];
    var acc: [i32; 4];
    for r in 0..4u32 {
        fa[r] = a[(g + 8 * (r % 2)) * 8 + t + 4 * (r / 2)];
    }
    for r in 0..2u32 {
        fb[r] = b[g * 8 + t + 4 * r];
    }
    for i in 0..4u32 {
        acc[i] = c[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2];
    }
    mma_m16n8k32(acc, 0u32, fa, 0u32, fb, 0u32);
    for i in 0..4u32 {
        c[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2] = acc[i];
    }
}
"""

# K = 16: A [16, 16] row-major, B^T [8, 16]; lane (g, t) holds A rows g, g + 8 at k = 4t.. (words
# 0 and 1) and B column g at k = 4t.. (PTX ISA, "Matrix Fragments for mma.m16n8k16 with integer type")
BY_HAND_K16 = """
kernel by_hand(a: *global AT, b: *global BT, c: *mut global i32) block(32) {
    let lane = thread_idx.x;
    let g = lane / 4;
    let t = lane % 4;
    var fa: [AT; 2];
    var fb: [BT; 1];
    var acc: [i32; 4];
    for r in 0..2u32 {
        fa[r] = a[(g + 8 * r) * 4 + t];
    }
    fb[0] = b[g * 4 + t];
    for i in 0..4u32 {
        acc[i] = c[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2];
    }
    mma_m16n8k16_i8(acc, 0u32, fa, 0u32, fb, 0u32);
    for i in 0..4u32 {
        c[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2] = acc[i];
    }
}
"""

WORD = {"u32": np.uint8, "i32": np.int8}


def run(ta: str, tb: str, a, b, c, source: str = BY_HAND, **kw):
    kern = load(ember.compile(source.replace("AT", ta).replace("BT", tb), cache=False, **kw)).by_hand
    words = {"u32": np.uint32, "i32": np.int32}
    kern(np.ascontiguousarray(a.astype(WORD[ta])).view(words[ta]),
         np.ascontiguousarray(b.T.astype(WORD[tb])).view(words[tb]), c, grid=1)


def operands(ta: str, tb: str, seed: int, k: int = 32):
    rng = np.random.default_rng(seed)
    lo = {"u32": 0, "i32": -128}
    a = rng.integers(lo[ta], lo[ta] + 256, (16, k))
    b = rng.integers(lo[tb], lo[tb] + 256, (k, 8))
    c = rng.integers(-2 ** 20, 2 ** 20, (16, 8)).astype(np.int32)
    return a, b, c


@pytest.mark.parametrize("ta, tb", [("u32", "i32"), ("i32", "i32"), ("u32", "u32"), ("i32", "u32")])
def test_mma_i8_is_a_b_plus_c(ta, tb):
    a, b, c, = operands(ta, tb, 3)
    want = (a @ b + c).astype(np.int32)
    got = c.reshape(-1).copy()
    run(ta, tb, a, b, got)
    np.testing.assert_array_equal(got.reshape(16, 8), want)


@pytest.mark.parametrize("ta, tb", [("u32", "i32"), ("i32", "i32"), ("u32", "u32"), ("i32", "u32")])
def test_mma_k16_is_a_b_plus_c(ta, tb):
    a, b, c, = operands(ta, tb, 6, k=16)
    want = (a @ b + c).astype(np.int32)
    got = c.reshape(-1).copy()
    run(ta, tb, a, b, got, source=BY_HAND_K16)
    np.testing.assert_array_equal(got.reshape(16, 8), want)


def test_a_k16_fragment_in_k32_layout_gives_wrong_results():
    # m16n8k32's A word 1 is row g + 8 too, but its B word 0 is k 4t..: taking A's rows g + 8
    # from word 1 of a k-major pair (k32's words 0, 2) would be the mistake
    wrong = BY_HAND_K16.replace("fa[r] = a[(g + 8 * r) * 4 + t];", "fa[r] = a[g * 4 + (t + 2 * r) % 4];", 1)
    assert wrong != BY_HAND_K16
    a, b, c = operands("u32", "i32", 7, k=16)
    got = c.reshape(-1).copy()
    run("u32", "i32", a, b, got, source=wrong)
    assert (got.reshape(16, 8) != a @ b + c).any()


def test_k16_needs_sm_80():
    with pytest.raises(ember.CompileError) as e:
        ember.compile(BY_HAND_K16.replace("AT", "u32").replace("BT", "i32"), arch="sm_75", cache=False)
    assert "`mma_m16n8k16_i8` needs sm_80 or newer" in str(e.value)


def test_sums_wrap_to_32_bits():
    a = np.full((16, 32), 255)
    b = np.full((32, 8), 255)
    c = np.full(128, 2 ** 31 - 1000, dtype=np.int32)
    run("u32", "u32", a, b, c)
    exact = 32 * 255 * 255 + 2 ** 31 - 1000
    assert (c == np.int64(exact - 2 ** 32)).all()


def test_a_wrong_fragment_layout_gives_wrong_results():
    wrong = BY_HAND.replace("t + 4 * (r / 2)]", "t + 4 * (1 - r / 2)]", 1)      # A's k halves swapped
    assert wrong != BY_HAND
    a, b, c = operands("u32", "i32", 4)
    got = c.reshape(-1).copy()
    run("u32", "i32", a, b, got, source=wrong)
    assert (got.reshape(16, 8) != a @ b + c).any()


def test_a_partial_warp_is_refused():
    divergent = BY_HAND.replace("    mma_m16n8k32(acc, 0u32, fa, 0u32, fb, 0u32);\n",
                                "    if lane < 16u32 { mma_m16n8k32(acc, 0u32, fa, 0u32, fb, 0u32); }\n", 1)
    a, b, c = operands("u32", "i32", 5)
    with pytest.raises(SimError, match="S0010"):
        run("u32", "i32", a, b, c.reshape(-1).copy(), source=divergent)


def test_needs_sm_80():
    with pytest.raises(ember.CompileError) as e:
        ember.compile(BY_HAND.replace("AT", "u32").replace("BT", "i32"), arch="sm_75", cache=False)
    assert "`mma_m16n8k32` needs sm_80 or newer" in str(e.value)


def test_fragments_must_be_words():
    with pytest.raises(ember.CompileError, match="E0"):
        ember.compile(BY_HAND.replace("AT", "u8").replace("BT", "i32"), cache=False)
