"""The `ember` command (in process, through ember.cli.main)."""

import pytest

from ember.cli import main

OK = "kernel k(x: *mut global f32) block(32) { x[thread_idx.x] = 1.0; }\n"


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_help_documents_every_option(capsys):
    code, out, _ = run(capsys, "compile", "--help")
    assert code == 0
    for opt in ["-o OUT", "--arch", "--ptx-version", "-D NAME=VALUE", "-O N", "--emit", "--check",
                "--validator", "--verify-diagnostics", "--time-stages", "`-` reads standard input",
                "--passes", "--print-after-all", "--time-passes", "--llvm-pipeline", "-MD", "-MMD", "-MF FILE",
                "-MT TARGET", "-MP", "--manifest", "--no-cache", "-j N", "--variants FILE", "--image",
                "--list-outputs", "-k NAME", "cubin", "fatbin", "header"]:
        assert opt in out, opt
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "compile" in out and "opt" in out and "cache" in out and "--cmake-dir" in out
    assert "Exit status" in out
    code, out, _ = run(capsys, "opt", "--help")
    assert code == 0 and "--passes" in out and "--print-after-all" in out and "-O3: inline" in out
    code, out, _ = run(capsys, "run", "--help")
    assert code == 0 and "--grid" in out and "--step-limit" in out and "rand:SHAPE" in out


def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith("ember 0.1.0") and "LLVM 22" in out


def test_outputs_and_extensions(tmp_path, capsys, monkeypatch):
    a, b = tmp_path / "a.ember", tmp_path / "b.ember"
    a.write_text(OK)
    b.write_text(OK.replace("1.0", "2.0"))
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "compile", str(a))[0] == 0 and (tmp_path / "a.ptx").exists()
    assert run(capsys, "compile", str(a), "--emit", "ir")[0] == 0 and (tmp_path / "a.ir").exists()
    assert run(capsys, "compile", str(a), str(b), "-o", "out", "--emit", "llvm")[0] == 0
    assert (tmp_path / "out" / "a.ll").exists() and (tmp_path / "out" / "b.ll").exists()
    code, out, _ = run(capsys, "compile", str(a), "-o", "-", "--emit", "ir-opt")
    assert code == 0 and out.startswith("kernel @k")


def test_program_errors_exit_1_and_report_all(tmp_path, capsys):
    f = tmp_path / "bad.ember"
    f.write_text("kernel k(x: *mut global f32) block(32) {\n  x[0] = a;\n  x[1] = b;\n}\n")
    code, _, err = run(capsys, "compile", str(f))
    assert code == 1 and err.count("error[E0101]") == 2 and "2 errors" in err and "Traceback" not in err


def test_usage_errors_exit_2(tmp_path, capsys):
    f = tmp_path / "ok.ember"
    f.write_text(OK)
    assert run(capsys, "compile", str(f), "--arch", "sm_13")[0] == 2
    assert run(capsys, "compile", str(f), "--ptx-version", "7.0", "--arch", "sm_90")[0] == 2
    assert run(capsys, "compile", str(tmp_path / "nope.ember"))[0] == 2
    assert run(capsys, "compile", str(f), "-D", "=3")[0] == 2
    assert run(capsys, "compile")[0] == 2
    assert run(capsys, "frobnicate")[0] == 2


def test_check_prints_resources(tmp_path, capsys):
    f = tmp_path / "ok.ember"
    f.write_text(OK)
    code, out, err = run(capsys, "compile", str(f), "--check", "-o", str(tmp_path / "ok.ptx"), "--arch", "sm_80")
    assert code == 0 and "valid PTX 7.0 for sm_80" in err and "k: " in err and "registers" in err
    assert out == ""            # a report, as ptxas -v gives: standard output stays the output's


