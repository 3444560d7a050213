"""Which tuned entry an ember.ops call uses: the GPU's entry made with the call's const
values, nearest in size; none when the values differ (the defaults are used). Which of two
kernels doing the same work runs: the one faster in both tables' entries of the same
bucket, else the caller's rule."""

import json

import pytest

import ember.ops as ops
from ember.ops.kernels import _size, fastest_of, first_entry, pick_entry
from ember.tuning.pick import values_key


def entry(defines, config):
    return {"defines": defines, "config": config, "us": 1.0}


TABLE = {"devices": {"GPU sm_90": {
    "16384x4096 f32": entry({"T": "f32", "COLS": 4096}, {"BLOCK": 512}),
    "1x4096 f32": entry({"T": "f32", "COLS": 4096}, {"BLOCK": 128}),
    "4096x8192 bf16": entry({"T": "bf16", "COLS": 8192}, {"BLOCK": 256}),
    "2x4096 f32": {"defines": {"T": "f32", "COLS": 4096}, "config": None}}}}     # nothing correct: never used


def test_the_nearest_bucket_with_the_same_values():
    assert pick_entry(TABLE, "GPU sm_90", {"T": "f32", "COLS": 4096}, 8 * 4096)["config"] == {"BLOCK": 128}
    assert pick_entry(TABLE, "GPU sm_90", {"T": "f32", "COLS": 4096}, 4096 * 4096)["config"] == {"BLOCK": 512}
    assert pick_entry(TABLE, "GPU sm_90", {"T": "bf16", "COLS": 8192}, 1)["config"] == {"BLOCK": 256}


def test_of_two_buckets_as_large_the_calls_own_shape():
    """1x4096x14336 and 1x14336x4096 are the same size: a call of either shape takes its
    own bucket's entry (else the smaller, then the name: 1x14336x4096 for both), in the
    choice of entry and in the choice between two kernels."""
    both = {"devices": {"GPU sm_90": {"1x14336x4096": entry({"M": 1}, {"WARPS": 2}),
                                      "1x4096x14336": entry({"M": 1}, {"WARPS": 8})}}}
    size = 4096 * 14336
    assert pick_entry(both, "GPU sm_90", {"M": 1}, size, "1x4096x14336")["config"] == {"WARPS": 8}
    assert pick_entry(both, "GPU sm_90", {"M": 1}, size, "1x14336x4096")["config"] == {"WARPS": 2}
    assert pick_entry(both, "GPU sm_90", {"M": 1}, size)["config"] == {"WARPS": 2}
    assert pick_entry(both, "GPU sm_90", {"M": 1}, 2 * size, "2x4096x14336")["config"] == {"WARPS": 2}
    other = {"devices": {"GPU sm_90": {"1x4096x14336": {**entry({"M": 1}, {}), "us": 0.5}}}}
    assert fastest_of([both, other], "GPU sm_90", {"M": 1}, size, 0, "1x4096x14336") == 1
    assert fastest_of([both, other], "GPU sm_90", {"M": 1}, size, 0) == 0          # buckets differ: the rule


def test_no_entry_for_other_values_or_another_gpu():
    assert pick_entry(TABLE, "GPU sm_90", {"T": "f32", "COLS": 1000}, 5000) is None
    assert pick_entry(TABLE, "GPU sm_90", {"T": "f32", "COLS": 4096, "VEC": 2}, 4096) is None
    assert pick_entry(TABLE, "Other sm_80", {"T": "f32", "COLS": 4096}, 4096) is None
    assert pick_entry(None, "GPU sm_90", {}, 1) is None


def test_the_first_table_with_an_entry_is_used():
    """add_rmsnorm_rows's own table where it has an entry for the GPU and the values; else
    rmsnorm_rows's (a GPU the add was not tuned on)."""
    own = {"devices": {"GPU sm_90": {"1x4096 f32": entry({"T": "f32", "COLS": 4096}, {"BLOCK": 1024})}}}
    f32 = {"T": "f32", "COLS": 4096}
    assert first_entry([own, TABLE], "GPU sm_90", f32, 4096) == (own, own["devices"]["GPU sm_90"]["1x4096 f32"])
    table, found = first_entry([own, TABLE], "GPU sm_90", {"T": "bf16", "COLS": 8192}, 4096)
    assert table is TABLE and found["config"] == {"BLOCK": 256}
    assert first_entry([None, TABLE], "GPU sm_90", f32, 4096)[1]["config"] == {"BLOCK": 128}
    assert first_entry([own, TABLE], "Other sm_80", f32, 4096) == (None, None)


