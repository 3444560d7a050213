"""`ember tune` on the GPU: every admissible configuration checked, then timed; a wrong
configuration reported and never chosen; the table written and read back."""

import pytest

from ember.tuning import table as T
from ember.tuning import workloads as W
from ember.tuning.runner import QUICK, tune_bucket

pytestmark = pytest.mark.gpu


def test_tune_bucket_checks_times_and_chooses_an_admissible_configuration():
    from ember.tuning import tune_space
    e = tune_bucket("q4k_gemv", "1x2048x1024", workers=2, timing=QUICK)
    space = tune_space(W.source_of("q4k_gemv"), kernel="q4k_gemv", defines={"M": 1})["q4k_gemv"]
    assert e["wrong"] == [] and e["failed"] == [] and e["tried"] == len(space.admissible)
    assert e["config"] in space.admissible and e["us"] > 0
    assert e["runner_up"] is None or e["runner_up"]["us"] >= e["us"]
    # a space this small is measured through both paths; the choice is the best of either
    assert e["tried_driver"] >= 1 and set(e["best_by_path"]) == {"nvjitlink", "driver"}
    assert e["us"] == min(b["us"] for b in e["best_by_path"].values())
    assert e["best_by_path"][e["sass_path"]] == {"config": e["config"], "us": e["us"]}
    assert set(e["toolchain"]) == {"nvjitlink", "driver"}      # what made each path's SASS
    # the PTX it measured, for `ember tune --restamp`
    from ember.runtime import cuda
    from ember.tuning.restamp import ptx_sha256
    assert e["arch"] == cuda.context().arch
    assert e["ptx_sha256"] == ptx_sha256(W.source_of("q4k_gemv"), e["arch"], {"M": 1, **e["config"]}, "q4k_gemv")


def test_the_driver_path_loads_the_ptx_and_computes_the_same_bits():
    """ember.runtime.load(..., sass_path="driver") hands the PTX to the driver's JIT (the
    whole-program SASS) and gives the same output as the nvJitLink cubin."""
    import numpy as np
    import ember
    from ember.runtime import cuda
    wl = W.workload("q4k_gemv", "1x1024x1024")
    prog = ember.compile(wl.source, defines=wl.defines, kernels=["q4k_gemv"])
    outs = {}
    for path in cuda.SASS_PATHS:
        mod = ember.runtime.load(prog, sass_path=path)
        assert mod.sass_path == path
        y = np.zeros_like(wl.outputs["y"])
        mod.q4k_gemv(*wl.arguments({**wl.inputs, "y": y}), grid=wl.grid({"WARPS": 4, "ROWS": 2}))
        assert wl.error(y) <= wl.tolerance
        outs[path] = y
    assert outs["nvjitlink"].tobytes() == outs["driver"].tobytes()


def test_a_wrong_configuration_is_reported_and_never_chosen(monkeypatch):
    """A workload whose launch covers half the rows when ROWS is 4: those configurations
    leave rows unwritten, and the check must catch every one of them."""
    factory, source, buckets = W.WORKLOADS["q4k_gemv"]

    def broken(shape):
        wl = factory(shape)
        n = wl.reference.shape[-1]
        wl.grid = lambda c: (-(-n // (c["WARPS"] * c["ROWS"] * (2 if c["ROWS"] == 4 else 1))),)
        return wl
    monkeypatch.setitem(W.WORKLOADS, "q4k_gemv", (broken, source, buckets))
    e = tune_bucket("q4k_gemv", "1x2048x1024", timing=QUICK)
    # every configuration with ROWS 4 (3 WARPS x 3 UNROLL x 2 MIN_BLOCKS), and no other
    assert len(e["wrong"]) == 18 and sorted({w["config"]["WARPS"] for w in e["wrong"]}) == [2, 4, 8]
    assert all(w["config"]["ROWS"] == 4 for w in e["wrong"]) and e["config"]["ROWS"] != 4


def test_the_command_writes_a_table_the_lookup_reads(tmp_path, capsys):
    from ember.cli import main
    from ember.runtime import cuda
    out = tmp_path / "q4k_gemv.json"
    assert main(["tune", "q4k_gemv", "--shape", "1x1024x1024", "--quick", "-o", str(out), "-j", "2"]) == 0
    assert "wrote" in capsys.readouterr().out
    ctx = cuda.context()
    tuned = T.lookup(T.read(out), W.source_of("q4k_gemv"), ctx.name, ctx.arch, "1x1024x1024")
    assert set(tuned.config) == {"WARPS", "ROWS", "UNROLL", "MIN_BLOCKS"} and tuned.sass_path in ("nvjitlink", "driver")


def test_several_devices_share_out_the_shapes():
    """The multi-GPU path (one process per GPU); on a one-GPU machine both workers use it."""
    from ember.runtime import cuda
    from ember.tuning.runner import tune
    n = cuda.device_count()
    devices = list(range(n)) if n > 1 else [0, 0]
    shapes = ["1x1024x1024", "1x2048x1024", "2x1024x1024"]
    t = tune("q4k_gemv", shapes, devices, workers=2, timing=QUICK)
    got = {b for buckets in t["devices"].values() for b in buckets}
    assert got == set(shapes)
    assert all(e["config"] is not None and e["wrong"] == [] for b in t["devices"].values() for e in b.values())


def test_the_runtime_loads_the_tuned_configuration_through_its_path():
    """load_tuned compiles the table's configuration for this GPU and loads it through the
    table's SASS path; the kernel computes the workload's reference. A GPU missing from the
    table gets the defaults through nvJitLink, with a warning."""
    import warnings
    import numpy as np
    from ember.runtime import cuda
    from ember.tuning import load_tuned
    bucket = "1x14336x4096"
    ctx = cuda.context()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        kern, tuned = load_tuned("q4k_q8_gemv", bucket, {"M": 1})
    entry = T.lookup(T.read(T.table_path("q4k_q8_gemv")), W.source_of("q4k_q8_gemv"), ctx.name, ctx.arch, bucket)
    assert bool(seen) == (entry is None)
    assert tuned.sass_path == (entry.sass_path if entry else "nvjitlink") == kern.module.sass_path
    assert set(tuned.config) == {"WARPS", "UNROLL", "ROWS"} and (entry is None or tuned.config == entry.config)
    wl = W.workload("q4k_q8_gemv", bucket)
    y = np.zeros_like(wl.outputs["y"])
    kern(*wl.arguments({**wl.inputs, "y": y}), grid=wl.grid(tuned.config))
    assert wl.error(y) <= wl.tolerance
    assert load_tuned("q4k_q8_gemv", bucket, {"M": 1})[0] is kern            # compiled and loaded once
