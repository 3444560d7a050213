"""The hand-written PTX baselines (kernels_src/baselines/) validate like Ember's PTX, for
sm_80 and sm_90, without spills; each names the Ember kernel whose signature it shares."""

import re
from pathlib import Path

import pytest

import ember
from bench.hand_ptx import ARCH, HAND
from ember.artifacts.validate import validate

BASELINES = sorted((Path(__file__).resolve().parents[2] / "kernels_src" / "baselines").glob("*.ptx"))


@pytest.mark.parametrize("path", BASELINES, ids=lambda p: p.name)
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_baseline_validates(path, arch):
    arch = ARCH.get(path.name, arch)               # wgmma needs sm_90a, for both columns
    v = validate(path.read_text(), arch)
    assert v.kernels and all(r.spill_stores == 0 and r.stack == 0 for r in v.kernels.values())


def test_every_baseline_names_its_ember_counterpart():
    for path in BASELINES:
        head = path.read_text()[:1500]
        assert "Same signature" in head or "same signature" in head or "rope" in path.name, path.name


def entry_params(ptx: str, entry: str) -> list:
    """The .param types of one .entry, in order."""
    head = ptx[ptx.index(f".entry {entry}("):]
    return re.findall(r"\.param\s+\.(\w+)", head[:head.index(")")])


@pytest.mark.parametrize("fname", sorted(HAND))
def test_baseline_has_its_ember_kernels_parameters(fname):
    """Same signature as the Ember kernel it is compared with (bench/hand_ptx.py), so the
    same arguments and grid run both."""
    entry, source, defines, kernel = HAND[fname]
    prog = ember.compile(Path(__file__).resolve().parents[2] / "kernels_src" / source, defines=defines,
                         kernels=[kernel], **({"arch": ARCH[fname]} if fname in ARCH else {}))
    mine = entry_params(prog.ptx, kernel)
    hand = entry_params((BASELINES[0].parent / fname).read_text(), entry)
    assert hand == mine
