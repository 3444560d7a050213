"""The quantized GEMVs of ember.ops: y = x W^T with W in ggml's Q4_K or Q6_K format as GGUF
stores it, for M = 1..8 rows of activations - f32 (kernels_src/q6k_gemv.ember; for Q4_K
quantized to three digits a value by the op itself, or q4k_gemv.ember without dp4a:
DIGITS_FOR_F32), or quantized once to Q8_1 (or three digits) for the integer kernels: on
dp4a (q4k_dp4a.ember: quantize_q8_1, q4k_q8_gemv, and q4k_q8_swiglu for a SwiGLU's gate
and up together; q4k_digits.ember; for Q6_K q6k_dp4a.ember) or on int8 tensor cores
(q4k_imma.ember, q6k_imma.ember: the same activations; their cost hardly grows with M). Which
of the two runs is the one the tuned tables of this GPU measured faster at the call's M and
shape; without both tables' entries, the tensor cores from IMMA_FROM_M rows on."""

from __future__ import annotations

from ..records import record
from ..tuning.workload import imma_grid
from . import args as A
from .kernels import fastest, fits, kernel
from .plan import Keep, run, signature

QK_K = 256                           # values per super-block
# From how many activation rows the tensor-core kernels run where no tuned table decides
# (sm_80+). H100, 2026-11-26, `ember tune`, us, tensor cores against dp4a: the Q8_1 GEMV at
# 8 x 4096 x 14336 17.8 / 29.5, at M = 4 17.3 / 17.7 (10.7 / 9.9 at 4 x 6144 x 4096); the
# digits SwiGLU pair at 8 x 14336 x 4096 48.7 / 99.0, at M = 4 40.3 / 55.2, at M = 2 37.4 / 35.3;
# Q6_K (2026-11-28, q6k_imma.ember): 8 x 4096 x 14336 Q8_1 26.4 / 38.1, digits 33.2 / 68.0;
# at M = 4 faster alone too (2026-11-27: digits 37.8 / 44.4), but not in a decoder layer (q6k_ab.md)
IMMA_FROM_M = {"gemv": 8, "swiglu": 4, "q6k": 8}
BLOCK_BYTES = {"q4k": 144, "q6k": 210}


