"""Differential testing: random well-typed programs give the same results in the
simulator before and after every pass and the -O3 pipeline, and their PTX validates.
This is the fixed-seed CI portion; `python -m ember.fuzz run --count 5000` is the long run."""

import dataclasses
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from ember.fuzz import corpus as C
from ember.fuzz.differential import GeneratorBug, check, reference
from ember.fuzz.progen import NUMERIC, DrawSource, from_seed, generate
from ember.ir.ops import OPS
from ember.ir.passes import expand_math

from . import CORPUS


@pytest.fixture
def broken_passes():
    """For a test that breaks a pass on purpose: expand-math's simplified templates are
    made by the passes once per process, so they are made afresh on both sides of it - a
    template simplified by the broken pass would otherwise miscompile every later kernel."""
    def forget():
        expand_math.template.cache_clear()
        expand_math.helper.cache_clear()
    forget()
    yield
    forget()


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
@given(st.data())
def test_hypothesis_programs_agree_before_and_after_every_pass(data):
    report = check(generate(DrawSource(data.draw)))
    assert report.ok, report.describe()


@pytest.mark.parametrize("seed", range(0, 400, 20))
def test_numbered_programs_agree(seed):
    report = check(from_seed(seed))
    assert report.ok, report.describe()


def test_generator_covers_the_language():
    text = "\n".join(from_seed(s).source for s in range(150))
    for feature in ["barrier();", "shfl_xor(", "shfl_down(", "shfl_idx(", "vote_all(", "vote_any(", "ballot(",
                    "atomic_add(", "atomic_max(", "shared ", "break;", "continue;", "return;", "while ",
                    " step ", "bitcast<", "select(", "fma(", "fast_", "var a", "isnan(", "mma_m16n8k16(",
                    "ldmatrix_x1(", "ldmatrix_x4_trans(", "cp_async_16(", "cp_async_8(", "cp_async_wait(1)",
                    'import "std/reduce.ember";', "block_sum(", "warp_max(", "<const T: type>",
                    'import "std/swizzle.ember";', ", 48u32, 8u32)]", ", 12u32, 4u32)]",
                    "f: fn(T, T) -> T", "static_assert(", ".max", "popc(", "shfl_up(", "mma_m16n8k32(",
                    "shared ring", "cp_async_wait(2)", "griddep_wait();", "griddep_launch_dependents();",
                    "mbarrier_arrive_cluster("]:
        assert feature in text, feature
    for t in NUMERIC:
        assert re.search(rf"\b{t}\(", text), f"no cast to {t}"
    assert re.search(r"let \(\w+, \w+\) = shfl_\w+\(\(", text), "no shuffle of a tuple"
    assert re.search(r"\[b\d+ \+ 7u64\]", text), "no run of 8 adjacent loads (16 bytes of a 16-bit type)"
    assert re.search(r"\[15u64\] = ", text), "no run of 16 adjacent stores (16 bytes of an 8-bit type)"


def test_a_swizzle_that_is_no_permutation_is_caught():
    """The std/swizzle tiles of the generated programs, with swizzle() as it once was (XOR
    with row % min(chunks, 8): rows of 3, 5, 6 ... chunks get chunks past their end): the
    reference run reports the out-of-bounds or racing access."""
    old = ("fn swizzle(row: u32, col: u32, width: u32, chunk: u32) -> u32 {\n"
           "    let c = col / chunk;\n"
           "    return row * width + (c ^ (row % min(width / chunk, 8u32))) * chunk + col % chunk;\n}")
    programs = [p for p in (from_seed(s) for s in range(60)) if 'import "std/swizzle.ember";' in p.source]
    assert programs
    caught = 0
    for p in programs:
        broken = dataclasses.replace(p, source=p.source.replace('import "std/swizzle.ember";', old))
        try:
            check(broken, each_pass=False, ptx=False)
        except GeneratorBug:
            caught += 1
    assert caught


def _ring_programs(count: int) -> list:
    return [p for p in (from_seed(s) for s in range(150)) if "shared ring" in p.source][:count]


def test_the_refilled_rings_agree_before_and_after_every_pass():
    programs = _ring_programs(4)
    assert len(programs) == 4
    for p in programs:
        report = check(p, ptx=False)
        assert report.ok, report.describe()


