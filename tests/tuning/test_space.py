"""ember.tune_space: the configurations a kernel's `tune [...]` declarations span, and the
checker's rules for those declarations."""

from pathlib import Path

import pytest

import ember
from ember import CompileError

ROOT = Path(__file__).resolve().parents[2]

SRC = """
kernel k<const BLOCK: u32 = 256 tune [128, 256, 512], const VEC: u32 = 4 tune [2, 4, 8],
         const COLS: u32 = 2048>(o: *mut global f32) block(BLOCK) {
    static_assert(BLOCK * VEC <= COLS);
    o[thread_idx.x] = f32(VEC);
}
kernel plain<const N: u32 = 64>(o: *mut global f32) block(N) { o[0] = 1.0; }
"""


def test_space_is_the_product_less_what_the_static_asserts_refuse():
    spaces = ember.tune_space(SRC)
    assert list(spaces) == ["k"]            # a kernel with nothing tuned has no space
    s = spaces["k"]
    assert s.params == {"BLOCK": [128, 256, 512], "VEC": [2, 4, 8]} and s.default == {"BLOCK": 256, "VEC": 4}
    assert len(s.admissible) == 8 and {"BLOCK": 512, "VEC": 8} not in s.admissible
    assert s.admissible[0] == {"BLOCK": 128, "VEC": 2}          # declaration order, first varies slowest
    [(config, why)] = s.rejected
    assert config == {"BLOCK": 512, "VEC": 8} and why.startswith("E0408") and "BLOCK * VEC <= COLS" in why


def test_defines_fix_parameters_and_feed_the_constraints():
    s = ember.tune_space(SRC, defines={"VEC": 2, "COLS": 512})["k"]
    assert s.params == {"BLOCK": [128, 256, 512]}               # VEC is fixed, not tuned
    assert s.admissible == [{"BLOCK": 128}, {"BLOCK": 256}]
    assert [c for c, _ in s.rejected] == [{"BLOCK": 512}]


def test_a_default_that_does_not_check_leaves_the_others_to_try():
    """COLS = 256 refuses the default BLOCK * VEC (1024): the space is still the
    configurations that check, and the default is among the rejected; a file that does not
    parse is an error, not an empty space."""
    s = ember.tune_space(SRC, defines={"COLS": 256})["k"]
    assert s.default == {"BLOCK": 256, "VEC": 4}
    assert s.admissible == [{"BLOCK": 128, "VEC": 2}]
    assert {"BLOCK": 256, "VEC": 4} in [c for c, _ in s.rejected]
    with pytest.raises(CompileError):
        ember.tune_space(SRC.replace("block(BLOCK) {", "block(BLOCK) {{"))


def test_compiling_reads_the_declaration_and_binds_the_default():
    prog = ember.compile(SRC)
    assert prog.kernels["k"].tunables == {"BLOCK": [128, 256, 512], "VEC": [2, 4, 8]}
    assert prog.kernels["k"].consts["BLOCK"] == 256 and prog.kernels["plain"].tunables == {}
    # a value outside the list is still the user's to choose with -D
    assert ember.compile(SRC, defines={"BLOCK": 64}).kernels["k"].block == (64, 1, 1)


def test_tunables_survive_the_compile_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    first = ember.compile(SRC, cache=True)
    again = ember.compile(SRC, cache=True)
    assert again.kernels["k"].tunables == first.kernels["k"].tunables == {"BLOCK": [128, 256, 512],
                                                                           "VEC": [2, 4, 8]}


@pytest.mark.parametrize("decl, message", [
    ("const B: u32 = 256 tune [128, 256, 128]", "tuned over 128 twice"),
    ("const B: u32 = 64 tune [128, 256]", "default of `B` (64) is not among the values"),
    ("const T: type = f32 tune [f32]", None),
    ("const B: u32 = 256 tune [128, n]", None),
    ("const B: u8 = 1 tune [1, 300]", None),
])
def test_bad_declarations_are_located_errors(decl, message):
    src = f"kernel k<{decl}>(o: *mut global f32, n: u32) block(64) {{ o[0] = 1.0; }}"
    with pytest.raises(CompileError) as e:
        ember.compile(src)
    [d] = e.value.diagnostics.errors
    at = src.index(decl)
    assert at <= d.span.start < d.span.end <= at + len(decl)       # it points into the declaration
    if message:
        assert d.code == "E0404" and message in d.message


def test_tune_stays_a_name_elsewhere():
    src = """kernel k<const tune: u32 = 4 tune [4, 8]>(o: *mut global f32) block(32) {
        let tuned = tune;
        o[thread_idx.x] = f32(tuned);
    }"""
    assert ember.tune_space(src)["k"].params == {"tune": [4, 8]}


@pytest.mark.parametrize("path, kernel, arch", [
    ("rmsnorm.ember", "rmsnorm_rows", None), ("q4k_dp4a.ember", "q4k_q8_gemv", None),
    ("q4k_gemv.ember", "q4k_gemv", None), ("q4k_digits.ember", "q4k_digits_gemv", None),
    ("gemm_wgmma.ember", "gemm_wgmma", "sm_90a"), ("gemm_bf16.ember", "gemm_bf16", None),
    ("rope.ember", "rope", None),
])
def test_shipped_kernels_declare_a_space_holding_their_defaults(path, kernel, arch):
    defines = {"HEAD_DIM": 128} if kernel == "rope" else {}
    prog = ember.compile(ROOT / "kernels_src" / path, arch=arch or "sm_90", stop_after="ast", kernels=[kernel],
                         defines=defines)
    info = prog.kernels[kernel]
    s = ember.tune_space(ROOT / "kernels_src" / path, arch=arch, kernel=kernel, defines=defines)[kernel]
    default = {p: info.consts[p] for p in s.params}
    assert s.default == default and default in s.admissible and len(s.admissible) >= 3


def test_gemm_tile_constraints_refuse_what_the_kernel_cannot_do():
    s = ember.tune_space(ROOT / "kernels_src" / "gemm_bf16.ember", kernel="gemm_bf16")["gemm_bf16"]
    refused = {tuple(c.values()): why for c, why in s.rejected}
    # 64 x 32 / 8 = 256 chunks cannot be shared out over 512 threads
    assert refused[(64, 64, 32, 2, 4, 4)].startswith("E0408")
    assert refused[(256, 256, 64, 4, 2, 2)].startswith("E0405")          # 256 KB of shared tiles
    assert {"BM": 64, "BN": 64, "BK": 32, "STAGES": 3, "WARPS_M": 2, "WARPS_N": 2} in s.admissible