@record
class Q8Activations:
    """x [m, k] quantized to Q8_1 (ggml's blocks of 32, split in the order the DP4A GEMVs
    read them): quants `aq` (m * k / 4 words), scales and sums `ads` (m * k / 32 words).
    Made by quantize_q8_1 and reused by every GEMV of the same activations. With `digits`,
    x as three signed 8-bit digits a block (kernels_src/q4k_digits.ember: each value within
    2^-22 of its block's largest, f32-accurate products): three planes of m * k / 4 words
    in aq, an f32 pair (scale, sum) a block in ads - the GEMVs then run their digits kernels.
    `planes` 2 (digits only): the GEMVs read the first two digits of each value (within
    2^-16 of its block's largest, for a third less integer work: their PLANES const; the
    buffers hold three either way; the configurations are the tuned tables' two-plane
    entries (buckets `... p2`), or the three planes' on a GPU without them)."""

    aq: object
    ads: object
    m: int
    k: int
    like: object          # the DeviceView of x (library, device)
    rows: bool            # x was [m, k] (else [k])
    digits: bool = False
    planes: int = 3

    def plan_signature(self) -> tuple:
        return ("q8_1", signature(self.aq), signature(self.ads), self.m, self.k, self.rows, self.digits, self.planes)

    @property
    def read_planes(self) -> dict:
        """The digits kernels' PLANES where the GEMVs read fewer than three (else nothing)."""
        return {"PLANES": self.planes} if self.digits and self.planes != 3 else {}

    @property
    def words(self) -> tuple:
        """(aq, ads) sizes in 32-bit words."""
        planes = 3 if self.digits else 1
        return planes * self.m * self.k // 4, (2 if self.digits else 1) * self.m * self.k // 32

    @classmethod
    def empty(cls, like, m: int, k: int, rows: bool = True, digits: bool = False,
              planes: int = 3) -> "Q8Activations":
        """Buffers for m rows of k values (m 1..8, k a multiple of 256), allocated like the
        device tensor `like`: the `out` of the ops that make Q8_1 (or, with `digits`, digit)
        activations, made once (a CUDA graph replays the same addresses). `planes`: the
        digits the GEMVs read, 3 or 2 (digits only)."""
        op = "Q8Activations.empty"
        vl = A.view(op, "like", like)
        A.int_range(op, "m", m, 1, 8, "the rows a GEMV takes")
        if k % QK_K or k <= 0:
            raise A.ArgumentError(op, "k", f"is {k}: a positive multiple of {QK_K} is needed (whole super-blocks)")
        if planes not in (2, 3) or isinstance(planes, bool):
            raise A.ArgumentError(op, "planes", f"is {planes!r}: the GEMVs read 3 digits a value or 2")
        if planes != 3 and not digits:
            raise A.ArgumentError(op, "planes", "is 2, which digit activations have (digits=True); Q8_1 has one")
        shape = cls(None, None, m, k, vl, rows, digits, planes)
        naq, nads = shape.words
        return cls(A.empty_words(vl, naq), A.empty_words(vl, nads), m, k, vl, rows, digits, planes)

    def check(self, op: str, m: int, k: int, arg: str = "out") -> tuple:
        """The (aq, ads) words of Q8Activations given to `op` as argument `arg` (an `out`, or
        the activations a GEMV reads) for m rows of k values: buffers of the sizes m and k
        need, so that no kernel reads or writes past them."""
        if (self.m, self.k) != (m, k):
            raise A.ArgumentError(op, arg, f"holds {self.m} rows of {self.k} values; {m} of {k} are made")
        vq, vd = A.view(op, f"{arg}.aq", self.aq), A.view(op, f"{arg}.ads", self.ads)
        for name, v, n in ((f"{arg}.aq", vq, self.words[0]), (f"{arg}.ads", vd, self.words[1])):
            A.dtype(op, name, v, ("u32", "i32"))
            A.shape(op, name, v, (n,), "the words of the quants (aq) and of the blocks' scales and sums (ads)")
            A.contiguous(op, name, v)
            A.aligned(op, name, v, 16)
        A.no_overlap(op, f"{arg}.aq", vq, f"{arg}.ads", vd)
        return vq, vd


def _activations(op: str, x) -> tuple:
    """(view, m, k, rows) of f32 activations [m, k] or [k]."""
    vx = A.view(op, "x", x)
    A.dtype(op, "x", vx, ("f32",))
    A.rank(op, "x", vx, (1, 2), "[m, k] or [k]")
    kdim = vx.shape[-1]
    m = vx.shape[0] if len(vx.shape) == 2 else 1
    A.int_range(op, "x", m, 1, 8, "m: the rows of activations one launch takes")
    if kdim % QK_K or kdim == 0:
        raise A.ArgumentError(op, "x", f"has {kdim} columns: a multiple of {QK_K} is needed (whole super-blocks)")
    A.contiguous(op, "x", vx)
    A.aligned(op, "x", vx, 16)
    return vx, m, kdim, len(vx.shape) == 2


