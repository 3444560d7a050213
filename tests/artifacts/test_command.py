"""`ember compile` as a build step: variants of const values (-D lists, --variants files),
each to its own deterministically named output, -j worker processes giving the same bytes
as one process, and the manifest describing every output."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ember.artifacts import variants
from ember.cli import main
from ember.cli_support import UsageError

ROOT = Path(__file__).resolve().parents[2]
SRC = """
kernel scale<const W: u32, const T: type>(x: *global T, y: *mut global T) block(32) {
    let i = thread_idx.x;
    y[i] = x[i] * T(W);
}
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.ember").write_text(SRC)
    return tmp_path


def test_lists_expand_to_every_combination():
    matrix, names = variants.expand(["W=1,2", "T=f32,f16", "Z=7"])
    assert matrix == [{"W": "1", "T": "f32", "Z": "7"}, {"W": "1", "T": "f16", "Z": "7"},
                      {"W": "2", "T": "f32", "Z": "7"}, {"W": "2", "T": "f16", "Z": "7"}]
    assert names == ["W", "T"]
    assert variants.suffix(matrix[1], names) == ".W-1.T-f16"


def test_variants_file(tmp_path):
    f = tmp_path / "v.txt"
    f.write_text("# width and type\nW=1 T=f32\n\nW=4 T=bf16   # wide\n")
    matrix, names = variants.expand(["Z=3"], str(f))
    assert matrix == [{"Z": "3", "W": "1", "T": "f32"}, {"Z": "3", "W": "4", "T": "bf16"}]
    assert names == ["W", "T"]


@pytest.mark.parametrize("defines, text, message", [
    (["W=1,,2"], None, "an empty value"),
    (["W=1", "W=2"], None, "given twice"),
    (["W=1"], "W=2\n", "also given with -D"),
    ([], "W=1 W=2\n", "v.txt:1: W is set twice"),
    ([], "W\n", None),
    ([], "# nothing\n", "lists no variant"),
    ([], "1=2\n", "v.txt:1: expected NAME=VALUE"),
])
def test_variant_errors(tmp_path, monkeypatch, defines, text, message):
    monkeypatch.chdir(tmp_path)
    if text is not None:
        (tmp_path / "v.txt").write_text(text)
    if message is None:
        assert variants.expand(defines, "v.txt")[0] == [{"W": "1"}]
        return
    with pytest.raises(UsageError, match=message):
        variants.expand(defines, "v.txt" if text is not None else None)


def digests(directory: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())}


def test_parallel_builds_give_the_same_outputs(project, capsys):
    args = ["compile", "s.ember", "-D", "W=1,2,3", "-D", "T=f32,f16", "--emit", "cubin", "-MD"]
    assert main(args + ["-o", "one", "-j", "1", "--manifest", "one.json"]) == 0
    assert main(args + ["-o", "two", "-j", "2", "--manifest", "two.json"]) == 0
    one, two = digests(project / "one"), digests(project / "two")
    assert sorted(one) == sorted(f"s.W-{w}.T-{t}.{e}" for w in "123" for t in ("f32", "f16") for e in ("cubin", "d"))
    cubins = {k: v for k, v in one.items() if k.endswith(".cubin")}
    assert cubins == {k: v for k, v in two.items() if k.endswith(".cubin")}
    assert len(set(cubins.values())) == 6
    m1, m2 = json.loads((project / "one.json").read_text()), json.loads((project / "two.json").read_text())
    assert [o["output"].replace("one", "two") for o in m1["outputs"]] == [o["output"] for o in m2["outputs"]]
    assert [o["sha256"] for o in m1["outputs"]] == [o["sha256"] for o in m2["outputs"]]
    assert (project / "one" / "s.W-2.T-f16.d").read_text().startswith(os.path.join("one", "s.W-2.T-f16.cubin") + ":")


