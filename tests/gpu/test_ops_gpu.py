"""ember.ops on the GPU with torch tensors: each op against its f64 reference on fresh
random data (f32 and bf16, the fused residual add, GQA RoPE in both pair layouts, the
Q4_K GEMV at M = 1 and 8), on torch's current stream; a bad argument raises before any
launch, so the output is left as it was."""

import gc
import warnings

import numpy as np
import pytest

import ember.ops as ops
from ember.reference import q4k as Q
from ember.reference import q6k as Q6
from ember.reference.rmsnorm import rmsnorm
from ember.reference.rope import rope as rope_ref

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")


def f64(t):
    return t.detach().to("cpu", torch.float64).numpy()


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():          # shapes with no tuned entry say so once
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("dtype, tol", [(torch.float32, 2e-6), (torch.bfloat16, 2 ** -7)])
@pytest.mark.parametrize("rows, cols", [(1, 4096), (37, 4096), (5, 1000), (3, 14)])
def test_rms_norm_and_the_fused_residual_add(dtype, tol, rows, cols):
    g = torch.Generator(device="cuda").manual_seed(rows * cols)
    x = (torch.randn(rows, cols, device="cuda", generator=g) * 3).to(dtype)
    w = (torch.rand(cols, device="cuda", generator=g) + 0.5).to(dtype)
    y = ops.rms_norm(x, w, 1e-5)
    ref = rmsnorm(f64(x), f64(w), 1e-5)
    assert np.abs(f64(y) - ref).max() / np.abs(ref).max() <= tol
    r = torch.randn(rows, cols, device="cuda", generator=g).to(dtype)
    h = (x.float() + r.float()).to(dtype)
    y2 = ops.rms_norm(x, w, 1e-5, residual=r)
    assert torch.equal(r, h)                                 # h written back into the residual
    ref2 = rmsnorm(f64(h), f64(w), 1e-5)
    assert np.abs(f64(y2) - ref2).max() / np.abs(ref2).max() <= tol


@pytest.mark.parametrize("dtype, tol", [(torch.float32, 1e-5), (torch.bfloat16, 2 ** -7)])
@pytest.mark.parametrize("neox", [False, True])
def test_rope_rotates_q_and_k_in_place(dtype, tol, neox):
    g = torch.Generator(device="cuda").manual_seed(7 + neox)
    tokens, q_heads, kv_heads, head_dim = 19, 32, 8, 128
    q = torch.randn(tokens, q_heads, head_dim, device="cuda", generator=g).to(dtype)
    k = torch.randn(tokens, kv_heads, head_dim, device="cuda", generator=g).to(dtype)
    pos = torch.randint(0, 32768, (tokens,), device="cuda", generator=g, dtype=torch.int32)
    q_ref = rope_ref(f64(q), pos.cpu().numpy(), 500000.0, neox=neox)
    k_ref = rope_ref(f64(k), pos.cpu().numpy(), 500000.0, neox=neox)
    ops.rope(q, k, pos, 500000.0, neox=neox)
    for got, ref in ((q, q_ref), (k, k_ref)):
        assert np.abs(f64(got) - ref).max() / np.abs(ref).max() <= tol


@pytest.mark.parametrize("m, n, k", [(1, 1000, 4096), (8, 512, 2048)])
def test_q4k_gemv(m, n, k):
    rng = np.random.default_rng(m * n + k)
    w = Q.random_q4k(rng, n, k)
    x = (rng.standard_normal((m, k)) * rng.uniform(0.1, 10.0, (m, 1))).astype(np.float32)
    y = ops.q4k_gemv(torch.from_numpy(w).cuda(), torch.from_numpy(x).cuda())
    ref = Q.gemv(w, x)
    assert y.shape == (m, n) and np.abs(f64(y) - ref).max() / np.abs(ref).max() <= 1e-5


def test_the_ops_run_on_torchs_current_stream():
    """Work queued on a side stream before the op: the op must be ordered after it."""
    s = torch.cuda.Stream()
    x = torch.empty(64, 4096, device="cuda")
    w = torch.ones(4096, device="cuda")
    y = torch.empty_like(x)
    ops.rms_norm(x, w, 1e-6, out=y)            # the plan is made here, on the default stream
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        torch.cuda._sleep(20_000_000)                          # keep the stream busy
        x.fill_(2.0)
        ops.rms_norm(x, w, 1e-6, out=y)            # found again: launched on the current stream, s
    s.synchronize()
    assert torch.allclose(y, torch.ones_like(y))


