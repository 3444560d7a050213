"""bench/revision_ab.py without a GPU: the revision's sources taken whole (its kernels over
its own standard library, not today's), the mistakes of its command line refused before
anything runs, and the report of a run."""

import argparse
import shutil
import subprocess

import pytest

import ember
from bench import revision_ab as RA

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(repo, *args):
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                   capture_output=True)


@pytest.fixture
def repo(tmp_path):
    """A repository whose kernel imports the standard library and a file of its own; the
    standard library's constant is 7 at the commit and 9 in the working tree."""
    r = tmp_path / "repo"
    (r / "kernels_src" / "sub").mkdir(parents=True)
    (r / "ember" / "std").mkdir(parents=True)
    (r / "ember" / "std" / "seven.ember").write_text('import "std/base.ember";\nfn seven() -> u32 { return base(); }\n')
    (r / "ember" / "std" / "base.ember").write_text("fn base() -> u32 { return 7u32; }\n")
    (r / "kernels_src" / "sub" / "k.ember").write_text(
        'import "std/seven.ember";\nimport "../own.ember";\n'
        "kernel k(y: *mut global u32) block(32) { y[thread_idx.x] = seven() + own(); }\n")
    (r / "kernels_src" / "own.ember").write_text("fn own() -> u32 { return 100u32; }\n")
    _git(r, "init", "-q")
    _git(r, "add", "-A")
    _git(r, "commit", "-q", "-m", "one")
    (r / "ember" / "std" / "base.ember").write_text("fn base() -> u32 { return 9u32; }\n")
    return r


def test_the_revisions_kernels_read_its_own_standard_library(repo, tmp_path):
    old = RA.old_sources("HEAD", tmp_path / "old", repo=repo)
    kernel = old / "sub" / "k.ember"
    assert 'import "std/' not in kernel.read_text()
    ptx = ember.compile(kernel, arch="sm_80").ptx
    assert "107" in ptx and "109" not in ptx          # 7 + 100: the committed base(), not the tree's


def test_an_unknown_revision_or_a_folder_outside_git_is_a_revision_error(repo, tmp_path):
    with pytest.raises(RA.RevisionError, match="no-such-rev"):
        RA.old_sources("no-such-rev", tmp_path / "a", repo=repo)
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(RA.RevisionError):
        RA.old_sources("HEAD", tmp_path / "b", repo=plain)


def _args(**kw):
    base = {"rev": "HEAD", "kernel": "q4k_digits_imma", "shape": None, "rounds": 3, "out": "unused"}
    return argparse.Namespace(**{**base, **kw})


@pytest.mark.parametrize("kw, says", [
    ({"rev": None}, "needs --rev REV and --kernel KERNEL"),
    ({"kernel": None}, "needs --rev REV and --kernel KERNEL"),
    ({"rounds": 0}, "--rounds 0: at least 1"),
    ({"kernel": "nope"}, "no workload for `nope`"),
    ({"shape": ["9x9"]}, "`9x9` is not a shape of q4k_digits_imma"),
])
def test_command_line_mistakes_are_refused_before_anything_runs(kw, says, capsys, monkeypatch):
    monkeypatch.setattr(RA, "main", lambda *a, **k: pytest.fail("ran"))
    assert RA.command(_args(**kw)) == 2
    err = capsys.readouterr().err
    assert err.startswith("bench: error: ") and says in err and err.count("\n") == 1


def test_the_report_names_each_buckets_configuration_and_any_problem():
    result = {"kernel": "q4k_digits_imma", "rev": "0900152", "rounds": 3, "date": "2026-11-28",
              "device": "NVIDIA H100 80GB HBM3", "arch": "sm_90",
              "rows": [{"bucket": "8x4096x14336", "config": {"ROWS": 2, "WARPS": 8}, "problem": None,
                        "old_median_us": 22.314, "new_median_us": 21.816, "new_over_old": 0.9777},
                       {"bucket": "8x6144x4096", "config": None, "problem": "new: wrong 0.5"}]}
    md = RA.markdown(result)
    assert "| 8x4096x14336 | ROWS=2 WARPS=8 | 22.314 | 21.816 | 0.978 |" in md
    assert "| 8x6144x4096 | - | new: wrong 0.5 | | |" in md
    assert "nvJitLink" in md and "NVIDIA H100 80GB HBM3" in md