def test_the_attention_chunk_fills_the_gpu():
    from ember.ops.attention import choose_chunk
    assert choose_chunk(32768, 8, 132) == 512          # 64 splits x 8 heads: 512 blocks
    assert choose_chunk(4096, 8, 132) == 128           # 16 x 8 = 128 < 132 at 256; 128 gives 256
    assert choose_chunk(4096, 64, 132) == 512
    assert choose_chunk(512, 32, 132) == 64            # batch 4: 8 x 32 = 256 blocks
    assert choose_chunk(512, 8, 132) == 32             # short: the smallest chunk
    assert choose_chunk(512, 8, 132, step=128) == 128  # but not fewer keys than the warps take a step
    assert choose_chunk(4096, 8, 132, step=1024) == 512
    # attention_split_mma's: chunks up to 4096 keys, about two blocks per SM (247 of 132)
    chunks = (4096, 2048, 1024, 512, 256, 128, 64, 32)
    assert choose_chunk(32768, 32, 247, 64, chunks) == 4096    # batch 4: 8 splits x 32 = 256 blocks
    assert choose_chunk(32768, 16, 247, 64, chunks) == 2048    # batch 2
    assert choose_chunk(32768, 8, 247, 64, chunks) == 1024     # batch 1: 32 x 8
    assert choose_chunk(512, 8, 247, 64, chunks) == 64         # never below a tile of 64 keys


def _timed(us: dict) -> dict:
    return {"devices": {"GPU sm_90": {b: {"defines": {"M": "8"}, "config": {"WARPS": 4}, "us": t}
                                      for b, t in us.items()}}}


def test_the_faster_kernel_of_the_same_bucket():
    dp4a = _timed({"8x4096x14336": 29.9, "8x6144x4096": 14.1})
    imma = _timed({"8x4096x14336": 23.0, "8x6144x4096": 15.0})
    assert fastest_of([dp4a, imma], "GPU sm_90", {"M": 8}, 8 * 4096 * 14336, 0) == 1
    assert fastest_of([dp4a, imma], "GPU sm_90", {"M": 8}, 8 * 6144 * 4096, 1) == 0


def test_the_rule_where_the_tables_cannot_compare():
    dp4a = _timed({"8x4096x14336": 29.9})
    imma = _timed({"8x6144x4096": 15.0})
    assert fastest_of([dp4a, imma], "GPU sm_90", {"M": 8}, 8 * 4096 * 14336, 1) == 1     # other buckets
    assert fastest_of([dp4a, None], "GPU sm_90", {"M": 8}, 8 * 4096 * 14336, 1) == 1     # stale or missing
    assert fastest_of([dp4a, dp4a], "Other sm_80", {"M": 8}, 8 * 4096 * 14336, 0) == 0   # not this GPU
    assert fastest_of([dp4a, imma], "GPU sm_90", {"M": 4}, 4 * 4096 * 14336, 1) == 1     # not these values


def test_two_digit_planes_take_their_own_entries_or_the_three_planes():
    """The digits GEMVs with PLANES 2 (Q8Activations.planes): their own entries (buckets
    `... p2`) where the tables hold them, else the three planes' (tuned_as's or_as) - in
    the choice of entry and in the choice between the DP4A and the tensor-core kernel."""
    from ember.ops.gemv import Q8Activations, tuned_as
    x = Q8Activations(None, None, 2, 14336, None, True, digits=True, planes=2)
    defines, lookup = tuned_as(x, 4096)
    or_as = lookup["or_as"]
    assert (defines, lookup) == ({"M": 2, "PLANES": 2}, {"or_as": {"M": 2}, "shape": "2x4096x14336"})
    assert tuned_as(Q8Activations(None, None, 2, 14336, None, True, digits=True), 4096)[1]["or_as"] is None
    three = {"2x4096x14336": {"defines": {"M": 2}, "config": {"WARPS": 4}, "us": 20.0}}
    both = {"devices": {"GPU sm_90": {**three, "2x4096x14336 p2": {"defines": {"M": 2, "PLANES": 2},
                                                                    "config": {"WARPS": 8}, "us": 17.0}}}}
    only_three = {"devices": {"GPU sm_90": three}}
    size = 2 * 4096 * 14336
    assert first_entry([both], "GPU sm_90", defines, size)[1]["config"] == {"WARPS": 8}
    assert first_entry([only_three], "GPU sm_90", defines, size) == (None, None)
    assert first_entry([only_three], "GPU sm_90", or_as, size)[1]["config"] == {"WARPS": 4}
    imma = {"devices": {"GPU sm_90": {"2x4096x14336": {"defines": {"M": 2}, "config": {}, "us": 19.0},
                                      "2x4096x14336 p2": {"defines": {"M": 2, "PLANES": 2}, "config": {},
                                                          "us": 18.0}}}}
    assert fastest_of([both, imma], "GPU sm_90", defines, size, 1) == 0        # 17 against 18 with two planes
    assert fastest_of([both, imma], "GPU sm_90", or_as, size, 0) == 1          # 20 against 19 with three
    assert fastest_of([only_three, imma], "GPU sm_90", defines, size, 1) == 1  # no two-plane pair: the rule given


