"""The builtin functions and values of the language, as one table the checker, the IR
generator, the docs and the fuzzer read.

A builtin that is one IR op takes its signature from the op's operand and result
constraints (`ember.ir.signature`: `F` any float, `N` any number, `T` any scalar, `*T`
a mutable pointer to T, ... one letter is one type) and its attributes are fixed here
(`shfl_xor` is `gpu.shfl` with mode xor). Only what the op does not say is written here:
the name, a widened signature for `promote_half` (f16/bf16 arguments computed in f32),
and the few builtins the IR generator expands itself (`isnan`, ...).
"""

from __future__ import annotations

from ..ir import signature as sig
from ..ir.ops import OPS
from ..ir.ops.async_copy import CP_ASYNC_BYTES
from ..ir.ops.gpu import INDEX_OPS, SHUFFLE_MODES
from ..ir.ops.warp_reduce import MATCH_KINDS, REDUX_KINDS
from ..ir.ops.mathops import ACCURATE_UNARY, FAST, NATIVE_UNARY
from ..ir.ops.mem import ATOMIC_KINDS, CAS_TYPES
from ..records import record
from .check_tiles import tma_tiles, wgmma_tiles


@record(frozen=True)
class Builtin:
    name: str
    op: str                   # the IR op ("" when the IR generator expands it)
    params: tuple             # Spec per argument
    results: tuple            # Spec per result (empty: no result)
    doc: str
    attrs: tuple = ()         # (key, value) attributes of the op
    promote_half: bool = False    # f16/bf16 arguments are computed in f32 and rounded back
    const_attrs: tuple = ()   # (attribute, what it is) per trailing argument that must be a
                              # u32 constant and becomes the op's attribute (cp_async_wait(1))
    over_tuples: bool = False     # a tuple as the first argument: the op once per element, the
                                  # other arguments (exact types) shared, a tuple of the results
    word_attrs: tuple = ()    # (attribute, what it is) per optional trailing argument that is one
                              # of the attribute's words and becomes it (atomic_add(p, i, v, release, gpu))
    tiles: object = None      # the tensor-core ops that take whole arrays: (checked arguments) ->
                              # the attributes their types give (n, a tile's swizzle and width), or
                              # (argument index, message) (ember.frontend.check_tiles)

    @property
    def min_sm(self) -> int:
        return OPS[self.op].min_sm if self.op else 0

    @property
    def variadic(self) -> bool:
        """Its last parameter repeats (a TMA copy's coordinates, one per dimension)."""
        return bool(self.op and OPS[self.op].operands and OPS[self.op].operands[-1].variadic)

    @property
    def rules(self) -> tuple:
        """Variables of the signature that the others decide (ember.ir.signature.Rule)."""
        return OPS[self.op].rules if self.op else ()


def from_op(name: str, op: str, doc: str | None = None, attrs: tuple = (), promote_half: bool = False,
            results: tuple | None = None, params: tuple | None = None, const_attrs: tuple = (),
            over_tuples: bool = False, word_attrs: tuple = (), tiles=None) -> Builtin:
    """A builtin that is exactly `op` (with `attrs`); its signature is the op's. With
    promote_half, restricted float letters (`F{f32,f64}`) admit every float type."""
    d = OPS[op]
    ps = params if params is not None else tuple(s.spec for s in d.operands)
    rs = results if results is not None else tuple(s.spec for s in d.results)
    if promote_half:
        ps = tuple(sig.Var(p.letter) if isinstance(p, sig.Var) else p for p in ps)
        rs = tuple(sig.Var(r.letter) if isinstance(r, sig.Var) else r for r in rs)
    if over_tuples:
        assert len(rs) == 1 and all(isinstance(p, sig.Exact) for p in ps[1:]), name
    return Builtin(name, op, ps, rs, doc if doc is not None else d.doc, tuple(attrs), promote_half, const_attrs,
                   over_tuples, word_attrs, tiles)


def _spec(text: str) -> sig.Spec:
    return sig.parse_spec(text)


