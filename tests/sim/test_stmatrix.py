"""stmatrix_x1/x2/x4 (and _trans), ldmatrix's inverse (sm_90): the matrices land in shared
memory as the PTX ISA lays them out (lane 8j + r gives row r of matrix j; lanes 4r..4r+3
hold it, 2 elements each); with _trans, each matrix transposed; ldmatrix reads back what
stmatrix stored (tests/gpu/test_stmatrix_gpu.py: the same on an H100)."""

import numpy as np
import pytest

import ember


def source(n: int, trans: bool) -> str:
    t = "_trans" if trans else ""
    return f"""kernel k(x: *global u16, out: *mut global u16, back: *mut global u16) block(32) {{
    shared s: [[u16; 8]; 32];
    var f: [u16; 8];
    var g: [u16; 8];
    let l = thread_idx.x;
    for i in 0u32..8u32 {{ f[i] = x[l * 8u32 + i]; }}
    if l >= {8 * n}u32 {{ for i in 0u32..8u32 {{ s[l][i] = 0u16; }} }}
    stmatrix_x{n}{t}(s[l % {8 * n}u32], 0u32, f, 0u32);
    barrier();
    for i in 0u32..8u32 {{ out[l * 8u32 + i] = s[l][i]; }}
    ldmatrix_x{n}{t}(g, 0u32, s[l % {8 * n}u32], 0u32);
    for i in 0u32..{2 * n}u32 {{ back[l * 8u32 + i] = g[i]; }}
}}"""


def model(x: np.ndarray, n: int, trans: bool) -> np.ndarray:
    """The shared rows stmatrix writes: matrix j row r column c from lane 4r + c / 2."""
    out = np.zeros((32, 8), np.uint16)
    for j in range(n):
        for r in range(8):
            for c in range(8):
                holder, e = (4 * c + r // 2, r % 2) if trans else (4 * r + c // 2, c % 2)
                out[8 * j + r, c] = x[holder * 8 + 2 * j + e]
    return out


def run(n: int, trans: bool, device: str = "sim"):
    prog = ember.compile(source(n, trans), arch="sm_90", cache=False)
    x = np.random.default_rng(n + 8 * trans).integers(0, 65536, 256).astype(np.uint16)
    out, back = np.zeros(256, np.uint16), np.zeros(256, np.uint16)
    ember.runtime.load(prog, device=device).k(x, out, back, grid=1)
    return x, out.reshape(32, 8), back.reshape(32, 8)


@pytest.mark.parametrize("n", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix_lays_out_the_matrices_and_ldmatrix_reads_them_back(n, trans):
    x, out, back = run(n, trans)
    np.testing.assert_array_equal(out, model(x, n, trans))
    np.testing.assert_array_equal(back[:, :2 * n], x.reshape(32, 8)[:, :2 * n])


def test_stmatrix_needs_sm_90():
    with pytest.raises(ember.CompileError, match="`stmatrix_x4` needs sm_90 or newer"):
        ember.compile(source(4, False), arch="sm_80", cache=False)