@pytest.mark.parametrize("queries", ["", " f32"])
def test_the_attention_calls_of_the_layer_find_their_shipped_entries(queries):
    """decode_attention on tensor cores, the split pass and the one launch, with bf16 queries
    and with f32 ones (TQ: the decoder layer's): the call's const values (its chunk, its
    splits) and size (batch x context x M) meet the shipped tables' entries of the same
    shape on both GPUs - and so the tables can compare the two (_measured_faster)."""
    from ember.ops.attention import MMA_CHUNKS, MMA_WARPS, choose_chunk, cluster_chunk
    from ember.ops.kernels import _current_table
    split_table = _current_table("attention_split_mma", None)
    one_table = _current_table("attention_cluster_mma", None)
    assert split_table is not None and one_table is not None
    tq = {"TQ": "f32"} if queries else {}
    for device in ("NVIDIA H100 80GB HBM3 sm_90", "NVIDIA H200 sm_90"):
        for batch, ctx in ((1, 512), (8, 512), (1, 4096), (4, 4096), (8, 4096), (2, 32768)):
            chunk = choose_chunk(ctx, 8 * batch, 132 * 15 // 8, 16 * MMA_WARPS, MMA_CHUNKS)
            defines = {"T": "bf16", "D": 128, "G": 4, "M": 1, "CHUNK": chunk, **tq}
            got = pick_entry(split_table, device, defines, batch * ctx)
            # batch 8 at 512 keys and batch 1 at 4096 are the same work (256 blocks of 128 keys):
            # either entry serves both
            same = [e for b, e in split_table["devices"][device].items()
                    if values_key(e["defines"]) == values_key(defines) and _size(b) == batch * ctx]
            assert split_table["devices"][device][f"{batch}x{ctx}x1 c{chunk}{queries}"] in same
            assert any(got is e for e in same), (device, batch, ctx)
            with ops.on_simulator():
                one = cluster_chunk(ctx, 8 * batch, 132, 0, rule=False)
            if one is not None:
                entry = pick_entry(one_table, device, {**defines, "CHUNK": one, "SPLITS": -(-ctx // one)}, batch * ctx)
                assert entry is one_table["devices"][device][f"{batch}x{ctx}x1 c{one}{queries}"], (device, batch, ctx)


def test_the_attention_calls_on_f32_caches_find_their_shipped_entries():
    """decode_attention on f32 caches (attention_split): the call's const values (its chunk
    and KG, no WARPS, U or PREFETCH of its own at 4 rows a KV head) and size meet the
    shipped table's entry of the same shape on both GPUs."""
    from ember.ops.attention import SPLIT_DEFAULT_U, WARPS, choose_chunk, lanes_per_key
    from ember.ops.kernels import _current_table
    table = _current_table("attention_split", None)
    lanes = lanes_per_key(4)
    assert table is not None and lanes["U"] == SPLIT_DEFAULT_U
    for device in ("NVIDIA H100 80GB HBM3 sm_90", "NVIDIA H200 sm_90"):
        for batch, ctx in ((1, 512), (4, 512), (1, 4096), (4, 4096), (1, 32768)):
            chunk = choose_chunk(ctx, 8 * batch, 132, WARPS * lanes["KG"] * lanes["U"])
            defines = {"T": "f32", "D": 128, "G": 4, "M": 1, "CHUNK": chunk, "KG": lanes["KG"]}
            assert pick_entry(table, device, defines, batch * ctx) is \
                table["devices"][device][f"{batch}x{ctx}x1 c{chunk}"], (device, batch, ctx)


def test_how_each_kernel_is_compiled_for_programmatic_launch():
    """sm_90+: the small kernels wait and signal, the others only wait, the configurations of
    PLAIN_CONFIGS launch plainly; older GPUs and the switch turned off: plain launches. Turning the switch drops the plans made before."""
    import types

    import pytest

    from ember.ops import kernels as K
    from ember.ops import plan
    hopper, ampere = types.SimpleNamespace(compute_capability=(9, 0)), types.SimpleNamespace(compute_capability=(8, 0))
    assert K._launch_mode("add_rmsnorm_q8_parts", True, hopper) == "signal"
    assert K._launch_mode("attention_merge_q8", True, hopper) == "wait"       # the split after it ran unevenly
    assert K._launch_mode("q4k_digits_gemv", True, hopper) == "wait"
    assert K._launch_mode("q4k_digits_gemv", True, ampere) is False
    assert K._launch_mode("rope_append", False, hopper) is False
    # q4k_imma.ember's SHARE_X kernels ran far slower dispatched while the kernel before ended
    assert K._launch_mode("q4k_digits_swiglu_imma", True, hopper, {"WARPS": 4, "SHARE_X": True}) is False
    assert K._launch_mode("q4k_digits_swiglu_imma", True, hopper, {"WARPS": 4, "SHARE_X": False}) == "wait"
    plan._plans[("probe",)] = []
    try:
        K.programmatic_launch(False)
        assert ("probe",) not in plan._plans
    finally:
        K.programmatic_launch(True)
    with pytest.raises(TypeError, match="bool"):
        K.programmatic_launch("yes")


def test_one_launch_attention_takes_short_chunks_or_many_blocks():
    """cluster_chunk on 132 SMs: a cluster's splits where the chunks are short (up to 512
    keys, up to 16 splits: a non-portable cluster past 8) or the clusters pairs filling half
    the SMs; long chunks in larger clusters (batch 1 at 16384 keys: 8 of 2048, 1.2x the split
    pass and the merge on an H100; batch 2 at 16384 on an H200 too) take the split pass and
    the merge - unless the tables measured both (rule=False: what a cluster could take)."""
    from ember.ops.attention import cluster_chunk
    want = {(1, 512): 64, (1, 4096): 512, (2, 4096): 512, (4, 4096): None, (8, 4096): 2048, (1, 8192): 512,
            (2, 8192): None, (2, 16384): None, (4, 8192): None, (1, 16384): None, (1, 32768): None,
            (2, 32768): None}
    with ops.on_simulator():
        got = {(b, ctx): cluster_chunk(ctx, 8 * b, 132, 0) for b, ctx in want}
        fits = {(b, ctx): cluster_chunk(ctx, 8 * b, 132, 0, rule=False) for b, ctx in ((4, 4096), (2, 16384))}
    assert got == want
    assert fits == {(4, 4096): 1024, (2, 16384): 2048}


def test_use_table_replaces_a_kernels_table_until_it_is_given_back():
    """ember.ops.kernels.use_table (bench/table_ab.py's candidate side): the ops read the
    table given, the shipped one again after None; a table of another kernel, a malformed
    one or one made from another version of the source is refused, and nothing changes."""
    import warnings

    from ember.ops import kernels as K
    from ember.tuning import table as T
    shipped = T.read(K.KERNELS_SRC / "tuned" / "q4k_digits_gemv.json")
    candidate = json.loads(json.dumps(shipped))
    K.use_table("q4k_digits_gemv", candidate)
    try:
        assert K._current_table("q4k_digits_gemv", None) is candidate
    finally:
        K.use_table("q4k_digits_gemv", None)
    assert K._current_table("q4k_digits_gemv", None) == shipped
    for bad in ({**shipped, "kernel": "q4k_gemv"}, {**shipped, "devices": {"GPU": []}},
                {**shipped, "source_hash": "0" * 64}, "q4k_digits_gemv.json"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ValueError, match="use_table"):
                K.use_table("q4k_digits_gemv", bad)
        assert K._current_table("q4k_digits_gemv", None) == shipped