def test_missing_toolkit_libraries_name_the_package(tmp_path, capsys, monkeypatch):
    """nvJitLink or nvFatbin not installed: exit 1 and the pip package that provides it."""
    from cuda.bindings import nvfatbin, nvjitlink

    class DynamicLibNotFoundError(RuntimeError):     # as cuda.pathfinder raises it
        pass

    def missing(*args):
        raise DynamicLibNotFoundError("Failure finding libnvfatbin.so")
    f = tmp_path / "ok.ember"
    f.write_text(OK)
    monkeypatch.setattr(nvfatbin, "create", missing)
    for emit in ("fatbin", "header"):
        code, _, err = run(capsys, "compile", str(f), "--emit", emit, "-o", str(tmp_path / f"ok.{emit}"), "--no-cache")
        assert code == 1 and "pip install nvidia-nvfatbin" in err and "bug" not in err
    monkeypatch.setattr(nvjitlink, "create", missing)
    code, _, err = run(capsys, "compile", str(f), "--emit", "cubin", "-o", str(tmp_path / "ok.cubin"), "--no-cache")
    assert code == 1 and "pip install nvidia-nvjitlink" in err and "bug" not in err


def test_verify_diagnostics_reports_mismatches(tmp_path, capsys):
    f = tmp_path / "v.ember"
    f.write_text("kernel k(x: *mut global f32) block(32) {\n"
                 "  x[0] = a; // expected-error {{cannot find `a`}}\n"
                 "  x[1] = 1.0; // expected-error {{never happens}}\n"
                 "  x[2] = b;\n}\n")
    code, _, err = run(capsys, "compile", "--verify-diagnostics", str(f))
    assert code == 1
    assert "expected error on line 3 not produced: {{never happens}}" in err
    assert "v.ember:4:10: unexpected error[E0101]" in err


def test_internal_errors_ask_for_a_bug_report(tmp_path, capsys, monkeypatch):
    from ember.lowering import llvm_lower

    def boom(*a, **k):
        raise RuntimeError("simulated bug")
    monkeypatch.setattr(llvm_lower, "lower_module", boom)
    f = tmp_path / "ok.ember"
    f.write_text(OK)
    code, _, err = run(capsys, "compile", str(f))
    assert code == 70 and "internal compiler error" in err and "report it" in err and "Traceback" not in err


def test_opt_runs_passes(tmp_path, capsys):
    f = tmp_path / "m.ir"
    f.write_text("kernel @k(%x: *mut global f32) {\n  %i = gpu.thread_idx x : u32\n  %v = mem.load %x[%i] : f32\n"
                 "  %s = math.exp2 %v : f32\n  mem.store %s, %x[%i] : f32\n  return\n}\n")
    code, out, _ = run(capsys, "opt", str(f), "-p", "expand-math")
    assert code == 0 and "math.exp2" not in out and "math.rint" in out
    assert run(capsys, "opt", str(f), "-p", "nonsense")[0] == 2


def test_compile_with_explicit_passes_and_llvm_pipeline(tmp_path, capsys):
    f = tmp_path / "k.ember"
    f.write_text("kernel k(x: *mut global f32) block(32) { x[thread_idx.x] = x[thread_idx.x] * 1.0; }\n")
    code, out, err = run(capsys, "compile", str(f), "--emit", "ir-opt", "-o", "-", "-p", "canonicalize,dce",
                         "--print-after-all")
    assert code == 0 and "arith.mul" not in out and "IR after canonicalize" in err and "IR after dce" in err
    assert run(capsys, "compile", str(f), "-p", "canonicalise")[0] == 2
    for pipeline in ("cleanup", "full"):
        code, out, _ = run(capsys, "compile", str(f), "-o", "-", "--llvm-pipeline", pipeline)
        assert code == 0 and ".entry k(" in out


RUN_SRC = """kernel scale(x: *global f32, y: *mut global f32, a: f32, n: u32) block(64) {
    let i = block_idx.x * 64 + thread_idx.x;
    if i < n { y[i] = a * x[i]; }
}
"""