def test_a_ring_refilled_before_every_read_of_it_is_done_is_caught():
    """The generated rings without the barrier that ends each tile's reads: the next
    iteration's copy refills the stage while other threads may still read it, which the
    simulator reports as a race in the reference run (it once did not: a copy's start was
    not checked against other threads' earlier reads)."""
    caught = 0
    for p in _ring_programs(4):
        lines = p.source.split("\n")
        ring = next(i for i, line in enumerate(lines) if "shared ring" in line)
        loop = next(i for i in range(ring, len(lines)) if lines[i].lstrip().startswith("for "))
        end = next(i for i in range(loop + 1, len(lines)) if lines[i] == lines[loop][:len(lines[loop]) -
                                                                               len(lines[loop].lstrip())] + "}")
        assert lines[end - 1].strip() == "barrier();"      # the barrier that ends the tile's reads
        broken = dataclasses.replace(p, source="\n".join(lines[:end - 1] + lines[end:]))
        with pytest.raises(GeneratorBug, match="S0004|race"):
            check(broken, each_pass=False, pipeline=False, ptx=False)
        caught += 1
    assert caught == 4


def _last_cluster_programs(count: int) -> list:
    return [p for p in (from_seed(s) for s in range(200)) if "atomic_add(out_u32" in p.source
            and "cluster_rank == 1u32" in p.source][:count]


def test_the_last_cluster_programs_agree_before_and_after_every_pass():
    """Two clusters of two blocks, the last to finish merging both clusters' writes (its
    counter starts at 0: Program.zeroed)."""
    programs = _last_cluster_programs(3)
    assert len(programs) == 3 and all(p.grid == 4 and p.zeroed for p in programs)
    for p in programs:
        report = check(p, ptx=False)
        assert report.ok, report.describe()


def test_a_cluster_barrier_that_passes_on_only_its_own_writes_is_caught(monkeypatch):
    """The simulator's cluster barrier as it was: each block learned the others' writes of
    the epochs that ended, but not what they had acquired from other clusters - so rank 1
    of the last cluster, which learns of the other cluster's writes only through its
    barrier, was reported racing with them. The reference run of every such program says
    so."""
    from ember.sim import cluster
    from ember.sim.ordering import merge

    def old_barrier(m, op, mask):
        m.barrier(op, mask)
        arrived = mask.reshape(m.nb, m.T).any(axis=1)
        key = cluster.block_of_rank(m, op, np.zeros(m.lanes, dtype=np.int64), np.zeros(m.lanes, dtype=bool))
        leader = key.reshape(m.nb, m.T)[:, 0]
        for first in np.unique(leader[arrived]).tolist():
            blocks = np.nonzero(leader == first)[0]
            facts = {("b", int(m.block_lin[b * m.T])): int(m.epoch[b]) for b in blocks.tolist()}
            for b in blocks.tolist():
                merge(m.ordering.block_facts.setdefault(b, {}), facts)
        m.ordering.any = True
    monkeypatch.setattr(cluster, "barrier", old_barrier)
    for p in _last_cluster_programs(3):
        with pytest.raises(GeneratorBug, match="S0004"):
            check(p, each_pass=False, pipeline=False, ptx=False)


def test_programs_that_wait_first_are_programmatic_and_an_unsound_proof_is_caught(monkeypatch):
    """Now and then a program waits (griddep_wait) before it touches memory: the compiler's
    proof passes it, and every pass keeps it so (the simulator would report a global access
    moved above the wait, S0014). A proof that passed everything is caught by the programs
    that wait only later: their reference run reports the early access. (A prefetch into
    L2 before the wait is no access.)"""
    import ember
    from ember.ir.analysis import grid_dependency
    waits_first = r"gid \* \d+;\n(    prefetch_l2\(.*\n)?    griddep_wait\(\);"
    first = [p for p in (from_seed(s) for s in range(60)) if re.search(waits_first, p.source)]
    assert first
    for p in first[:3]:
        assert ember.compile(p.source, cache=False).kernels["fuzz"].programmatic
        report = check(p, ptx=False)
        assert report.ok, report.describe()
    later = [p for p in (from_seed(s) for s in range(150))
             if "griddep_wait();" in p.source and not re.search(waits_first, p.source)][:3]
    assert later
    monkeypatch.setattr(grid_dependency, "_may_touch_global", lambda op, *rest: False)
    for p in later:
        with pytest.raises(GeneratorBug, match="S0014"):
            check(p, each_pass=False, pipeline=False, ptx=False)


