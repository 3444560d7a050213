"""The tuner's decisions that need no GPU: the choice, its tie rule, the parallel compile, and
what a bucket that fails to measure leaves."""

import pytest

from ember.tuning.runner import choose, precompile
from ember.tuning.workloads import source_of


def test_the_fastest_is_chosen_and_ties_go_to_the_first_declared():
    results = [{"index": 3, "config": "c", "sass_path": "nvjitlink", "us": 2.0},
               {"index": 1, "config": "a", "sass_path": "driver", "us": 2.0},
               {"index": 1, "config": "a", "sass_path": "nvjitlink", "us": 2.0},
               {"index": 2, "config": "b", "sass_path": "driver", "us": 1.5},
               {"index": 0, "config": "w", "sass_path": "nvjitlink", "us": None}]
    chosen, runner_up = choose(results)
    assert (chosen["config"], chosen["sass_path"]) == ("b", "driver")
    assert (runner_up["config"], runner_up["sass_path"]) == ("a", "nvjitlink")   # a tie: the runtime's default path
    assert choose(list(reversed(results))) == (chosen, runner_up)           # not the order measured
    assert choose([]) == (None, None)


def test_precompile_reports_each_configuration_that_does_not_compile():
    src = str(source_of("q4k_gemv"))
    jobs = [(src, "sm_90", {"WARPS": 2}, "q4k_gemv"), (src, "sm_90", {"WARPS": 0}, "q4k_gemv")]
    errors = precompile(jobs, workers=2)
    assert errors[0] is None and "error" in errors[1]
    assert precompile(jobs[:1], workers=1) == [None]


def _one_bucket_fails(monkeypatch):
    """tune_bucket as if cuda:0 measured every bucket but 4096x8192 bf16, whose launch failed."""
    from ember.tuning import runner

    def bucket(kernel, shape, device, workers, stream, timing):
        if shape == "4096x8192 bf16":
            raise RuntimeError("CUDA_ERROR_INVALID_HANDLE: a handle of another GPU\nsecond line")
        return {"config": {"BLOCK": 256}, "us": 1.0}
    monkeypatch.setattr(runner, "tune_bucket", bucket)
    monkeypatch.setattr(runner, "device_key", lambda device: "GPU sm_90")
    return runner


def test_a_failing_bucket_leaves_the_others_measured(monkeypatch):
    """A bucket whose measurement raises is named with what went wrong; the other buckets'
    entries are kept (one failing worker of a run on four GPUs used to lose them all)."""
    import io
    runner = _one_bucket_fails(monkeypatch)
    failures = []
    shapes = ["16384x4096 f32", "4096x8192 bf16", "1x4096 f32"]
    t = runner.tune("rmsnorm_rows", shapes, [0], progress_stream=io.StringIO(), failures=failures)
    assert set(t["devices"]["GPU sm_90"]) == {"16384x4096 f32", "1x4096 f32"}
    assert failures == [("GPU sm_90", "4096x8192 bf16",
                         "RuntimeError: CUDA_ERROR_INVALID_HANDLE: a handle of another GPU")]
    with pytest.raises(runner.TuneError, match="4096x8192 bf16 on GPU sm_90: RuntimeError"):
        runner.tune("rmsnorm_rows", shapes, [0], progress_stream=io.StringIO())
