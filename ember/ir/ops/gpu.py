"""gpu: the thread's coordinates, and operations across the threads of a warp or block.

Barriers, shuffles and votes are `convergent`: passes never move them into or out of
control flow, since which threads take part is part of their meaning. Their semantics
are written here against the machine (`ember.ir.interp.Machine`): the thread's lane in
its warp, where its warp-mates are, and which lanes are active (the mask).
"""

from __future__ import annotations

from ...lazy_numpy import np

from ..formats import Keyword, Operands
from ..opdef import CONVERGENT, SIDE_EFFECT, Attr, defop, enum

DIMS = ("x", "y", "z")
# op -> (what the machine calls the coordinate, doc)
INDEX_OPS = {
    "gpu.thread_idx": ("thread", "The thread's index in its block"),
    "gpu.block_idx": ("block", "The block's index in the grid"),
    "gpu.block_dim": ("block_dim", "The block's size"),
    "gpu.grid_dim": ("grid_dim", "The grid's size, in blocks"),
}
SHUFFLE_MODES = ("down", "up", "xor", "idx")
VOTE_MODES = ("all", "any", "ballot")


def _coordinate(which):
    return lambda m, op, args, mask: [m.coordinate(which, DIMS.index(op.dim)).astype(np.uint32)]


for _name, (_which, _doc) in INDEX_OPS.items():
    defop(_name, Keyword("dim"), results="result: u32", attrs={"dim": enum(*DIMS)}, simulate=_coordinate(_which),
          example=f"%t = {_name} x : u32", doc=f"{_doc} (u32) along one dimension.")

defop("gpu.lane_id", Operands(), results="result: u32",
      simulate=lambda m, op, args, mask: [m.lane_in_warp().astype(np.uint32)],
      example="%l = gpu.lane_id : u32", doc="The thread's lane in its warp: its linear index in the block modulo 32.")
defop("gpu.warp_id", Operands(), results="result: u32",
      simulate=lambda m, op, args, mask: [m.warp_in_block().astype(np.uint32)],
      example="%w = gpu.warp_id : u32",
      doc="The index of the thread's warp in its block: its linear index divided by 32.")


def _exited_sim(m, op, args, mask):
    m.exit(mask)
    return []


defop("gpu.exited", Operands(), traits=(SIDE_EFFECT,), simulate=_exited_sim, example="gpu.exited",
      doc="Marks the threads that execute it as finished (a kernel's `return`); emits no code. The "
          "structured IR keeps running them under a false flag, so the simulator needs this mark to "
          "know that a barrier need not wait for them.")


def _barrier_sim(m, op, args, mask):
    m.barrier(op, mask)
    return []


defop("gpu.barrier", Operands(), traits=(CONVERGENT, SIDE_EFFECT), simulate=_barrier_sim, example="gpu.barrier",
      doc="Every thread of the block waits here; memory written before it is visible after it.")


def _warp_barrier_sim(m, op, args, mask):
    """Every lane of each warp that reaches it, and all 32 must (bar.warp.sync with a full
    mask: a lane that finished, or a warp cut short by the block's end, never arrives);
    then each knows what the others wrote before it (ember.sim.ordering.Ordering.share)."""
    warp, nwarps = m.warps()
    arrived = np.bincount(warp[mask], minlength=nwarps) > 0
    lanes = np.bincount(warp, minlength=nwarps)
    short = np.nonzero(arrived & (lanes < 32))[0]
    if short.size:
        k = int(np.argmax(mask & (warp == short[0])))
        m.fail("S0005", f"warp barrier in a warp of {int(lanes[short[0]])} threads ({m.who(k)}'s): all 32 lanes "
               "must reach it", op, notes=["the block's size is not a multiple of 32; a partial warp cannot "
                                           "synchronize with bar.warp.sync's full mask"])
    missing = arrived[warp] & ~mask
    if missing.any():
        t = int(np.argmax(missing))
        k = int(np.argmax(mask & (warp == warp[t])))
        state = "finished" if m.exited[t] else "not finished"
        m.fail("S0005", f"divergent warp barrier: {m.who(k)} waits here, but {m.who(t)} ({state}) of its warp "
               "does not reach it", op, notes=["warp_barrier() is warp-wide: every lane of the warp runs it, "
                                               "outside branches that split the warp"])
    for w in np.nonzero(arrived)[0].tolist():
        m.ordering.share(np.nonzero(mask & (warp == w))[0])
    m.warp_syncs[mask] += 1
    return []


defop("gpu.warp_barrier", Operands(), traits=(CONVERGENT, SIDE_EFFECT), simulate=_warp_barrier_sim,
      example="gpu.warp_barrier",
      doc="Every lane of the warp waits here (PTX bar.warp.sync with a full mask, CUDA's __syncwarp()); "
          "memory each lane wrote before it is visible to the warp's other lanes after it: how a warp "
          "exchanges data through shared memory without stopping the block.")


