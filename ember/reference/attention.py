"""Decode attention in f64 (kernels_src/decode_attention.ember): for each sequence b, its M
newest queries q[b, m] attend the keys 0 .. lengths[b] - M + m of the cache, each query
head hq the KV head hq // G (grouped-query attention)."""

from __future__ import annotations

import numpy as np


def decode_attention(q, k, v, lengths) -> np.ndarray:
    """q [B, M, HQ, D], k and v [B, S, HKV, D], lengths [B] -> [B, M, HQ, D] (f64)."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    batch, m_rows, hq, d = q.shape
    hkv = k.shape[2]
    g = hq // hkv
    out = np.zeros_like(q)
    for b in range(batch):
        n = int(lengths[b])
        for m in range(m_rows):
            keys = n - m_rows + m + 1
            for h in range(hq):
                kk, vv = k[b, :keys, h // g], v[b, :keys, h // g]
                s = kk @ q[b, m, h] / np.sqrt(d)
                p = np.exp(s - s.max())
                out[b, m, h] = p @ vv / p.sum()
    return out
