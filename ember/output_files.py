"""Writing what `ember` makes, as gcc and clang write theirs.

- A path that names something other than a regular file - `/dev/null`, `/dev/stdout`, a
  FIFO, a terminal - is opened and written through: never replaced. (Run as root, a
  rename over `/dev/null` turns the machine's null device into a regular file.)
- A symbolic link is written through too: its target gets the new bytes, the link stays.
- A regular file (or a new one) is written under a unique temporary name beside it, then
  renamed over it, so that a build killed halfway leaves no half-written output newer
  than its inputs, and readers never see a partial file.
- A regular file that is one of the compile's inputs is refused (`-o k.ember` on
  `k.ember` would replace the source with its PTX).

Imports nothing of Ember's but `cli_support`: a cache-hit `ember compile` runs on little more.
"""

from __future__ import annotations

import errno
import os
import stat
import sys

from .cli_support import CommandError, UsageError


class OutputError(CommandError):
    """An output that cannot be written (the disk is full, a directory is read-only)."""


class OutputIsInput(UsageError):
    """An output path that names one of the inputs."""


def _regular_or_missing(path: str) -> bool:
    """True if `path` (following links) is a regular file or does not exist yet."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return True
    except OSError as e:
        raise OutputError(f"cannot write {path}: {e.strerror}") from None


def same_file(a: str, b: str) -> bool:
    """`a` and `b` are the same existing regular file (by device and inode)."""
    try:
        sa, sb = os.stat(a), os.stat(b)
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(sa.st_mode) and (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def check_not_input(path: str, inputs, what: str = "the output") -> None:
    """Refuse writing `path` when it is one of the regular files in `inputs`."""
    if path == "-":
        return
    for src in inputs:
        if src and src != "-" and same_file(path, src):
            raise OutputIsInput(f"{what} {path} is the input {src}: refusing to overwrite a source file")


def write_output(path: str, data, inputs=()) -> None:
    """Write text or bytes to `path` (`-`: standard output); see the module docstring.
    `inputs`: the files the output was made from (never overwritten)."""
    if path == "-":
        out = sys.stdout
        if isinstance(data, str):       # text through the text layer (a notebook's stdout has no bytes)
            out.write(data)
        else:
            out.flush()
            binary = getattr(out, "buffer", None)
            if binary is None:
                raise UsageError("standard output takes no binary data here: give -o a file")
            binary.write(bytes(data))
        out.flush()
        return
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    check_not_input(path, inputs)
    if os.path.isdir(path):
        raise UsageError(f"cannot write {path}: it is a directory")
    if not _regular_or_missing(path):
        _write_through(path, raw)
        return
    _replace(os.path.realpath(path), raw, path)


def _write_through(path: str, raw: bytes) -> None:
    try:
        with open(path, "wb") as f:
            f.write(raw)
    except OSError as e:
        raise OutputError(f"cannot write {path}: {e.strerror}") from None


def _replace(real: str, raw: bytes, shown: str) -> None:
    """Write `raw` to a new file beside `real`, then rename it over `real`."""
    directory = os.path.dirname(real) or "."
    name = os.path.basename(real)
    tmp = os.path.join(directory, f".{name}.{os.getpid()}.{os.urandom(6).hex()}.tmp")
    try:
        # O_EXCL | O_NOFOLLOW: a file of our own, never something already at that name
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_BINARY", 0), 0o666)
    except OSError as e:
        if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS) and os.access(real, os.W_OK):
            _write_through(real, raw)       # a writable file in a directory we cannot add to
            return
        raise OutputError(f"cannot write {shown}: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        os.replace(tmp, real)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise OutputError(f"cannot write {shown}: {e.strerror}") from None
