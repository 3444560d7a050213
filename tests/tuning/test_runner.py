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


# share_out's workers run these (module level: a spawned process imports them by name). The
# job's "kernel" carries the test's folder.

def _waits_for_the_others(job):
    """Bucket "long" lasts until the other worker has measured "c"; each answer names its process."""
    import os
    import pathlib
    import time
    folder, shape, device = pathlib.Path(job[0]), job[1], job[2]
    if shape == "long":
        for _ in range(600):
            if (folder / "c").exists():
                break
            time.sleep(0.1)
    else:
        (folder / shape).write_text("")
    return f"cuda:{device}", shape, {"pid": os.getpid()}, None


def _crashes_on_a_bucket(job):
    import os
    if job[1].startswith("crash"):
        os._exit(3)
    return f"cuda:{job[2]}", job[1], {"pid": os.getpid()}, None


def _starts_a_process(job):
    """As tune_bucket's compile workers do (a daemonic worker may not)."""
    import multiprocessing
    child = multiprocessing.get_context("spawn").Process(target=int)
    child.start()
    child.join()
    return f"cuda:{job[2]}", job[1], {"child_exit": child.exitcode}, None


def _does_not_compile(job):
    import ember
    ember.compile("kernel k(x: ptr<f32>) { let a = ; }", arch="sm_90")


def test_gpus_take_the_next_bucket_when_they_are_done(tmp_path):
    """A queue, not a fixed share: while one GPU measures a long bucket the other measures
    every other one (round-robin gave the long bucket's GPU "b" too, and the run waited)."""
    from ember.tuning.runner import share_out
    shapes = ["long", "a", "b", "c"]
    done = share_out(str(tmp_path), shapes, [0, 0], 1, None, measure=_waits_for_the_others)
    assert [d[1] for d in done] == shapes and all(d[3] is None for d in done)
    pid = {shape: entry["pid"] for _, shape, entry, _ in done}
    assert pid["a"] == pid["b"] == pid["c"] != pid["long"]


def test_a_worker_may_start_processes_of_its_own():
    """Its bucket's compile workers: a daemonic GPU worker lost every bucket of a 4-GPU run to
    "daemonic processes are not allowed to have children"."""
    from ember.tuning.runner import share_out
    assert share_out("k", ["x"], [0, 0], 1, None, measure=_starts_a_process) == [("cuda:0", "x", {"child_exit": 0}, None)]


def test_a_worker_that_dies_fails_its_bucket_and_the_others_go_on():
    from ember.tuning.runner import share_out
    done = share_out("k", ["x", "crash", "y", "z"], [0, 0], 1, None, measure=_crashes_on_a_bucket)
    assert [d[1] for d in done] == ["x", "crash", "y", "z"]
    assert done[1] == ("cuda:0", "crash", None, "the worker measuring on cuda:0 ended (exit status 3)")
    assert all(d[3] is None for d in done if d[1] != "crash")


def test_when_every_worker_dies_the_rest_is_failed_not_waited_for():
    from ember.tuning.runner import share_out
    done = share_out("k", ["crash", "crash 2", "x"], [0], 1, None, measure=_crashes_on_a_bucket)
    assert done[0][3] == "the worker measuring on cuda:0 ended (exit status 3)"
    assert done[2] == ("cuda:0", "x", None, "not measured: every GPU's worker had ended")


def test_a_source_that_does_not_compile_is_raised_as_the_compiler_reports_it():
    import ember
    from ember.tuning.runner import share_out
    with pytest.raises(ember.CompileError) as e:
        share_out("k", ["x"], [0, 0], 1, None, measure=_does_not_compile)
    assert "unexpected `<`" in e.value.diagnostics.render()
