"""`import "path.ember";`: the device functions of other files.

Where a path leads is ember.import_paths (the importing file's directory, then the search
directories of `-I` and EMBER_INCLUDE_PATH; `std/` for the standard library). Every file
is read and parsed once, whatever the number of paths that reach it (a file is its real
path: `./`, `../` and symbolic links resolved), so imports may form cycles. An imported
file contributes its `fn`s (and what it imports); its kernels are not imported. Errors in
an imported file point into that file. The functions of an imported file are checked and
compiled only if something calls them (ember.frontend.checker).
"""

from __future__ import annotations

import os

from ..diagnostics import Diagnostics
from ..import_paths import STD_PREFIX, ImportPathError, identity, std_dir
from ..import_paths import locate as _locate
from ..source import SourceFile
from . import ast as A


def std_modules() -> list[str]:
    return sorted(f"std/{n}" for n in os.listdir(std_dir()) if n.endswith(".ember"))


def locate(path: str, importer: SourceFile, search=()) -> str:
    return _locate(path, importer.path, search)


def _read(full: str, imp: A.Import, diags: Diagnostics, search=()) -> SourceFile | None:
    help_ = None
    if imp.path.startswith(STD_PREFIX):
        help_ = "the standard library has: " + ", ".join(f'"{m}"' for m in std_modules())
    elif not imp.path.endswith(".ember"):
        help_ = f'import a file by its name, e.g. `import "{imp.path}.ember";`'
    elif search:
        help_ = "also looked in: " + ", ".join(search)
    else:
        help_ = "a path is relative to the importing file; `-I DIR` (or EMBER_INCLUDE_PATH) adds directories to look in"
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


def resolve(module: A.Module, diags: Diagnostics, parse, search=()) -> list[SourceFile]:
    """Parse every file `module` imports, directly or not, and append their device
    functions to `module.items` (in the order the imports are met). Returns every file
    read, the importing one first (what a depfile lists); `module.import_edges` records
    where each import statement led (what the compile cache re-checks)."""
    files = [module.file]
    index = {identity(module.file.path) if module.file.path else module.file.name: 0}
    pending = [(module, 0)]
    imported: list = []
    edges: list = []
    while pending:
        m, at = pending.pop(0)
        for item in m.items:
            if not isinstance(item, A.Import):
                continue
            try:
                full = locate(item.path, m.file, search)
            except ImportPathError as e:
                diags.error("E0110", f"cannot import `{item.path}`: {e}", item.path_span,
                            help="the standard library has: " + ", ".join(f'"{n}"' for n in std_modules()))
                continue
            key = identity(full)
            if key in index:
                edges.append((at, item.path, index[key]))
                continue
            file = _read(full, item, diags, search)
            if file is None:
                continue
            index[key] = len(files)
            edges.append((at, item.path, len(files)))
            files.append(file)
            sub = parse(file, diags)
            module.broken_items |= sub.broken_items
            imported += [i for i in sub.items if isinstance(i, A.FnDef)]
            pending.append((sub, index[key]))
    module.items = [i for i in module.items if not isinstance(i, A.Import)] + imported
    module.import_edges = edges
    return files
