"""The README's examples, run as written, the way a newcomer runs them: its kernel saved to
the file it names, its shell commands through the `ember` command, its Python blocks as
scripts. On a machine without a GPU the GPU example must end in Ember's NoGPUError that
points at the simulator (it used to be a raw traceback from the driver loader), and the
simulator examples must run."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def blocks() -> list[tuple[str, str]]:
    """(language, text) of every fenced block of the README."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"```(\w*)\n(.*?)```", README.read_text(), re.S)]


@pytest.fixture()
def workdir(tmp_path):
    kernel = next(text for lang, text in blocks() if text.startswith("// scale.ember"))
    (tmp_path / "scale.ember").write_text(kernel)
    return tmp_path


def _shell(workdir, command: str) -> subprocess.CompletedProcess:
    assert command.startswith("ember ")
    return subprocess.run([sys.executable, "-m", "ember"] + command.split()[1:], cwd=workdir,
                          capture_output=True, text=True, timeout=120)


def test_shell_examples_print_what_the_readme_shows(workdir):
    shells = [text for lang, text in blocks() if text.startswith("$ ember")]
    assert len(shells) >= 2
    for text in shells:
        command, *shown = text.strip().splitlines()
        r = _shell(workdir, command[2:])
        assert r.returncode == 0, r.stderr
        out = r.stdout.splitlines()
        if "--check" in command:   # a report on stderr; register counts depend on the assembler's version
            out = r.stderr.splitlines()
            assert out[0] == shown[0]
            assert re.fullmatch(r"  scale: \d+ registers, 0 bytes spilled, 0 bytes stack, 0 bytes shared", out[1])
        else:
            assert out == shown


def test_python_examples_run_or_name_the_simulator(workdir):
    from ember.runtime import cuda_available
    python = [text for lang, text in blocks() if lang == "python"]
    first, sim = python[0], python[1]
    r = subprocess.run([sys.executable, "-c", first], cwd=workdir, capture_output=True, text=True, timeout=120)
    if cuda_available():
        assert r.returncode == 0, r.stderr
    else:
        assert r.returncode != 0
        last = r.stderr.strip().splitlines()[-1]
        assert last.startswith("ember.runtime.cuda.NoGPUError: no NVIDIA GPU") and 'device="sim"' in last
        assert "DynamicLibNotFoundError" not in r.stderr
    script = first.replace("cuda.load(prog).scale(x, 2.0, 1000, grid=(4,))", "") + sim + \
        "\nassert (x == 2 * np.arange(1000)).all()\n"
    r = subprocess.run([sys.executable, "-c", script], cwd=workdir, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_a_benchmark_without_its_packages_says_which_to_install():
    import importlib.util
    if importlib.util.find_spec("triton") and importlib.util.find_spec("numba"):
        return                                   # the [bench] extra is installed: nothing to say
    r = subprocess.run([sys.executable, "-m", "bench", "compile"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and "pip install -e '.[bench]'" in r.stderr and "Traceback" not in r.stderr