def _table() -> dict[str, Builtin]:
    rows: list[Builtin] = []
    for name in ACCURATE_UNARY:
        rows.append(from_op(name, f"math.{name}", f"accurate {name} (see docs/math.md)", promote_half=True))
    rows.append(from_op("sincos", "math.sincos", "(sin(x), cos(x)) with one shared range reduction (accurate)",
                        promote_half=True))
    for name, (_, doc) in NATIVE_UNARY.items():
        rows.append(from_op(name, f"math.{name}", doc))
    rows += [
        from_op("fma", "math.fma"),
        from_op("copysign", "math.copysign"),
        from_op("min", "arith.min", "the smaller; floats ignore NaN, -0 < +0"),
        from_op("max", "arith.max", "the larger; floats ignore NaN, -0 < +0"),
        from_op("abs", "arith.abs", "absolute value (wraps at the minimum integer)"),
        from_op("select", "arith.select", "c ? a : b, evaluating both (no branch)"),
        from_op("dp4a", "arith.dp4a"),
        from_op("popc", "arith.popc"),
        from_op("clz", "arith.clz"),
        from_op("bfind", "arith.bfind"),
        from_op("brev", "arith.brev"),
    ]
    for name, doc in (("isnan", "x is a NaN"), ("isinf", "x is +inf or -inf"),
                      ("isfinite", "x is neither NaN nor infinite")):
        rows.append(Builtin(name, "", (_spec("F"),), (_spec("bool"),), doc))
    for name in FAST:
        rows.append(from_op(name, f"math.{name}"))
    rows.append(from_op("barrier", "gpu.barrier",
                        "wait until every thread of the block arrives; orders shared and global memory"))
    rows.append(from_op("warp_barrier", "gpu.warp_barrier",
                        "warp-wide: wait until every lane of the warp arrives; orders their shared and global "
                        "memory (CUDA's __syncwarp())"))
    for mode in SHUFFLE_MODES:
        rows.append(from_op(f"shfl_{mode}", "gpu.shfl", attrs=(("mode", mode),), over_tuples=True))
    for kind in REDUX_KINDS:
        rows.append(from_op(f"redux_{kind}", "gpu.redux", f"warp-wide: the {kind} of the value over the active "
                            "lanes of the warp, in each of them (i32 or u32; PTX redux.sync, sm_80+)",
                            attrs=(("kind", kind),)))
    for kind in MATCH_KINDS:
        rows.append(from_op(f"match_{kind}", "gpu.match", attrs=(("kind", kind),)))
    for mode, result, doc in (("all", "bool", "true if the predicate holds on every active lane of the warp"),
                              ("any", "bool", "true if the predicate holds on any active lane of the warp"),
                              ("ballot", "u32", "bit i set if the predicate holds on active lane i of the warp")):
        rows.append(from_op("ballot" if mode == "ballot" else f"vote_{mode}", "gpu.vote", doc,
                            attrs=(("mode", mode),), results=(_spec(result),)))
    ordered = (("order", "the memory order"), ("scope", "the scope"))
    for kind, (_, types) in ATOMIC_KINDS.items():
        rows.append(from_op(f"atomic_{kind}", "mem.atomic", f"atomically p[i] = {kind}(p[i], v); returns the old value",
                            attrs=(("op", kind),),
                            params=(_spec(f"*T{{{','.join(types)}}}"), _spec("I"), _spec("T")), word_attrs=ordered))
    rows.append(from_op("atomic_cas", "mem.cas", "atomically: if p[i] == expected { p[i] = new }; "
                        "returns the old value", params=(_spec(f"*T{{{','.join(CAS_TYPES)}}}"), _spec("I"),
                                                         _spec("T"), _spec("T")), word_attrs=ordered))
    rows.append(from_op("atomic_load", "mem.atomic_load", "atomically read p[i] (relaxed or acquire)",
                        word_attrs=ordered))
    rows.append(from_op("atomic_store", "mem.atomic_store", "atomically write v to p[i] (relaxed or release)",
                        word_attrs=ordered))
    rows.append(from_op("fence", "mem.fence", "a memory fence: acquire, release, acq_rel or sc (the default) "
                        "at a scope (gpu by default)", word_attrs=ordered))
    for n in CP_ASYNC_BYTES:
        for cache in ("ca", "cg") if n == 16 else ("ca",):
            where = "L2 only" if cache == "cg" else "L1 and L2"
            rows.append(from_op(f"cp_async_{n}" + ("_cg" if cache == "cg" else ""), "mem.cp_async",
                                f"start copying {n} bytes from src[j] to the shared dst[i] (caching in {where}); "
                                f"the first src_bytes come from src, the rest are zeros; they land at "
                                f"`cp_async_wait` (sm_80+)",
                                attrs=(("bytes", n), ("cache", cache))))
    rows.append(from_op("cp_async_commit", "mem.cp_async_commit",
                        "close the copies started since the last commit into a group (sm_80+)"))
    rows.append(from_op("cp_async_wait", "mem.cp_async_wait",
                        "wait until at most N (a constant) of this thread's committed groups are in flight "
                        "(sm_80+)", const_attrs=(("pending", "the number of groups left in flight"),)))
    for kind, what in (("inc", "raise"), ("dec", "lower")):
        rows.append(from_op(f"setmaxnreg_{kind}", "gpu.setmaxnreg", f"sm_90a, warpgroup-wide: {what} the registers "
                            "each thread of the warpgroup may use to N (24..256, a multiple of 8)",
                            attrs=(("kind", kind),), const_attrs=(("regs", "the register count"),)))
    rows.append(from_op("cp_async_bulk_store", "mem.cp_async_bulk_store", "sm_90: start copying `bytes` (a multiple "
                        "of 16, 16-byte aligned) from the shared src[j] to the global dst[i] with the copy engine, "
                        "in this thread's current bulk group"))
    rows.append(from_op("cp_async_bulk_commit", "mem.cp_async_bulk_commit",
                        "sm_90: close this thread's bulk stores since the last commit into a bulk group"))
    for read, what in ((False, "their writes are done"), (True, "their shared sources have been read")):
        rows.append(from_op("cp_async_bulk_wait" + ("_read" if read else ""), "mem.cp_async_bulk_wait",
                            f"sm_90: wait until at most N (a constant) of this thread's bulk groups are in flight: "
                            f"{what}", attrs=(("read", read),),
                            const_attrs=(("pending", "the number of groups left in flight"),)))
    rows.append(from_op("fence_proxy_async", "mem.fence_proxy_async", "sm_90: make this thread's ordinary "
                        "shared-memory writes visible to the copy engine (before a bulk store reads them)"))
    rows.append(from_op("prefetch_l2", "mem.prefetch_l2", "bring the cache line of the global p[i] into the L2 "
                        "cache: a hint that changes no value (p[i] inside its buffer); allowed before griddep_wait"))
    rows.append(from_op("griddep_wait", "gpu.griddep_wait", "sm_90: wait until the kernel before this one on "
                        "the stream has completed and its writes are visible, when this one was launched as its "
                        "programmatic dependent (at once otherwise); see docs/language.md"))
    rows.append(from_op("griddep_launch_dependents", "gpu.griddep_launch_dependents", "sm_90: let the next "
                        "kernel on the stream start (it still waits for this one at its griddep_wait)"))
    rows.append(from_op("elect_sync", "gpu.elect", "sm_90, warp-wide: true in one active lane of the warp "
                        "(the lowest), false in the others"))
    rows.append(from_op("mbarrier_init", "mem.mbarrier_init", "sm_90: make bar[i] (a shared u64) an mbarrier "
                        "expecting `count` arrivals per phase, in phase 0"))
    rows.append(from_op("mbarrier_arrive", "mem.mbarrier_arrive", "sm_90: arrive on the mbarrier bar[i], "
                        "first announcing `tx_bytes` transaction bytes (0: none) its current phase also waits for"))
    rows.append(from_op("mbarrier_arrive_cluster", "mem.mbarrier_arrive_remote", "sm_90: arrive on the mbarrier "
                        "bar[i] of the cluster's block of rank `rank`, releasing this thread's earlier accesses to "
                        "the cluster (a stage that a multicast fills is released to every block's producer)"))
    rows.append(from_op("mbarrier_try_wait", "mem.mbarrier_try_wait", "sm_90: whether the mbarrier's phase of "
                        "parity `parity` has completed; then what it delivered is visible to this thread (with "
                        "`cluster` after the arguments, also what the cluster's blocks did before arriving on it)",
                        word_attrs=(("scope", "whose arrivals it acquires"),)))
    rows.append(from_op("cp_async_bulk", "mem.cp_async_bulk", "sm_90: start copying `bytes` (a multiple of 16, "
                        "16-byte aligned) from the global src[j] to the shared dst[i] with the copy engine, "
                        "delivered as transaction bytes of the mbarrier bar[k]"))
    # (name, op, what it does with its row address, where the fragments are, sm)
    for name, op, moves, frags, sm in (("ldmatrix", "gpu.ldmatrix", "load {n} 8x8 matrix(es) of 16-bit elements from "
                                        "shared memory, this lane's row address src[j]", "into dst[i..]", "sm_75+"),
                                       ("stmatrix", "gpu.stmatrix", "store {n} 8x8 matrix(es) of 16-bit elements to "
                                        "shared memory (ldmatrix's inverse), this lane's row address dst[i]",
                                        "from src[j..]", "sm_90")):
        for n in (1, 2, 4):
            for trans in (False, True):
                rows.append(from_op(f"{name}_x{n}" + ("_trans" if trans else ""), op,
                                    f"warp-wide: {moves.format(n=n)} (lanes 0..{8 * n - 1}); 2 elements per matrix "
                                    f"{frags}" + (", transposed" if trans else "") + f" ({sm})",
                                    attrs=(("count", n), ("trans", trans))))
    rows.append(from_op("mma_m16n8k16", "gpu.mma", "warp-wide D = A B + C, 16x16 by 16x8, f16/bf16 in f32: "
                        "acc[i..+4] += a[j..+8] x b[k..+4] in the PTX fragment layouts (sm_80+)"))
    rows.append(from_op("mma_m16n8k32", "gpu.mma_i8", "warp-wide D = A B + C, 16x32 by 32x8, 8-bit integers "
                        "(four a word: unsigned in u32, signed in i32 words) in i32: acc[i..+4] += a[j..+4] x "
                        "b[k..+2] in the PTX fragment layouts (sm_80+)"))
    rows.append(from_op("mma_m16n8k16_i8", "gpu.mma_i8", "warp-wide D = A B + C, 16x16 by 16x8, 8-bit integers "
                        "(four a word: unsigned in u32, signed in i32 words) in i32: acc[i..+4] += a[j..+2] x "
                        "b[k] in the PTX fragment layouts (sm_80+)", attrs=(("k", 16),)))
    rows += [
        from_op("wgmma", "gpu.wgmma", "sm_90a, warpgroup-wide, asynchronous: acc = A B^T (+ acc when `accumulate`) "
                "for A rows a_row..+64, columns a_col..+16 of the swizzled shared tile a and B rows b_row..+N, "
                "columns b_col..+16 of tile b, N = 2 x the length of the f32 array acc (8..256), in the PTX "
                "wgmma fragment layout (std/wgmma.ember); `mn_major` after it for A then B: that operand "
                "transposed (its tile's rows are K)", tiles=wgmma_tiles,
                word_attrs=(("a_major", "A's layout"), ("b_major", "B's layout"))),
        from_op("wgmma_rs", "gpu.wgmma_rs", "sm_90a: as `wgmma` with A from registers: a[i..+8] is the thread's "
                "part of the 64 x 16 A (mma_m16n8k16's A fragment, warp w of the warpgroup rows 16w..16w+15)",
                tiles=wgmma_tiles, word_attrs=(("b_major", "B's layout"),)),
        from_op("cluster_barrier", "gpu.cluster_barrier", "sm_90, a kernel with `cluster(...)`: wait until every "
                "thread of every block of the cluster arrives; orders shared and global memory across them"),
        from_op("dsmem_load", "mem.dsmem_load", "sm_90: element i of shared array a in the block of rank `rank` "
                "of the cluster (distributed shared memory)"),
        from_op("dsmem_store", "mem.dsmem_store", "sm_90: store v to element i of shared array a in the block of "
                "rank `rank` of the cluster"),
        from_op("tma_load", "mem.tma_load", "sm_90: start copying the box of tensor map `map` at coordinates "
                "c0, c1, .. (i32, outermost first; one per dimension) into the shared tile `dst` (the box's "
                "shape, in the map's swizzle) with the copy engine, delivered as transaction bytes of mbarrier "
                "bar[i] (the whole box: zeros outside the tensor)", tiles=tma_tiles),
        from_op("tma_load_multicast", "mem.tma_load_multicast", "sm_90a, a kernel with `cluster(...)`: as "
                "`tma_load`, into the same tile of every block of the cluster whose rank's bit is set in `mask`, "
                "each on its own mbarrier at the same place (one global read feeds them all)", tiles=tma_tiles),
        from_op("tma_store", "mem.tma_store", "sm_90: start copying the shared tile `src` to the box of tensor map "
                "`map` at coordinates c0, c1, .. with the copy engine, in this thread's bulk group (elements "
                "outside the tensor are not written)", tiles=tma_tiles),
        from_op("wgmma_fence", "gpu.wgmma_fence", "sm_90a, warpgroup-wide: order this thread's register writes "
                "before the wgmmas that follow (before the first, and after touching accumulators)"),
        from_op("wgmma_commit", "gpu.wgmma_commit", "sm_90a, warpgroup-wide: close the wgmmas issued since the "
                "last commit into a group"),
        from_op("wgmma_wait", "gpu.wgmma_wait", "sm_90a, warpgroup-wide: wait until at most N (a constant) of "
                "this thread's wgmma groups are in flight; then their accumulators may be read",
                const_attrs=(("pending", "the number of groups left in flight"),)),
    ]
    return {b.name: b for b in rows}


BUILTINS: dict[str, Builtin] = _table()

# Builtin values with .x/.y/.z components (all u32).
INDEX_VALUES = {name.split(".")[1]: name for name in INDEX_OPS}
# Builtin u32 values: the thread's lane in its warp and its warp's index in the block.
PLAIN_VALUES = {"lane_id": "gpu.lane_id", "warp_id": "gpu.warp_id", "cluster_rank": "gpu.cluster_rank",
                "cluster_size": "gpu.cluster_size"}
