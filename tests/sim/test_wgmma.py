"""wgmma in the simulator: D = A B^T exactly as the PTX ISA lays out the accumulators and
reads the swizzled tiles through their descriptors (every swizzle, bf16 and f16, N from 8
to 256, one and two warpgroups, A from tiles and from registers); the swizzled tiles'
element order; and each way of misusing the asynchronous tensor cores, reported at its
line (tests/gpu/test_wgmma_gpu.py runs the same kernels on an H100)."""

import numpy as np
import pytest

import ember
from ember.diagnostics import CompileError
from ember.ir.ops.wgmma import acc_layout, descriptor_bits, element_offset
from ember.sim.errors import SimError
from tests.sim import wgmma_programs as W


def _run(**kw):
    n, groups, t = kw.get("n", 64), kw.get("groups", 1), kw.get("t", "bf16")
    prog = ember.compile(W.source(**kw), arch="sm_90a", stop_after="ir-opt", cache=False)
    a, b = W.inputs(t, n, groups)
    return W.run(prog, a, b, n), W.reference(a, b)


@pytest.mark.parametrize("swizzle,t,n,groups,registers,copies", [
    (128, "bf16", 64, 1, False, False), (64, "bf16", 256, 2, False, True), (32, "f16", 8, 1, False, False),
    (128, "f16", 48, 2, True, True), (32, "bf16", 120, 1, True, False), (128, "bf16", 128, 1, False, True)])
def test_wgmma_computes_a_times_b_transposed(swizzle, t, n, groups, registers, copies):
    got, want = _run(swizzle=swizzle, t=t, n=n, groups=groups, registers=registers, copies=copies)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kw", [dict(b_mn=True), dict(a_mn=True, b_mn=True, n=256), dict(swizzle=32, a_mn=True, n=40),
                                dict(swizzle=64, registers=True, b_mn=True, n=96, groups=2),
                                dict(swizzle=0), dict(swizzle=0, a_mn=True, b_mn=True, n=128, groups=2),
                                dict(swizzle=0, registers=True, b_mn=True, n=24)])
def test_transposed_operands(kw):
    got, want = _run(**kw)
    np.testing.assert_array_equal(got, want)


