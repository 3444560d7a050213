"""`ember run`, `ember tune-space`, `ember explain` and `ember compile` given hostile
command lines (the sweep of 2026-11-27, in process): every one ends with a status of 0, 1
or 2 and a message, never an internal error (70) or a traceback. (It found `-D` typos
passed over silently by `ember run --kernel` and `ember tune-space`: tests/test_cli.py.)"""

import pytest

from ember.cli import main

KERNEL = """kernel k<const N: u32 = 4 tune [2, 4]>(x: *mut global f32, n: u32, s: f32) block(32) {
    let i = block_idx.x * 32u32 + thread_idx.x;
    if i < n { x[i] = x[i] * s + f32(N); }
}
"""

RUN = ["--grid", "1", "x=zeros:32", "n=32", "s=2"]
CASES = [
    ["run", "K"] + RUN,
    *[["run", "K", "--grid", g, "x=zeros:32", "n=32", "s=2"] for g in ("0", "-1", "1,1,1,1", "99999999999", "a", "")],
    *[["run", "K"] + RUN + ["--block", b] for b in ("0", "2048", "x", "1,0")],
    *[["run", "K", "--grid", "1", f"x={x}", "n=32", "s=2"]
      for x in ("zeros:-3", "zeros:0", "zeros:99999999999999", "zeros:3x0x2", "bogus:32", "nofile.npy", "K",
                "/dev/zero", "rand:", "ones:1e3", "")],
    *[["run", "K", "--grid", "1", "x=zeros:32", f"n={n}", "s=2"] for n in ("-1", "1e3", "0x", "4294967296", "")],
    *[["run", "K", "--grid", "1", "x=zeros:32", "n=32", f"s={s}"] for s in ("nan", "1e999", "True", "", "0x1p3")],
    ["run", "K", "--grid", "1", "x=zeros:32", "n=32"],
    ["run", "K"] + RUN + ["t=3"],
    ["run", "K"] + RUN + ["s=3"],
    *[["run", "K"] + RUN + ["-D", d] for d in ("N=3", "N=abc", "M=3", "N", "=3", "N=-1", "N=4294967296")],
    ["run", "K"] + RUN + ["-O", "9"],
    ["run", "K"] + RUN + ["--step-limit", "-5"],
    ["run", "K"] + RUN + ["--out", "K"],
    ["run", "K"] + RUN + ["--kernel", "nope"],
    ["run", "/nonexistent.ember", "--grid", "1"],
    ["run", "DIR", "--grid", "1"],
    ["tune-space", "K"], ["tune-space", "K", "-D", "N=7"], ["tune-space", "K", "-D", "NN=1"],
    ["tune-space", "K", "--arch", "sm_10"], ["tune-space", "K", "--kernel", "nope"],
    ["tune-space", "K", "--json", "--rejected"], ["tune-space", "/dev/null"], ["tune-space", "DIR"],
    ["explain", "E9999"], ["explain", "e0201"], ["explain", ""],
    ["compile", "K", "--arch", "sm_1"], ["compile", "K", "-D", "N=1,2,x"], ["compile", "K", "--tuned", ""],
    ["compile", "K", "--emit", "bogus"], ["compile", "K", "-O", "-1"],
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: " ".join(c)[:70])
def test_a_hostile_command_line_is_answered_with_a_status(case, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.ember").write_text(KERNEL)
    argv = [str(tmp_path / "k.ember") if a == "K" else str(tmp_path) if a == "DIR" else a for a in case]
    if argv[0] == "compile" and "-o" not in argv:
        argv += ["-o", str(tmp_path / "out.ptx")]
    try:
        code = main(argv)
    except SystemExit as e:             # argparse's usage errors
        code = e.code
    _, err = capsys.readouterr()
    assert code in (0, 1, 2), (code, err[-500:])
    assert "Traceback" not in err and "internal compiler error" not in err, err[-500:]
    if code:
        assert err.strip(), "a failure says why"
