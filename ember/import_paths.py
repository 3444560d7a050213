"""Where an `import "PATH";` leads: one home for the rule, read by the front end (which
parses the files) and by the compile cache and dependency files (which only hash or list
them, and must not pay for importing the front end).

A path that starts with `std/` names a file of Ember's standard library (`ember/std/`);
any other path is relative to the directory of the importing file (the current directory
for source given as text). Imports nothing of Ember's.
"""

from __future__ import annotations

import os

STD_PREFIX = "std/"


def std_dir() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "std")


def base_dir(importer_path: str | None) -> str:
    """The directory the imports of a file are relative to."""
    return os.path.dirname(importer_path) if importer_path else os.getcwd()


def locate(path: str, importer_path: str | None) -> str:
    """The file `import "path";` reads, from a file at `importer_path` (None: text)."""
    if path.startswith(STD_PREFIX):
        return os.path.join(std_dir(), path[len(STD_PREFIX):])
    return os.path.normpath(os.path.join(base_dir(importer_path), path))
