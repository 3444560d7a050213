"""ember.output_files: outputs are written through to the null device, FIFOs and terminals,
replaced atomically when they are regular files, and never written over an input, through
a symbolic link (but the caller's own descriptors: /dev/stdout, /proc/self/fd/N) or into
another device."""

import os
import stat
import subprocess
import sys
import threading

import pytest

from ember.cli_support import UsageError
from ember.output_files import OutputIsInput, OutputNotOurs, check_not_input, same_file, write_output

SRC = "kernel scale(x: *mut global f32, k: f32) block(32) { x[thread_idx.x] = x[thread_idx.x] * k; }\n"


def _ember(*args, cwd):
    return subprocess.run([sys.executable, "-m", "ember", *args], cwd=cwd, capture_output=True, text=True)


def test_a_new_file_and_a_regular_file_are_written(tmp_path):
    out = tmp_path / "o.ptx"
    write_output(str(out), "one")
    assert out.read_text() == "one"
    write_output(str(out), b"two")
    assert out.read_bytes() == b"two"
    assert [p.name for p in tmp_path.iterdir()] == ["o.ptx"]     # no temporary file left behind


def test_dev_null_stays_a_device():
    write_output("/dev/null", "PTX")
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_another_device_is_refused_and_stays_a_device():
    """Only the null device and terminals take an output: /dev/full (as /dev/sda or
    /dev/mem would be) is refused before it is opened."""
    with pytest.raises(OutputNotOurs, match="/dev/full: it is a device"):
        write_output("/dev/full", "PTX")
    assert stat.S_ISCHR(os.lstat("/dev/full").st_mode)
    assert isinstance(OutputNotOurs("x"), UsageError)


def test_the_callers_own_descriptors_are_written_through():
    """/proc/self/fd/N (and /dev/stdout, /dev/fd/N: links to the same) is a descriptor the
    caller opened - a pipe here - so it is written through, link or not."""
    r, w = os.pipe()
    try:
        write_output(f"/proc/self/fd/{w}", "to the pipe")
        assert os.read(r, 100) == b"to the pipe"
    finally:
        os.close(r)
        os.close(w)


def test_a_fifo_is_written_through(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    write_output(str(fifo), "through the pipe")
    reader.join(10)
    assert got == [b"through the pipe"] and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_symlink_is_refused_and_its_target_untouched(tmp_path):
    """A link's target is a path nobody gave Ember (run as root, `-o k.ptx` with k.ptx a link
    to /etc/passwd replaced the passwd file with PTX, 2026-11-27): refused, the link and its
    target as they were; a dangling link's target is not created."""
    (tmp_path / "real.ptx").write_text("not Ember's")
    link = tmp_path / "link.ptx"
    link.symlink_to("real.ptx")
    with pytest.raises(OutputNotOurs, match="link.ptx: it is a symbolic link \\(to real.ptx\\)"):
        write_output(str(link), "new")
    assert link.is_symlink() and (tmp_path / "real.ptx").read_text() == "not Ember's"
    dangling = tmp_path / "dangling.ptx"
    dangling.symlink_to("made.ptx")
    with pytest.raises(OutputNotOurs, match="symbolic link"):
        write_output(str(dangling), "made")
    assert dangling.is_symlink() and not (tmp_path / "made.ptx").exists()
    (tmp_path / "dir").mkdir()
    (tmp_path / "dirlink").symlink_to("dir")          # a link among the directories is a path as given
    write_output(str(tmp_path / "dirlink" / "o.ptx"), "in dir")
    assert (tmp_path / "dir" / "o.ptx").read_text() == "in dir"


def test_the_input_is_refused(tmp_path):
    src = tmp_path / "k.ember"
    src.write_text(SRC)
    link = tmp_path / "alias.ember"
    link.symlink_to("k.ember")
    for path in (src, link):
        with pytest.raises(OutputIsInput, match="refusing to overwrite a source"):
            write_output(str(path), "PTX", inputs=[str(src)])
    assert src.read_text() == SRC
    assert isinstance(OutputIsInput("x"), UsageError)
    check_not_input("/dev/null", ["/dev/null"])        # devices are not source files
    assert not same_file("/dev/null", "/dev/null")


def test_a_directory_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="is a directory"):
        write_output(str(tmp_path), "PTX")


def test_the_command_writes_through_and_refuses_its_input_and_links(tmp_path):
    (tmp_path / "k.ember").write_text(SRC)
    r = _ember("compile", "k.ember", "-o", "k.ember", cwd=tmp_path)
    assert r.returncode == 2 and "refusing to overwrite" in r.stderr
    assert (tmp_path / "k.ember").read_text() == SRC
    (tmp_path / "lib.ember").write_text("fn twice(x: f32) -> f32 { return x * 2.0; }\n")
    (tmp_path / "u.ember").write_text('import "lib.ember";\n' + SRC.replace("* k", "* twice(k)"))
    r = _ember("compile", "u.ember", "-o", "lib.ember", cwd=tmp_path)     # an import is an input too
    assert r.returncode == 2 and "is the input" in r.stderr
    r = _ember("compile", "k.ember", "-o", "/dev/null", "-MD", "-MF", "/dev/null", "--manifest", "/dev/null",
               cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)
    r = _ember("compile", "k.ember", "-o", "k.ptx", "-MD", "-MF", "k.ember", cwd=tmp_path)
    assert r.returncode == 2 and "dependency file" in r.stderr
    (tmp_path / "decoy").write_text("not Ember's")
    (tmp_path / "link.ptx").symlink_to("decoy")
    for args in (["-o", "link.ptx"], ["-o", "k.ptx", "-MD", "-MF", "link.ptx"], ["-o", "k.ptx", "--manifest", "link.ptx"]):
        r = _ember("compile", "k.ember", *args, cwd=tmp_path)
        assert r.returncode == 2 and "link.ptx: it is a symbolic link" in r.stderr, r.stderr
        assert (tmp_path / "decoy").read_text() == "not Ember's"
    r = _ember("compile", "k.ember", "-o", "/dev/stdout", cwd=tmp_path)    # the shell's redirection
    assert r.returncode == 0 and ".entry scale" in r.stdout


def test_a_closed_standard_output_ends_quietly(tmp_path):
    (tmp_path / "k.ember").write_text(SRC)
    p = subprocess.Popen([sys.executable, "-m", "ember", "compile", "k.ember", "-o", "-", "--emit", "llvm"],
                         cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()            # as `| true` does
    err = p.stderr.read().decode()
    assert p.wait() == 141 and "bug" not in err and "Traceback" not in err
