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


def test_f32_queries_on_a_bf16_cache_merged_to_f32_and_to_q8_1():
    """A decoder layer's case: the rotated queries in f32 (TQ) on a bf16 cache, merged into
    f32 (TO) - and by attention_merge_q8 straight into the Q8_1 activations of the output
    projection's DP4A GEMV, bit for bit those quantize_q8_1 makes of the f32 result."""
    from ember.reference import q4k as R
    rng = np.random.default_rng(5)
    batch, m, hkv, g, d, s, chunk = 2, 1, 2, 2, 64, 40, 16
    hq = hkv * g
    q = rng.standard_normal((batch, m, hq, d)).astype(np.float32)
    k = _io("bf16", rng.standard_normal((batch, s, hkv, d)))
    v = _io("bf16", rng.standard_normal((batch, s, hkv, d)))
    lengths = np.array([37, 9], np.int32)
    defines = {"T": "bf16", "D": d, "G": g, "M": m, "CHUNK": chunk, "WARPS": 2, "TQ": "f32", "TO": "f32"}
    mod = load(ember.compile(SRC / "decode_attention.ember", defines=defines), device="sim")
    splits = math.ceil(s / chunk)
    part = np.zeros((batch, splits, hq, m, d + 2), np.float32)
    mod.attention_split(q, k, v, lengths, part, hkv, s, splits, 1 / math.sqrt(d) * math.log2(math.e),
                        grid=(splits, hkv, batch))
    out = np.zeros_like(q)
    mod.attention_merge(part, out, hq, splits, lengths, chunk, grid=(hq, m, batch))
    ref = decode_attention(q, _values("bf16", k), _values("bf16", v), lengths)
    assert np.abs(out - ref).max() <= 1e-5
    rows = batch * m
    aq, ads = np.zeros(rows * hq * d // 4, np.uint32), np.zeros(rows * hq * d // 32, np.uint32)
    mod.attention_merge_q8(part, aq, ads, hq, splits, lengths, chunk, grid=(hq, m, batch))
    want_q, want_ds = R.split_q8_1(R.quantize_q8_1(out.reshape(rows, hq * d)))
    np.testing.assert_array_equal(aq, want_q)
    np.testing.assert_array_equal(ads, want_ds)


def test_a_merge_of_more_splits_than_it_loads_at_once():
    """19 splits: one round of 16 loads a thread, then the 3 left one at a time."""
    out, ref = run("f32", 1, 1, 1, 2, 64, 300, [300], chunk=16, warps=2)
    assert np.abs(out - ref).max() <= 1e-5


def run_mma(batch, m, hkv, g, d, s, lengths, chunk, warps, stages=3, seed=0, t="bf16", tq="f32", chains=1):
    """attention_split_mma (decode_attention_mma.ember) then attention_merge, in the simulator."""
    rng = np.random.default_rng(seed)
    q = _io(tq, rng.standard_normal((batch, m, hkv * g, d)))
    k = _io(t, rng.standard_normal((batch, s, hkv, d)))
    v = _io(t, rng.standard_normal((batch, s, hkv, d)))
    lengths = np.array(lengths, np.int32)
    defines = {"T": t, "D": d, "G": g, "M": m, "CHUNK": chunk, "WARPS": warps, "STAGES": stages, "TQ": tq,
               "CHAINS": chains}
    mod = load(ember.compile(SRC / "decode_attention_mma.ember", defines=defines), device="sim")
    merge = load(ember.compile(SRC / "decode_attention.ember", defines={"T": t, "D": d, "M": m, "TO": "f32"},
                               kernels=["attention_merge"]), device="sim").attention_merge
    splits = math.ceil(s / chunk)
    part = np.zeros((batch, splits, hkv * g, m, d + 2), np.float32)
    mod.attention_split_mma(q, k, v, lengths, part, hkv, s, splits, 1 / math.sqrt(d) * math.log2(math.e),
                            grid=(splits, hkv, batch))
    out = np.zeros(q.shape, np.float32)
    merge(part, out, hkv * g, splits, lengths, chunk, grid=(hkv * g, m, batch))
    ref = decode_attention(_values(tq, q), _values(t, k), _values(t, v), lengths)
    return out, ref


@pytest.mark.parametrize("m, g, warps, stages, chains",
                         [(1, 4, 2, 3, 1), (2, 4, 2, 2, 2), (3, 2, 1, 4, 4), (4, 4, 2, 3, 1)])
def test_the_tensor_core_split_matches_the_reference(m, g, warps, stages, chains):
    """Tiles of 16 x WARPS keys through a ring of STAGES, sequences ending inside a tile and
    inside a warp's 16 keys, splits with no key, M queries each with its causal limit, up to
    16 rows (G x M) a KV head; f32 queries on a bf16 cache as hi + lo parts: f32 accuracy
    (the scores summed in 1, 2 or 4 chains of mma)."""
    out, ref = run_mma(2, m, 2, g, 64, 150, [150, m + 3], chunk=64, warps=warps, stages=stages, seed=m,
                       chains=chains)
    assert np.abs(out - ref).max() <= 2e-5, np.abs(out - ref).max()


def run_cluster(batch, m, hkv, g, d, s, lengths, chunk, splits, warps, stages=2, seed=0, t="bf16", tq="f32",
                chains=1):
    """attention_cluster_mma and attention_cluster_mma_q8 (one launch each: the splits of a
    KV head merged in their cluster), in the simulator: the f32 output, its Q8_1 form, the
    inputs' f64 reference."""
    rng = np.random.default_rng(seed)
    hq = hkv * g
    q = _io(tq, rng.standard_normal((batch, m, hq, d)))
    k = _io(t, rng.standard_normal((batch, s, hkv, d)))
    v = _io(t, rng.standard_normal((batch, s, hkv, d)))
    lengths = np.array(lengths, np.int32)
    defines = {"T": t, "D": d, "G": g, "M": m, "CHUNK": chunk, "SPLITS": splits, "WARPS": warps,
               "STAGES": stages, "TQ": tq, "CHAINS": chains}
    scale = 1 / math.sqrt(d) * math.log2(math.e)
    mod = load(ember.compile(SRC / "decode_attention_mma.ember", defines={**defines, "TO": "f32"},
                             kernels=["attention_cluster_mma"]), device="sim")
    out = np.zeros(q.shape, np.float32)
    mod.attention_cluster_mma(q, k, v, lengths, out, hkv, s, scale, grid=(splits, hkv, batch))
    rows = batch * m
    aq, ads = np.zeros(rows * hq * d // 4, np.uint32), np.zeros(rows * hq * d // 32, np.uint32)
    mod = load(ember.compile(SRC / "decode_attention_mma.ember", defines=defines,
                             kernels=["attention_cluster_mma_q8"]), device="sim")
    mod.attention_cluster_mma_q8(q, k, v, lengths, aq, ads, hkv, s, scale, grid=(splits, hkv, batch))
    ref = decode_attention(_values(tq, q), _values(t, k), _values(t, v), lengths)
    return out, (aq, ads), ref


@pytest.mark.parametrize("m, g, splits, warps, chains", [(1, 4, 4, 2, 2), (3, 2, 2, 1, 1), (2, 8, 3, 2, 4)])
def test_the_cluster_merge_matches_the_reference(m, g, splits, warps, chains):
    """Each block's chunk as attention_split_mma does it, merged over the cluster's blocks
    through distributed shared memory: sequences ending inside a chunk and leaving whole
    blocks without a key, M queries with their causal limits, up to 16 rows a KV head, the
    pieces of the output more (or fewer) than the cluster's warps; and the Q8_1 kernel's
    output bit for bit quantize_q8_1 of the f32 one (the same merge, the same order)."""
    from ember.reference import q4k as R
    d = 64
    out, (aq, ads), ref = run_cluster(2, m, 2, g, d, 40 * splits, [40 * splits - 7, m + 3], chunk=32 * warps * 2,
                                      splits=splits, warps=warps, seed=m, chains=chains)
    assert np.abs(out - ref).max() <= 2e-5, np.abs(out - ref).max()
    want_q, want_ds = R.split_q8_1(R.quantize_q8_1(out.reshape(2 * m, -1)))
    np.testing.assert_array_equal(aq, want_q)
    np.testing.assert_array_equal(ads, want_ds)
