"""ember.output_files: outputs are written through to what is not a regular file (devices,
FIFOs, symbolic links), replaced atomically when they are regular files, and never
written over an input."""

import os
import stat
import subprocess
import sys
import threading

import pytest

from ember.cli_support import CommandError, UsageError
from ember.output_files import OutputIsInput, check_not_input, same_file, write_output

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
def test_dev_full_reports_the_error_and_stays_a_device():
    with pytest.raises(CommandError, match="No space left"):
        write_output("/dev/full", "PTX")
    assert stat.S_ISCHR(os.lstat("/dev/full").st_mode)


def test_a_fifo_is_written_through(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    write_output(str(fifo), "through the pipe")
    reader.join(10)
    assert got == [b"through the pipe"] and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_symlink_is_written_through(tmp_path):
    (tmp_path / "real.ptx").write_text("old")
    link = tmp_path / "link.ptx"
    link.symlink_to("real.ptx")
    write_output(str(link), "new")
    assert link.is_symlink() and (tmp_path / "real.ptx").read_text() == "new"
    dangling = tmp_path / "dangling.ptx"
    dangling.symlink_to("made.ptx")
    write_output(str(dangling), "made")
    assert dangling.is_symlink() and (tmp_path / "made.ptx").read_text() == "made"


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


def test_the_command_writes_through_and_refuses_its_input(tmp_path):
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


def test_a_closed_standard_output_ends_quietly(tmp_path):
    (tmp_path / "k.ember").write_text(SRC)
    p = subprocess.Popen([sys.executable, "-m", "ember", "compile", "k.ember", "-o", "-", "--emit", "llvm"],
                         cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()            # as `| true` does
    err = p.stderr.read().decode()
    assert p.wait() == 141 and "bug" not in err and "Traceback" not in err
