"""ember.ops end to end without a GPU: inside `ember.ops.on_simulator()` each op takes numpy
arrays and runs its kernels in the simulator (the same checks, plans and launches) -
checked against the f64 references on fresh random data."""

import ml_dtypes
import numpy as np
import pytest

import ember.ops as ops
from ember.reference import q4k as Q
from ember.reference.attention import decode_attention
from ember.reference.rmsnorm import rmsnorm
from ember.reference.rope import rope
from tests.kernels.test_q4k_in_sim import f32_tolerance
from tests.kernels.test_q4k_two_digits_in_sim import swiglu_tolerance, two_digit_bound

BF16 = ml_dtypes.bfloat16


def test_rms_norm_and_rope_in_place():
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((3, 512)) * 3).astype(BF16)
    w = rng.uniform(0.5, 1.5, 512).astype(BF16)
    q = rng.standard_normal((2, 4, 64)).astype(np.float32)
    k = rng.standard_normal((2, 2, 64)).astype(np.float32)
    pos = np.array([5, 900], np.int32)
    want_q, want_k = rope(q, pos, 1e4, True), rope(k, pos, 1e4, True)
    with ops.on_simulator():
        y = ops.rms_norm(x, w, 1e-5)
        ops.rope(q, k, pos, 1e4, neox=True)
    ref = rmsnorm(x.astype(np.float64), w.astype(np.float64), 1e-5)
    assert y.dtype == BF16 and np.abs(y.astype(np.float64) - ref).max() <= 2 ** -7 * np.abs(ref).max()
    assert np.abs(q - want_q).max() <= 1e-5 and np.abs(k - want_k).max() <= 1e-5


@pytest.mark.parametrize("m", [1, 3])
def test_the_q4k_gemvs(m):
    rng = np.random.default_rng(m)
    w = Q.model_like_q4k(rng, 40, 512, 512 ** -0.5)
    x = rng.standard_normal((m, 512)).astype(np.float32)
    with ops.on_simulator():
        y = ops.q4k_gemv(w, x)
        xq = ops.quantize_q8_1(x)
        y8 = ops.q4k_gemv(w, xq)
    exact = Q.gemv(w, x)
    assert np.abs(y - exact).max() <= 1e-5 * np.abs(exact).max()
    want = Q.gemv_q8_1(w, Q.quantize_q8_1(x))
    assert np.abs(y8 - want).max() <= 1e-5 * np.abs(want).max()


@pytest.mark.parametrize("m", [1, 8])
def test_f32_activations_run_as_digits(m):
    """q4k_gemv with f32 x quantizes it to digits itself and runs the digits GEMV (2
    launches): the bits of the two ops called in turn, as close to the exact product as
    q4k_gemv.ember (1 launch, DIGITS_FOR_F32 off)."""
    from ember.ops import gemv
    rng = np.random.default_rng(20 + m)
    w = Q.model_like_q4k(rng, 24, 512, 512 ** -0.5)
    x = rng.standard_normal((m, 512)).astype(np.float32)
    with ops.on_simulator():
        before = ops.plan.launched()
        y = ops.q4k_gemv(w, x)
        two = ops.plan.launched() - before
        want = ops.q4k_gemv(w, ops.quantize_digits(x))
        gemv.DIGITS_FOR_F32[0] = False
        try:
            before = ops.plan.launched()
            y32 = ops.q4k_gemv(w, x)
            one = ops.plan.launched() - before
        finally:
            gemv.DIGITS_FOR_F32[0] = True
    assert (two, one) == (2, 1)
    assert np.array_equal(y.view(np.uint32), want.view(np.uint32))
    exact = Q.gemv(w, x)
    for got in (y, y32):
        assert np.abs(got - exact).max() <= 1e-5 * np.abs(exact).max()


def _attention_launches() -> int:
    """ember.ops.decode_attention into f32 from a bf16 cache, in the simulator, checked
    against the f64 reference: the launches it took - which decode_attention_launches told
    before, launching nothing."""
    rng = np.random.default_rng(4)
    q = rng.standard_normal((2, 1, 4, 64)).astype(np.float32)
    kc, vc = (rng.standard_normal((2, 70, 2, 64)).astype(BF16) for _ in range(2))
    lengths = np.array([70, 3], np.int32)
    out = np.zeros_like(q)
    with ops.on_simulator():
        before = ops.plan.launched()
        counted = ops.decode_attention_launches(q, kc, vc, lengths, out=out)
        assert ops.plan.launched() == before and not out.any()
        ops.decode_attention(q, kc, vc, lengths, out=out)
        launches = ops.plan.launched() - before
    assert counted == launches
    ref = decode_attention(q, kc.astype(np.float64), vc.astype(np.float64), lengths)
    assert np.abs(out - ref).max() <= 1e-5
    return launches


