"""The fuzz corpus on the GPU: every generated program, compiled at -O3 and -O0, gives the
simulator's results (bit for bit; fast math within its documented bound); and through the
compiler's large-function path (ember.fuzz.large), which no generated program reaches at its
own size."""

import pytest

from ember.fuzz import corpus as C
from ember.fuzz.large import forced
from tests.fuzz import CORPUS

pytestmark = pytest.mark.gpu


def test_corpus_programs_match_the_simulator_on_the_gpu():
    entries = C.read(CORPUS)
    assert len(entries) >= 500
    failures = C.run_on_gpu(entries, levels=(3, 0))
    assert failures == [], failures[:10]


def test_corpus_programs_through_the_large_function_path_on_the_gpu():
    """Cut into blocks of 4 ops, the LLVM cleanup sccp and sroa alone, code generated at -O0."""
    entries = C.read(CORPUS)[:400]
    with forced():
        failures = C.run_on_gpu(entries, levels=(3,))
    assert failures == [], failures[:10]