def test_manifest_describes_every_output(project, capsys):
    assert main(["compile", "s.ember", "-D", "W=2", "-D", "T=f32,f16", "--emit", "fatbin",
                 "--arch", "sm_80,sm_90", "-o", "out", "--manifest", "m.json"]) == 0
    m = json.loads((project / "m.json").read_text())
    assert [o["output"] for o in m["outputs"]] == [os.path.join("out", "s.T-f32.fatbin"),
                                                   os.path.join("out", "s.T-f16.fatbin")]
    o = m["outputs"][1]
    data = (project / o["output"]).read_bytes()
    assert o["sha256"] == hashlib.sha256(data).hexdigest() and o["bytes"] == len(data)
    assert o["defines"] == {"W": "2", "T": "f16"} and o["archs"] == ["sm_80", "sm_90"] and o["reads"] == ["s.ember"]
    [k] = o["kernels"]
    assert k["name"] == "scale" and k["consts"] == {"W": "2", "T": "f16"} and k["block"] == [32, 1, 1]
    assert k["cluster"] is None and k["programmatic"] is False
    for arch in ("sm_80", "sm_90"):
        r = k["archs"][arch]
        assert r["registers"] > 0 and r["spill_stores"] == 0 and "shared" in r


def test_manifest_says_which_kernels_are_programmatic_launches(project, capsys):
    assert main(["compile", "s.ember", "-D", "W=2", "-D", "T=f32", "--programmatic-launch", "-o", "p.ptx",
                 "--manifest", "m.json"]) == 0
    [k] = json.loads((project / "m.json").read_text())["outputs"][0]["kernels"]
    assert k["programmatic"] is True


def test_failures_are_reported_per_variant_in_order(project, capsys):
    code = main(["compile", "s.ember", "-D", "W=1,70000000000", "-D", "T=f32", "-j", "2", "-o", "out"])
    err = capsys.readouterr().err
    assert code == 1 and "70000000000" in err and err.count("error in s.ember") == 1
    assert (project / "out" / "s.W-1.ptx").exists() and not (project / "out" / "s.W-70000000000.ptx").exists()


def test_one_output_of_several_variants_needs_a_directory(project, capsys):
    (project / "afile").write_text("")
    assert main(["compile", "s.ember", "-D", "W=1,2", "-D", "T=f32", "-o", "afile"]) == 2
    assert "-o names a directory" in capsys.readouterr().err
    assert main(["compile", "s.ember", "-D", "W=1,2", "-D", "T=f32", "-MF", "x.d", "-MD"]) == 2
    assert "-MF names one dependency file" in capsys.readouterr().err


def test_progress_line_only_on_a_terminal(project):
    """Not a terminal (a pipe): no progress line, only what went wrong."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "ember", "compile", "s.ember", "-D", "W=1,2,3", "-D", "T=f32",
                        "-j", "2", "-o", "out"], env=env, capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr == "" and r.stdout == ""


TWO = """
kernel first(x: *mut global f32) block(32) { x[thread_idx.x] = 1.0; }
kernel second<const N: u32>(x: *mut global f32) block(32) { x[thread_idx.x] = f32(N); }
"""


def test_kernel_selection(tmp_path, monkeypatch, capsys):
    """-k compiles the named kernels only: the others are not checked (`second` has a const
    parameter without a value), not written, and not in the manifest; a name the file does not
    have is a located error listing its kernels."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "two.ember").write_text(TWO)
    assert main(["compile", "two.ember", "-o", "all.ptx", "--no-cache"]) == 1      # N has no value
    capsys.readouterr()
    assert main(["compile", "two.ember", "-k", "first", "-o", "first.ptx", "--manifest", "m.json"]) == 0
    ptx = (tmp_path / "first.ptx").read_text()
    assert ".entry first(" in ptx and "second" not in ptx
    assert [k["name"] for k in json.loads((tmp_path / "m.json").read_text())["outputs"][0]["kernels"]] == ["first"]
    assert main(["compile", "two.ember", "--kernel", "second,first", "-D", "N=3", "-o", "both.ptx"]) == 0
    both = (tmp_path / "both.ptx").read_text()
    assert ".entry first(" in both and ".entry second(" in both
    capsys.readouterr()
    assert main(["compile", "two.ember", "-k", "third"]) == 1
    err = capsys.readouterr().err
    assert "two.ember` has no kernel `third`" in err and "its kernels: first, second" in err
    assert main(["compile", "two.ember", "-k", "1x"]) == 2
    assert "-k expects kernel names, got `1x`" in capsys.readouterr().err