@pytest.mark.parametrize("max_cluster, schedulable", [(8, True), (0, True), (8, False)])
def test_decode_attention_into_f32_from_a_bf16_cache(max_cluster, schedulable, monkeypatch):
    """In one launch, a KV head's splits merged in their cluster (attention_cluster_mma), and
    as the split pass and the merge kernel - where the splits do not fit a cluster, or where
    the GPU cannot schedule one (the runtime's max_active_clusters is 0: a non-portable size
    another GPU may not take) and a launch would fail."""
    from ember.ops import attention, kernels
    monkeypatch.setattr(attention, "MAX_CLUSTER", max_cluster)
    if not schedulable:
        monkeypatch.setattr(kernels._SimKernel, "max_active_clusters", lambda self, grid, block=None: 0)
    assert _attention_launches() == (1 if max_cluster and schedulable else 2)


@pytest.mark.parametrize("arch, kernels", [("sm_90", ["attention_cluster_mma"]),
                                           ("sm_86", ["attention_split", "attention_merge"]),
                                           ("sm_120", ["attention_split", "attention_merge"])])
def test_decode_attention_at_head_dim_256_runs_the_kernels_that_fit(arch, kernels, monkeypatch):
    """At head_dim 256 the tensor cores' tiles take 128 KB of shared memory: on an sm_90 the
    cluster kernel runs; on an sm_86 or an sm_120 (99 KB a block: E0405 from inside the op
    before) neither it nor the split pass on tensor cores fits, and attention_split runs -
    the same results."""
    from ember.ops import attention
    asked = kernels_asked(monkeypatch, attention)
    rng = np.random.default_rng(5)
    q = rng.standard_normal((1, 1, 4, 256)).astype(np.float32)
    kc, vc = (rng.standard_normal((1, 40, 2, 256)).astype(BF16) for _ in range(2))
    lengths = np.array([37], np.int32)
    out = np.zeros_like(q)
    with ops.on_simulator(arch):
        ops.decode_attention(q, kc, vc, lengths, out=out)
    assert [name for _, name in asked] == kernels
    ref = decode_attention(q, kc.astype(np.float64), vc.astype(np.float64), lengths)
    assert np.abs(out - ref).max() <= 1e-5


@pytest.mark.parametrize("cache, max_cluster", [(BF16, 8), (BF16, 0), (np.float32, 8)])
def test_lengths_outside_the_cache_are_clamped_into_it(cache, max_cluster, monkeypatch):
    """lengths is device data ember.ops does not read: a length past the cache's S keys reads
    as S (the split pass once read the next sequence's keys, and past the buffer for the
    last sequence: the simulator's out-of-bounds report), a negative one as 0 (NaN rows, a
    softmax over nothing) - on each of the three kernels' paths (one launch, the tensor
    cores' split pass, attention_split for f32 caches)."""
    from ember.ops import attention
    monkeypatch.setattr(attention, "MAX_CLUSTER", max_cluster)
    rng = np.random.default_rng(11)
    q = rng.standard_normal((3, 1, 4, 64)).astype(np.float32)
    kc, vc = (rng.standard_normal((3, 70, 2, 64)).astype(cache) for _ in range(2))
    lengths = np.array([1 << 30, -4, 75], np.int32)
    out = np.zeros_like(q)
    with ops.on_simulator():
        ops.decode_attention(q, kc, vc, lengths, out=out)
    ref = decode_attention(q, kc.astype(np.float64), vc.astype(np.float64), [70, 1, 70])   # row 1 unused
    assert np.abs(out[[0, 2]] - ref[[0, 2]]).max() <= 1e-5
    assert np.isnan(out[1]).all()


@pytest.mark.parametrize("split_us, one_us, launches", [(10.0, 20.0, 2), (10.0, 11.0, 1)])
def test_the_tables_may_overrule_the_one_launch(split_us, one_us, launches, monkeypatch):
    """Where this GPU's tables measured the split pass plus the merge faster than the one
    launch (an H200 at batch 4, 4096 keys), decode_attention splits."""
    from ember.ops import attention
    times = {"attention_split_mma": split_us, "attention_cluster_mma": one_us}
    monkeypatch.setattr(attention, "tuned_us", lambda name, defines, size, device: times[name])
    assert _attention_launches() == launches


