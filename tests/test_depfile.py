"""Dependency files (ember/depfile.py, `ember compile -MD/-MMD/-MF/-MT/-MP`): every file
read is listed, in Make's syntax, and real Make and Ninja rebuild exactly what an edit to
an imported file affects."""

import os
import shutil
import subprocess
import sys
import time

import pytest

from ember import depfile
from ember.cli import main

HELPER = 'import "std/reduce.ember";\nfn twice(x: f32) -> f32 { return x * 2.0; }\n'
USES = 'import "lib dir/helper.ember";\nkernel {name}(x: *mut global f32) block(32) {{ x[thread_idx.x] = warp_sum(twice(x[0])); }}\n'
ALONE = "kernel c(x: *mut global f32) block(32) { x[0] = 1.0; }\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "lib dir").mkdir()
    (tmp_path / "lib dir" / "helper.ember").write_text(HELPER)
    (tmp_path / "a.ember").write_text(USES.format(name="a"))
    (tmp_path / "b.ember").write_text(USES.format(name="b"))
    (tmp_path / "c.ember").write_text(ALONE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_escaping_follows_make():
    assert depfile.escape("a b#c$d") == "a\\ b\\#c$$d"


def test_rule_lists_every_file_read(project, capsys):
    assert main(["compile", "a.ember", "-MD", "-o", "a.ptx"]) == 0
    text = (project / "a.d").read_text()
    lines = [line.strip(" \\") for line in text.splitlines()]
    assert lines[0] == "a.ptx:"
    assert lines[1:3] == ["a.ember", "lib\\ dir/helper.ember"]
    assert lines[3].endswith(os.path.join("ember", "std", "reduce.ember")) and os.path.isabs(lines[3])


def test_mmd_mf_mt_mp(project, capsys):
    assert main(["compile", "a.ember", "-MMD", "-MP", "-MF", "a.dep", "-MT", "all",
                 "-MT", "out.ptx", "-o", "out.ptx"]) == 0
    text = (project / "a.dep").read_text()
    assert text == "all out.ptx: \\\n  a.ember \\\n  lib\\ dir/helper.ember\n\nlib\\ dir/helper.ember:\n"


def test_several_inputs_get_one_depfile_each(project, capsys):
    assert main(["compile", "a.ember", "c.ember", "-MD", "-o", "out"]) == 0
    assert (project / "out" / "a.d").read_text().startswith(os.path.join("out", "a.ptx") + ":")
    assert (project / "out" / "c.d").read_text() == os.path.join("out", "c.ptx") + ": \\\n  c.ember\n"


@pytest.mark.parametrize("args, message", [
    (["-MF", "x.d"], "go with -M, -MM, -MD or -MMD"),
    (["c.ember", "-MD", "-MF", "x.d"], "-MF names one dependency file"),
])
def test_usage_errors(project, capsys, args, message):
    assert main(["compile", "a.ember", *args]) == 2
    assert message in capsys.readouterr().err


def test_no_depfile_for_a_failed_compile(project, capsys):
    (project / "bad.ember").write_text("kernel k() { let x: u32 = 1.0; }\n")
    assert main(["compile", "bad.ember", "-MD"]) == 1
    assert not (project / "bad.d").exists()


EMBER = f'"{sys.executable}" -m ember'


def _edit(project, path, text=None):
    """Change a file after everything built so far, whatever the file system's clock
    resolution: every file is made 100 s old, the edited one 50 s old."""
    old = time.time() - 100
    for f in project.rglob("*"):
        if f.is_file():
            os.utime(f, (old, old))
    path.write_text(path.read_text() + "\n" if text is None else text)
    os.utime(path, (old + 50, old + 50))


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_make_rebuilds_exactly_the_dependents(project):
    (project / "Makefile").write_text(
        "all: a.ptx b.ptx c.ptx\n"
        f"%.ptx: %.ember\n\t{EMBER} compile $< -MMD -MP -o $@\n"
        "-include a.d b.d c.d\n")

    def built():
        r = subprocess.run(["make", "-s", "all", "--debug=b"], capture_output=True, text=True, check=True)
        return {t for t in ("a.ptx", "b.ptx", "c.ptx") if f"Must remake target '{t}'" in r.stdout}

    assert built() == {"a.ptx", "b.ptx", "c.ptx"}
    assert built() == set()                                   # a no-op rebuild runs nothing
    _edit(project, project / "lib dir" / "helper.ember")
    assert built() == {"a.ptx", "b.ptx"}                      # the importers, not c
    _edit(project, project / "a.ember", ALONE.replace("kernel c", "kernel a"))
    assert built() == {"a.ptx"}                               # a no longer imports the helper
    _edit(project, project / "lib dir" / "helper.ember")
    assert built() == {"b.ptx"}
    # -MP: an import that is dropped and deleted does not stop Make ("No rule to make target")
    _edit(project, project / "b.ember", ALONE.replace("kernel c", "kernel b"))
    (project / "lib dir" / "helper.ember").unlink()
    assert built() == {"b.ptx"}


def _ninja():
    try:
        import ninja
        return os.path.join(ninja.BIN_DIR, "ninja")
    except ImportError:
        return shutil.which("ninja")


@pytest.mark.skipif(_ninja() is None, reason="no ninja")
def test_ninja_deps_gcc_rebuilds_exactly_the_dependents(project):
    (project / "build.ninja").write_text(
        f"rule ember\n  command = {EMBER} compile $in -MD -MF $out.d -o $out\n"
        "  depfile = $out.d\n  deps = gcc\n"
        "build a.ptx: ember a.ember\nbuild b.ptx: ember b.ember\nbuild c.ptx: ember c.ember\n")

    def built():
        r = subprocess.run([_ninja(), "-d", "explain"], capture_output=True, text=True, check=True)
        return {t for t in ("a.ptx", "b.ptx", "c.ptx") if f"] {EMBER} compile {t[0]}.ember".replace('"', "")
                in r.stdout.replace('"', "")}

    assert built() == {"a.ptx", "b.ptx", "c.ptx"}
    assert built() == set()
    _edit(project, project / "lib dir" / "helper.ember")
    assert built() == {"a.ptx", "b.ptx"}