def test_bad_arguments_launch_nothing():
    x = torch.randn(4, 4096, device="cuda")
    w = torch.ones(4096, device="cuda")
    out = torch.full((4, 4096), 7.0, device="cuda")
    bad = [
        (dict(x=x.cpu(), weight=w), "x", "torch tensor on `cpu`"),
        (dict(x=x.double(), weight=w), "x", "has dtype f64"),
        (dict(x=torch.randn(4096, 4, device="cuda").t(), weight=w), "x", "not contiguous"),
        (dict(x=x, weight=torch.ones(4095, device="cuda")), "weight", "has shape [4095]"),
        (dict(x=torch.randn(4 * 4096 + 1, device="cuda")[1:].view(4, 4096), weight=w), "x", "not a multiple of 16"),
        (dict(x=x, weight=w.half()), "weight", "has dtype f16"),
        (dict(x=x, weight=w, eps=0.0), "eps", "finite and positive"),
        (dict(x=x, weight=w, out=out[:, :4095]), "out", "has shape"),
        (dict(x=x, weight=w, residual=x), "residual", "overlaps `x`"),
    ]
    for kw, argument, text in bad:
        kw.setdefault("out", out)
        with pytest.raises(ops.ArgumentError) as e:
            ops.rms_norm(**kw)
        assert e.value.argument == argument and text in str(e.value), str(e.value)
    torch.cuda.synchronize()
    assert bool((out == 7.0).all())                           # nothing was launched


@pytest.mark.parametrize("m", [1, 3, 8])
def test_the_dp4a_path_swiglu_and_q6k(m):
    """quantize_q8_1 once, then the DP4A GEMV and the fused SwiGLU on it: the exact Q8_1
    products of the reference; the Q6_K GEMV against its f64 dequantization."""
    rng = np.random.default_rng(100 + m)
    n, k = 768, 2048
    x = (rng.standard_normal((m, k)) * rng.uniform(0.1, 10.0, (m, 1))).astype(np.float32)
    wg, wu = Q.random_q4k(rng, n, k), Q.random_q4k(rng, n, k)
    xd = torch.from_numpy(x).cuda()
    xq = ops.quantize_q8_1(xd)
    q8 = Q.quantize_q8_1(x)
    y = ops.q4k_gemv(torch.from_numpy(wg).cuda(), xq)
    ref = Q.gemv_q8_1(wg, q8)
    assert np.abs(f64(y) - ref).max() / np.abs(ref).max() <= 1e-5
    h = ops.swiglu_q4k(torch.from_numpy(wg).cuda(), torch.from_numpy(wu).cuda(), xq)
    g, u = Q.gemv_q8_1(wg, q8), Q.gemv_q8_1(wu, q8)
    ref = g / (1.0 + np.exp(-g)) * u
    assert np.abs(f64(h) - ref).max() / np.abs(ref).max() <= 1e-5
    w6 = Q6.random_q6k(rng, n, k)
    y6 = ops.q6k_gemv(torch.from_numpy(w6).cuda(), xd)
    ref6 = x.astype(np.float64) @ Q6.dequantize_q6k(w6).T
    assert np.abs(f64(y6) - ref6).max() / np.abs(ref6).max() <= 1e-5


def test_a_torch_cuda_graph_captures_the_ops():
    """A decode step is captured once and replayed: the ops (warmed up first: compiled and
    loaded) launch on the capturing stream, so the graph holds them; a replay on new
    input data computes the new result."""
    rng = np.random.default_rng(3)
    n, k = 512, 1024
    w = torch.from_numpy(Q.random_q4k(rng, n, k)).cuda()
    gamma = torch.from_numpy((rng.random(k) + 0.5).astype(np.float32)).cuda()
    x = torch.zeros(2, k, device="cuda")

    def step():
        h = ops.rms_norm(x, gamma, 1e-5)
        return ops.q4k_gemv(w, ops.quantize_q8_1(h))
    step()                                                     # compile and load outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = step()
    for seed in (1, 2):
        xs = np.random.default_rng(seed).standard_normal((2, k)).astype(np.float32)
        x.copy_(torch.from_numpy(xs))
        graph.replay()
        torch.cuda.synchronize()
        h = rmsnorm(xs.astype(np.float64), f64(gamma), 1e-5).astype(np.float32)
        ref = Q.gemv_q8_1(f64(w).astype(np.uint8), Q.quantize_q8_1(h))
        assert np.abs(f64(y) - ref).max() / np.abs(ref).max() <= 1e-4