def test_digit_activations_give_f32_accurate_products():
    """quantize_digits, and add_rms_norm_q8 into digits, feed q4k_gemv and swiglu_q4k's
    digits kernels: within the f32 rounding of the exact products (Q8_1 is 100x off)."""
    rng = np.random.default_rng(9)
    k = 512
    wg, wu = (Q.model_like_q4k(rng, 24, k, k ** -0.5) for _ in range(2))
    x = rng.standard_normal((2, k)).astype(np.float32)
    r = rng.standard_normal((2, k)).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, k).astype(np.float32)
    h = np.zeros_like(x)
    with ops.on_simulator():
        xd = ops.quantize_digits(x)
        y = ops.q4k_gemv(wg, xd)
        s = ops.swiglu_q4k(wg, wu, xd)
        nd = ops.add_rms_norm_q8(x, r, gamma, out=ops.Q8Activations.empty(x, 2, k, digits=True), residual_out=h)
        yn = ops.q4k_gemv(wg, nd)
        y8 = ops.q4k_gemv(wg, ops.quantize_q8_1(x))
    exact = Q.gemv(wg, x)
    g, u = exact, Q.gemv(wu, x)
    scale = np.abs(exact).max()
    assert np.abs(y - exact).max() <= 1e-5 * scale < 0.01 * np.abs(y8 - exact).max()
    assert np.abs(s - g / (1 + np.exp(-g)) * u).max() <= 1e-5 * np.abs(g * u).max()
    normed = rmsnorm((x + r).astype(np.float64), gamma, 1e-5)
    assert np.array_equal(h, x + r)
    assert np.abs(yn - Q.gemv(wg, normed)).max() <= 1e-5 * np.abs(Q.gemv(wg, normed)).max()


def test_two_digits_a_value_are_read_where_the_activations_say_so():
    """Q8Activations.empty(..., digits=True, planes=2): quantize_digits writes the same three
    planes, the GEMVs (q4k_gemv, swiglu_q4k; the DP4A kernels at M = 2 and the tensor-core
    ones at M = 8) read two - within tests/kernels/test_q4k_two_digits_in_sim.py's bound
    where three are within the f32 rounding - and any other `planes` is refused, naming it."""
    rng = np.random.default_rng(19)
    k = 512
    wg, wu = (Q.model_like_q4k(rng, 24, k, k ** -0.5) for _ in range(2))
    for m in (2, 8):
        x = rng.standard_normal((m, k)).astype(np.float32)
        with ops.on_simulator():
            three = ops.quantize_digits(x)
            two = ops.quantize_digits(x, out=ops.Q8Activations.empty(x, m, k, digits=True, planes=2))
            y3, y2 = ops.q4k_gemv(wg, three), ops.q4k_gemv(wg, two)
            s2 = ops.swiglu_q4k(wg, wu, two)
        assert np.array_equal(np.asarray(two.aq), np.asarray(three.aq))      # the same planes written
        g, u = Q.gemv(wg, x), Q.gemv(wu, x)
        bg, bu = two_digit_bound(wg, x), two_digit_bound(wu, x)
        assert (np.abs(y3 - g) <= f32_tolerance(wg, x)).all()
        assert (np.abs(y2 - g) <= bg).all() and np.abs(y2 - g).max() > 8 * np.abs(y3 - g).max()   # two, not three
        tol = swiglu_tolerance(g, u, bg, bu)
        assert (np.abs(s2 - g / (1 + np.exp(-g)) * u) <= tol).all()
    x = np.zeros((1, k), np.float32)
    with ops.on_simulator():
        for planes, digits, text in ((4, True, "is 4: the GEMVs read 3 digits a value or 2"), (True, True, "is True"),
                                     (2, False, "which digit activations have")):
            with pytest.raises(ops.ArgumentError, match=text) as e:
                ops.Q8Activations.empty(x, 1, k, digits=digits, planes=planes)
            assert e.value.argument == "planes"


