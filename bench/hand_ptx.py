"""The hand-written PTX baselines (kernels_src/baselines/), loaded with the signature and
launch of the Ember kernel each one copies, so that the same arguments and grid run both."""

from __future__ import annotations

from pathlib import Path

BASELINES = Path(__file__).resolve().parents[1] / "kernels_src" / "baselines"

# file -> (entry point, Ember source, its defines, the Ember kernel with the same signature)
HAND = {
    "rmsnorm_f32_4096.ptx": ("rmsnorm_hand", "rmsnorm.ember",
                             {"T": "f32", "COLS": 4096, "BLOCK": 256, "VEC": 4}, "rmsnorm_rows"),
    "q4k_gemv_m1.ptx": ("q4k_gemv_hand", "q4k_gemv.ember", {"M": 1, "WARPS": 4, "ROWS": 1}, "q4k_gemv"),
    "q4k_q8_gemv_m1.ptx": ("q4k_q8_gemv_hand", "q4k_dp4a.ember",
                           {"M": 1, "WARPS": 4, "UNROLL": 1, "ROWS": 1}, "q4k_q8_gemv"),
    "rmsnorm_q4k_4096.ptx": ("rmsnorm_q4k_gemv_hand", "rmsnorm_q4k.ember", {"K": 4096, "WARPS": 8},
                             "rmsnorm_q4k_gemv"),
    "gemm_f32.ptx": ("gemm_f32_hand", "gemm_f32.ember", {}, "gemm_f32"),
    "gemm_bf16.ptx": ("gemm_bf16_hand", "gemm_bf16.ember", {}, "gemm_bf16"),
    "gemm_wgmma.ptx": ("gemm_wgmma_hand", "gemm_wgmma.ember", {}, "gemm_wgmma"),
}
# the baselines (and their Ember kernels) that need an arch-specific target: wgmma, setmaxnreg
ARCH = {"gemm_wgmma.ptx": "sm_90a"}


def load_pair(fname: str, arch: str):
    """(hand kernel, Ember kernel) for one baseline, both loaded on the GPU."""
    import ember
    from ember import KernelInfo
    from ember.runtime import cuda
    entry, source, defines, kernel = HAND[fname]
    arch = ARCH.get(fname, arch)
    mod = cuda.load(ember.compile(BASELINES.parent / source, arch=arch, defines=defines, kernels=[kernel]))
    mine = getattr(mod, kernel)
    info = mine.info
    # the same launch: grid, block and the dynamic shared bytes the Ember kernel asks for
    hand = cuda.load_ptx((BASELINES / fname).read_text(),
                         {entry: KernelInfo(entry, info.params, info.block, {}, info.dynamic_shared)},
                         arch=arch, name=fname)
    return getattr(hand, entry), mine