def test_a_captured_graph_keeps_the_buffers_of_its_plans(monkeypatch):
    """The split attention's partial results and the f32 GEMV's digits live in buffers of
    the ops' own plans, made by the eager step before the capture (as Decoder.capture does),
    which a CUDA graph replays into: once recorded, they outlive the plans (dropped by
    plan.clear() and past MAX_PLANS), so a replay after both gives the eager results and
    leaves alone the memory handed out since (filled with NaN). (Before, the buffers were
    freed with their plans and handed out again: the replay wrote into other tensors.)"""
    from ember.ops import attention
    monkeypatch.setattr(attention, "MAX_CLUSTER", 0)          # the split pass and its merge: a `part` buffer
    g = torch.Generator(device="cuda").manual_seed(21)
    q = torch.randn(1, 1, 32, 128, device="cuda", generator=g)
    k, v = (torch.randn(1, 2048, 8, 128, device="cuda", generator=g).to(torch.bfloat16) for _ in range(2))
    lengths = torch.tensor([2000], device="cuda", dtype=torch.int32)
    w = torch.from_numpy(Q.random_q4k(np.random.default_rng(4), 256, 1024)).cuda()
    x = torch.randn(2, 1024, device="cuda", generator=g)
    got = (torch.empty_like(q), torch.empty(2, 256, device="cuda"))

    def step():                  # outputs given: the capture finds the plans the eager step made
        ops.decode_attention(q, k, v, lengths, out=got[0])
        ops.q4k_gemv(w, x, out=got[1])
    step()
    want = [t.clone() for t in got]
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    ops.plan.clear()
    for i in range(ops.plan.MAX_PLANS + 8):                   # past MAX_PLANS too
        ops.rms_norm(x, x[0], 1e-5 * (1 + i))
    gc.collect()
    torch.cuda.empty_cache()                                   # what is free goes back to the driver
    filler = [torch.full((n,), float("nan"), device="cuda") for n in (1 << 12, 1 << 14, 1 << 16) for _ in range(300)]
    for t in got:
        t.zero_()
    graph.replay()
    torch.cuda.synchronize()
    for a, b in zip(got, want):
        assert torch.equal(a, b)
    assert all(bool(torch.isnan(f).all()) for f in filler)     # no replay wrote into memory handed out since
    ops.plan.forget_captured()


@pytest.mark.parametrize("dtype, tol", [(torch.float32, 1e-5), (torch.bfloat16, 2e-2)])
@pytest.mark.parametrize("m", [1, 4])
def test_decode_attention_against_the_reference(dtype, tol, m):
    """Llama-3-8B's heads (32 over 8 KV heads, head_dim 128), two sequences of different
    lengths over several chunks, M queries with their causal limits."""
    from ember.reference.attention import decode_attention
    g = torch.Generator(device="cuda").manual_seed(11 + m)
    batch, s = 2, 1100
    q = torch.randn(batch, m, 32, 128, device="cuda", generator=g).to(dtype)
    k = torch.randn(batch, s, 8, 128, device="cuda", generator=g).to(dtype)
    v = torch.randn(batch, s, 8, 128, device="cuda", generator=g).to(dtype)
    lengths = torch.tensor([1037, m + 3], device="cuda", dtype=torch.int32)
    out = ops.decode_attention(q, k, v, lengths)
    ref = decode_attention(f64(q), f64(k), f64(v), lengths.cpu().numpy())
    assert np.abs(f64(out) - ref).max() <= tol
    again = ops.decode_attention(q, k, v, lengths, max_length=1037)       # fewer splits, the same result
    assert np.abs(f64(again) - ref).max() <= tol


