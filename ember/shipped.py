"""Where the kernels Ember ships are: kernels_src/ of the source tree, installed as the
package `ember_kernels` (pyproject.toml maps it), with their tuned tables (tuned/) and
hand-written PTX baselines (baselines/). ember.ops, `ember tune` and the tuned tables read
them from here, in a checkout and in an installed wheel alike."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def _kernels_dir() -> Path:
    try:
        spec = importlib.util.find_spec("ember_kernels")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(__file__).resolve().parents[1] / "kernels_src"      # a checkout on sys.path, not installed


KERNELS_SRC = _kernels_dir()