def _weights(op: str, name: str, w, fmt: str, kdim: int, align: int):
    vw = A.view(op, name, w)
    A.dtype(op, name, vw, ("u8",))
    nbytes = BLOCK_BYTES[fmt]
    A.rank(op, name, vw, (2,), f"[n, k / {QK_K} * {nbytes}] bytes")
    n = vw.shape[0]
    what = f"{kdim // QK_K} {fmt.upper().replace('K', '_K')} super-blocks of {nbytes} bytes per row for k = {kdim}"
    A.shape(op, name, vw, (n, kdim // QK_K * nbytes), what)
    A.int_range(op, name, n, 1, 2 ** 31 - 1, "n: the output columns")
    A.contiguous(op, name, vw)
    A.aligned(op, name, vw, align)
    return vw, n


def _new_out(like, m: int, n: int, rows: bool):
    """The output of a call that gave none (its inputs checked first)."""
    return A.empty_like(like, (m, n) if rows else (n,), "f32")


def _check_out(op: str, out, m: int, n: int, rows: bool, reads: dict):
    vo = A.view(op, "out", out, written=True)
    A.dtype(op, "out", vo, ("f32",))
    A.shape(op, "out", vo, (m, n) if rows else (n,), "one value per row of x and row of the weights")
    A.contiguous(op, "out", vo)
    A.aligned(op, "out", vo, 4)
    for name, v in reads.items():
        A.no_overlap(op, name, v, "out", vo)
    return vo


def quantize_q8_1(x, *, out: Q8Activations | None = None) -> Q8Activations:
    """f32 activations x [m, k] (or [k]; m 1..8, k a multiple of 256) -> Q8_1, for
    q4k_gemv and swiglu_q4k to read (d = amax / 127 per block of 32, round half away);
    into `out` (Q8Activations.empty) when given - as digits where `out` holds digits."""
    op = "quantize_q8_1"
    vx, m, kdim, rows = _activations(op, x)
    if out is None:
        out = Q8Activations(A.empty_words(vx, m * kdim // 4), A.empty_words(vx, m * kdim // 32), m, kdim, vx, rows)

    run(op, (x, out), lambda: plan_quantize(op, x, out))
    return out


def plan_quantize(op: str, x, out: Q8Activations) -> list:
    """The launch that quantizes f32 x into `out`: Q8_1, or digits where `out` holds them."""
    vx, m, kdim, _ = _activations(op, x)
    vq, vd = out.check(op, m, kdim)
    for name, v in (("out.aq", vq), ("out.ads", vd)):
        A.no_overlap(op, "x", vx, name, v)
    device = A.same_device(op, {"x": vx, "out.aq": vq, "out.ads": vd}) or 0
    source, name, ds_type = (("q4k_digits.ember", "quantize_digits", "<f4") if out.digits else
                             ("q4k_dp4a.ember", "quantize_q8_1", "<u4"))
    kern, cfg = kernel(source, name, {}, m * kdim, device)
    blocks = m * kdim // 32                           # one warp per block of 32 values
    return [kern.prepare(x, A.reinterpret(vq, "<u4", 4, writable=True),
                         A.reinterpret(vd, ds_type, 4, writable=True), blocks,
                         grid=(-(-blocks // cfg["WARPS"]),))]


def quantize_digits(x, *, out: Q8Activations | None = None) -> Q8Activations:
    """f32 activations x [m, k] (or [k]) as three 8-bit digits a value (Q8Activations with
    `digits`): the f32-accurate input of q4k_gemv and swiglu_q4k's digits kernels."""
    if out is None:
        vx, m, kdim, rows = _activations("quantize_digits", x)
        out = Q8Activations.empty(vx.obj, m, kdim, rows, digits=True)
    elif not out.digits:
        raise A.ArgumentError("quantize_digits", "out", "holds Q8_1 activations: make it with "
                                                        "Q8Activations.empty(..., digits=True)")
    return quantize_q8_1(x, out=out)


def _q8_words(vq, vd, digits: bool, words_only: bool = False) -> tuple:
    """The launch's (aq, ads) from the views Q8Activations.check gave (Q8Activations made by
    hand may hold buffers too small for their m and k): u32 words, and for digits ads as its
    f32 (scale, sum) pairs (as words too with `words_only`: the tensor-core kernels take both
    kinds so)."""
    return (A.reinterpret(vq, "<u4", 4), A.reinterpret(vd, "<f4" if digits and not words_only else "<u4", 4))


# (the DP4A kernel, the tensor-core one) of each op and kind of activations
_PAIRS = {("gemv", False): ("q4k_q8_gemv", "q4k_q8_imma"), ("gemv", True): ("q4k_digits_gemv", "q4k_digits_imma"),
          ("swiglu", False): ("q4k_q8_swiglu", "q4k_q8_swiglu_imma"),
          ("swiglu", True): ("q4k_digits_swiglu", "q4k_digits_swiglu_imma"),
          ("q6k", False): ("q6k_q8_gemv", "q6k_q8_imma"), ("q6k", True): ("q6k_digits_gemv", "q6k_digits_imma")}
IMMA_SOURCES = {"gemv": "q4k_imma.ember", "swiglu": "q4k_imma.ember", "q6k": "q6k_imma.ember"}


def tuned_as(x: Q8Activations, n: int) -> tuple:
    """(const values, lookup) of a GEMV's tuned-table lookup on these activations and n
    output rows (ember.ops.kernels.kernel and fastest): M, and PLANES where the digits
    kernels read two planes; lookup's `or_as` (two planes take the three planes' entry on
    a GPU whose tables hold no two-plane ones) and `shape` (MxNxK: the call's own bucket
    before one as large, 1x4096x14336 before 1x14336x4096)."""
    return {"M": x.m, **x.read_planes}, {"or_as": {"M": x.m} if x.read_planes else None,
                                         "shape": f"{x.m}x{n}x{x.k}"}


def _tensor_cores(op: str, x: Q8Activations, n: int, device: int) -> bool:
    """Whether the int8 tensor-core kernel runs this call (sm_80+): the faster of the pair
    in the tuned tables of this GPU, else IMMA_FROM_M's rule - where its configuration fits
    the GPU's shared memory (at M = 8 its defaults take 110 KB: not on an sm_86, sm_89 or
    sm_120, which run the DP4A kernel instead)."""
    if A.compute_capability(device) < (8, 0):
        return False
    rule = int(x.m >= IMMA_FROM_M[op])
    defines, lookup = tuned_as(x, n)
    name = _PAIRS[(op, x.digits)][1]
    size = x.m * n * x.k
    return (fastest(_PAIRS[(op, x.digits)], defines, size, device, rule, **lookup) == 1
            and fits(IMMA_SOURCES[op], name, defines, size, device, **lookup))


def q4k_gemv(w, x, *, out=None):
    """y = x W^T: w the Q4_K bytes of an [n, k] weight (uint8 [n, k / 256 * 144]); x f32
    [m, k] (or [k]), m 1..8 - or a Q8Activations from quantize_q8_1, which runs the DP4A
    kernel. Returns out: f32 [m, n] (or [n]; allocated like x when not given)."""
    return _gemv("q4k_gemv", w, x, out, "q4k", 16, plan_q8)


def _gemv(op: str, w, x, out, fmt: str, align: int, plan_q8_of):
    """A GEMV op: on Q8Activations through plan_q8_of(op, w, x, out), else on f32 x."""
    if isinstance(x, Q8Activations):
        if out is None:
            out = _new_out(x.like, x.m, _weights(op, "w", w, fmt, x.k, align)[1], x.rows)

        run(op, (w, x, out), lambda: plan_q8_of(op, w, x, out))
        return out
    return _f32_gemv(op, w, x, out, fmt)


def plan_q8(op: str, w, x: Q8Activations, out) -> list:
    """The launch of q4k_gemv on Q8_1 (or digit) activations: the DP4A kernel or the tensor
    cores' (_tensor_cores)."""
    vw, n = _weights(op, "w", w, "q4k", x.k, 16)
    vxq, vxd = x.check(op, x.m, x.k, "x")
    vo = _check_out(op, out, x.m, n, x.rows, {"w": vw, "x.aq": vxq, "x.ads": vxd})
    device = A.same_device(op, {"w": vw, "out": vo, "x.aq": vxq, "x.ads": vxd}) or 0
    if _tensor_cores("gemv", x, n, device):
        defines, lookup = tuned_as(x, n)
        kern, cfg = kernel(IMMA_SOURCES["gemv"], _PAIRS[("gemv", x.digits)][1], defines, x.m * n * x.k, device,
                           **lookup)
        aq, ads = _q8_words(vxq, vxd, x.digits, words_only=True)
        return [kern.prepare(A.reinterpret(vw, "<u4", 4), aq, ads, out, n, x.k,
                             grid=imma_grid(n)(cfg))]
    source, name = ("q4k_digits.ember", "q4k_digits_gemv") if x.digits else ("q4k_dp4a.ember", "q4k_q8_gemv")
    defines, lookup = tuned_as(x, n)
    kern, cfg = kernel(source, name, defines, x.m * n * x.k, device, **lookup)
    aq, ads = _q8_words(vxq, vxd, x.digits)
    return [kern.prepare(A.reinterpret(vw, "<u4", 4), aq, ads, out, n, x.k,
                         grid=(-(-n // (cfg["WARPS"] * cfg["ROWS"])),))]


def swiglu_q4k(w_gate, w_up, x: Q8Activations, *, out=None):
    """silu(x W_gate^T) * (x W_up^T), both weights Q4_K bytes [n, k / 256 * 144], x the
    Q8Activations of quantize_q8_1: a SwiGLU feed-forward's first half in one launch."""
    op = "swiglu_q4k"
    if not isinstance(x, Q8Activations):
        raise A.ArgumentError(op, "x", f"is a {type(x).__name__}: swiglu_q4k takes the Q8_1 activations of "
                                       "ember.ops.quantize_q8_1(x)")
    if out is None:
        n = _weights(op, "w_gate", w_gate, "q4k", x.k, 16)[1]
        A.shape(op, "w_up", _weights(op, "w_up", w_up, "q4k", x.k, 16)[0], (n, x.k // QK_K * BLOCK_BYTES["q4k"]),
                "w_gate's shape")
        out = _new_out(x.like, x.m, n, x.rows)

    def plan():
        vg, n = _weights(op, "w_gate", w_gate, "q4k", x.k, 16)
        vu, _ = _weights(op, "w_up", w_up, "q4k", x.k, 16)
        A.shape(op, "w_up", vu, vg.shape, "w_gate's shape")
        vxq, vxd = x.check(op, x.m, x.k, "x")
        vo = _check_out(op, out, x.m, n, x.rows, {"w_gate": vg, "w_up": vu, "x.aq": vxq, "x.ads": vxd})
        device = A.same_device(op, {"w_gate": vg, "w_up": vu, "out": vo, "x.aq": vxq, "x.ads": vxd}) or 0
        weights = (A.reinterpret(vg, "<u4", 4), A.reinterpret(vu, "<u4", 4))
        if _tensor_cores("swiglu", x, n, device):
            defines, lookup = tuned_as(x, n)
            kern, cfg = kernel(IMMA_SOURCES["swiglu"], _PAIRS[("swiglu", x.digits)][1], defines, x.m * n * x.k,
                               device, **lookup)
            return [kern.prepare(*weights, *_q8_words(vxq, vxd, x.digits, words_only=True), out, n, x.k,
                                 grid=imma_grid(n)(cfg))]
        source, name = ("q4k_digits_swiglu.ember", "q4k_digits_swiglu") if x.digits else ("q4k_dp4a.ember",
                                                                                         "q4k_q8_swiglu")
        defines, lookup = tuned_as(x, n)
        kern, cfg = kernel(source, name, defines, x.m * n * x.k, device, **lookup)
        return [kern.prepare(*weights, *_q8_words(vxq, vxd, x.digits), out, n, x.k,
                             grid=(-(-n // (cfg["WARPS"] * cfg["ROWS"])),))]
    run(op, (w_gate, w_up, x, out), plan)
    return out


def q6k_gemv(w, x, *, out=None):
    """y = x W^T: w the Q6_K bytes of an [n, k] weight (uint8 [n, k / 256 * 210]); x f32
    [m, k] (or [k]), m 1..8 - or a Q8Activations (Q8_1 or digits, as q4k_gemv reads them),
    which runs the DP4A kernels of q6k_dp4a.ember. Returns out: f32 [m, n] (or [n])."""
    return _gemv("q6k_gemv", w, x, out, "q6k", 2, plan_q6k_q8)


def plan_q6k_q8(op: str, w, x: Q8Activations, out) -> list:
    """The launch of q6k_gemv on Q8_1 or digit activations (q6k_dp4a.ember: q6k_q8_gemv,
    q6k_digits_gemv, reading `x.planes` digits), or on int8 tensor cores (q6k_imma.ember)
    where _tensor_cores picks them and k is a multiple of 512 and w 4-byte aligned."""
    vw, n = _weights(op, "w", w, "q6k", x.k, 2)
    vxq, vxd = x.check(op, x.m, x.k, "x")
    vo = _check_out(op, out, x.m, n, x.rows, {"w": vw, "x.aq": vxq, "x.ads": vxd})
    device = A.same_device(op, {"w": vw, "out": vo, "x.aq": vxq, "x.ads": vxd}) or 0
    defines, lookup = tuned_as(x, n)
    # the tensor cores' kernel copies two super-blocks of a row at a time in 4-byte pieces
    if x.k % (2 * QK_K) == 0 and vw.ptr % 4 == 0 and _tensor_cores("q6k", x, n, device):
        kern, cfg = kernel(IMMA_SOURCES["q6k"], _PAIRS[("q6k", x.digits)][1], defines, x.m * n * x.k, device,
                           **lookup)
        return [kern.prepare(A.reinterpret(vw, "<u2", 2), *_q8_words(vxq, vxd, x.digits, words_only=True), out, n,
                             x.k, grid=imma_grid(n)(cfg))]
    name = "q6k_digits_gemv" if x.digits else "q6k_q8_gemv"
    kern, cfg = kernel("q6k_dp4a.ember", name, defines, x.m * n * x.k, device, **lookup)
    if cfg.get("STAGED") and not (x.k % (4 * QK_K) == 0 and vw.ptr % 8 == 0):
        # the entry's configuration unstaged: STAGED copies the weights in 8-byte pieces of
        # four super-blocks (q6k_copy_stage), which need k a multiple of 1024 and w 8-byte aligned
        fixed = {c: cfg[c] for c in kern.info.tunables}
        kern, cfg = kernel("q6k_dp4a.ember", name, {**defines, **fixed, "STAGED": False, "STAGES": 2},
                           x.m * n * x.k, device)
    return [kern.prepare(A.reinterpret(vw, "<u2", 2), *_q8_words(vxq, vxd, x.digits), out, n, x.k,
                         grid=(-(-n // (cfg["WARPS"] * cfg["ROWS"])),))]


# ember.ops.q4k_gemv with f32 activations runs them as digits (quantize_digits, then the
# digits GEMV of q4k_gemv on Q8Activations) on GPUs with dp4a: as accurate as f32 products
# (within the same f32 rounding bound of the exact product: tests/kernels/test_q4k_in_sim.py)
# and faster than q4k_gemv.ember, whose three instructions a weight the GPU cannot issue at
# the rate the weights arrive (H100, `ember tune` tables, us: 14336 x 4096 at M = 1 13.4, and
# 1.9 for the quantisation, against 18.2; at M = 8 the digits' tensor-core GEMV 22.2 at
# 8 x 4096 x 14336 against q4k_gemv.ember's 86.9 at 8 x 14336 x 4096; bench/results/q4k_ab.md).
# [False]: the f32 kernel (an A/B measurement).
DIGITS_FOR_F32 = [True]


def _has_dp4a(device: int) -> bool:
    return A.compute_capability(device) >= (6, 1)


# per format: the kernel of f32 activations, its file, the weights' alignment and the word
# the kernel loads them as (a Q6_K super-block of 210 bytes is only 2-byte aligned)
F32_KERNELS = {"q4k": ("q4k_gemv.ember", "q4k_gemv", 16, "<u4", 4), "q6k": ("q6k_gemv.ember", "q6k_gemv", 2, "<u2", 2)}


def _f32_gemv(op: str, w, x, out, fmt: str):
    source, name, align, word, size = F32_KERNELS[fmt]
    if out is None:
        vx, m, kdim, rows = _activations(op, x)
        out = _new_out(vx, m, _weights(op, "w", w, fmt, kdim, align)[1], rows)

    def plan():
        vx, m, kdim, rows = _activations(op, x)
        vw, n = _weights(op, "w", w, fmt, kdim, align)
        vo = _check_out(op, out, m, n, rows, {"x": vx, "w": vw})
        device = A.same_device(op, {"x": vx, "w": vw, "out": vo}) or 0
        if fmt == "q4k" and DIGITS_FOR_F32[0] and _has_dp4a(device):
            # f32-accurate through three 8-bit digits a value (q4k_digits.ember): x quantized
            # into a buffer of the plan's own, then the digits GEMV (or its tensor-core form)
            digits = Q8Activations.empty(vx.obj, m, kdim, rows, digits=True)
            return (plan_quantize(op, x, digits) + plan_q8(op, w, digits, out)
                    + [Keep(digits.aq), Keep(digits.ads)])
        kern, cfg = kernel(source, name, {"M": m}, m * n * kdim, device, shape=f"{m}x{n}x{kdim}")
        return [kern.prepare(A.reinterpret(vw, word, size), x, out, n, kdim,
                             grid=(-(-n // (cfg["WARPS"] * cfg["ROWS"])),))]
    run(op, (w, x, out, fmt == "q4k" and DIGITS_FOR_F32[0]), plan)
    return out
