"""The documentation covers what the code defines: every diagnostic code, every IR op,
every builtin function, every CLI option and every pass."""

from pathlib import Path

from ember.diagnostics import CODES
from ember.frontend.builtins import BUILTINS
from ember.ir.ops import OPS
from ember.ir.passes import PASSES

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_every_diagnostic_code_is_documented():
    text = (DOCS / "diagnostics.md").read_text()
    assert [c for c in CODES if f"| {c} |" not in text] == []


def test_every_op_is_documented():
    text = (DOCS / "ir.md").read_text()
    missing = [n for n in OPS if f"`{n}`" not in text]
    assert missing == [], f"run python tools/gen_ir_docs.py (docs/ir.md lacks {missing})"


def test_every_builtin_is_documented():
    text = (DOCS / "language.md").read_text()
    missing = [b for b in BUILTINS if b not in text]
    assert missing == [], f"add these builtins to the tables of docs/language.md: {missing}"


def test_every_pass_and_pipeline_is_documented():
    from ember.ir.passes import PIPELINES
    text = (DOCS / "passes.md").read_text()
    assert [p for p in PASSES if f"| `{p}` |" not in text] == []
    for level, names in PIPELINES.items():
        assert f"`-O{level}`{' (default)' if level == 3 else ''} | {', '.join(names)} |" in text, level


def test_every_simulator_check_is_documented():
    text = (DOCS / "simulator.md").read_text()
    assert [c for c in CODES if c.startswith("S") and f"| {c} |" not in text] == []


def test_every_cli_option_is_documented():
    text = (DOCS / "cli.md").read_text()
    for opt in ["-o OUT", "--arch", "--ptx-version", "-D NAME=VALUE", "-O N", "--emit", "--check",
                "--validator", "--verify-diagnostics", "--time-stages", "ember opt", "-p PASS",
                "--print-after-all", "--time-passes", "--llvm-pipeline", "ember run", "--grid",
                "--step-limit", "--no-race-check", "rand:SHAPE"]:
        assert opt in text, opt


def test_ir_reference_is_up_to_date():
    import subprocess
    import sys
    tool = Path(__file__).resolve().parents[1] / "tools" / "gen_ir_docs.py"
    r = subprocess.run([sys.executable, str(tool), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
