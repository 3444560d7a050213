"""Where an `import "PATH";` leads: one home for the rule, read by the front end (which
parses the files) and by the compile cache and dependency files (which only hash or list
them, and must not pay for importing the front end).

- `std/NAME.ember` names a file of Ember's standard library (`ember/std/`); the path must
  stay inside it and name an `.ember` file (`std/../cli.py` is refused).
- Any other path is looked up relative to the directory of the importing file (the
  current directory for source given as text), then in each search directory in order:
  the `-I DIR` options (`include_dirs` of the API), then the directories of the
  environment variable EMBER_INCLUDE_PATH (separated by the platform's path separator, as
  CPATH is). The first that exists is read.
- A file is identified by its real path (links and `./`, `../` resolved), so a file reached
  by two spellings or through a symbolic link is read once.

Imports nothing of Ember's.
"""

from __future__ import annotations

import os

STD_PREFIX = "std/"
ENVIRONMENT = "EMBER_INCLUDE_PATH"


class ImportPathError(ValueError):
    """A path that no import may name (a `std/` path leaving the standard library)."""


def std_dir() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "std")


def base_dir(importer_path: str | None) -> str:
    """The directory the imports of a file are relative to."""
    return os.path.dirname(importer_path) if importer_path else os.getcwd()


def search_dirs(include_dirs=()) -> list:
    """The search directories after the importer's own: `include_dirs`, then
    EMBER_INCLUDE_PATH's (absolute, in order, without repeats)."""
    dirs = list(include_dirs or ())
    env = os.environ.get(ENVIRONMENT, "")
    dirs += [d for d in env.split(os.pathsep) if d]
    out: list = []
    for d in dirs:
        full = os.path.abspath(os.path.expanduser(d))
        if full not in out:
            out.append(full)
    return out


def locate(path: str, importer_path: str | None, search: list | tuple = ()) -> str:
    """The file `import "path";` reads, from a file at `importer_path` (None: text), with
    the search directories `search` (see search_dirs). A relative path found nowhere gives
    the importer's candidate, which the reader then reports as missing."""
    if path.startswith(STD_PREFIX):
        root = std_dir()
        full = os.path.normpath(os.path.join(root, path[len(STD_PREFIX):]))
        if not full.startswith(os.path.join(root, "")) or not full.endswith(".ember"):
            raise ImportPathError(f"`{path}` is not a file of the standard library: `std/` paths name "
                                  "its `.ember` files and stay inside it")
        return full
    if os.path.isabs(path):
        return os.path.normpath(path)
    first = os.path.normpath(os.path.join(base_dir(importer_path), path))
    if os.path.exists(first) or not search:
        return first
    for d in search:
        candidate = os.path.normpath(os.path.join(d, path))
        if os.path.exists(candidate):
            return candidate
    return first


def identity(full: str) -> str:
    """What makes two paths the same file: the real path (a path no file can have, with a
    NUL, is its own)."""
    return full if "\0" in full else os.path.realpath(full)
