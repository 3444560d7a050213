"""`ember tune`'s workloads of the Q4_K GEMVs and SwiGLU pairs (kernels_src/q4k_dp4a.ember,
q4k_gemv.ember, q4k_digits.ember, q4k_digits_swiglu.ember, q4k_imma.ember): random Q4_K
weights, activations as the kernels read them (Q8_1, digits, f32), the exact f64 products.
Registered in ember.tuning.workloads.WORKLOADS."""

from __future__ import annotations

import numpy as np

from ..shipped import KERNELS_SRC
from .workload import Workload, imma_grid, seeded_rng, warp_rows_grid


def _q4k_inputs(kernel: str, shape: str):
    from ..reference import q4k as R
    return (R, *gemv_inputs(kernel, shape, R.random_q4k))


def gemv_inputs(kernel: str, shape: str, random_weights) -> tuple:
    """(m, n, k, weights, f32 activations) of a quantized GEMV's workload at `shape` (MxNxK):
    random_weights(rng, n, k)'s blocks and activations of several sizes a row, seeded by the
    kernel and shape."""
    m, n, k = (int(v) for v in shape.split("x"))
    rng = seeded_rng(f"{kernel} {shape}")
    w = random_weights(rng, n, k)
    x = (rng.standard_normal((m, k)) * rng.uniform(0.1, 10.0, (m, 1))).astype(np.float32)
    return m, n, k, w, x


def q4k_q8_gemv(shape: str) -> Workload:
    """kernels_src/q4k_dp4a.ember q4k_q8_gemv: MxNxK, Q4_K weights [N, K] times M rows of
    Q8_1 activations (quantized on the host as the quantize kernel does; the reference is
    the exact Q8_1 product in f64)."""
    return _q8_gemv("q4k_q8_gemv", "q4k_dp4a.ember", shape, warp_rows_grid)


def _q8_gemv(kernel: str, source: str, shape: str, grid) -> Workload:
    """A Q4_K GEMV on Q8_1 activations (split as the quantize kernel splits them), launched
    on grid(n); the reference is the exact Q8_1 product in f64."""
    R, m, n, k, w, x = _q4k_inputs(kernel, shape)
    q8 = R.quantize_q8_1(x)
    aq, ads = R.split_q8_1(q8)
    return Workload(KERNELS_SRC / source, kernel, shape, {"M": m},
                    {"w": w.view(np.uint32), "aq": aq, "ads": ads}, "y", {"y": np.zeros((m, n), np.float32)},
                    ["w", "aq", "ads", "y", n, k], grid(n),
                    R.gemv_q8_1(w, q8), 1e-5, w.nbytes + aq.nbytes + ads.nbytes + m * n * 4)


def q4k_gemv(shape: str) -> Workload:
    """kernels_src/q4k_gemv.ember q4k_gemv: MxNxK, Q4_K weights times M rows of f32."""
    R, m, n, k, w, x = _q4k_inputs("q4k_gemv", shape)
    return Workload(KERNELS_SRC / "q4k_gemv.ember", "q4k_gemv", shape, {"M": m},
                    {"w": w.view(np.uint32), "x": x}, "y", {"y": np.zeros((m, n), np.float32)},
                    ["w", "x", "y", n, k], warp_rows_grid(n),
                    R.gemv(w, x), 1e-5, w.nbytes + x.nbytes + m * n * 4)


def q4k_q8_swiglu(shape: str) -> Workload:
    """kernels_src/q4k_dp4a.ember q4k_q8_swiglu: MxNxK, silu(gate . x) * (up . x) with Q4_K
    gate and up weights and Q8_1 activations; the reference from the exact Q8_1 products."""
    def q8(R, x, wg, wu):
        q = R.quantize_q8_1(x)
        aq, ads = R.split_q8_1(q)
        return aq, "ads", ads, R.gemv_q8_1(wg, q), R.gemv_q8_1(wu, q)
    return _swiglu("q4k_q8_swiglu", "q4k_dp4a.ember", shape, q8)