def test_run_in_the_simulator(tmp_path, capsys):
    import numpy as np
    f = tmp_path / "s.ember"
    f.write_text(RUN_SRC)
    np.save(tmp_path / "x.npy", np.arange(100, dtype=np.float32))
    code, out, err = run(capsys, "run", str(f), "--grid", "2", f"x={tmp_path / 'x.npy'}", "y=zeros:100",
                         "a=0.5", "n=100", "--out", str(tmp_path / "out"))
    assert code == 0, err
    assert "y: (100,) f32" in out
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "y.npy"), np.arange(100, dtype=np.float32) * 0.5)


def test_run_reports_simulator_errors_with_the_line(tmp_path, capsys):
    f = tmp_path / "s.ember"
    f.write_text(RUN_SRC.replace("if i < n { y[i] = a * x[i]; }", "y[i] = a * x[i];"))
    code, _, err = run(capsys, "run", str(f), "--grid", "2", "x=ones:100", "y=zeros:100", "a=1", "n=100")
    assert code == 1 and "error[S0001]" in err and "s.ember:3:" in err and "block (1, 0, 0)" in err


def test_run_usage_errors(tmp_path, capsys):
    f = tmp_path / "s.ember"
    f.write_text(RUN_SRC)
    base = ["run", str(f), "--grid", "2"]
    code, _, err = run(capsys, *base, "x=ones:100", "y=zeros:100", "a=1")
    assert code == 2 and "missing n" in err
    code, _, err = run(capsys, *base, "x=ones:100", "y=zeros:100", "a=1", "n=1.5")
    assert code == 2 and "expected an integer" in err
    code, _, err = run(capsys, *base, "x=bogus:100", "y=zeros:100", "a=1", "n=100")
    assert code == 2 and "rand:SHAPE" in err
    code, _, err = run(capsys, *base, "x=ones:100", "y=ones:100", "a=1", "n=-1")
    assert code == 2 and "out of range" in err


@pytest.mark.parametrize("extra, message", [
    (["x=zeros:99999999999999"], "at most 1 GiB"),
    (["a=1e39"], "1e+39 overflows f32"),
    (["a=2", "a=3"], "`a` is given twice"),
    (["=5"], "got `=5`"),
    (["x=SRC"], "expected FILE.npy"),
    (["x=BAD.npy"], "cannot load"),
    (["x=MISSING.npy"], "no such file"),
    (["--step-limit", "0"], "--step-limit must be positive"),
    (["--out", "SRC"], "names a file"),
    (["--block", "1,1,65"], "compiled for block"),
    (["--grid", "1,1,70000"], "above the limit of 65535"),
])
def test_run_argument_errors_are_usage_errors(tmp_path, capsys, extra, message):
    """Every bad `ember run` argument is a usage error (exit 2) with a message, never an
    internal error or a silently changed value."""
    f = tmp_path / "s.ember"
    f.write_text(RUN_SRC)
    (tmp_path / "bad.npy").write_bytes(b"not a numpy file")
    given = dict(x="x=ones:100", y="y=zeros:100", a="a=1", n="n=100")
    for e in extra:
        if "=" in e and not e.startswith("-"):
            given.pop(e.split("=")[0], None)
    args = [e.replace("SRC", str(f)).replace("BAD.npy", str(tmp_path / "bad.npy"))
             .replace("MISSING.npy", str(tmp_path / "nope.npy")) for e in extra]
    code, _, err = run(capsys, "run", str(f), "--grid", "2", *given.values(), *args)
    assert code == 2 and message in err, err


def test_run_one_kernel_of_a_file_whose_other_kernel_needs_a_define(tmp_path, capsys):
    """--kernel checks only that kernel; and the simulator needs no lowering (a pass list
    that cannot be lowered does not matter to it)."""
    f = tmp_path / "two.ember"
    f.write_text("kernel a<const N: u32>(y: *mut global f32) block(32) { y[0] = f32(N); }\n"
                 "kernel b(y: *mut global f32) block(32) { y[thread_idx.x] = exp(y[thread_idx.x]); }\n")
    code, out, err = run(capsys, "run", str(f), "--kernel", "b", "--grid", "1", "y=ones:32")
    assert code == 0 and "2.718282" in out, err
    code, _, err = run(capsys, "run", str(f), "--kernel", "c", "--grid", "1", "y=ones:32")
    assert code == 1 and "has no kernel `c`" in err and "its kernels: a, b" in err


