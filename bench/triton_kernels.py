"""Triton versions of Ember's kernels, written the way a Triton user would, for the third
column of the GPU A/B benchmarks (Triton is installed on the GPU machine only).

- rmsnorm: one row per program, the whole row in registers (BLOCK = next power of two);
- add_rmsnorm: the same with the residual add (h written back to r);
- q4k_gemv: Q4_K GEMV with f32 activations, BLOCK_N output rows per program, one
  super-block (256 weights) per step, dequantised in registers (same format as
  ember.reference.q4k);
- q4k_q8_gemv: the DP4A path on the same Q8_1 activations (int8 quants in ggml order, the
  f16 scale as f32, the exact quant sum), integer dot products per sub-block."""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def _rmsnorm(x, gamma, y, cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x + row * cols + offs, mask=mask, other=0.0).to(tl.float32)
    scale = tl.rsqrt(tl.sum(v * v, axis=0) / cols + eps)
    g = tl.load(gamma + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y + row * cols + offs, (v * scale * g).to(y.dtype.element_ty), mask=mask)


@triton.jit
def _add_rmsnorm(x, r, gamma, y, cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    h = (tl.load(x + row * cols + offs, mask=mask, other=0.0).to(tl.float32)
         + tl.load(r + row * cols + offs, mask=mask, other=0.0).to(tl.float32)).to(r.dtype.element_ty)
    tl.store(r + row * cols + offs, h, mask=mask)
    v = h.to(tl.float32)
    scale = tl.rsqrt(tl.sum(v * v, axis=0) / cols + eps)
    g = tl.load(gamma + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y + row * cols + offs, (v * scale * g).to(y.dtype.element_ty), mask=mask)


def _warps(block: int) -> int:
    return max(1, min(32, block // 256))      # 8 elements per thread, up to 1024 threads


def rmsnorm(x, gamma, y, eps):
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    _rmsnorm[(rows,)](x, gamma, y, cols, eps, BLOCK=block, num_warps=_warps(block))


def add_rmsnorm(x, r, gamma, y, eps):
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    _add_rmsnorm[(rows,)](x, r, gamma, y, cols, eps, BLOCK=block, num_warps=_warps(block))


@triton.jit
def _q4k_head(w, blk, rmask):
    """d and dmin (f16) of the super-blocks at byte offsets blk, as f32."""
    d = tl.load((w + blk).to(tl.pointer_type(tl.float16), bitcast=True), mask=rmask, other=0.0).to(tl.float32)
    dmin = tl.load((w + blk + 2).to(tl.pointer_type(tl.float16), bitcast=True), mask=rmask, other=0.0).to(tl.float32)
    return d, dmin


@triton.jit
def _q4k_sub_block(w, blk, qs, d, dmin, rmask, j: tl.constexpr):
    """Sub-block j (0..7) of those super-blocks: (d * sc, dmin * m, its 4-bit quants), qs
    being the 32 quant bytes of its group j // 2 (for j >= 4 the high bits of the scale
    come from byte j - 4, of the min from byte j)."""
    if j < 4:
        sc = tl.load(w + blk + 4 + j, mask=rmask, other=0).to(tl.int32) & 63
        m = tl.load(w + blk + 8 + j, mask=rmask, other=0).to(tl.int32) & 63
    else:
        b8 = tl.load(w + blk + 8 + j, mask=rmask, other=0).to(tl.int32)
        lo4 = tl.load(w + blk + j, mask=rmask, other=0).to(tl.int32)
        hi4 = tl.load(w + blk + 4 + j, mask=rmask, other=0).to(tl.int32)
        sc = (b8 & 0xF) | ((lo4 >> 6) << 4)
        m = (b8 >> 4) | ((hi4 >> 6) << 4)
    return d * sc.to(tl.float32), dmin * m.to(tl.float32), (qs >> (4 * (j % 2))) & 0xF


@triton.jit
def _q4k_rows(n, k, BLOCK_N: tl.constexpr):
    """This program's BLOCK_N weight rows: (rows, which exist, super-blocks per row, each
    row's first byte)."""
    rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    nb = k // 256
    return rows, rows < n, nb, rows.to(tl.int64) * nb * 144


@triton.jit
def _q4k_quants(w, blk, rmask, g: tl.constexpr):
    """The 32 quant bytes of group g (sub-blocks 2g and 2g + 1) of the super-blocks at blk."""
    l32 = tl.arange(0, 32)
    return tl.load(w + blk[:, None] + 16 + 32 * g + l32[None, :], mask=rmask[:, None], other=0).to(tl.int32)


@triton.jit
def _q8_term(a, b, q, av, dq, sq):
    """One sub-block's DP4A-path contribution: d8 * (d * sc * dot(q4, q8) - dmin * m * sum(q8)).
    (_q4k_q8_gemv writes it out: there the dot product comes before the loads of d8 and the
    sum, and moving it changes the PTX Triton makes.)"""
    return dq * (a * tl.sum(q * av[None, :], axis=1).to(tl.float32) - b * sq)


@triton.jit
def _q4k_gemv(w, x, y, n, k, M: tl.constexpr, BLOCK_N: tl.constexpr):
    """w: uint8 [n, k / 256 * 144]; x: f32 [M, k]; y: f32 [M, n]."""
    rows, rmask, nb, row_bytes = _q4k_rows(n, k, BLOCK_N)
    l32 = tl.arange(0, 32)
    for mi in tl.static_range(M):
        acc = tl.zeros([BLOCK_N], dtype=tl.float32)
        for sb in range(nb):
            blk = row_bytes + sb * 144
            d, dmin = _q4k_head(w, blk, rmask)
            for g in tl.static_range(4):
                qs = _q4k_quants(w, blk, rmask, g)
                for h in tl.static_range(2):
                    a, b, q = _q4k_sub_block(w, blk, qs, d, dmin, rmask, 2 * g + h)
                    wv = a[:, None] * q.to(tl.float32) - b[:, None]
                    xv = tl.load(x + mi * k + sb * 256 + 64 * g + 32 * h + l32)
                    acc += tl.sum(wv * xv[None, :], axis=1)
        tl.store(y + mi * n + rows, acc, mask=rmask)


def q4k_gemv(w, x, y, n, k, block_n: int = 16):
    m = x.shape[0]
    _q4k_gemv[(triton.cdiv(n, block_n),)](w, x, y, n, k, M=m, BLOCK_N=block_n, num_warps=4)


@triton.jit
def _q4k_q8_gemv(w, aq, d8, s8, y, n, k, M: tl.constexpr, BLOCK_N: tl.constexpr):
    """The DP4A path: w as in _q4k_gemv; aq: int8 [M, k] (Q8_1 quants, ggml order);
    d8: f32 [M, k / 32] (the f16 scales); s8: int32 [M, k / 32] (exact quant sums).
    Per sub-block the integer dot product of the 4-bit quants with the int8 activations
    (exact, int32) and y += d8 * (d * sc * dot - dmin * m * sum)."""
    rows, rmask, nb, row_bytes = _q4k_rows(n, k, BLOCK_N)
    l32 = tl.arange(0, 32)
    for mi in tl.static_range(M):
        acc = tl.zeros([BLOCK_N], dtype=tl.float32)
        for sb in range(nb):
            blk = row_bytes + sb * 144
            d, dmin = _q4k_head(w, blk, rmask)
            for g in tl.static_range(4):
                qs = _q4k_quants(w, blk, rmask, g)
                for h in tl.static_range(2):
                    a, b, q = _q4k_sub_block(w, blk, qs, d, dmin, rmask, 2 * g + h)
                    sub = sb * 8 + 2 * g + h
                    av = tl.load(aq + mi * k + sub * 32 + l32).to(tl.int32)
                    dot = tl.sum(q * av[None, :], axis=1)
                    dq = tl.load(d8 + mi * (k // 32) + sub)
                    sq = tl.load(s8 + mi * (k // 32) + sub).to(tl.float32)
                    acc += dq * (a * dot.to(tl.float32) - b * sq)
        tl.store(y + mi * n + rows, acc, mask=rmask)


def q4k_q8_gemv(w, aq, d8, s8, y, n, k, block_n: int = 16):
    m = aq.shape[0]
    _q4k_q8_gemv[(triton.cdiv(n, block_n),)](w, aq, d8, s8, y, n, k, M=m, BLOCK_N=block_n, num_warps=4)


@triton.jit
def _rmsnorm_q4k_gemv(x, gamma, w, y, n, k, eps, BLOCK_N: tl.constexpr):
    """RMSNorm fused with the f32 Q4_K GEMV (one activation row, kernels_src/rmsnorm_q4k.ember's
    operation): y = rsqrt(mean(x^2) + eps) * W (x * gamma). Each program sums the squares of
    x itself (x is L2-resident), then runs _q4k_gemv's loop on x * gamma and scales once."""
    rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    rmask = rows < n
    nb = k // 256
    l256 = tl.arange(0, 256)
    sq = tl.zeros([256], dtype=tl.float32)
    for sb in range(nb):
        v = tl.load(x + sb * 256 + l256)
        sq += v * v
    scale = tl.rsqrt(tl.sum(sq, axis=0) / k + eps)
    row_bytes = rows.to(tl.int64) * nb * 144
    l32 = tl.arange(0, 32)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for sb in range(nb):
        blk = row_bytes + sb * 144
        d, dmin = _q4k_head(w, blk, rmask)
        for g in tl.static_range(4):
            qs = _q4k_quants(w, blk, rmask, g)
            for h in tl.static_range(2):
                a, b, q = _q4k_sub_block(w, blk, qs, d, dmin, rmask, 2 * g + h)
                wv = a[:, None] * q.to(tl.float32) - b[:, None]
                col = sb * 256 + 64 * g + 32 * h + l32
                xv = tl.load(x + col) * tl.load(gamma + col)
                acc += tl.sum(wv * xv[None, :], axis=1)
    tl.store(y + rows, acc * scale, mask=rmask)


def rmsnorm_q4k_gemv(x, gamma, w, y, n, k, eps, block_n: int = 16):
    _rmsnorm_q4k_gemv[(triton.cdiv(n, block_n),)](x, gamma, w, y, n, k, eps, BLOCK_N=block_n, num_warps=4)


@triton.jit
def _q4k_q8_swiglu(wg, wu, aq, d8, s8, y, n, k, M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Gate/up Q4_K GEMVs on the DP4A path fused with SwiGLU (kernels_src/q4k_dp4a.ember's
    q4k_q8_swiglu): y = silu(W_gate a) * (W_up a), both as _q4k_q8_gemv computes them."""
    rows, rmask, nb, row_bytes = _q4k_rows(n, k, BLOCK_N)
    l32 = tl.arange(0, 32)
    for mi in tl.static_range(M):
        acc_g = tl.zeros([BLOCK_N], dtype=tl.float32)
        acc_u = tl.zeros([BLOCK_N], dtype=tl.float32)
        for sb in range(nb):
            blk = row_bytes + sb * 144
            dg, dming = _q4k_head(wg, blk, rmask)
            du, dminu = _q4k_head(wu, blk, rmask)
            for g in tl.static_range(4):
                qg = _q4k_quants(wg, blk, rmask, g)
                qu = _q4k_quants(wu, blk, rmask, g)
                for h in tl.static_range(2):
                    sub = sb * 8 + 2 * g + h
                    av = tl.load(aq + mi * k + sub * 32 + l32).to(tl.int32)
                    dq = tl.load(d8 + mi * (k // 32) + sub)
                    sq = tl.load(s8 + mi * (k // 32) + sub).to(tl.float32)
                    a, b, q = _q4k_sub_block(wg, blk, qg, dg, dming, rmask, 2 * g + h)
                    acc_g += _q8_term(a, b, q, av, dq, sq)
                    a, b, q = _q4k_sub_block(wu, blk, qu, du, dminu, rmask, 2 * g + h)
                    acc_u += _q8_term(a, b, q, av, dq, sq)
        tl.store(y + mi * n + rows, acc_g / (1.0 + tl.exp(-acc_g)) * acc_u, mask=rmask)


def q4k_q8_swiglu(wg, wu, aq, d8, s8, y, n, k, block_n: int = 16):
    m = aq.shape[0]
    _q4k_q8_swiglu[(triton.cdiv(n, block_n),)](wg, wu, aq, d8, s8, y, n, k, M=m, BLOCK_N=block_n, num_warps=4)