def shuffle_source(mode: str, lane: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The lane each lane reads: `down` lane+n, `up` lane-n, `xor` lane^n (a lane past 31,
    or before 0, reads itself), `idx` n % 32."""
    if mode == "down":
        src = lane + n
    elif mode == "up":
        src = lane - n
    elif mode == "xor":
        src = lane ^ n
    else:
        src = n % 32
    return np.where((src > 31) | (src < 0), lane, src)


def _shfl_sim(m, op, args, mask):
    v, n = args
    lane = m.lane_in_warp()
    src = shuffle_source(op.mode, lane, n.astype(np.int64))
    at, exists = m.warp_lane(src)
    active = np.nonzero(mask)[0]
    ok = exists[active].copy()
    ok[ok] = mask[at[active][ok]]
    if not ok.all():
        k = active[np.argmin(ok)]
        m.fail("S0006", f"{m.who(k)} shuffles from lane {int(src[k])} of its warp, which is not active here", op,
               notes=["a shuffle reads another lane's value; that lane must execute the shuffle too"])
    out = np.array(v, copy=True)
    out[active] = v[at[active]]
    return [out]


defop("gpu.shfl", Keyword("mode"), operands="value: N, lane: u32", results="result: N",
      attrs={"mode": enum(*SHUFFLE_MODES)}, traits=(CONVERGENT,), simulate=_shfl_sim,
      example="%r = gpu.shfl xor %v, %m : f32", example_args="%v: f32, %m: u32",
      doc="Warp shuffle among the active lanes: `down` reads lane+n, `up` lane-n, `xor` lane^n (a lane "
          "past 31, or before 0, reads itself), `idx` lane n%32. Reading an inactive lane is an error.")


def _vote_sim(m, op, args, mask):
    pred = args[0] & mask
    warp, nwarps = m.warps()
    if op.mode == "ballot":
        bits = np.where(pred, np.uint64(1) << m.lane_in_warp().astype(np.uint64), np.uint64(0))
        per_warp = np.bincount(warp, weights=bits.astype(np.float64), minlength=nwarps).astype(np.uint64)
        return [per_warp[warp].astype(np.uint32)]
    n_true = np.bincount(warp, weights=pred.astype(np.float64), minlength=nwarps)
    n_active = np.bincount(warp, weights=mask.astype(np.float64), minlength=nwarps)
    res = (n_true == n_active) if op.mode == "all" else (n_true > 0)
    return [res[warp]]


def _vote_result(ts, attrs):
    from ..types import BOOL, U32
    return [U32 if attrs.get("mode") == "ballot" else BOOL]


defop("gpu.vote", Keyword("mode"), operands="pred: bool", results="result: B", attrs={"mode": enum(*VOTE_MODES)},
      traits=(CONVERGENT,), infer=_vote_result, simulate=_vote_sim,
      verify=lambda op: None if op.result.type == _vote_result(None, op.attrs)[0]
      else f"result must be {_vote_result(None, op.attrs)[0]}",
      example="%b = gpu.vote ballot %p : u32", example_args="%p: bool",
      doc="Warp vote over the active lanes: `all`, `any`, or `ballot` (bit i: lane i's predicate).")


def _elect_sim(m, op, args, mask):
    """The active lane with the lowest lane index of each warp."""
    warp, nwarps = m.warps()
    lanes = np.nonzero(mask)[0]
    first = np.full(nwarps, -1, dtype=np.int64)
    first[warp[lanes][::-1]] = lanes[::-1]      # the last assignment per warp wins: the lowest lane
    return [mask & (first[warp] == np.arange(m.lanes))]


defop("gpu.elect", Operands(), results="result: bool", traits=(CONVERGENT,), simulate=_elect_sim, min_sm=90,
      min_ptx=(8, 0),
      example="%leader = gpu.elect : bool",
      doc="Warp-wide: true in exactly one active lane of the warp, the one with the lowest lane "
          "index (PTX elect.sync over the active lanes, sm_90): the thread that issues a warp's "
          "bulk copies or arrivals.")


def _setmaxnreg_sim(m, op, args, mask):
    """No effect the simulator can see (a register budget), but warpgroup-wide: the 128
    threads of 4 consecutive warps (from a warp index divisible by 4) run it together."""
    group = m.thread_lin // 128
    for g in np.unique(group[mask]).tolist():
        members = (group == g) & (m.block_in_batch == m.block_in_batch[np.argmax(mask & (group == g))])
        k = int(np.argmax(mask & (group == g)))
        if members.sum() < 128 or not mask[members].all():
            missing = np.nonzero(members & ~mask)[0]
            who = f"thread {int(m.thread_lin[missing[0]])}" if missing.size else "threads past the block's end"
            m.fail("S0010", f"`{op.name}` is executed by {m.who(k)} but not by {who} of its warpgroup", op,
                   notes=["setmaxnreg is warpgroup-wide: the 128 threads of 4 consecutive warps run it together, "
                          "outside divergent branches"])
    return []


defop("gpu.setmaxnreg", Operands(), attrs={"kind": enum("inc", "dec"),
                                          "regs": Attr("int", lo=24, hi=256, multiple_of=8)},
      traits=(CONVERGENT, SIDE_EFFECT), simulate=_setmaxnreg_sim, min_sm=90, arch_specific=True,
      min_ptx=(8, 0),
      example="gpu.setmaxnreg {kind = dec, regs = 40}",
      doc="Warpgroup-wide: raise (`inc`) or lower (`dec`) the registers each thread of the "
          "warpgroup may use to `regs` (24..256, a multiple of 8; PTX setmaxnreg, sm_90a): a "
          "warp-specialised kernel's producers give registers to its consumers. It takes effect "
          "only in a kernel with a register cap at entry (`min_blocks`).")

