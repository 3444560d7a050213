"""The CMake package (ember/artifacts/cmake/EmberConfig.cmake) driving real CMake and Ninja
(both from PyPI in the test extra): find_package(Ember) through `ember --cmake-dir`, a
clean build, a no-op rebuild that runs nothing, an edit to an imported file that rebuilds
exactly the outputs that read it, and a host program built against a generated header."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CMAKE = shutil.which("cmake")
NINJA = shutil.which("ninja")
CXX = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")

pytestmark = pytest.mark.skipif(not (CMAKE and NINJA), reason="cmake and ninja are in the test extra")

HELPER = 'fn twice(x: f32) -> f32 { return x * 2.0; }\n'
A = ('import "lib/helper.ember";\n'
     "kernel a<const W: u32>(x: *mut global f32) block(64) { x[thread_idx.x] = twice(x[W]); }\n")
B = "kernel b(x: *mut global f32, n: u32) block(32) { if thread_idx.x < n { x[thread_idx.x] = 1.0; } }\n"
MAIN = """
#include <cstdio>
#include "a.W-1.h"
#include "a.W-2.h"
#include "b.h"
int main() {
    std::printf("%s %u %s %u %u\\n", a_W_1_kernels[0].name, a_W_2_kernels[0].block[0],
                b_kernels[0].name, b_kernels[0].num_params, (unsigned)(b_image_size > 0));
    return 0;
}
"""
CMAKELISTS = """
cmake_minimum_required(VERSION 3.20)
project(uses_ember LANGUAGES {langs})
execute_process(COMMAND "{python}" -m ember --cmake-dir OUTPUT_VARIABLE Ember_DIR
                OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
find_package(Ember REQUIRED)
ember_add_kernels(kernels SOURCES kernels/a.ember ARCHS sm_80 sm_90 DEFINES W=1,2)
ember_add_kernels(more SOURCES kernels/b.ember ARCHS sm_90 EMIT header IMAGE cubin)
{host}
"""
HOST = "add_executable(host main.cpp)\ntarget_link_libraries(host PRIVATE kernels more)\n"


def _ember_on_path(tmp_path: Path) -> dict:
    """A PATH whose `ember` runs this checkout with this interpreter."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = bindir / "ember"
    script.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m ember "$@"\n')
    script.chmod(0o755)
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}", PYTHONPATH=str(ROOT))
    env["EMBER_CACHE_DIR"] = str(tmp_path / "cache")
    env.pop("EMBER_NO_CACHE", None)
    return env


@pytest.fixture
def project(tmp_path):
    src = tmp_path / "proj"
    (src / "kernels" / "lib").mkdir(parents=True)
    (src / "kernels" / "lib" / "helper.ember").write_text(HELPER)
    (src / "kernels" / "a.ember").write_text(A)
    (src / "kernels" / "b.ember").write_text(B)
    (src / "main.cpp").write_text(MAIN)
    (src / "CMakeLists.txt").write_text(CMAKELISTS.format(
        langs="CXX" if CXX else "NONE", python=sys.executable.replace("\\", "/"), host=HOST if CXX else ""))
    return src, tmp_path / "build", _ember_on_path(tmp_path)


