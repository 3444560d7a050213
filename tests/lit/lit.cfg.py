# lit configuration for Ember's FileCheck tests (run by tests/test_lit.py, or `lit tests/lit`).
import os
import shutil
import sys

import lit.formats

config.name = "ember"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".ember", ".ir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(__file__), "Output")
config.excludes = ["lit.cfg.py", "Inputs", "Output"]

python = sys.executable
root = os.path.dirname(os.path.dirname(config.test_source_root))
config.environment["PYTHONPATH"] = root + os.pathsep + config.environment.get("PYTHONPATH", "")
config.environment["PYTHONDONTWRITEBYTECODE"] = "1"
for var in ("HOME", "TMPDIR", "PATH"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

filecheck = shutil.which("filecheck") or os.path.join(os.path.dirname(python), "filecheck")
config.substitutions.append(("%ember", f'"{python}" -m ember'))
config.substitutions.append(("%python", f'"{python}"'))
config.substitutions.append(("FileCheck", f'"{filecheck}"'))
config.substitutions.append(("%root", root))
