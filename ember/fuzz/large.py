"""Generated programs through the compiler's large-function path: a function past
ember.lowering.ptx.LARGE_FUNCTION has its straight-line code cut into blocks, its LLVM cleanup cut
to sccp and sroa and its code generated at -O0 - a path of its own, which no generated program
reaches at its size (the fuzzers make small functions). `forced()` lowers the bound (and the
blocks' size) for its duration, with the compile cache off (its keys do not hold the bound), so
that the fuzz corpus goes through that path: tests/fuzz/test_large_path.py assembles the PTX,
tests/gpu/test_fuzz_corpus_gpu.py runs it against the simulator's results."""

from __future__ import annotations

import contextlib
import os


@contextlib.contextmanager
def forced(split_every: int = 4):
    """Every function compiled in the block takes the large-function path, its straight-line
    code cut every `split_every` ops."""
    from ..lowering import llvm_lower, ptx
    saved = (llvm_lower.LARGE_FUNCTION, llvm_lower.SPLIT_EVERY, ptx.LARGE_FUNCTION, ptx._SURELY_SMALL,
             os.environ.get("EMBER_NO_CACHE"))
    llvm_lower.LARGE_FUNCTION = ptx.LARGE_FUNCTION = 0
    llvm_lower.SPLIT_EVERY = split_every
    ptx._SURELY_SMALL = -1
    os.environ["EMBER_NO_CACHE"] = "1"
    try:
        yield
    finally:
        llvm_lower.LARGE_FUNCTION, llvm_lower.SPLIT_EVERY, ptx.LARGE_FUNCTION, ptx._SURELY_SMALL, no_cache = saved
        if no_cache is None:
            os.environ.pop("EMBER_NO_CACHE", None)
        else:
            os.environ["EMBER_NO_CACHE"] = no_cache
