"""Dependency files in the format of gcc's -MD/-MMD (read by Make's `-include` and by
Ninja's `deps = gcc`): one rule whose prerequisites are every file a compile read - the
source and each file it imports, directly or not - so that an edit rebuilds exactly the
outputs it affects."""

from __future__ import annotations

import os

from .import_paths import std_dir


def escape(path: str) -> str:
    """A path as Make reads it in a rule: spaces and # escaped with a backslash, $ doubled."""
    return path.replace("\\", "\\\\").replace(" ", "\\ ").replace("#", "\\#").replace("$", "$$")


def shown(path: str, cwd: str) -> str:
    """The path relative to `cwd` when it lies inside it (what a build directory expects), else absolute."""
    full = os.path.abspath(path)
    rel = os.path.relpath(full, cwd)
    return full if rel == ".." or rel.startswith(".." + os.sep) else rel


def dependencies(sources: list, user_only: bool) -> list:
    """The files read, in the order read; `user_only` (-MMD) leaves out the standard library."""
    std = os.path.join(os.path.abspath(std_dir()), "")
    out = []
    for s in sources:
        if not s or not os.path.isfile(s):        # standard input has no file to depend on
            continue
        if user_only and os.path.abspath(s).startswith(std):
            continue
        if s not in out:
            out.append(s)
    return out


def rule(targets: list, deps: list, cwd: str, phony: bool = False) -> str:
    """`targets: deps` (the targets already in Make's syntax), one prerequisite per line; with `phony` (-MP) an empty rule per
    prerequisite after the first too, so that a deleted import does not stop Make."""
    names = [shown(d, cwd) for d in deps]
    head = " ".join(targets) + ":"              # as given: -MT's verbatim, -MQ's quoted
    text = head + "".join(f" \\\n  {escape(n)}" for n in names) + "\n"
    if phony:
        text += "".join(f"\n{escape(n)}:\n" for n in names[1:])
    return text
