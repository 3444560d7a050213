# lit configuration for Ember's FileCheck tests (run by tests/test_lit.py, or `lit tests/lit`):
# the reusable one users' tests take too (ember/lit_config.py).
import os
import sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, root)
import ember.lit_config  # noqa: E402

config.test_source_root = os.path.dirname(os.path.abspath(__file__))  # noqa: F821
ember.lit_config.configure(config, name="ember", root=root)  # noqa: F821
config.environment["PYTHONPATH"] = root + os.pathsep + config.environment.get("PYTHONPATH", "")  # noqa: F821
