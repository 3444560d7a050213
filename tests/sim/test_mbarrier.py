"""mbarriers and bulk copies in the simulator: a pipeline of stages reused round after round
gives the right data, and its broken twins are reported where they break - a read before
the wait (S0009), an announced byte count no copy delivers and a missing arrival (S0011
deadlock, naming what the phase lacks), an arrival beyond the count, a barrier used before
its init."""

import numpy as np
import pytest

import ember
from ember.sim.errors import SimError

from .mbarrier_programs import PIPELINE, run_specialised as _specialised


def _run(src: str, x, **defines):
    prog = ember.compile(src, name="pipeline.ember", defines=defines, stop_after="ir-opt", cache=False)
    y = np.zeros_like(x)
    ember.runtime.load(prog, device="sim").doubled(x, y, grid=2)
    return y


def _x(stages=2, rounds=3, tile=512):
    return np.random.default_rng(stages * 10 + rounds).standard_normal(2 * stages * rounds * tile).astype(np.float32)


@pytest.mark.parametrize("stages, rounds", [(2, 3), (3, 2), (1, 4)])
def test_a_pipeline_of_bulk_copies(stages, rounds):
    x = _x(stages, rounds)
    np.testing.assert_array_equal(_run(PIPELINE, x, STAGES=stages, ROUNDS=rounds), 2 * x)


def line_of(src: str, text: str) -> int:
    return next(i for i, line in enumerate(src.splitlines(), 1) if text in line)


@pytest.mark.parametrize("change, code, line_text, message", [
    (("mbarrier_wait(full, s, stage_parity(use, STAGES));", ""), "S0009",
     "2.0 * tile[s][i]", "which a bulk copy delivered in phase 0 of mbarrier `full`[0]: this thread has not waited"),
    (("mbarrier_arrive(full, s, TILE * 4u32);", "mbarrier_arrive(full, s, TILE * 8u32);"), "S0011",
     "while !mbarrier_try_wait", "lacks 2048 transaction byte(s) no bulk copy is delivering"),
    (("mbarrier_init(full, s, 1u32);", "mbarrier_init(full, s, 2u32);"), "S0011",
     "while !mbarrier_try_wait", "lacks 1 of its 2 arrival(s)"),
    (("mbarrier_arrive(full, s, TILE * 4u32);", "mbarrier_arrive(full, s, TILE * 4u32); mbarrier_arrive(full, s, 0u32);"),
     "S0011", "mbarrier_arrive(full, s, TILE * 4u32);", "in a phase that has had all 1 arrivals"),
    (("for s in 0u32..STAGES { mbarrier_init(full, s, 1u32); }", ""), "S0003",
     "mbarrier_arrive(full, s, TILE * 4u32);", "which no thread has initialized"),
])
def test_broken_pipelines_are_reported_where_they_break(change, code, line_text, message):
    src = PIPELINE.replace(*change)
    assert src != PIPELINE
    with pytest.raises(SimError) as err:
        _run(src, _x())
    d = err.value.diagnostic
    assert d.code == code and message in d.message, d.message
    std = "std/mbarrier.ember" in str(d.span)
    assert std or d.span.line_col[0] == line_of(src, line_text), (d.span, line_text)


def test_a_wait_on_the_wrong_parity_is_a_deadlock():
    src = PIPELINE.replace("stage_parity(use, STAGES)", "1u32")
    with pytest.raises(SimError) as err:
        _run(src, _x())
    assert err.value.diagnostic.code == "S0011" and "parity 1" in err.value.diagnostic.message


def test_the_ptx_is_isa_8_and_the_target_checked():
    prog = ember.compile(PIPELINE, name="pipeline.ember", cache=False)
    assert prog.ptx_version == "8.0" and ".version 8.0" in prog.ptx
    for text in ("mbarrier.init.shared::cta.b64", "mbarrier.arrive.expect_tx.shared::cta.b64 _,",
                 "mbarrier.try_wait.parity.shared::cta.b64",
                 "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"):
        assert text in prog.ptx
    from ember.diagnostics import CompileError
    with pytest.raises(CompileError, match="needs sm_90 or newer"):
        ember.compile(PIPELINE, name="pipeline.ember", arch="sm_80", cache=False)
    with pytest.raises(CompileError, match="needs PTX ISA 8.0; --ptx-version asked for 7.8"):
        ember.compile(PIPELINE, name="pipeline.ember", ptx_version="7.8", cache=False)



@pytest.mark.parametrize("stages, tiles", [(2, 6), (3, 7), (1, 3)])
def test_warp_specialised_producer_and_consumers(stages, tiles):
    """The producer branch and the consumer branch of one `if` run concurrently in the
    simulator (switching at each wait that cannot pass yet), as they do on the GPU."""
    from .mbarrier_programs import SPECIALISED
    x = np.random.default_rng(stages * 7 + tiles).standard_normal(2 * tiles * 256).astype(np.float32)
    np.testing.assert_array_equal(_specialised(SPECIALISED, x, STAGES=stages, TILES=tiles), 2 * x)


@pytest.mark.parametrize("change, code, message", [
    (("            mbarrier_arrive(empty, s, 0u32);\n", ""), "S0011", "of mbarrier `empty`[0], which lacks 96 of its 96"),
    (("            mbarrier_wait(full, s, stage_parity(k, STAGES));\n", ""), "S0009",
     "which a bulk copy delivered in phase 0 of mbarrier `full`[0]"),
    (("mbarrier_init(empty, s, 96u32);", "mbarrier_init(empty, s, 97u32);"), "S0011", "`empty`[0], which lacks 1 of its 97"),
    # a producer that does not wait for the stage to be released refills it phases ahead:
    # the consumers' wait names the phase they can no longer see
    (("                mbarrier_wait(empty, s, stage_parity(k, STAGES) ^ 1u32);\n", ""), "S0011",
     "of mbarrier `full`[0] (parity 1), which lacks 1 of its 1 arrival(s)"),
])
def test_broken_specialisations_are_reported(change, code, message):
    from .mbarrier_programs import SPECIALISED
    src = SPECIALISED.replace(*change)
    assert src != SPECIALISED
    x = np.random.default_rng(1).standard_normal(2 * 6 * 256).astype(np.float32)
    with pytest.raises(SimError) as err:
        _specialised(src, x)
    d = err.value.diagnostic
    assert d.code == code and any(message in text for text in [d.message, *d.notes]), (d.message, d.notes)

