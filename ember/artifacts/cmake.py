"""Where Ember's CMake package lies (`ember --cmake-dir`): EmberConfig.cmake, which
find_package(Ember) reads, ships inside the Python package."""

from __future__ import annotations

import os


def config_dir() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "cmake")