@pytest.mark.parametrize("max_cluster", [8, 0])
@pytest.mark.parametrize("batch, s, m", [(8, 512, 1), (1, 700, 4), (2, 4096, 1), (1, 8192, 1)])
def test_decode_attention_in_one_launch_and_split(batch, s, m, max_cluster, monkeypatch):
    """A KV head's splits merged in their cluster (attention_cluster_mma, one launch: up to 8
    splits, and 16 of 512 keys at 8192 - a non-portable cluster), and the split pass with the
    merge kernel, into f32 (f32 queries on a bf16 cache)
    and into the Q8_1 of the output projection: both against the f64 reference."""
    from ember.ops import attention
    from ember.reference.attention import decode_attention
    monkeypatch.setattr(attention, "MAX_CLUSTER", max_cluster)
    monkeypatch.setattr(attention, "tuned_us", lambda *args: None)    # the rule alone: no table overrules it
    ops.plan.clear()
    g = torch.Generator(device="cuda").manual_seed(batch * 7 + s)
    q = torch.randn(batch, m, 32, 128, device="cuda", generator=g).float()
    k, v = (torch.randn(batch, s, 8, 128, device="cuda", generator=g).to(torch.bfloat16) for _ in range(2))
    lengths = torch.randint(m, s + 1, (batch,), device="cuda", generator=g, dtype=torch.int32)
    lengths[0] = s
    before = ops.plan.launched()
    out = ops.decode_attention(q, k, v, lengths)
    clustered = ops.plan.launched() - before == 1
    assert clustered == bool(max_cluster)
    ref = decode_attention(f64(q), f64(k), f64(v), lengths.cpu().numpy())
    assert np.abs(f64(out) - ref).max() <= 2e-5
    xq = ops.Q8Activations.empty(q, batch * m, 32 * 128)
    ops.decode_attention(q, k, v, lengths, out=xq)
    torch.cuda.synchronize()
    want_q, _ = Q.split_q8_1(Q.quantize_q8_1(ref.reshape(batch * m, -1).astype(np.float32)))
    got_q = xq.aq.cpu().numpy().view(np.int8).astype(int)
    assert np.abs(got_q - want_q.view(np.int8).astype(int)).max() <= 1      # a rounding tie at most
    ops.plan.clear()


@pytest.mark.parametrize("dtype, tol", [(torch.float32, 1e-5), (torch.bfloat16, 2 ** -7)])
def test_rope_append_then_attention(dtype, tol):
    """A decode step's front: rope_append writes the new k and v into the caches at their
    positions and rotates q; decode_attention then reads them - against the references."""
    from ember.reference.attention import decode_attention
    from ember.reference.rope import rope_append
    g = torch.Generator(device="cuda").manual_seed(5)
    batch, m, s = 2, 2, 300
    q = torch.randn(batch, m, 32, 128, device="cuda", generator=g).to(dtype)
    k = torch.randn(batch, m, 8, 128, device="cuda", generator=g).to(dtype)
    v = torch.randn(batch, m, 8, 128, device="cuda", generator=g).to(dtype)
    kc = torch.randn(batch, s, 8, 128, device="cuda", generator=g).to(dtype)
    vc = torch.randn(batch, s, 8, 128, device="cuda", generator=g).to(dtype)
    lengths = torch.tensor([257, 40], device="cuda", dtype=torch.int32)
    pos = (lengths[:, None] - m + torch.arange(m, device="cuda")).to(torch.int32)
    want_q, want_kc, want_vc = rope_append(f64(q).reshape(batch * m, 32, 128), f64(k).reshape(batch * m, 8, 128),
                                           f64(v).reshape(batch * m, 8, 128), f64(kc), f64(vc),
                                           pos.cpu().numpy().reshape(-1), m, 500000.0)
    ops.rope_append(q, k, v, kc, vc, pos, 500000.0)
    for got, ref in ((q, want_q.reshape(batch, m, 32, 128)), (kc, want_kc), (vc, want_vc)):
        assert np.abs(f64(got) - ref).max() <= tol * max(1.0, np.abs(ref).max())
    out = ops.decode_attention(q, kc, vc, lengths)
    ref = decode_attention(f64(q), f64(kc), f64(vc), lengths.cpu().numpy())
    assert np.abs(f64(out) - ref).max() <= (1e-5 if dtype == torch.float32 else 2e-2)


@pytest.mark.parametrize("batch, m, q6k_v", [(1, 1, False), (2, 1, False), (1, 2, False), (4, 1, False),
                                             (1, 1, True), (2, 1, True), (4, 1, True)])