@pytest.mark.parametrize("m", [1, 3, 8])
def test_q6k_gemv_on_the_integer_activations(m):
    """q6k_gemv takes the activations the Q4_K GEMVs read (q6k_dp4a.ember): digits within
    the f32 rounding of the exact product, two digits and Q8_1 of the products with the
    values they stand for; weights of another k than the activations' are refused, naming w."""
    from ember.reference import q6k as Q6
    rng = np.random.default_rng(40 + m)
    k = 512
    w = Q6.model_like_q6k(rng, 20, k, k ** -0.5)
    x = rng.standard_normal((m, k)).astype(np.float32)
    with ops.on_simulator():
        yd = ops.q6k_gemv(w, ops.quantize_digits(x))
        y2 = ops.q6k_gemv(w, ops.quantize_digits(x, out=ops.Q8Activations.empty(x, m, k, digits=True, planes=2)))
        y8 = ops.q6k_gemv(w, ops.quantize_q8_1(x))
        with pytest.raises(ops.ArgumentError, match="2 Q6_K super-blocks of 210 bytes per row for k = 512") as e:
            ops.q6k_gemv(Q6.model_like_q6k(rng, 20, 2 * k, k ** -0.5), ops.quantize_q8_1(x))
    assert e.value.argument == "w"
    exact = np.asarray(x, np.float64) @ Q6.dequantize_q6k(w).T
    bound = k * 2.0 ** -23 * (np.abs(np.asarray(x, np.float64)) @ np.abs(Q6.dequantize_q6k(w)).T)
    assert (np.abs(yd - exact) <= bound).all()
    assert (np.abs(y2 - Q6.gemv_digits(w, x, 2)) <= bound).all()
    assert np.abs(y2 - exact).max() > 8 * np.abs(yd - exact).max()              # two digits, not three
    want8 = Q6.gemv_q8_1(w, Q.quantize_q8_1(x))
    assert np.abs(y8 - want8).max() <= 1e-5 * np.abs(want8).max() < 0.1 * np.abs(y8 - exact).max()


def offset_copy(a: np.ndarray, offset: int) -> np.ndarray:
    """A copy of the uint8 array `a` in a view `offset` bytes past an 8-byte boundary."""
    buf = np.zeros(a.size + 16, np.uint8)
    start = -buf.ctypes.data % 8 + offset
    buf[start:start + a.size] = a.ravel()
    view = buf[start:start + a.size].reshape(a.shape)
    assert view.ctypes.data % 8 == offset
    return view


@pytest.mark.parametrize("k, offset, staged", [(1024, 0, True), (512, 0, False), (1024, 2, False)])
def test_q6k_gemv_runs_a_staged_entry_only_where_its_contract_holds(monkeypatch, k, offset, staged):
    """A tuned entry with STAGED (the weights copied into shared memory in 8-byte pieces of
    four super-blocks: k a multiple of 1024, w 8-byte aligned) runs as chosen where that
    holds, and with the same configuration unstaged where it does not (k = 512; w 2 bytes
    past an 8-byte boundary) - never a kernel that gives NaN rows or copies misaligned pieces
    (the simulator reports those). The tables stand in for a GPU's: the first lookup answers
    STAGED."""
    from ember.reference import q6k as Q6
    from ember.ops import gemv
    asked = []

    def tuned(source, name, defines, size, device=0, **lookup):
        if source != "q6k_dp4a.ember":
            return real(source, name, defines, size, device, **lookup)
        asked.append(dict(defines))
        chosen = {"WARPS": 4, "ROWS": 2, "QUARTERS": False, "STAGED": True, "STAGES": 3}
        return real(source, name, {**chosen, **defines}, size, device)

    real = gemv.kernel
    monkeypatch.setattr(gemv, "kernel", tuned)
    rng = np.random.default_rng(7)
    w = Q6.model_like_q6k(rng, 13, k, k ** -0.5)
    if offset:                                       # w 2-byte aligned only
        w = offset_copy(w, offset)
    x = rng.standard_normal((2, k)).astype(np.float32)
    with ops.on_simulator():
        y = ops.q6k_gemv(w, ops.quantize_q8_1(x))
    want = Q6.gemv_q8_1(w, Q.quantize_q8_1(x))
    assert np.abs(y - want).max() <= 1e-5 * np.abs(want).max()
    assert len(asked) == (1 if staged else 2)
    if not staged:
        assert asked[1] == {"M": 2, "WARPS": 4, "ROWS": 2, "QUARTERS": False, "STAGED": False, "STAGES": 2,
                            "BIAS": True}