def _swiglu(kernel: str, source: str, shape: str, activations, grid=None, variant: str = "") -> Workload:
    """A SwiGLU GEMV's workload: random Q4_K gate and up weights [N, K], M rows of
    activations as `activations(R, x, wg, wu)` makes them - (aq, the scales' parameter
    name, the scales, the gate's and the up's products) - and silu(g) * u of those;
    launched on `grid(n)` (default: ROWS rows a warp); `variant` `p2`: digits read two
    planes (_planes)."""
    planes = _planes(variant)
    R, m, n, k, wg, x = _q4k_inputs(kernel, shape)
    wu = R.random_q4k(seeded_rng(f"{kernel} up {shape}"), n, k)
    aq, scales_name, scales, g, u = activations(R, x, wg, wu)
    with np.errstate(over="ignore"):                      # exp(-g) -> inf: silu(g) -> -0
        want = g / (1.0 + np.exp(-g)) * u
    return Workload(KERNELS_SRC / source, kernel, f"{shape} {variant}".strip(),
                    {"M": m, **_planes_define(planes)},
                    {"wg": wg.view(np.uint32), "wu": wu.view(np.uint32), "aq": aq, scales_name: scales}, "y",
                    {"y": np.zeros((m, n), np.float32)}, ["wg", "wu", "aq", scales_name, "y", n, k],
                    (grid or warp_rows_grid)(n), want, 1e-5,
                    wg.nbytes + wu.nbytes + aq.nbytes * planes // 3 + scales.nbytes + m * n * 4)


def q4k_digits_gemv(shape: str, variant: str = "") -> Workload:
    """kernels_src/q4k_digits.ember q4k_digits_gemv: MxNxK, Q4_K weights times f32
    activations as three int8 digits (split on the host as quantize_digits does); `p2`
    after the shape: the kernel's PLANES 2 (the first two digits read, _planes)."""
    return _digits_gemv("q4k_digits_gemv", "q4k_digits.ember", shape, warp_rows_grid, np.float32, variant)


def _planes(variant: str) -> int:
    """The digit planes a digits workload reads: 3, or 2 for the bucket suffix `p2` (the
    digits kernels' PLANES 2, ember.ops's Q8Activations.planes; its own table entries,
    checked against R.gemv_digits's exact product of the two digits)."""
    if variant not in ("", "p2"):
        raise ValueError(variant)
    return 2 if variant == "p2" else 3


def _digits_gemv(kernel: str, source: str, shape: str, grid, ds_type, variant: str = "") -> Workload:
    """A Q4_K GEMV on f32 activations as int8 digits (split as quantize_digits splits them;
    the (s, sum) pairs as ds_type), launched on grid(n); the f64 reference of the planes
    read (_planes)."""
    planes = _planes(variant)
    R, m, n, k, w, x = _q4k_inputs(kernel, shape)
    aq, ds = R.split_digits(*R.quantize_digits(x))
    return Workload(KERNELS_SRC / source, kernel, f"{shape} {variant}".strip(), {"M": m, **_planes_define(planes)},
                    {"w": w.view(np.uint32), "aq": aq, "ds": ds.view(ds_type)}, "y",
                    {"y": np.zeros((m, n), np.float32)}, ["w", "aq", "ds", "y", n, k], grid(n),
                    R.gemv_digits(w, x, planes), 1e-5, w.nbytes + aq.nbytes * planes // 3 + ds.nbytes + m * n * 4)


def _planes_define(planes: int) -> dict:
    return {} if planes == 3 else {"PLANES": planes}


def q4k_digits_swiglu(shape: str, variant: str = "") -> Workload:
    """kernels_src/q4k_digits_swiglu.ember q4k_digits_swiglu: MxNxK, silu(gate . x) * (up . x)
    with Q4_K gate and up weights and f32 activations as three int8 digits; the reference
    from the exact f64 products (of the digits read: `p2`, _planes)."""
    return _swiglu("q4k_digits_swiglu", "q4k_digits_swiglu.ember", shape, _digit_pair(variant, np.float32),
                   variant=variant)


def _digit_pair(variant: str, ds_type):
    """_swiglu's activations as digits (the (s, sum) pairs as ds_type) and the products of
    the planes read (_planes)."""
    planes = _planes(variant)

    def digits(R, x, wg, wu):
        aq, ds = R.split_digits(*R.quantize_digits(x))
        return aq, "ds", ds.view(ds_type), R.gemv_digits(wg, x, planes), R.gemv_digits(wu, x, planes)
    return digits


def q4k_q8_imma(shape: str) -> Workload:
    """kernels_src/q4k_imma.ember q4k_q8_imma: q4k_q8_gemv's product on int8 tensor cores
    (the same activations, the same reference)."""
    return _q8_gemv("q4k_q8_imma", "q4k_imma.ember", shape, imma_grid)


def q4k_digits_imma(shape: str, variant: str = "") -> Workload:
    """kernels_src/q4k_imma.ember q4k_digits_imma: q4k_digits_gemv's product on int8 tensor
    cores (the same digits, their (s, sum) pairs passed as words; the f64 reference; `p2`)."""
    return _digits_gemv("q4k_digits_imma", "q4k_imma.ember", shape, imma_grid, np.uint32, variant)


def q4k_q8_swiglu_imma(shape: str) -> Workload:
    """kernels_src/q4k_imma.ember q4k_q8_swiglu_imma: q4k_q8_swiglu's result on int8 tensor cores."""
    def q8(R, x, wg, wu):
        q = R.quantize_q8_1(x)
        aq, ads = R.split_q8_1(q)
        return aq, "ads", ads, R.gemv_q8_1(wg, q), R.gemv_q8_1(wu, q)
    return _swiglu("q4k_q8_swiglu_imma", "q4k_imma.ember", shape, q8, imma_grid)


def q4k_digits_swiglu_imma(shape: str, variant: str = "") -> Workload:
    """kernels_src/q4k_imma.ember q4k_digits_swiglu_imma: q4k_digits_swiglu's result on int8
    tensor cores (`p2` as there)."""
    return _swiglu("q4k_digits_swiglu_imma", "q4k_imma.ember", shape, _digit_pair(variant, np.uint32),
                   imma_grid, variant)