def _ninja(build: Path, env: dict) -> list:
    """Runs ninja; returns the outputs it built (its `Ember: ...` lines)."""
    r = subprocess.run([NINJA, "-C", str(build)], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return sorted(Path(line.split("Ember: ", 1)[1]).name for line in r.stdout.splitlines() if "Ember: " in line)


def _age(tree: Path) -> None:
    """Every file 100 s old, so that an edit is newer whatever the clock's resolution."""
    old = time.time() - 100
    for f in tree.rglob("*"):
        os.utime(f, (old, old))


def test_clean_build_noop_and_edit_of_an_import(project):
    src, build, env = project
    r = subprocess.run([CMAKE, "-S", str(src), "-B", str(build), "-G", "Ninja",
                        f"-DCMAKE_MAKE_PROGRAM={NINJA}"], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert _ninja(build, env) == ["a.W-1.h", "a.W-2.h", "b.h"]
    assert _ninja(build, env) == []                               # nothing to do
    _age(src)
    _age(build)
    helper = src / "kernels" / "lib" / "helper.ember"
    helper.write_text(HELPER.replace("2.0", "3.0"))
    assert _ninja(build, env) == ["a.W-1.h", "a.W-2.h"]            # b does not import it
    assert _ninja(build, env) == []
    (src / "kernels" / "b.ember").write_text(B.replace("1.0", "2.0"))
    assert _ninja(build, env) == ["b.h"]
    if CXX:
        host = subprocess.run([str(build / "host")], capture_output=True, text=True, check=True)
        assert host.stdout.split() == ["a", "64", "b", "2", "1"]


def _configure(tmp_path, cmakelists: str, files: dict):
    src = tmp_path / "proj2"
    for name, text in files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text)
    (src / "CMakeLists.txt").write_text(cmakelists.replace("{python}", sys.executable.replace("\\", "/")))
    env = _ember_on_path(tmp_path)
    build = tmp_path / "build2"
    r = subprocess.run([CMAKE, "-S", str(src), "-B", str(build), "-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={NINJA}"],
                       env=env, capture_output=True, text=True)
    return r, build, env


HEAD = """cmake_minimum_required(VERSION 3.20)
project(p LANGUAGES NONE)
execute_process(COMMAND "{python}" -m ember --cmake-dir OUTPUT_VARIABLE Ember_DIR
                OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
find_package(Ember REQUIRED)
"""


def test_two_sources_of_one_file_name_are_named_in_the_error(tmp_path):
    r, _, _ = _configure(tmp_path, HEAD + "ember_add_kernels(k SOURCES x/b.ember y/b.ember EMIT ptx)\n",
                         {"x/b.ember": B, "y/b.ember": B.replace("1.0", "2.0")})
    assert r.returncode != 0
    err = r.stderr.replace("\n", " ")
    assert "x/b.ember" in err and "y/b.ember" in err and "would both be" in err


def test_each_source_may_have_its_own_const_values(tmp_path):
    lists = HEAD + ('set_source_files_properties(a.ember PROPERTIES EMBER_DEFINES "W=1,2")\n'
                    'set_source_files_properties(c.ember PROPERTIES EMBER_DEFINES "V=3")\n'
                    "ember_add_kernels(k SOURCES a.ember c.ember EMIT ptx)\n")
    c = "kernel c<const V: u32>(x: *mut global f32) block(32) { x[V] = 1.0; }\n"
    r, build, env = _configure(tmp_path, lists, {"a.ember": A, "lib/helper.ember": HELPER, "c.ember": c})
    assert r.returncode == 0, r.stderr
    assert _ninja(build, env) == ["a.W-1.ptx", "a.W-2.ptx", "c.ptx"]


def test_tuned_builds_one_output_per_tuned_configuration(tmp_path):
    """TUNED H100 plans the outputs from the tables next to the source, and builds each with
    its own const values (not --tuned again, which would clash with them)."""
    from ember.tuning import table as T
    kernel = "kernel t<const BLOCK: u32 = 64 tune [64, 128], const M: u32 = 1>(x: *mut global f32) block(BLOCK) { x[M] = 1.0; }\n"
    src = tmp_path / "proj2"                       # where _configure writes the project
    (src / "tuned").mkdir(parents=True)
    (src / "t.ember").write_text(kernel)
    t = T.new_table("t", src / "t.ember")
    t["devices"] = {"NVIDIA H100 80GB HBM3 sm_90": {"m1": {"config": {"BLOCK": 128}, "defines": {"M": 1}},
                                                     "m8": {"config": {"BLOCK": 64}, "defines": {"M": 8}}}}
    T.write(src / "tuned" / "t.json", t)
    r, build, env = _configure(tmp_path, HEAD + "ember_add_kernels(k SOURCES t.ember EMIT ptx TUNED H100)\n",
                               {"t.ember": kernel})
    assert r.returncode == 0, r.stderr
    assert _ninja(build, env) == ["t.M-1.BLOCK-128.ptx", "t.M-8.BLOCK-64.ptx"]