def kernels_asked(monkeypatch, module=None) -> list:
    """The (source, kernel name) of every kernel the ops of `module` (default ember.ops.gemv)
    load, in order, from now on in the test."""
    from ember.ops import gemv
    module = module or gemv
    asked = []
    real = module.kernel

    def spy(source, name, *args, **kw):
        asked.append((source, name))
        return real(source, name, *args, **kw)

    monkeypatch.setattr(module, "kernel", spy)
    return asked


@pytest.mark.parametrize("k, offset, imma", [(1536, 0, True), (768, 0, False), (1024, 2, False)])
def test_q6k_gemv_on_tensor_cores_where_their_copies_may_run(monkeypatch, k, offset, imma):
    """From IMMA_FROM_M["q6k"] rows (the rule where no tables decide) q6k_gemv runs
    q6k_imma.ember - whose copies of two super-blocks a row in 4-byte pieces need k a
    multiple of 512 and w 4-byte aligned - and the DP4A kernels where either fails (never
    a kernel that gives NaN rows or copies misaligned pieces: the simulator reports those);
    both activations, the references' results."""
    from ember.reference import q6k as Q6
    asked = kernels_asked(monkeypatch)
    rng = np.random.default_rng(9)
    m = ops.gemv.IMMA_FROM_M["q6k"]
    w = Q6.model_like_q6k(rng, 24, k, k ** -0.5)
    if offset:                                       # w 2-byte aligned only
        w = offset_copy(w, offset)
    x = rng.standard_normal((m, k)).astype(np.float32)
    with ops.on_simulator():
        y8 = ops.q6k_gemv(w, ops.quantize_q8_1(x))
        yd = ops.q6k_gemv(w, ops.quantize_digits(x))
    want = Q6.gemv_q8_1(w, Q.quantize_q8_1(x))
    assert np.abs(y8 - want).max() <= 1e-5 * np.abs(want).max()
    exact = np.asarray(x, np.float64) @ Q6.dequantize_q6k(w).T
    bound = k * 2.0 ** -23 * (np.abs(np.asarray(x, np.float64)) @ np.abs(Q6.dequantize_q6k(w)).T)
    assert (np.abs(yd - exact) <= bound).all()
    gemvs = [source for source, _ in asked if source.startswith("q6k")]
    assert gemvs == ["q6k_imma.ember"] * 2 if imma else gemvs == ["q6k_dp4a.ember"] * 2


def test_the_tensor_core_gemvs_from_their_rule():
    """Without tuned tables (the simulator) the int8 tensor-core kernels run the GEMV from
    IMMA_FROM_M["gemv"] rows and the SwiGLU pair from IMMA_FROM_M["swiglu"]: the same
    activations, the same results as the DP4A kernels' references."""
    rng = np.random.default_rng(12)
    k, mg, ms = 512, ops.gemv.IMMA_FROM_M["gemv"], ops.gemv.IMMA_FROM_M["swiglu"]
    wg, wu = (Q.model_like_q4k(rng, 20, k, k ** -0.5) for _ in range(2))
    x = rng.standard_normal((mg, k)).astype(np.float32)
    with ops.on_simulator():
        y8 = ops.q4k_gemv(wg, ops.quantize_q8_1(x))
        yd = ops.q4k_gemv(wg, ops.quantize_digits(x))
        s8 = ops.swiglu_q4k(wg, wu, ops.quantize_q8_1(x[:ms]))
        sd = ops.swiglu_q4k(wg, wu, ops.quantize_digits(x[:ms]))
    q8 = Q.quantize_q8_1(x)
    want = Q.gemv_q8_1(wg, q8)
    assert np.abs(y8 - want).max() <= 1e-5 * np.abs(want).max()
    exact = Q.gemv(wg, x)
    assert np.abs(yd - exact).max() <= 1e-5 * np.abs(exact).max()
    g, u = Q.gemv_q8_1(wg, q8[:ms]), Q.gemv_q8_1(wu, q8[:ms])
    assert np.abs(s8 - g / (1 + np.exp(-g)) * u).max() <= 1e-5 * np.abs(g * u).max()
    g, u = exact[:ms], Q.gemv(wu, x[:ms])
    assert np.abs(sd - g / (1 + np.exp(-g)) * u).max() <= 1e-5 * np.abs(g * u).max()


