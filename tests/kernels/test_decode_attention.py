"""kernels_src/decode_attention.ember in the simulator against the f64 reference: GQA, M
queries per sequence with their causal limits, sequences of different lengths over several
chunks (and chunks with no key), f32 and bf16 caches."""

import math

import numpy as np
import pytest

import ember
from ember.reference.attention import decode_attention
from ember.runtime import load
from tests.kernels.test_kernels_in_sim import SRC, _io, _values


def run(t, batch, m, hkv, g, d, s, lengths, chunk=16, warps=2, seed=0, kg=4, u=2, prefetch=False):
    rng = np.random.default_rng(seed)
    q = _io(t, rng.standard_normal((batch, m, hkv * g, d)))
    k = _io(t, rng.standard_normal((batch, s, hkv, d)))
    v = _io(t, rng.standard_normal((batch, s, hkv, d)))
    lengths = np.array(lengths, np.int32)
    mod = load(ember.compile(SRC / "decode_attention.ember",
                             defines={"T": t, "D": d, "G": g, "M": m, "CHUNK": chunk, "WARPS": warps,
                                      "KG": kg, "U": u, "PREFETCH": prefetch}), device="sim")
    splits = math.ceil(s / chunk)
    part = np.zeros((batch, splits, hkv * g, m, d + 2), np.float32)
    mod.attention_split(q, k, v, lengths, part, hkv, s, splits, 1 / math.sqrt(d) * math.log2(math.e),
                        grid=(splits, hkv, batch))
    out = np.zeros_like(q)
    mod.attention_merge(part, out, hkv * g, splits, lengths, chunk, grid=(hkv * g, m, batch))
    ref = decode_attention(_values(t, q), _values(t, k), _values(t, v), lengths)
    return _values(t, out), ref


@pytest.mark.parametrize("m", [1, 3])
@pytest.mark.parametrize("kg, u, prefetch", [(1, 2, False), (2, 1, True), (4, 2, False), (4, 1, True), (4, 4, False)])
def test_f32_matches_the_reference(m, kg, u, prefetch):
    """KG keys a step across the warp's lanes (1: every lane on one key), U steps at once,
    the next step's keys loaded before this step's arithmetic or after it."""
    out, ref = run("f32", 2, m, 2, 2, 64, 40, [37, m], kg=kg, u=u, prefetch=prefetch)   # the second: just M
    assert np.abs(out - ref).max() <= 1e-5


def test_bf16_with_more_warps_than_a_chunk_has_keys():
    out, ref = run("bf16", 1, 2, 1, 4, 64, 50, [33], chunk=16, warps=4)
    assert np.abs(out - ref).max() <= 2 ** -7
