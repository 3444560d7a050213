"""ember.lit_config: a user's project gets Ember's lit setup from two lines of lit.cfg.py."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_users_lit_suite_runs_with_the_shipped_configuration(tmp_path):
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "lit.cfg.py").write_text("import ember.lit_config\nember.lit_config.configure(config)\n")
    (tests / "scale.ember").write_text(
        "// RUN: %ember compile %s -o - | FileCheck %s\n"
        "// CHECK: .entry scale\n"
        "// CHECK: mul.rn.f32\n"
        "kernel scale(x: *mut global f32, k: f32) block(32) { x[thread_idx.x] = x[thread_idx.x] * k; }\n")
    (tests / "errors.ember").write_text(
        "// RUN: %ember compile --verify-diagnostics %s\n"
        "kernel k(x: *mut global f32) block(32) { x[0] = nope; } // expected-error {{cannot find `nope`}}\n")
    (tests / "broken.ember").write_text(
        "// RUN: %ember compile %s -o - | FileCheck %s\n// CHECK: no such instruction\n"
        "kernel k(x: *mut global f32) block(32) { x[0] = 1.0; }\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-c", "import sys; from lit.main import main; sys.exit(main())",
                        "-v", str(tests)], capture_output=True, text=True, env=env)
    assert "PASS: ember :: scale.ember" in r.stdout and "PASS: ember :: errors.ember" in r.stdout
    assert "FAIL: ember :: broken.ember" in r.stdout and r.returncode == 1
