"""The workloads `ember tune` checks configurations with: run in the simulator at small
shapes, every admissible configuration of the tuned kernels is within the workload's
tolerance of its f64 reference, and a wrong launch is caught."""

import numpy as np
import pytest

import ember
import ember.ops as ops
from ember.cli_support import UsageError
from ember.sim import load
from ember.tuning import tune_space
from ember.tuning.workloads import WORKLOADS, buckets_of, source_of, workload


def run_in_sim(wl, config):
    prog = ember.compile(wl.source, defines={**wl.defines, **config}, kernels=[wl.kernel], stop_after="ir-opt",
                         **({"arch": wl.arch} if wl.arch else {}))
    arrays = {**wl.inputs, **{n: a.copy() for n, a in wl.outputs.items()}}
    load(prog)[wl.kernel](*wl.arguments(arrays), grid=wl.grid(config))
    return wl.result(arrays)


@pytest.mark.parametrize("kernel, shape, configs", [
    ("rmsnorm_rows", "3x256 f32", [{"BLOCK": 128, "VEC": 2, "MIN_BLOCKS": 0}, {"BLOCK": 256, "VEC": 8, "MIN_BLOCKS": 4}]),
    ("rmsnorm_rows", "2x512 bf16", [{"BLOCK": 128, "VEC": 8, "MIN_BLOCKS": 2}]),
    ("add_rmsnorm_rows", "3x256 f32", [{"BLOCK": 128, "VEC": 2, "MIN_BLOCKS": 0},
                                       {"BLOCK": 256, "VEC": 8, "MIN_BLOCKS": 4}]),
    ("add_rmsnorm_rows", "2x512 bf16", [{"BLOCK": 128, "VEC": 8, "MIN_BLOCKS": 2}]),
    ("q4k_q8_gemv", "2x9x512", [{"WARPS": 2, "UNROLL": 1, "ROWS": 2}, {"WARPS": 4, "UNROLL": 2, "ROWS": 1}]),
    ("q4k_gemv", "1x7x512", [{"WARPS": 2, "ROWS": 4, "UNROLL": 1, "MIN_BLOCKS": 0},
                             {"WARPS": 4, "ROWS": 1, "UNROLL": 4, "MIN_BLOCKS": 2}]),
    ("q4k_q8_swiglu", "2x5x512", [{"WARPS": 2, "UNROLL": 1, "MIN_BLOCKS": 0, "ROWS": 1},
                                  {"WARPS": 8, "UNROLL": 4, "MIN_BLOCKS": 2, "ROWS": 2}]),
    ("q4k_digits_swiglu", "1x7x512 p2", [{"WARPS": 2, "UNROLL": 2, "MIN_BLOCKS": 0, "ROWS": 2}]),
    ("q4k_digits_gemv", "2x9x768 p2", [{"WARPS": 2, "ROWS": 2, "UNROLL": 1, "MIN_BLOCKS": 1}]),
    ("q4k_digits_imma", "2x17x768 p2", [{"WARPS": 4, "STAGES": 2, "MIN_BLOCKS": 1, "ROWS": 1, "SHARE_X": False},
                                        {"WARPS": 4, "STAGES": 4, "MIN_BLOCKS": 1, "ROWS": 1, "SHARE_X": True}]),
    ("q4k_digits_swiglu_imma", "3x16x512 p2", [{"WARPS": 4, "STAGES": 2, "MIN_BLOCKS": 1, "ROWS": 1,
                                                "SHARE_X": False}]),
    ("q4k_digits_gemv", "2x9x768", [{"WARPS": 2, "ROWS": 4, "UNROLL": 2, "MIN_BLOCKS": 1}]),
    ("q4k_q8_imma", "3x20x512", [{"WARPS": 4, "STAGES": 2, "MIN_BLOCKS": 1, "ROWS": 1, "SHARE_X": False},
                                  {"WARPS": 8, "STAGES": 3, "MIN_BLOCKS": 2, "ROWS": 2, "SHARE_X": False}]),
    ("q4k_digits_imma", "2x17x768", [{"WARPS": 4, "STAGES": 3, "MIN_BLOCKS": 2, "ROWS": 2, "SHARE_X": False},
                                     {"WARPS": 8, "STAGES": 2, "MIN_BLOCKS": 1, "ROWS": 1, "SHARE_X": True}]),
    ("q4k_q8_swiglu_imma", "1x18x512", [{"WARPS": 4, "STAGES": 2, "MIN_BLOCKS": 1, "ROWS": 1, "SHARE_X": False},
                                        {"WARPS": 4, "STAGES": 3, "MIN_BLOCKS": 2, "ROWS": 2, "SHARE_X": True}]),
    ("q4k_digits_swiglu_imma", "2x16x512", [{"WARPS": 4, "STAGES": 3, "MIN_BLOCKS": 1, "ROWS": 2,
                                             "SHARE_X": False}]),
    ("rope_out", "3x5x64 f32", [{"HEADS_PER_THREAD": 2, "PAIRS": 1}, {"HEADS_PER_THREAD": 8, "PAIRS": 2}]),
    ("rope_out", "2x3x32 bf16", [{"HEADS_PER_THREAD": 1, "PAIRS": 4}, {"HEADS_PER_THREAD": 16, "PAIRS": 2}]),
    ("q6k_gemv", "2x9x512", [{"WARPS": 2, "ROWS": 2}]),
    ("q6k_q8_imma", "3x20x1024", [{"WARPS": 2, "STAGES": 2, "ROWS": 1, "STAGE_X": False, "MIN_BLOCKS": 1},
                                  {"WARPS": 2, "STAGES": 3, "ROWS": 2, "STAGE_X": True, "MIN_BLOCKS": 2}]),
    ("q6k_digits_imma", "2x17x2048 p2", [{"WARPS": 4, "STAGES": 2, "ROWS": 1, "STAGE_X": True, "MIN_BLOCKS": 4}]),
    ("rmsnorm", "3x300 f32", [{"BLOCK": 128}, {"BLOCK": 512}]),
    ("add_rmsnorm_q8_parts", "2x512 q8_1", [{"PART": 128}, {"PART": 512}]),
    ("add_rmsnorm_q8_parts", "3x512 digits", [{"PART": 256}]),
    ("add_rmsnorm_q8", "2x512", [{"BLOCK": 256}, {"BLOCK": 512}]),     # its default BLOCK (1024) does not fit
    ("attention_split", "1x100x2x1 c32", [{"WARPS": 2, "U": 1, "PREFETCH": False},
                                           {"WARPS": 4, "U": 4, "PREFETCH": True}]),
    ("attention_split_mma", "1x100x2x1 c64", [{"WARPS": 2, "STAGES": 2, "CHAINS": 1},
                                              {"WARPS": 4, "STAGES": 3, "CHAINS": 4}]),
    ("attention_cluster_mma", "2x100x2x1 c64", [{"WARPS": 2, "STAGES": 2, "CHAINS": 2},
                                                {"WARPS": 4, "STAGES": 3, "CHAINS": 1}]),
    ("gemm_bf16", "70x40x96", [{"BM": 64, "BN": 64, "BK": 32, "STAGES": 2, "WARPS_M": 2, "WARPS_N": 2}]),
    ("gemm_wgmma", "20x72x136", [{"BN": 64, "STAGES": 2, "GROUP_M": 0, "CONSUMERS": 1, "BULK_STORE": False,
                                  "SWAP": False},
                                 {"BN": 16, "STAGES": 3, "GROUP_M": 8, "CONSUMERS": 2, "BULK_STORE": True,
                                  "SWAP": False},
                                 {"BN": 16, "STAGES": 3, "GROUP_M": 0, "CONSUMERS": 1, "BULK_STORE": False,
                                  "SWAP": True}]),
])
def test_correct_configurations_pass_the_check(kernel, shape, configs):
    wl = workload(kernel, shape)
    admissible = tune_space(wl.source, kernel=kernel, defines=wl.defines, arch=wl.arch)[kernel].admissible
    for config in configs:
        assert config in admissible
        err = wl.error(run_in_sim(wl, config))
        assert err <= wl.tolerance, (config, err)


