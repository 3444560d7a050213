"""Huge straight-line functions compile in time linear in their size: past
ember.lowering.ptx.LARGE_FUNCTION instructions, the lowering cuts straight-line code into
bounded blocks, the LLVM cleanup keeps them, and the code generator runs at -O0 (LLVM 22's
straight-line strength reduction and n-ary reassociation are quadratic per function, and
instruction selection per block). Kernels below the bound are untouched (every kernel of
kernels_src/ is; tools/ptx_snapshot.py)."""

import re

import numpy as np

import ember
from ember.lowering import llvm_lower, ptx

TERMS = 3500          # 4 IR ops each: past the bound


def long_sum(n: int) -> str:
    body = " + ".join(f"(x[i + {k}u32] ^ {k}u32)" for k in range(n))
    return f"kernel k(x: *mut global u32, i: u32) block(1) {{ x[0] = {body}; }}\n"


def test_a_huge_function_is_cut_and_compiled_at_codegen_o0(monkeypatch):
    opts = []
    real = ptx.emit_ptx
    monkeypatch.setattr(ptx, "emit_ptx", lambda mod, target, opt, link=None: opts.append(opt) or
                        real(mod, target, opt, link))
    prog = ember.compile(long_sum(TERMS), cache=False)
    assert opts == [0]
    blocks = re.split(r"\n(?=[\w.\"]+:)", prog.stage("llvm-opt"))
    assert len(blocks) > 10
    assert max(b.count("\n  ") for b in blocks) < 4 * llvm_lower.SPLIT_EVERY
    assert prog.ptx.count("xor.b32") == TERMS - 1      # x ^ 0 folds


def test_an_ordinary_kernel_keeps_codegen_o3(monkeypatch):
    opts = []
    real = ptx.emit_ptx
    monkeypatch.setattr(ptx, "emit_ptx", lambda mod, target, opt, link=None: opts.append(opt) or
                        real(mod, target, opt, link))
    ember.compile("kernels_src/gemm_bf16.ember", cache=False)
    assert opts == [3]


def test_a_huge_function_computes_what_the_simulator_computes():
    prog = ember.compile(long_sum(TERMS), cache=False)
    x = np.arange(TERMS + 8, dtype=np.uint32) * np.uint32(2654435761)
    want = np.uint32(0)
    for k in range(TERMS):
        want = np.uint32((int(want) + (int(x[3 + k]) ^ k)) & 0xFFFFFFFF)
    y = x.copy()
    ember.runtime.load(prog, device="sim").k(y, 3, grid=1)
    assert y[0] == want


def test_a_huge_function_keeps_its_arrays_in_registers():
    """Per-thread arrays indexed by unrolled constants stay out of local memory in a huge
    function too: the lowering's index casts of constants (`zext i32 3 to i64`) are folded
    (sccp) before sroa, which only promotes arrays whose indices are constants. Without the
    fold the unrolled Q6_K tensor-core GEMV with ROWS 2 (q6k_imma.ember before its loop over
    the halves) had a 4.7 KB stack frame and ran 15-20x slower."""
    prog = ember.compile(array_sum(TERMS), cache=False)
    assert ".local" not in prog.ptx
    x, want = array_sum_case(TERMS)
    y = x.copy()
    ember.runtime.load(prog, device="sim").k(y, 3, grid=1)
    assert y[0] == want


def array_sum(n: int) -> str:
    """long_sum's kernel with an array of 8 per-thread values in every term."""
    body = " + ".join(f"(x[i + {k}u32] ^ a[{k % 8}u32])" for k in range(n))
    return (f"kernel k(x: *mut global u32, i: u32) block(1) {{ var a: [u32; 8]; "
            f"unroll for j in 0..8u32 {{ a[j] = x[j] * 3u32; }} x[0] = {body}; }}\n")


def array_sum_case(n: int) -> tuple:
    """(x, the sum array_sum's kernel stores to x[0] with i = 3)."""
    x = np.arange(n + 8, dtype=np.uint32) * np.uint32(2654435761)
    a = x[:8] * np.uint32(3)
    want = 0
    for k in range(n):
        want = (want + (int(x[3 + k]) ^ int(a[k % 8]))) & 0xFFFFFFFF
    return x, np.uint32(want)