def test_a_miscompiling_pass_is_caught(monkeypatch, broken_passes):
    """The check can fail: make CSE treat subtraction as commutative."""
    monkeypatch.setattr(OPS["arith.sub"], "commutative", True)
    assert any(not check(from_seed(s), ptx=False).ok for s in range(40))


def test_a_canonicalize_that_stops_short_of_its_fixed_point_is_caught(monkeypatch, broken_passes):
    """canonicalize without finishing the ops its rewrites make (if-conversion's selects on
    constants, say): the second run changes the IR, which the check reports."""
    from ember.ir.passes import canonicalize as canon
    monkeypatch.setattr(canon, "_settled", canon._visit)
    reports = [check(from_seed(s), pipeline=False, ptx=False) for s in range(40)]
    assert any(d.where == "pass canonicalize twice" for r in reports for d in r.disagreements)


@pytest.mark.parametrize("op, flag", [("gpu.mma", "pure"), ("gpu.mma_i8", "pure"), ("gpu.ldmatrix", "pure"),
                                      ("mem.cp_async_wait", "pure")])
def test_a_pass_that_drops_a_tensor_core_op_is_caught(monkeypatch, op, flag, broken_passes):
    """Mark a warp-wide tensor-core or async-copy op free of effects: DCE deletes it and the
    programs that use it disagree (a lost wait is reported by the simulator as an early read)."""
    word = {"gpu.mma": "mma_m16n8k16(", "gpu.mma_i8": "mma_m16n8k32(", "gpu.ldmatrix": "ldmatrix_x",
            "mem.cp_async_wait": "cp_async_wait("}[op]
    programs = [p for p in (from_seed(s) for s in range(60)) if word in p.source][:4]
    assert programs
    monkeypatch.setattr(OPS[op], flag, True)
    assert any(not check(p, ptx=False).ok for p in programs)


def test_corpus_matches_the_simulator_today():
    """The committed GPU corpus still describes what the simulator computes."""
    entries = C.read(CORPUS)
    assert len(entries) >= 500
    for e in entries[:: len(entries) // 12]:
        assert C.check_outputs(e, reference(C.program_of(e))) is None, e["seed"]


def test_corpus_check_detects_a_wrong_result():
    e = C.read(CORPUS)[0]
    outputs = reference(C.program_of(e))
    outputs["out_u32"] = outputs["out_u32"].copy()
    outputs["out_u32"][0] ^= np.uint32(1)
    assert "out_u32" in C.check_outputs(e, outputs)


def test_refresh_recomputes_digests_and_names_what_moved():
    entries = C.read(CORPUS)[:2]
    stale = [dict(entries[0], outputs=dict(entries[0]["outputs"], out_u32="0" * 24)), entries[1]]
    fresh, changed = C.refresh(stale, reference)
    assert changed == [(entries[0]["seed"], ["out_u32"])]
    assert [e["outputs"] for e in fresh] == [e["outputs"] for e in entries]
    assert [e["source"] for e in fresh] == [e["source"] for e in entries]


def test_the_corpus_command_takes_the_programs_containing_a_text(tmp_path):
    """`python -m ember.fuzz corpus --containing TEXT`: only the seeds whose program has the
    feature, each checked and stored with its simulator results (how a new feature's
    programs join the GPU corpus)."""
    from ember.fuzz.__main__ import main
    out = tmp_path / "c.jsonl.gz"
    assert main(["corpus", "--count", "30", "--containing", "shared ring", "--out", str(out), "--jobs", "1"]) == 0
    entries = C.read(out)
    want = [s for s in range(30) if "shared ring" in from_seed(s).source]
    assert [e["seed"] for e in entries] == want and want
    assert main(["corpus", "--start", "30", "--count", "10", "--containing", "mma_m16n8k32(", "--out", str(out),
                 "--append", "--jobs", "1"]) == 0
    mma = [s for s in range(30, 40) if "mma_m16n8k32(" in from_seed(s).source]
    assert [e["seed"] for e in C.read(out)] == want + mma      # appended (and exit 0: every one added)