def test_a_define_no_kernel_has_is_named_by_run_and_tune_space_as_by_compile(tmp_path, capsys):
    """-D WARP=8 for WARPS (a typo) ran the defaults silently in `ember run --kernel` and
    `ember tune-space` (until 2026-11-27) where `ember compile` warns (W0001); a define of
    the file's other kernel is not a typo, and is not named."""
    f = tmp_path / "two.ember"
    f.write_text("kernel a<const N: u32 = 2 tune [2, 4]>(y: *mut global f32) block(32) { y[0] = f32(N); }\n"
                 "kernel b<const W: u32 = 1>(y: *mut global f32) block(32) { y[thread_idx.x] = f32(W); }\n")
    code, _, err = run(capsys, "run", str(f), "--kernel", "b", "--grid", "1", "y=ones:32", "-D", "WW=3")
    assert code == 0 and "warning[W0001]: `-D WW` is not a const parameter of any kernel" in err
    assert "similar name exists: `W`" in err
    code, _, err = run(capsys, "run", str(f), "--kernel", "b", "--grid", "1", "y=ones:32", "-D", "N=3")
    assert code == 0 and "W0001" not in err                 # kernel a's
    code, out, err = run(capsys, "tune-space", str(f), "-D", "NN=3")
    assert code == 0 and "`-D NN` is not a const parameter" in err and "kernel a: 2 of 2" in out
    code, _, err = run(capsys, "tune-space", str(f), "-D", "W=3")
    assert code == 0 and "W0001" not in err


def test_a_pass_list_with_or_without_expand_math_gives_the_same_ptx(tmp_path, capsys):
    """The lowering emits the accurate math ops' expansions that expand-math would copy in."""
    f = tmp_path / "e.ember"
    f.write_text("kernel b(y: *mut global f32) block(32) { y[thread_idx.x] = exp(y[thread_idx.x]); }\n")
    for passes, out in (("canonicalize", "a.ptx"), ("canonicalize,expand-math", "b.ptx")):
        code, _, err = run(capsys, "compile", str(f), "-p", passes, "--no-cache", "-o", str(tmp_path / out))
        assert code == 0, err
    assert (tmp_path / "a.ptx").read_text() == (tmp_path / "b.ptx").read_text()


def test_inputs_with_one_stem_do_not_overwrite_each_other(tmp_path, capsys):
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "k.ember").write_text("kernel k(y: *mut global f32) block(32) { y[0] = 1.0; }\n")
    code, _, err = run(capsys, "compile", str(tmp_path / "a" / "k.ember"), str(tmp_path / "b" / "k.ember"),
                       "-o", str(tmp_path / "out"))
    assert code == 2 and "would both be written to" in err
    (tmp_path / "file").write_text("")
    code, _, err = run(capsys, "compile", str(tmp_path / "a" / "k.ember"), str(tmp_path / "b" / "k.ember"),
                       "-o", str(tmp_path / "file"))
    assert code == 2 and "names a directory" in err