def test_a_wrong_launch_fails_the_check():
    """A grid one block short leaves rows unwritten (zeros): far outside the tolerance."""
    wl = workload("q4k_gemv", "1x9x256")
    config = {"WARPS": 2, "ROWS": 1}
    wl.grid = lambda c: (4,)                        # 8 of the 9 rows
    assert wl.error(run_in_sim(wl, config)) > 1e3 * wl.tolerance
    assert wl.error(np.full(wl.reference.shape, np.nan)) == float("inf")


@pytest.mark.parametrize("kernel, shape", [("q4k_digits_gemv", "2x9x768"), ("q4k_digits_swiglu_imma", "2x16x512")])
def test_two_digit_planes_are_checked_against_their_own_product(kernel, shape):
    """A `p2` bucket runs the kernel with PLANES 2, checked against the exact product of
    the two digits read: the three planes' kernel (the f32-accurate product, 2^-22 of a
    block's largest) is outside its tolerance, and the two planes' outside the three's."""
    three, two = workload(kernel, shape), workload(kernel, f"{shape} p2")
    assert two.defines == {**three.defines, "PLANES": 2} and two.bucket == f"{shape} p2"
    assert two.moved_bytes < three.moved_bytes
    config = dict(tune_space(three.source, kernel=kernel, defines=three.defines)[kernel].default)
    assert two.error(run_in_sim(two, config)) <= two.tolerance
    assert two.error(run_in_sim(three, config)) > two.tolerance
    assert three.error(run_in_sim(two, config)) > three.tolerance
    with pytest.raises(UsageError, match="not a shape of"):
        workload(kernel, f"{shape} p1")


