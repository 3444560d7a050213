"""`ember tune` where no GPU is needed: --list, the usage errors, and what it says of a
bucket where no configuration passed the reference check."""

import pytest

from tests.test_cli import run


def test_list_names_each_kernel_with_its_source_and_buckets(capsys):
    code, out, _ = run(capsys, "tune", "--list")
    assert code == 0
    assert "q4k_q8_gemv (q4k_dp4a.ember): 1x14336x4096, 1x4096x14336, 8x14336x4096" in out
    assert "rmsnorm_rows (rmsnorm.ember): 16384x4096 f32" in out


def test_usage_errors(capsys, tmp_path):
    assert run(capsys, "tune")[0] == 2
    code, _, err = run(capsys, "tune", "my_kernel")
    assert code == 2 and "no workload for `my_kernel`" in err
    code, _, err = run(capsys, "tune", "q4k_gemv", "-j", "0")
    assert code == 2 and "-j must be at least 1" in err
    code, _, err = run(capsys, "tune", "q4k_gemv", "-o", str(tmp_path))
    assert code == 2 and "not a regular file" in err


def test_a_device_named_twice_is_refused(capsys, monkeypatch):
    """Two workers on one GPU would time each other's kernels."""
    from ember.runtime import cuda
    monkeypatch.setattr(cuda, "available", lambda: True)
    monkeypatch.setattr(cuda, "device_count", lambda: 2)
    code, _, err = run(capsys, "tune", "q4k_gemv", "--device", "1", "--device", "0", "--device", "1")
    assert code == 2 and "--device 1 is named twice" in err


def test_without_a_gpu_it_says_so(capsys):
    from ember.runtime import cuda
    if cuda.available():
        pytest.skip("a GPU is present: tests/gpu/test_tune_gpu.py runs the tuner")
    code, _, err = run(capsys, "tune", "q4k_gemv")
    assert code == 2 and "needs a CUDA GPU" in err and "ember tune-space" in err


def test_a_bucket_where_nothing_passed_the_check_is_an_error(capsys, tmp_path, monkeypatch):
    """Every configuration wrong (as gemm_wgmma's was at K = 14336 under a tolerance too tight
    for its depth): the summary says so, with the errors, and the exit status is 1 - not an
    internal error, and not 0."""
    from ember.runtime import cuda
    from ember.tuning import runner
    wrong = [{"config": {"BN": 16}, "error": 1.96e-05, "sass_path": "nvjitlink"}]
    table = {"kernel": "gemm_wgmma", "devices": {"GPU sm_90": {"1x4096x14336": {
        "config": None, "sass_path": None, "us": None, "runner_up": None, "tried": 1, "pruned": 0, "wrong": wrong,
        "failed": [], "defines": {}}}}}
    monkeypatch.setattr(cuda, "available", lambda: True)
    monkeypatch.setattr(cuda, "device_count", lambda: 1)
    monkeypatch.setattr(runner, "tune", lambda *a, **k: table)
    monkeypatch.setattr("ember.tuning.table.merge", lambda old, new: new)
    monkeypatch.setattr("ember.tuning.table.write", lambda path, t: path.write_text("{}"))
    code, out, _ = run(capsys, "tune", "gemm_wgmma", "-o", str(tmp_path / "t.json"))
    assert code == 1
    assert ("gemm_wgmma 1x4096x14336 on GPU sm_90: no configuration passed the reference check (1 tried, 0 pruned, "
            "1 WRONG; errors up to 1.96e-05)") in out


def test_a_retune_after_an_edit_keeps_the_entries_whose_code_is_unchanged(capsys, tmp_path, monkeypatch):
    """`ember tune K --shape S` after an edit of K's source: the table at -o was made from the
    old source, so it is stale as a whole; the entries of other buckets whose configuration
    still compiles to the PTX they were measured with are kept (they used to be lost with
    the rest), and the others are dropped and named."""
    import json

    from ember.runtime import cuda
    from ember.tuning import runner
    from ember.tuning import table as T
    from ember.tuning.workloads import source_of
    source = source_of("rmsnorm_rows")
    shipped = T.read(source.parent / "tuned" / "rmsnorm_rows.json")
    device = "NVIDIA H100 80GB HBM3 sm_90"
    entry = shipped["devices"][device]["4096x8192 bf16"]
    old = {**shipped, "source_hash": "an older source",
           "devices": {device: {"4096x8192 bf16": entry, "1x4096 bf16": entry,
                                "2x4096 f32": {**entry, "ptx_sha256": "0" * 64}}}}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(old))
    new = {**T.new_table("rmsnorm_rows", source), "devices": {device: {"1x4096 bf16": {**entry, "us": 2.5}}}}
    monkeypatch.setattr(cuda, "available", lambda: True)
    monkeypatch.setattr(cuda, "device_count", lambda: 1)
    monkeypatch.setattr(runner, "tune", lambda *a, **k: new)
    code, out, _ = run(capsys, "tune", "rmsnorm_rows", "--shape", "1x4096 bf16", "-o", str(path))
    assert code == 0
    written = T.read(path)
    assert written["source_hash"] == T.source_hash(source)
    assert written["devices"] == {device: {"4096x8192 bf16": entry, "1x4096 bf16": {**entry, "us": 2.5}}}
    assert f"rmsnorm_rows: kept 1 entry of {path} whose code the edit left alone" in out
    assert (f"rmsnorm_rows: dropped 1 stale entry (the edit changed their code, or it cannot be checked); retune "
            f"them: {device}, 2x4096 f32") in out


def test_buckets_that_could_not_be_measured_are_named_and_the_rest_written(capsys, tmp_path, monkeypatch):
    """A bucket whose measurement raised: the measured buckets are written, the failed one
    is named with its error on standard error, and the exit status is 1."""
    from ember.runtime import cuda
    from ember.tuning import table as T
    from tests.tuning.test_runner import _one_bucket_fails
    _one_bucket_fails(monkeypatch)
    monkeypatch.setattr(cuda, "available", lambda: True)
    monkeypatch.setattr(cuda, "device_count", lambda: 1)
    monkeypatch.setattr("ember.tuning.command.summary", lambda kernel, table: ([], True))
    path = tmp_path / "t.json"
    code, out, err = run(capsys, "tune", "rmsnorm_rows", "--shape", "1x4096 f32", "--shape", "4096x8192 bf16",
                         "-o", str(path))
    assert code == 1
    assert set(T.read(path)["devices"]["GPU sm_90"]) == {"1x4096 f32"}
    assert ("ember tune: rmsnorm_rows 4096x8192 bf16 on GPU sm_90 could not be measured: RuntimeError: "
            "CUDA_ERROR_INVALID_HANDLE: a handle of another GPU") in err
    assert "1 of 2 buckets not measured; the others were written" in err