def test_the_command_exits_with_mains_status(tmp_path):
    """`python -m ember` (and the `ember` script) end with os._exit after flushing: the status,
    standard output and standard error are those of main()."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root))
    (tmp_path / "ok.ember").write_text(OK)
    (tmp_path / "bad.ember").write_text("kernel k() { let x: u32 = 1.0; }\n")
    for args, status in [(["ok.ember", "-o", "-"], 0), (["bad.ember"], 1), (["--arch", "sm_1"], 2)]:
        r = subprocess.run([sys.executable, "-m", "ember", "compile", *args], cwd=tmp_path, env=env,
                           capture_output=True, text=True)
        assert r.returncode == status, r.stderr
        if status == 0:
            assert r.stdout.startswith("//") and r.stdout.rstrip().endswith("}")
        else:
            assert r.stderr.strip()


def test_options_are_never_abbreviated(tmp_path, capsys):
    f = tmp_path / "ok.ember"
    f.write_text(OK)
    code, _, err = run(capsys, "compile", str(f), "--emi", "ir", "-o", "-")
    assert code == 2 and "unrecognized arguments: --emi" in err
    code, out, _ = run(capsys, "compile", str(f), "-MM")        # -MM, not an abbreviated -MMD
    assert code == 0 and out.startswith("ok.ptx: ") and "std/" not in out


def test_an_unknown_option_prints_the_commands_usage(tmp_path, capsys):
    f = tmp_path / "ok.ember"
    f.write_text(OK)
    code, _, err = run(capsys, "compile", str(f), "--frobnicate")
    assert code == 2 and err.startswith("usage: ember compile") and "--frobnicate" in err
    code, _, err = run(capsys, "run", str(f), "--grid", "1", "--frobnicate")
    assert code == 2 and err.startswith("usage: ember run")


def test_response_files_are_read_like_gccs(tmp_path, capsys):
    f = tmp_path / "a b.ember"
    f.write_text(OK)
    rsp = tmp_path / "args.rsp"
    rsp.write_text(f'"{f}" --emit ir  # the IR\n-o -\n')
    code, out, _ = run(capsys, "compile", f"@{rsp}")
    assert code == 0 and "kernel @k" in out
    code, _, err = run(capsys, "compile", f"@{tmp_path / 'missing.rsp'}")
    assert code == 2 and "no such file" in err and "missing.rsp" in err
    # read as a source is: a device refused (@/dev/zero read until memory ran out), and a
    # response file that names itself stopped (it recursed until the stack ran out: exit 70)
    code, _, err = run(capsys, "compile", "@/dev/zero")
    assert code == 2 and "/dev/zero is a device, not a response file" in err
    (tmp_path / "self.rsp").write_text(f"@{tmp_path / 'self.rsp'}\n")
    code, _, err = run(capsys, "compile", f"@{tmp_path / 'self.rsp'}")
    assert code == 2 and "response files nested more than 16 deep" in err


def test_dependency_rules_as_gcc_writes_them(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lib.ember").write_text('import "std/reduce.ember";\nfn twice(a: f32) -> f32 { return a * 2.0; }\n')
    (tmp_path / "k.ember").write_text('import "lib.ember";\n' + OK.replace("1.0", "twice(1.0)"))
    code, out, _ = run(capsys, "compile", "k.ember", "-M")
    assert code == 0 and out.startswith("k.ptx: \\\n  k.ember \\\n  lib.ember") and "reduce.ember" in out
    assert not (tmp_path / "k.ptx").exists()
    code, out, _ = run(capsys, "compile", "k.ember", "-MM", "-MT", "$(OUT)", "-MQ", "a $b")
    assert code == 0 and out.startswith("$(OUT) a\\ $$b: ") and "reduce.ember" not in out
    code, _, _ = run(capsys, "compile", "k.ember", "-M", "-MF", "k.d")
    assert code == 0 and (tmp_path / "k.d").read_text().startswith("k.ptx:")
    assert run(capsys, "compile", "k.ember", "-M", "-MD")[0] == 2


def test_werror_and_w(tmp_path, capsys):
    f = tmp_path / "w.ember"
    f.write_text("kernel k(x: *mut global f32) block(32) { return; x[0] = 1.0; }\n")   # W0002
    out = tmp_path / "w.ptx"
    code, _, err = run(capsys, "compile", str(f), "-o", str(out))
    assert code == 0 and "warning[W0002]" in err and out.exists()
    out.unlink()
    code, _, err = run(capsys, "compile", str(f), "-o", str(out), "-Werror")
    assert code == 1 and "error[W0002]" in err and "[-Werror]" in err and not out.exists()
    code, _, err = run(capsys, "compile", str(f), "-o", str(out), "-w")
    assert code == 0 and err == ""


def test_diagnostics_in_colour_only_when_asked_or_on_a_terminal(tmp_path, capsys, monkeypatch):
    f = tmp_path / "bad.ember"
    f.write_text("kernel k(x: *mut global f32) block(32) { x[0] = nope; }\n")
    code, _, err = run(capsys, "compile", str(f), "-o", str(tmp_path / "o.ptx"), "--color", "always")
    assert code == 1 and "\x1b[1;31merror[E0101]" in err
    code, _, err = run(capsys, "compile", str(f), "-o", str(tmp_path / "o.ptx"))     # not a terminal
    assert "\x1b[" not in err
    from ember.artifacts import command
    monkeypatch.setattr("sys.stderr.isatty", lambda: True, raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    assert command._color("auto") is False
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("TERM", "xterm")
    assert command._color("auto") is True


def test_explain_prints_a_codes_meaning(capsys):
    code, out, _ = run(capsys, "explain", "e0201")
    assert code == 0 and out.startswith("E0201: mismatched types (error)") and "implicit conversions" in out
    code, _, err = run(capsys, "explain", "E9999")
    assert code == 2 and "no diagnostic code" in err


def test_completion_scripts_come_from_the_parser(capsys):
    for shell in ("bash", "zsh"):
        code, out, _ = run(capsys, "completion", shell)
        assert code == 0 and "-lineinfo" in out and "--emit" in out
    code, out, _ = run(capsys, "completion", "tcsh")
    assert code == 0 and "compile" in out and "completion" in out


def test_the_man_page_is_current():
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "tools/gen_man_page.py", "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_ember_opt_help_lists_the_passes(capsys):
    code, out, _ = run(capsys, "opt", "--help")
    assert code == 0 and all(p in out for p in ("canonicalize", "vectorize", "expand-math"))


def test_ember_run_takes_bf16_buffers(tmp_path, capsys):
    """bf16 buffers are ml_dtypes.bfloat16 arrays: made by arange:/rand:, or read from an
    .npy file (which np.save writes as 2-byte voids)."""
    import ml_dtypes
    import numpy as np
    f = tmp_path / "b.ember"
    f.write_text("kernel k(x: *mut global bf16) block(32) { x[thread_idx.x] = x[thread_idx.x] * bf16(2.0); }\n")
    code, out, err = run(capsys, "run", str(f), "--grid", "1", "x=arange:32", "--out", str(tmp_path / "o"))
    assert code == 0, err
    assert (np.load(tmp_path / "o" / "x.npy").view(ml_dtypes.bfloat16).astype(np.float32) == 2 * np.arange(32)).all()
    np.save(tmp_path / "in.npy", np.arange(32).astype(ml_dtypes.bfloat16))
    code, out, err = run(capsys, "run", str(f), "--grid", "1", f"x={tmp_path / 'in.npy'}")
    assert code == 0 and "x: (32,) bf16 [0 2 4 6" in out


def test_a_source_that_never_ends_is_refused(tmp_path):
    """/dev/zero and /dev/urandom as the source, or on standard input, read until memory ran
    out (MemoryError, exit 70): a device is refused, and a pipe past 64 Mi characters."""
    import subprocess
    import sys
    for dev in ("/dev/zero", "/dev/urandom"):
        r = subprocess.run([sys.executable, "-m", "ember", "compile", dev, "-o", "o.ptx"], cwd=tmp_path,
                           capture_output=True, text=True)
        assert r.returncode == 2 and f"{dev} is a device, not a source file" in r.stderr
    with open("/dev/zero", "rb") as zero:
        r = subprocess.run([sys.executable, "-m", "ember", "compile", "-", "-o", "o.ptx"], cwd=tmp_path, stdin=zero,
                           capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "standard input holds more than 64 Mi characters" in r.stderr
    assert not (tmp_path / "o.ptx").exists()