def test_a_gpu_with_less_shared_memory_runs_the_kernels_that_fit(monkeypatch):
    """On an sm_86, sm_89 or sm_120 a block has 99 KB of shared memory: the tensor-core GEMVs'
    rings at M = 8 (110 KB with digits) do not fit (E0405), so q4k_gemv and swiglu_q4k run the
    DP4A kernels there - and the tensor cores' where they fit (the Q8_1 SwiGLU pair) - with
    the same results as on an sm_90, which runs the tensor cores' (never a compile error
    from inside an op)."""
    asked = kernels_asked(monkeypatch)
    rng = np.random.default_rng(13)
    k, m = 512, 8
    wg, wu = (Q.model_like_q4k(rng, 20, k, k ** -0.5) for _ in range(2))
    x = rng.standard_normal((m, k)).astype(np.float32)
    results = {}
    for arch in ("sm_86", "sm_90"):
        asked.clear()
        with ops.on_simulator(arch):
            xq, xd = ops.quantize_q8_1(x), ops.quantize_digits(x)
            results[arch] = (ops.q4k_gemv(wg, xq), ops.q4k_gemv(wg, xd), ops.swiglu_q4k(wg, wu, xq),
                             ops.swiglu_q4k(wg, wu, xd))
        launched = [name for _, name in asked if name.startswith("q4k")]
        if arch == "sm_90":
            assert launched == ["q4k_q8_imma", "q4k_digits_imma", "q4k_q8_swiglu_imma", "q4k_digits_swiglu_imma"]
        else:
            assert launched == ["q4k_q8_gemv", "q4k_digits_gemv", "q4k_q8_swiglu_imma", "q4k_digits_swiglu"]
    q8 = Q.quantize_q8_1(x)
    exact, want = Q.gemv(wg, x), Q.gemv_q8_1(wg, q8)
    g8, u8 = want, Q.gemv_q8_1(wu, q8)
    g, u = exact, Q.gemv(wu, x)
    for y8, yd, s8, sd in results.values():
        assert np.abs(y8 - want).max() <= 1e-5 * np.abs(want).max()
        assert np.abs(yd - exact).max() <= 1e-5 * np.abs(exact).max()
        assert np.abs(s8 - g8 / (1 + np.exp(-g8)) * u8).max() <= 1e-5 * np.abs(g8 * u8).max()
        assert np.abs(sd - g / (1 + np.exp(-g)) * u).max() <= 1e-5 * np.abs(g * u).max()


def test_the_simulator_stands_in_for_a_known_gpu_only():
    from ember.targets import TargetError
    with pytest.raises(TargetError, match="sm_1"):
        with ops.on_simulator("sm_1"):
            pass
    assert not ops.args.simulating()


def test_read_only_numpy_arrays_are_read_but_not_written():
    """In the simulator a numpy array that may not be written is refused where the op writes
    it, and read where it only reads."""
    x = np.ones((2, 256), np.float32)
    x.flags.writeable = False
    w = np.ones(256, np.float32)
    with ops.on_simulator():
        y = ops.rms_norm(x, w, 1e-5)
        with pytest.raises(ops.ArgumentError, match="`residual` is read-only: add_rms_norm_q8 writes it"):
            ops.add_rms_norm_q8(np.ones((2, 256), np.float32), x, w, 1e-5)
    assert np.allclose(y, 1.0, atol=1e-5)


def test_rope_append_reads_read_only_inputs_into_q_out():
    """q, k and v are only read where q_out is given, so read-only arrays pass - as on the
    GPU; the simulator's launch refused them (its kernel parameters are `mut`, since q_out
    may be q) with a LaunchError naming `q` as written (until 2026-11-27)."""
    from ember.reference.rope import rope_append
    rng = np.random.default_rng(7)
    q, k, v = (rng.standard_normal((2, 1, h, 64)).astype(np.float32) for h in (4, 2, 2))
    kc, vc = (rng.standard_normal((2, 8, 2, 64)).astype(np.float32) for _ in range(2))
    pos = np.array([[3], [6]], np.int32)
    want = rope_append(q[:, 0], k[:, 0], v[:, 0], kc, vc, pos.reshape(-1), 1, 1e4)
    for a in (q, k, v):
        a.flags.writeable = False
    q_out = np.zeros_like(q)
    with ops.on_simulator():
        ops.rope_append(q, k, v, kc, vc, pos, 1e4, q_out=q_out)
    for got, exp in zip((q_out[:, 0], kc, vc), want):
        assert np.abs(got - exp).max() <= 1e-5