def test_the_residual_sum_written_back_is_checked_too():
    """add_rmsnorm_rows writes h = x + r over r: a kernel that left r as it was (here: the
    check run on a copy of the outputs whose r is then restored) is far outside the
    tolerance, though its y is right."""
    wl = workload("add_rmsnorm_rows", "2x256 f32")
    config = {"BLOCK": 128, "VEC": 2, "MIN_BLOCKS": 0}
    prog = ember.compile(wl.source, defines={**wl.defines, **config}, kernels=[wl.kernel], stop_after="ir-opt")
    arrays = {**wl.inputs, **{n: a.copy() for n, a in wl.outputs.items()}}
    load(prog)[wl.kernel](*wl.arguments(arrays), grid=wl.grid(config))
    assert wl.error(wl.result(arrays)) <= wl.tolerance
    arrays["r"] = wl.outputs["r"].copy()
    assert wl.error(wl.result(arrays)) > 100 * wl.tolerance


@pytest.mark.parametrize("activations", ["q8_1", "digits"])
def test_quantised_rows_are_checked_as_the_values_they_stand_for(activations):
    """add_rmsnorm_q8_parts' Q8_1 (or digit) rows are read back and compared with the f64
    normalised rows, its sum with h: a grid one part short leaves a quarter of each row's
    activations and of its sum unwritten, far outside the tolerance."""
    wl = workload("add_rmsnorm_q8_parts", f"2x1024 {activations}")
    config = {"PART": 256}
    assert wl.error(run_in_sim(wl, config)) <= wl.tolerance
    wl.grid = lambda c: (3, 2)
    assert wl.error(run_in_sim(wl, config)) > 50 * wl.tolerance


def test_inputs_are_fresh_random_data_the_same_for_every_run():
    a, b = workload("rmsnorm_rows", "4x256 f32"), workload("rmsnorm_rows", "4x256 f32")
    assert np.array_equal(a.inputs["x"], b.inputs["x"]) and np.abs(a.inputs["x"]).min() > 0
    assert not np.array_equal(a.inputs["x"], workload("rmsnorm_rows", "4x512 f32").inputs["x"][:, :256])


def test_every_workload_names_its_source_and_buckets():
    for kernel in WORKLOADS:
        assert f"kernel {kernel}<" in source_of(kernel).read_text()
        assert buckets_of(kernel)
    with pytest.raises(UsageError, match="no workload for `nope`"):
        workload("nope", "1x1")
    with pytest.raises(UsageError, match="not a shape of q4k_gemv"):
        workload("q4k_gemv", "big")


def test_the_attention_buckets_take_the_chunks_ember_ops_takes_on_132_sms():
    """attention_split_mma's entries are found by their CHUNK: each shipped bucket's chunk
    is the one ember.ops.decode_attention chooses for that batch and context on the GPUs
    the tables are made on (H100 and H200: 132 SMs)."""
    from ember.ops.attention import MMA_CHUNKS, MMA_WARPS, choose_chunk
    for bucket in buckets_of("attention_split_mma"):
        dims, chunk = bucket.split(" ")[:2]
        batch, ctx, _ = (int(v) for v in dims.split("x"))
        assert int(chunk[1:]) == choose_chunk(ctx, 8 * batch, 132 * 15 // 8, 16 * MMA_WARPS, MMA_CHUNKS), bucket
        assert workload("attention_split_mma", "1x64x1 " + chunk).defines["CHUNK"] == int(chunk[1:])
    # and attention_cluster_mma's: the chunk of the one-launch path, at most 16 splits (past 8 a
    # non-portable cluster, for chunks of SHORT_CHUNK keys at most)
    from ember.ops.attention import cluster_chunk
    for bucket in buckets_of("attention_cluster_mma"):
        dims, chunk = bucket.split(" ")[:2]
        batch, ctx, _ = (int(v) for v in dims.split("x"))
        with ops.on_simulator():
            # the chunk a call takes: by the rule, or where both tables decide (rule=False)
            assert int(chunk[1:]) in (cluster_chunk(ctx, 8 * batch, 132, 0),
                                      cluster_chunk(ctx, 8 * batch, 132, 0, rule=False)), bucket
        assert -(-ctx // int(chunk[1:])) <= (8 if int(chunk[1:]) > 512 else 16), bucket
    # the workload's SPLITS is that count (built for the smallest bucket only: a workload
    # makes its inputs and f64 reference, seconds at 32768 keys)
    smallest = min(buckets_of("attention_cluster_mma"), key=lambda b: int(b.split("x")[0]) * int(b.split("x")[1]))
    dims, chunk = smallest.split(" ")[:2]
    ctx = int(dims.split("x")[1])
    assert workload("attention_cluster_mma", smallest).defines["SPLITS"] == -(-ctx // int(chunk[1:]))
    # and attention_split's (f32 caches): about one block an SM, the step of its default warps
    from ember.ops.attention import WARPS, lanes_per_key
    lanes = lanes_per_key(4)
    for bucket in buckets_of("attention_split"):
        dims, chunk = bucket.split(" ")
        batch, ctx, _ = (int(v) for v in dims.split("x"))
        assert int(chunk[1:]) == choose_chunk(ctx, 8 * batch, 132, WARPS * lanes["KG"] * lanes["U"]), bucket
        assert workload("attention_split", "1x64x1 " + chunk).defines["KG"] == lanes["KG"]
