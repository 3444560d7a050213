"""Where the kernels Ember ships are: kernels_src/ of the source tree, installed as the
package `ember_kernels` (pyproject.toml maps it), with their tuned tables (tuned/) and
hand-written PTX baselines (baselines/). ember.ops, `ember tune` and the tuned tables read
them from here, in a checkout and in an installed wheel alike - always the ones that came
with this `ember` (a checkout's own, or the wheel's beside it), never another
installation's found first on the path."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def _kernels_dir() -> Path:
    home = Path(__file__).resolve().parents[1]
    for beside in (home / "kernels_src", home / "ember_kernels"):      # a checkout; a wheel's site-packages
        if beside.is_dir():
            return beside
    try:                                                                # an editable install mapping it elsewhere
        spec = importlib.util.find_spec("ember_kernels")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return home / "kernels_src"


KERNELS_SRC = _kernels_dir()
