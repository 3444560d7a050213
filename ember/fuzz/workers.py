"""Checking programs by seed, in worker processes (functions a spawned worker can import)."""

from __future__ import annotations

from .progen import from_seed


def check_seed(args):
    seed, ptx = args
    from .differential import GeneratorBug, check
    try:
        r = check(from_seed(seed), ptx=ptx)
    except GeneratorBug as e:
        return seed, [("generator", str(e))], 0, None
    except Exception as e:   # a crash in a pass or in lowering is a finding too
        return seed, [("crash", f"{type(e).__name__}: {e}")], 0, None
    return seed, [(d.where, d.detail) for d in r.disagreements], r.runs, r


def parallel_map(fn, items, jobs):
    if jobs <= 1:
        yield from map(fn, items)
        return
    import multiprocessing
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        yield from pool.imap(fn, items, chunksize=4)
