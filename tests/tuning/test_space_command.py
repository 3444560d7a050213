"""`ember tune-space`: the declared spaces as a user reads them."""

import json

from tests.test_cli import run

SRC = """kernel k<const BLOCK: u32 = 256 tune [128, 256, 512], const VEC: u32 = 4 tune [2, 4, 8]>(
        o: *mut global f32) block(BLOCK) {
    static_assert(BLOCK * VEC <= 2048u32);
    o[thread_idx.x] = f32(VEC);
}
"""


def test_lists_the_admissible_configurations_and_why_others_fail(tmp_path, capsys):
    f = tmp_path / "k.ember"
    f.write_text(SRC)
    code, out, _ = run(capsys, "tune-space", str(f), "--rejected")
    assert code == 0
    assert "kernel k: 8 of 9 configurations check" in out and "  BLOCK: 128, 256, 512" in out
    assert "  ok       BLOCK=128 VEC=2" in out
    assert "  rejected BLOCK=512 VEC=8: E0408: static assertion failed" in out
    code, out, _ = run(capsys, "tune-space", str(f), "-D", "VEC=8", "--json")
    assert code == 0 and json.loads(out) == {"k": {
        "params": {"BLOCK": [128, 256, 512]}, "admissible": [{"BLOCK": 128}, {"BLOCK": 256}],
        "rejected": [{"config": {"BLOCK": 512}, "error": "E0408: static assertion failed: `BLOCK * VEC <= 2048u32`"}]}}


def test_errors_are_diagnostics_and_usage_errors(tmp_path, capsys):
    f = tmp_path / "k.ember"
    f.write_text(SRC.replace("tune [128, 256, 512]", "tune [128, 512]"))
    code, _, err = run(capsys, "tune-space", str(f))
    assert code == 1 and "error[E0404]" in err and "k.ember:1:" in err
    code, _, err = run(capsys, "tune-space", str(f), "--arch", "sm_99")
    assert code == 2 and "unknown --arch `sm_99`" in err
    code, _, err = run(capsys, "tune-space", str(tmp_path / "missing.ember"))
    assert code == 2 and "no such file" in err


def test_a_file_without_tuned_parameters_says_how_to_declare_them(tmp_path, capsys):
    f = tmp_path / "k.ember"
    f.write_text("kernel k(o: *mut global f32) block(32) { o[0] = 1.0; }\n")
    code, out, _ = run(capsys, "tune-space", str(f))
    assert code == 0 and "no tuned parameters" in out and "tune [128, 256, 512]" in out