def test_the_qkv_projection_with_rope_and_the_kv_append_is_one_launch_of_the_same_bits(batch, m, q6k_v):
    """q4k_qkv_rope_append at the decoder layer's shapes (32 q heads, 8 KV heads of 128,
    k = 4096): one launch where the DP4A GEMV runs, bit for bit the GEMV and rope_append it
    replaces; where the tensor cores' GEMV runs (batch 4 on an H100) the two launches. With v's weights Q6_K
    (a Q4_K_M layer; v's loop in the configuration of this GPU's q6k_digits_gemv table): the
    same, against three launches."""
    from ember.ops import qkv
    g = torch.Generator(device="cuda").manual_seed(50 + 4 * batch + m)
    rng = np.random.default_rng(50 + 4 * batch + m)
    n, k = (32 + 2 * 8) * 128, 4096
    w = torch.from_numpy(Q.model_like_q4k(rng, n - 1024 if q6k_v else n, k, k ** -0.5)).cuda()
    wv = torch.from_numpy(Q6.model_like_q6k(rng, 1024, k, k ** -0.5)).cuda() if q6k_v else None
    x = torch.randn(batch * m, k, device="cuda", generator=g)
    xd = ops.quantize_digits(x)
    pos = torch.tensor(rng.permutation(300)[:batch * m].reshape(batch, m), device="cuda", dtype=torch.int32)
    results = []
    for fused in (True, False):
        gc = torch.Generator(device="cuda").manual_seed(9)       # the same caches for both calls
        kc, vc = (torch.randn(batch, 300, 8, 128, device="cuda", generator=gc).to(torch.bfloat16) for _ in range(2))
        q_out = torch.full((batch, m, 32, 128), float("nan"), device="cuda")
        qkv.FUSED[0] = fused
        try:
            before = ops.plan.launched()
            ops.q4k_qkv_rope_append(w, xd, kc, vc, pos, 500000.0, q_out=q_out, wv=wv)
            torch.cuda.synchronize()
            results.append((q_out, kc, vc, ops.plan.launched() - before))
        finally:
            qkv.FUSED[0] = True
    (q1, k1, v1, n1), (q2, k2, v2, n2) = results
    apart = 3 if q6k_v else 2
    assert n2 == apart and n1 == (apart if ops.gemv._tensor_cores("gemv", xd, n, 0) else 1)
    assert torch.equal(q1.view(torch.int32), q2.view(torch.int32))
    assert torch.equal(k1.view(torch.int16), k2.view(torch.int16))
    assert torch.equal(v1.view(torch.int16), v2.view(torch.int16))
    assert not torch.isnan(q1).any() and not torch.isnan(v1.float()).any()
    ops.plan.clear()


@pytest.mark.parametrize("splits", [8, 16])
def test_the_attention_clusters_are_schedulable_here(splits):
    """The runtime's max_active_clusters for decode attention's cluster kernel at the layer's
    shape: at least one cluster of 8 (portable) and of 16 blocks (non-portable, which the
    H100 and H200 take) - where it is 0 the op runs the split pass and the merge instead."""
    from ember.ops.kernels import kernel
    kern, _ = kernel("decode_attention_mma.ember", "attention_cluster_mma_q8",
                     {"T": "bf16", "D": 128, "G": 4, "M": 1, "CHUNK": 256, "SPLITS": splits}, 4096, 0,
                     table_of="attention_cluster_mma")
    assert kern.max_active_clusters((splits, 8, 1)) >= 1
    if splits > 8:          # without the runtime's opt-in to a non-portable size: none can run
        from ember.runtime.driver_api import driver
        d = driver()
        attr = d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
        d.cuKernelSetAttribute(attr, 0, kern.function.handle, kern.module.ctx.ordinal)
        try:
            assert kern.max_active_clusters((splits, 8, 1)) == 0
        finally:
            d.cuKernelSetAttribute(attr, 1, kern.function.handle, kern.module.ctx.ordinal)


def test_the_ops_run_on_cupys_current_stream():
    """CuPy arrays: the op goes on CuPy's current stream - captured into CuPy's graph there
    (a launch on another stream would not be in the graph, or break the capture)."""
    cupy = pytest.importorskip("cupy")
    x = cupy.full((8, 4096), 2.0, dtype=cupy.float32)
    w = cupy.ones(4096, dtype=cupy.float32)
    y = cupy.zeros_like(x)
    ops.rms_norm(x, w, 1e-6, out=y)                    # the plan made and the kernel loaded: not in a capture
    y.fill(0.0)
    cupy.cuda.Device().synchronize()
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        s.begin_capture()
        ops.rms_norm(x, w, 1e-6, out=y)
        graph = s.end_capture()
    assert float(cupy.abs(y).max()) == 0.0             # captured, not run
    graph.launch(s)
    s.synchronize()
    assert float(cupy.abs(y - 1.0).max()) < 1e-5
