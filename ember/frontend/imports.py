"""`import "path.ember";`: the device functions of other files.

A path is relative to the directory of the file that imports it (the current directory
for source given as text); a path that starts with `std/` names a file of Ember's
standard library (`ember/std/`, docs/stdlib.md). Every file is read and parsed once,
whatever the number of paths that reach it, so imports may form cycles. An imported file
contributes its `fn`s (and what it imports); its kernels are not imported. Errors in an
imported file point into that file.
"""

from __future__ import annotations

import os

from ..diagnostics import Diagnostics
from ..import_paths import STD_PREFIX, std_dir
from ..import_paths import locate as _locate
from ..source import SourceFile
from . import ast as A


def std_modules() -> list[str]:
    return sorted(f"std/{n}" for n in os.listdir(std_dir()) if n.endswith(".ember"))


def locate(path: str, importer: SourceFile) -> str:
    return _locate(path, importer.path)


def _read(full: str, imp: A.Import, diags: Diagnostics) -> SourceFile | None:
    help_ = None
    if imp.path.startswith(STD_PREFIX):
        help_ = "the standard library has: " + ", ".join(f'"{m}"' for m in std_modules())
    elif not imp.path.endswith(".ember"):
        help_ = f'import a file by its name, e.g. `import "{imp.path}.ember";`'
    if "\0" in full:
        diags.error("E0110", f"cannot import `{imp.path!r}`: a path cannot contain a NUL character", imp.path_span)
        return None
    if os.path.exists(full) and not os.path.isdir(full) and not os.path.isfile(full):
        # a device or a pipe (/dev/zero would never end)
        diags.error("E0110", f"cannot import `{imp.path}`: it is not a regular file", imp.path_span)
        return None
    try:
        with open(full, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        where = "the standard library has no such file" if imp.path.startswith(STD_PREFIX) else \
            f"no such file ({os.path.relpath(full)})"
        diags.error("E0110", f"cannot import `{imp.path}`: {where}", imp.path_span, help=help_)
        return None
    except IsADirectoryError:
        diags.error("E0110", f"cannot import `{imp.path}`: it is a directory", imp.path_span)
        return None
    except UnicodeDecodeError:
        diags.error("E0110", f"cannot import `{imp.path}`: it is not UTF-8 text", imp.path_span)
        return None
    except OSError as e:
        diags.error("E0110", f"cannot import `{imp.path}`: {e.strerror}", imp.path_span)
        return None
    name = imp.path if imp.path.startswith(STD_PREFIX) else os.path.relpath(full)
    return SourceFile(name.replace(os.sep, "/"), text, full)


def resolve(module: A.Module, diags: Diagnostics, parse) -> list[SourceFile]:
    """Parse every file `module` imports, directly or not, and append their device
    functions to `module.items` (in the order the imports are met). Returns every file
    read, the importing one first (what a depfile lists)."""
    files = [module.file]
    seen = {module.file.path or module.file.name}
    pending = [module]
    imported: list = []
    while pending:
        m = pending.pop(0)
        for item in m.items:
            if not isinstance(item, A.Import):
                continue
            full = locate(item.path, m.file)
            if full in seen:
                continue
            seen.add(full)
            file = _read(full, item, diags)
            if file is None:
                continue
            files.append(file)
            sub = parse(file, diags)
            module.broken_items |= sub.broken_items
            imported += [i for i in sub.items if isinstance(i, A.FnDef)]
            pending.append(sub)
    module.items = [i for i in module.items if not isinstance(i, A.Import)] + imported
    return files
