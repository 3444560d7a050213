"""The hand-written PTX baselines (kernels_src/baselines/) validate like Ember's PTX, for
sm_80 and sm_90, without spills; each names the Ember kernel whose signature it shares."""

from pathlib import Path

import pytest

from ember.lowering.validate import validate

BASELINES = sorted((Path(__file__).resolve().parents[2] / "kernels_src" / "baselines").glob("*.ptx"))


@pytest.mark.parametrize("path", BASELINES, ids=lambda p: p.name)
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_baseline_validates(path, arch):
    v = validate(path.read_text(), arch)
    assert v.kernels and all(r.spill_stores == 0 and r.stack == 0 for r in v.kernels.values())


def test_every_baseline_names_its_ember_counterpart():
    for path in BASELINES:
        head = path.read_text()[:1500]
        assert "Same signature" in head or "same signature" in head or "rope" in path.name, path.name
