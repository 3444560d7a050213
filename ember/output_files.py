"""Writing what `ember` makes - only into files of its own.

- A path that names the null device, a FIFO, a socket or a terminal (`/dev/null`, a pipe,
  `/dev/tty`) is opened and written through: never replaced. (Run as root, a rename over
  `/dev/null` turns the machine's null device into a regular file.) Any other device
  (`/dev/sda`, `/dev/mem`) is refused: an output is not a way to write a disk.
- A symbolic link is refused - its target is a path nobody gave Ember (`-o k.ptx` where
  k.ptx links to /etc/passwd would replace the system's passwd with PTX) - except the
  links that name the caller's own descriptors: `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`,
  `/proc/self/fd/N`, written through as the shell opened them.
- A regular file (or a new one) is written under a unique temporary name beside it, then
  renamed over it, so that a build killed halfway leaves no half-written output newer
  than its inputs, and readers never see a partial file.
- A regular file that is one of the compile's inputs is refused (`-o k.ember` on
  `k.ember` would replace the source with its PTX).

Refusals are usage errors (exit 2) naming the path and what it is. Imports nothing of
Ember's but `cli_support`: a cache-hit `ember compile` runs on little more.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys

from .cli_support import CommandError, UsageError, is_null_or_terminal


class OutputError(CommandError):
    """An output that cannot be written (the disk is full, a directory is read-only)."""


class OutputIsInput(UsageError):
    """An output path that names one of the inputs."""


class OutputNotOurs(UsageError):
    """An output path that names a symbolic link or a device Ember must not write through."""


# the caller's own open descriptors: links the shell's redirections stand behind
_FD_ALIAS = re.compile(r"/dev/(stdout|stderr|fd/\d+)|/proc/(self|\d+)/fd/\d+")


def _is_fd_alias(path: str) -> bool:
    return _FD_ALIAS.fullmatch(os.path.abspath(path)) is not None


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


def check_output(path: str, inputs=(), what: str = "the output") -> str:
    """How `path` will be written - "replace" (a regular file, or none yet), "through" (the
    null device, a FIFO, a socket, a terminal) or "follow" (the caller's own descriptor) - or
    the usage error that refuses it: one of `inputs`, a directory, a symbolic link, another
    device. Commands call it for every output before writing any."""
    if path == "-":
        return "stdout"
    check_not_input(path, inputs, what)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "replace"
    except OSError as e:
        raise OutputError(f"cannot write {path}: {e.strerror}") from None
    if stat.S_ISREG(st.st_mode):
        return "replace"
    if stat.S_ISLNK(st.st_mode):
        if _is_fd_alias(path):
            return "follow"
        raise OutputNotOurs(f"cannot write {path}: it is a symbolic link (to {os.readlink(path)}); Ember "
                            f"writes only files of its own - give the path of the file itself")
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(f"cannot write {path}: it is a directory")
    if stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode) or is_null_or_terminal(st):
        return "through"
    raise OutputNotOurs(f"cannot write {path}: it is a device; Ember writes only regular files, pipes, "
                        f"terminals and the null device")


def write_output(path: str, data, inputs=()) -> None:
    """Write text or bytes to `path` (`-`: standard output); see the module docstring.
    `inputs`: the files the output was made from (never overwritten)."""
    how = check_output(path, inputs)
    if how == "stdout":
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
    if how == "replace":
        _replace(os.path.realpath(path), raw, path)
    else:
        _write_through(path, raw, follow=how == "follow")


def _write_through(path: str, raw: bytes, follow: bool = False) -> None:
    """Open what is at `path` and write to it; not following a link that appeared since it
    was looked at, unless `follow` (the caller's descriptor aliases)."""
    flags = os.O_WRONLY | os.O_TRUNC | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
        with os.fdopen(fd, "wb") as f:
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
