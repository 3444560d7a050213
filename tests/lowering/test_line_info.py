"""`-lineinfo` (line_info=True): .file/.loc directives give each PTX instruction its Ember
source line (imports and std included), the target stays plain (`sm_90`, no `, debug`),
file names are relative as given, and not one instruction changes: without the
directives and the labels they need, the PTX is the same as without -lineinfo."""

import re
import subprocess
import sys

import pytest

import ember

KERNELS = ["rope.ember", "rmsnorm.ember", "q4k_dp4a.ember", "q4k_mma.ember", "gemm_bf16.ember", "gemm_f32.ember"]


def instructions(ptx: str) -> list:
    lines = [ln for ln in ptx.splitlines()
             if not re.match(r"\s*\.(loc|file)\b", ln) and not re.match(r"\$L__(tmp|func_begin|func_end)\d+:", ln)]
    text = "\n".join(lines)
    return re.sub(r"\t\.section\t\.debug_\w+\t\{\s*\}\n?", "", text).splitlines()


@pytest.mark.parametrize("name", KERNELS)
def test_line_info_changes_no_instruction(name, compile_checked):
    path = f"kernels_src/{name}"
    defines = {"HEAD_DIM": 128} if name == "rope.ember" else {}
    plain = ember.compile(path, cache=False, defines=defines)
    lined = compile_checked(path, cache=False, line_info=True, defines=defines)["sm_90"]
    assert instructions(lined.ptx) == instructions(plain.ptx)
    assert ".loc" in lined.ptx and "\n.target sm_90\n" in lined.ptx
    assert f'.file\t1 "kernels_src/{name}"' in lined.ptx


def test_lines_point_at_the_source_and_at_imported_files(tmp_path):
    (tmp_path / "lib.ember").write_text("fn twice(a: f32) -> f32 {\n    return a * 2.0;\n}\n")
    (tmp_path / "k.ember").write_text('import "lib.ember";\nimport "std/reduce.ember";\n'
                                      "kernel k(x: *mut global f32) block(32) {\n"
                                      "    let v = twice(x[thread_idx.x]);\n"
                                      "    x[thread_idx.x] = warp_sum(v);\n}\n")
    r = subprocess.run([sys.executable, "-m", "ember", "compile", "k.ember", "-lineinfo", "-o", "-", "--no-cache"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    files = dict(re.findall(r'\.file\t(\d+) "([^"]+)"', r.stdout))
    assert set(files.values()) == {"k.ember", "lib.ember", "std/reduce.ember"}
    locs = {(files[f], int(line)) for f, line in re.findall(r"\.loc\t(\d+) (\d+) \d+", r.stdout)}
    assert ("lib.ember", 2) in locs and ("k.ember", 5) in locs
    assert str(tmp_path) not in r.stdout
