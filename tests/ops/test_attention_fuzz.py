"""ember.ops.decode_attention on random calls in the simulator, whose out-of-bounds report
catches any read past the caches: shapes, dtypes, paths (one launch in a cluster, the split
pass and the merge) and device lengths anywhere in and around [0, S] - a length past the
cache read the next sequence's keys, and past the buffer for the last, until 2026-11-27.
Every query row that sees a key matches the f64 reference at the lengths clamped into
[0, S]."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ember.ops as ops
from ember.reference.attention import decode_attention


@st.composite
def calls(draw):
    batch = draw(st.integers(1, 3))
    m = draw(st.integers(1, 3))
    hkv = draw(st.sampled_from([1, 2]))
    g = draw(st.sampled_from([1, 2, 4]))
    s = draw(st.integers(1, 80))
    lengths = draw(st.lists(st.integers(-3, s + 5), min_size=batch, max_size=batch))
    cache = draw(st.sampled_from(["bf16", "f32"]))
    max_cluster = draw(st.sampled_from([8, 0]))
    return batch, m, hkv, g, s, lengths, cache, max_cluster, draw(st.integers(0, 2 ** 32 - 1))


@settings(max_examples=12)
@given(calls())
def test_random_calls_read_within_the_caches_and_match_the_reference(call):
    batch, m, hkv, g, s, lengths, cache, max_cluster, seed = call
    from ember.ops import attention
    keep = attention.MAX_CLUSTER
    attention.MAX_CLUSTER = max_cluster
    try:
        rng = np.random.default_rng(seed)
        t = ml_dtypes.bfloat16 if cache == "bf16" else np.float32
        q = rng.standard_normal((batch, m, hkv * g, 64)).astype(np.float32)
        kc, vc = (rng.standard_normal((batch, s, hkv, 64)).astype(t) for _ in range(2))
        out = np.zeros_like(q)
        with ops.on_simulator():
            ops.decode_attention(q, kc, vc, np.array(lengths, np.int32), out=out)
    finally:
        attention.MAX_CLUSTER = keep
    clamped = [min(max(n, 0), s) for n in lengths]
    for b, n in enumerate(clamped):
        for row in range(m):
            if n - m + row + 1 < 1:            # this query sees no key: 0 / 0
                continue
            ref = decode_attention(q[b:b + 1, row:row + 1], kc[b:b + 1, :n - m + row + 1].astype(np.float64),
                                   vc[b:b + 1, :n - m + row + 1].astype(np.float64), [n - m + row + 1])
            assert np.abs(out[b, row] - ref[0, 0]).max() <= 1e-5, (b, row, n)


@pytest.mark.parametrize("lengths", [[70, 75], [3, -1]])
def test_the_fuzz_finds_reads_past_the_cache_where_lengths_are_not_clamped(lengths, tmp_path):
    """The property's teeth: with keys_of returning the length as given (the old kernels),
    the simulator reports the read past the last sequence's cache that a length past it,
    or a negative one (a huge u32), makes."""
    from pathlib import Path

    import ember
    from ember.runtime import load
    from ember.sim.errors import SimError
    src = Path(ember.__file__).parent.parent / "kernels_src" / "decode_attention.ember"
    text = src.read_text().replace("return min(u32(max(lengths[b], 0i32)), cache_len);", "return u32(lengths[b]);")
    assert "return u32(lengths[b]);" in text
    unclamped = tmp_path / "decode_attention.ember"
    unclamped.write_text(text)
    rng = np.random.default_rng(1)
    q = rng.standard_normal((2, 1, 2, 64)).astype(np.float32)
    kc, vc = (rng.standard_normal((2, 70, 1, 64)).astype(np.float32) for _ in range(2))
    mod = load(ember.compile(unclamped, defines={"T": "f32", "D": 64, "G": 2, "M": 1, "CHUNK": 64},
                             kernels=["attention_split"]), device="sim")
    part = np.zeros((2, 2, 2, 1, 66), np.float32)
    with pytest.raises(SimError, match="out-of-bounds read"):
        mod.attention_split(q, kc, vc, np.array(lengths, np.int32), part, 1, 70, 2, 0.18, grid=(2, 1, 2))
