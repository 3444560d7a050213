"""A lit configuration for regression tests of Ember kernels and programs - the one Ember's
own tests/lit uses - so that a project's tests need not copy it:

    # my_project/tests/lit.cfg.py
    import ember.lit_config
    ember.lit_config.configure(config)

Then `lit my_project/tests` runs every `.ember`, `.ir` and `.test` file there: its `// RUN:`
lines may use `%ember` (this Python's `ember` command), `%python`, `FileCheck` (the PyPI
`filecheck`) and `%s`/`%t` as lit defines them; `--verify-diagnostics` files check
expected errors. docs/testing.md shows a whole example. Needs `lit` and `filecheck`
(pip install lit filecheck, or Ember's `[test]` extra).
"""

from __future__ import annotations

import os
import shutil
import sys


def configure(config, name: str | None = None, suffixes=(".ember", ".ir", ".test"), root: str | None = None) -> None:
    """Fill in a lit `config` (the object lit hands to lit.cfg.py): the test format, the
    suffixes, where outputs go (an `Output` directory beside the tests), the environment,
    and the substitutions `%ember`, `%python`, `FileCheck` and `%root` (`root`, default the
    test directory's parent)."""
    import lit.formats
    given = getattr(config, "test_source_root", None)
    here = os.path.abspath(given) if given else os.path.dirname(os.path.abspath(_caller_dir()))
    config.name = name or (config.name if getattr(config, "name", "<unnamed>") != "<unnamed>" else "ember")
    config.test_format = lit.formats.ShTest(execute_external=False)
    config.suffixes = list(suffixes)
    config.test_source_root = here
    config.test_exec_root = os.path.join(here, "Output")
    config.excludes = ["lit.cfg.py", "Inputs", "Output"]
    python = sys.executable
    config.environment["PYTHONDONTWRITEBYTECODE"] = "1"
    for var in ("HOME", "TMPDIR", "PATH", "PYTHONPATH", "EMBER_CACHE_DIR", "EMBER_NO_CACHE", "EMBER_INCLUDE_PATH"):
        if var in os.environ:
            config.environment[var] = os.environ[var]
    filecheck = shutil.which("filecheck") or os.path.join(os.path.dirname(python), "filecheck")
    config.substitutions.append(("%ember", f'"{python}" -m ember'))
    config.substitutions.append(("%python", f'"{python}"'))
    config.substitutions.append(("FileCheck", f'"{filecheck}"'))
    config.substitutions.append(("%root", root or os.path.dirname(here)))


def _caller_dir() -> str:
    """The directory of the lit.cfg.py that called configure (lit executes it as a file)."""
    frame = sys._getframe(2)
    return frame.f_globals.get("__file__", os.getcwd())
