"""The fuzz corpus on the GPU: every generated program, compiled at -O3 and -O0, gives the
simulator's results (bit for bit; fast math within its documented bound)."""

import pytest

from ember.fuzz import corpus as C
from tests.fuzz import CORPUS

pytestmark = pytest.mark.gpu


def test_corpus_programs_match_the_simulator_on_the_gpu():
    entries = C.read(CORPUS)
    assert len(entries) >= 500
    failures = C.run_on_gpu(entries, levels=(3, 0))
    assert failures == [], failures[:10]
