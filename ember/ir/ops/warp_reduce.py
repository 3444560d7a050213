"""Warp-wide reductions and matches in one instruction: `redux.sync` (sm_80+: the sum,
minimum, maximum, and, or or xor of a 32-bit integer over the active lanes of a warp) and
`match.any.sync` / `match.all.sync` (sm_70+: which active lanes hold the same value).
Every active lane of a warp gets the result; lanes in divergent branches take part only
with the lanes that run the op with them, as on the GPU."""

from __future__ import annotations

from ...lazy_numpy import np
from ..formats import Keyword
from ..opdef import CONVERGENT, defop, enum

REDUX_KINDS = ("add", "min", "max", "and", "or", "xor")
MATCH_KINDS = ("any", "all")


def _per_warp(m, mask):
    """(warp of each lane, number of warps, active-lane indices grouped per warp)."""
    warp, n = m.warps()
    return warp, n


def _redux_sim(m, op, args, mask):
    (v,) = args
    t = op.value.type
    warp, n = _per_warp(m, mask)
    vals = np.asarray(v).astype(np.int64 if t.signed else np.uint64)
    out = np.zeros(m.lanes, dtype=np.int64 if t.signed else np.uint64)
    kind = op.attrs["kind"]
    for w in np.unique(warp[mask]):
        lanes = np.nonzero(mask & (warp == w))[0]
        x = vals[lanes]
        if kind == "add":
            r = int(x.astype(object).sum()) & 0xFFFFFFFF
        elif kind == "min":
            r = int(x.min())
        elif kind == "max":
            r = int(x.max())
        else:
            r = int(x[0])
            for y in x[1:]:
                y = int(y)
                r = r & y if kind == "and" else r | y if kind == "or" else r ^ y
        out[lanes] = r
    return [(out.astype(np.int64) & 0xFFFFFFFF).astype(np.uint32).view(np.int32).astype(np.int32)
            if t.signed else (out & np.uint64(0xFFFFFFFF)).astype(np.uint32)]


defop("gpu.redux", Keyword("kind"), operands="value: T{i32,u32}", results="result: T",
      attrs={"kind": enum(*REDUX_KINDS)}, traits=(CONVERGENT,), simulate=_redux_sim, min_sm=80,
      example="%r = gpu.redux add %v : u32", example_args="%v: u32",
      doc="The `kind` (add wrapping, min, max - signed or unsigned as the type -, and, or, xor) of the "
          "value over the active lanes of the warp, in every one of them (PTX redux.sync).")


def _match_sim(m, op, args, mask):
    (v,) = args
    warp, n = _per_warp(m, mask)
    lane = m.lane_in_warp().astype(np.uint64)
    vals = np.asarray(v)
    out = np.zeros(m.lanes, dtype=np.uint32)
    for w in np.unique(warp[mask]):
        lanes = np.nonzero(mask & (warp == w))[0]
        for i in lanes:
            same = lanes[vals[lanes] == vals[i]]
            out[i] = int(sum(1 << int(lane[j]) for j in same))
        if op.attrs["kind"] == "all":
            every = int(sum(1 << int(lane[j]) for j in lanes))
            out[lanes] = np.where(out[lanes] == every, np.uint32(every), np.uint32(0))
    return [out]


defop("gpu.match", Keyword("kind"), operands="value: T{i32,u32,i64,u64}", results="result: u32",
      attrs={"kind": enum(*MATCH_KINDS)}, traits=(CONVERGENT,), simulate=_match_sim, min_sm=70,
      example="%r = gpu.match any %v : u32", example_args="%v: u32",
      doc="`any`: the mask of the active lanes of the warp whose value equals this lane's; `all`: the "
          "mask of the active lanes if they all hold one value, else 0 (PTX match.sync).")
