"""The documentation covers what the code defines: every diagnostic code, every IR op,
every builtin function, every CLI option and every pass."""

from pathlib import Path

from ember.diagnostics import CODES
from ember.frontend.builtins import BUILTINS
from ember.ir.ops import OPS
from ember.ir.passes import PASSES

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_every_diagnostic_code_is_documented():
    """docs/diagnostics.md's table is ember.diagnostic_codes, row for row."""
    from ember.diagnostic_codes import CODES as MEANINGS
    text = (DOCS / "diagnostics.md").read_text()
    rows = [f"| {c} | {title} | {meaning} |" for c, (title, meaning) in MEANINGS.items()]
    assert [r for r in rows if r not in text] == []
    assert list(CODES) == list(MEANINGS)


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
        assert f"`-O{level}`{' (default)' if level == 3 else ''} | {', '.join(names) or '(none)'} |" in text, level


def test_every_simulator_check_is_documented():
    text = (DOCS / "simulator.md").read_text()
    assert [c for c in CODES if c.startswith("S") and f"| {c} |" not in text] == []


def _options(parser) -> list:
    """Every option string of the parser and of its subcommands."""
    import argparse
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out += _options(sub)
        out += [o for o in action.option_strings if o not in ("-h", "--help")]
    return out


def test_every_cli_option_is_documented():
    from ember.cli import _parser
    text = (DOCS / "cli.md").read_text()
    import re
    missing = sorted({o for o in _options(_parser()) if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text)})
    assert missing == []
    for words in ["ember opt", "ember run", "ember cache", "rand:SHAPE", "EMBER_CACHE_DIR", "EMBER_NO_CACHE"]:
        assert words in text, words


def test_the_makefile_example_builds_and_rebuilds_what_an_edit_affects(tmp_path):
    """docs/examples/Makefile, as docs/build.md shows it."""
    import os
    import shutil
    import subprocess
    import sys
    import time
    make = shutil.which("make")
    if make is None:
        import pytest
        pytest.skip("no make")
    root = DOCS.parent
    shutil.copy(DOCS / "examples" / "Makefile", tmp_path / "Makefile")
    (tmp_path / "kernels" / "lib").mkdir(parents=True)
    (tmp_path / "kernels" / "lib" / "h.ember").write_text("fn two() -> f32 { return 2.0; }\n")
    (tmp_path / "kernels" / "a.ember").write_text(
        'import "lib/h.ember";\nkernel a(x: *mut global f32) block(32) { x[0] = two(); }\n')
    (tmp_path / "kernels" / "b.ember").write_text("kernel b(x: *mut global f32) block(32) { x[0] = 1.0; }\n")
    ember = f"{sys.executable} -m ember"
    env = dict(os.environ, PYTHONPATH=str(root))

    def build():
        r = subprocess.run([make, f"EMBER={ember}"], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        return sorted(line.split(" -o ")[1].split()[0] for line in r.stdout.splitlines() if " compile " in line)

    assert build() == ["gen/a.h", "gen/b.h"]
    assert build() == []
    old = time.time() - 100
    for f in tmp_path.rglob("*"):
        os.utime(f, (old, old))
    (tmp_path / "kernels" / "lib" / "h.ember").write_text("fn two() -> f32 { return 3.0; }\n")
    assert build() == ["gen/a.h"]
    (tmp_path / "kernels" / "lib" / "h.ember").unlink()        # -MP: a deleted import does not stop make
    (tmp_path / "kernels" / "a.ember").write_text("kernel a(x: *mut global f32) block(32) { x[0] = 4.0; }\n")
    assert build() == ["gen/a.h"]


def test_ir_reference_is_up_to_date():
    import subprocess
    import sys
    tool = Path(__file__).resolve().parents[1] / "tools" / "gen_ir_docs.py"
    r = subprocess.run([sys.executable, str(tool), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
