"""Runs the lit + FileCheck suite under tests/lit (so `pytest` runs everything)."""

import os
import subprocess
import sys

HERE = os.path.dirname(__file__)


def test_lit_suite():
    r = subprocess.run([sys.executable, "-c", "import sys; from lit.main import main; sys.exit(main())",
                        "-q", "--no-progress-bar", os.path.join(HERE, "lit")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-20000:] + r.stderr[-5000:]
