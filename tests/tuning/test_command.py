"""`ember tune` where no GPU is needed: --list, and the usage errors."""

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


def test_without_a_gpu_it_says_so(capsys):
    from ember.runtime import cuda
    if cuda.available():
        pytest.skip("a GPU is present: tests/gpu/test_tune_gpu.py runs the tuner")
    code, _, err = run(capsys, "tune", "q4k_gemv")
    assert code == 2 and "needs a CUDA GPU" in err and "ember tune-space" in err