def test_descriptor_decodes_as_the_isa_lays_out_k_major_tiles():
    """128-byte swizzle: row i of the operand is 128 bytes after row i - 1 (8-row groups SBO
    = 1024 apart), its 16-byte chunk c at c ^ (i % 8); a start 32 bytes into the row (the
    second k16 step) moves the columns, not the rows' XOR."""
    i, k = np.meshgrid(np.arange(64), np.arange(16), indexing="ij")
    got = element_offset(np.uint64(descriptor_bits(128)) | np.uint64(32 >> 4), i, k, 2)
    chunk = (2 + k // 8) ^ (i % 8)
    np.testing.assert_array_equal(got, i * 128 + chunk * 16 + (k % 8) * 2)
    got = element_offset(np.uint64(descriptor_bits(32)), i, k, 2)          # 32-byte rows: chunk ^ bit 2 of i
    np.testing.assert_array_equal(got, i * 32 + ((k // 8) ^ ((i // 4) % 2)) * 16 + (k % 8) * 2)


def test_accumulator_layout_covers_d_once():
    rows, cols = acc_layout(256)
    seen = np.zeros((64, 256), int)
    np.add.at(seen, (rows, cols), 1)
    assert (seen == 1).all()
    assert (rows[0, :4] == [0, 0, 8, 8]).all() and (cols[5, :4] == [2, 3, 2, 3]).all()


def test_a_wrong_layout_gives_wrong_results():
    """Reading the accumulators as if thread q held row q / 2 (a wrong guess) scrambles C."""
    src = W.source().replace("wgmma_acc_row(q % 128u32, j)", "(q % 128u32) / 2u32")
    prog = ember.compile(src, arch="sm_90a", stop_after="ir-opt", cache=False)
    a, b = W.inputs("bf16", 64, 1)
    assert not np.array_equal(W.run(prog, a, b, 64), W.reference(a, b))


def test_copies_and_ldmatrix_move_whole_chunks_of_a_swizzled_tile():
    """cp_async_16 into a row (and into the whole tile by flat index) lands where `t[r][c]`
    reads; ldmatrix_x4 of a swizzled tile gives what it gives from a plain one."""
    src = W.COPIES
    prog = ember.compile(src, arch="sm_90", stop_after="ir-opt", cache=False)
    x = np.arange(512, dtype=np.uint16)
    out = np.zeros(1024 + 512, np.uint16)
    ember.runtime.load(prog, device="sim").k(x, out, grid=1)
    np.testing.assert_array_equal(out[:512], x)
    np.testing.assert_array_equal(out[512:1024], x)
    assert (out[1024:1024 + 512].reshape(32, 16)[:, :8] == 0).all()


def test_swizzled_tile_elements_move_within_their_row():
    """`t[r][c]` of a swizzle(128) bf16 tile lies at column c ^ 8 (r % 8) of row r."""
    src = """kernel k(out: *mut global u32) block(64) {
    shared t: [[u16; 64]; 8] swizzle(128);
    for r in 0u32..8u32 { t[r][thread_idx.x] = u16(r * 64u32 + thread_idx.x); }
    barrier();
    for r in 0u32..8u32 { out[r * 64u32 + thread_idx.x] = u32(t[r][thread_idx.x]); }
}"""
    prog = ember.compile(src, arch="sm_90a", stop_after="ir-opt", cache=False)
    out = np.zeros(512, np.uint32)
    ember.runtime.load(prog, device="sim").k(out, grid=1)
    np.testing.assert_array_equal(out, np.arange(512))     # what is written is read back
    ptx = ember.compile(src, arch="sm_90a", cache=False).ptx
    assert ".shared .align 1024 .b8 k_$_t[1024];" in ptx and "xor.b32" in ptx


@pytest.mark.parametrize("kw, code, message", [
    (dict(fence=False), "S0013", "issues a wgmma without a wgmma_fence()"),
    (dict(fence_proxy=False), "S0012", "written by an ordinary store that the tensor cores need not see yet"),
    (dict(wait=False), "S0009", "which a wgmma still in flight holds"),
    (dict(early_overwrite=True), "S0009", "which a bulk store or a wgmma may still be reading"),
])
def test_misuse_is_reported(kw, code, message):
    with pytest.raises(SimError) as err:
        _run(**kw)
    assert err.value.diagnostic.code == code and message in err.value.diagnostic.message


def test_part_of_a_warpgroup_is_reported():
    src = W.source().replace("wgmma_fence();", "if q < 96u32 { wgmma_fence(); }")
    prog = ember.compile(src, arch="sm_90a", stop_after="ir-opt", cache=False)
    a, b = W.inputs("bf16", 64, 1)
    with pytest.raises(SimError) as err:
        W.run(prog, a, b, 64)
    assert err.value.diagnostic.code == "S0010" and "not by thread 96 of its warpgroup" in err.value.diagnostic.message


def test_an_operand_off_the_row_atoms_is_reported():
    """A row known only at run time (4: c starts as NaNs) that is no multiple of 8."""
    src = W.source().replace("wgmma(acc, ta[0], 64u32 * grp,", "wgmma(acc, ta[0], 64u32 * grp + u32(c[0] != 0.0) * 4u32,")
    prog = ember.compile(src, arch="sm_90a", stop_after="ir-opt", cache=False)
    a, b = W.inputs("bf16", 64, 1)
    with pytest.raises(SimError) as err:
        W.run(prog, a, b, 64)
    assert err.value.diagnostic.code == "S0013" and "reads A from row 4, column 0" in err.value.diagnostic.message


TILE = "kernel k(o: *mut global f32) block(128) {{\n    {decl}\n    o[0] = 0.0;\n}}"


@pytest.mark.parametrize("decl, message", [
    ("shared t: [[bf16; 64]; 16] swizzle(96);", "a tile swizzles 32, 64 or 128 bytes, not 96"),
    ("shared t: [bf16; 64] swizzle(128);", "a swizzled tile has rows"),
    ("shared t: [[bf16; 32]; 16] swizzle(128);", "each row of a `swizzle(128)` tile is 128 bytes; `[bf16; 32]` is 64"),
    ("shared t: [[f32; 32]; 12] swizzle(128);", "rows come in atoms of 8"),
])
def test_declaration_errors(decl, message):
    with pytest.raises(CompileError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        ember.compile(TILE.format(decl=decl), arch="sm_90a", cache=False)


WG = """kernel k(o: *mut global f32) block(128) {{
    shared ta: [[bf16; 64]; 64] swizzle(128);
    shared tb: [[bf16; 64]; 64] swizzle(128);
    shared plain: [[bf16; 64]; 64];
    var acc: [f32; 32];
    {call}
    o[0] = acc[0];
}}"""


@pytest.mark.parametrize("call, arch, message", [
    ("wgmma(acc, ta, 0u32, 0u32, tb, 0u32, 0u32, false);", "sm_90",
     "`wgmma` needs an arch-specific target (sm_90a)"),
    ("wgmma(acc, plain, 0u32, 0u32, tb, 0u32, 0u32, false);", "sm_90a", "A is a swizzled shared tile"),
    ("wgmma(acc, ta, 4u32, 0u32, tb, 0u32, 0u32, false);", "sm_90a", "A's rows 4..67 must start at a multiple of 8"),
    ("wgmma(acc, ta, 0u32, 56u32, tb, 0u32, 0u32, false);", "sm_90a", "A's columns 56..71 must start on a 16-byte"),
    ("wgmma(acc, ta, 0u32, 0u32, tb, 8u32, 0u32, false);", "sm_90a", "B's rows 8..71"),
    ("var small: [f32; 3]; wgmma(small, ta, 0u32, 0u32, tb, 0u32, 0u32, false);", "sm_90a", "gives N = 6"),
    ("atomic_add(ta[0], 0u32, bf16(1.0));", "sm_90a", "would ignore the XOR order of the swizzled tile"),
])
def test_wgmma_call_errors(call, arch, message):
    with pytest.raises(CompileError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ember.compile(WG.format(call=call), arch=arch, cache=False)


def test_a_swizzled_tile_cannot_go_to_a_function():
    """A device function would index the tile (or a row) plainly: a located error, not a
    silently wrong order."""
    src = """fn put(p: *mut shared bf16, i: u32) { p[i] = bf16(1.0); }
kernel k(o: *mut global bf16) block(64) {
    shared t: [[bf16; 64]; 8] swizzle(128);
    put(t[1], thread_idx.x);
    barrier();
    o[thread_idx.x] = t[1][thread_idx.x];
}"""
    with pytest.raises(CompileError, match=r"`put` would index the swizzled tile `\[bf16; 64\] swizzle\(128\)` plainly"):
        ember.compile(src, arch="sm_90", cache=False)
