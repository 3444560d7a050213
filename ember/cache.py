"""The compile cache: content-addressed entries on disk, shared by `ember compile` and
`ember.compile()`.

A key is the sha256 of everything that decides the output: the toolchain (every byte of
Ember's own code, so an edited checkout never hits an entry of its old self; the
versions of Python and llvmlite, whose release pins the LLVM it carries; the assembler's
version for binaries), the options that change the output (stage, arch, PTX version, -O,
pass pipeline, const values, ...) and every byte of the source. The files a source
imports are not known before it is parsed, so an entry records each with its sha256 and
where it lies relative to the importing source (or its `std/` name), and a lookup
re-reads and re-hashes them: an edit to any of them misses; moving or touching the tree
hits. Paths and modification times never enter a key.

An entry is one file: a header, a JSON description, the payloads and a sha256 of all of
it. It is written under a unique temporary name, flushed to disk and renamed into place;
a rename within a directory is atomic on POSIX file systems and on NFS servers, so a
reader sees a whole entry or none, and a damaged one (checksum) is a miss. Concurrent
writers of one key write the same bytes; the last rename wins.

Imports nothing of Ember's beyond `ember.import_paths`: a cache hit must not pay for the
compiler (a hit in `ember compile` never imports LLVM).
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import sys

from . import import_paths
from .records import record

FORMAT = 1
_MAGIC = b"EMBERC\x00\x01"
_HEADER = struct.Struct("<8sQ")              # magic, length of the JSON description
_LAYOUT = f"v{FORMAT}"                      # entries live under DIR/v1/ab/abcdef...


def default_dir() -> str:
    """EMBER_CACHE_DIR, else the platform's per-user cache directory."""
    env = os.environ.get("EMBER_CACHE_DIR")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    if sys.platform == "win32":
        root = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
        return os.path.join(root, "ember", "cache")
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Caches/ember")
    return os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "ember")


def disabled_by_environment() -> bool:
    """EMBER_NO_CACHE=1 turns the cache off for every compile of the process."""
    return os.environ.get("EMBER_NO_CACHE", "") not in ("", "0")


_FINGERPRINT: list = []


def toolchain_fingerprint() -> str:
    """sha256 of Ember's own files (code, grammar, standard library) and the versions of
    Python and llvmlite: computed once per process."""
    if not _FINGERPRINT:
        import llvmlite            # the package only: its version, not LLVM itself
        from . import __version__
        h = hashlib.sha256(f"ember {__version__}\0python {sys.version_info[:2]}\0"
                           f"llvmlite {llvmlite.__version__}\0".encode())
        root = os.path.dirname(os.path.abspath(__file__))
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = sorted(x for x in dirs if x != "__pycache__")
            files += [os.path.join(d, n) for n in names if n.endswith((".py", ".lark", ".ember", ".cmake"))]
        for f in sorted(files, key=lambda p: os.path.relpath(p, root).replace(os.sep, "/")):
            with open(f, "rb") as fh:
                data = fh.read()
            h.update(f"{os.path.relpath(f, root).replace(os.sep, '/')}\0{len(data)}\0".encode())
            h.update(data)
        _FINGERPRINT.append(h.hexdigest())
    return _FINGERPRINT[0]


def make_key(kind: str, options: dict, *parts: bytes) -> str:
    """The key of an entry of `kind` ("ptx", "cubin", "fatbin"): the toolchain, the
    options (a JSON-able dict; its key order does not matter) and the given bytes."""
    h = hashlib.sha256()
    desc = json.dumps({"kind": kind, "toolchain": toolchain_fingerprint(), "options": options},
                      sort_keys=True, separators=(",", ":"))
    h.update(desc.encode())
    for p in parts:
        h.update(struct.pack("<Q", len(p)))
        h.update(p)
    return h.hexdigest()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- the files a source imports ------------------------------------------------------

def record_imports(main_path: str | None, imported: list) -> list:
    """[{"file": where, "sha256": ...}] for each (path, text) imported by the source at
    `main_path`: `where` is the std/ name, or the path relative to the source's directory."""
    base = import_paths.base_dir(main_path)
    std = os.path.join(import_paths.std_dir(), "")
    out = []
    for path, text in imported:
        full = os.path.abspath(path)
        if full.startswith(std):
            where = import_paths.STD_PREFIX + os.path.relpath(full, std).replace(os.sep, "/")
        else:
            where = os.path.relpath(full, base).replace(os.sep, "/")
        out.append({"file": where, "sha256": sha256(text.encode("utf-8"))})
    return out


def check_imports(main_path: str | None, recorded: list) -> list | None:
    """The full paths of the recorded imports, located from the source at `main_path`, if
    every one still has its recorded bytes; None if any changed or is gone."""
    paths = []
    for dep in recorded:
        full = import_paths.locate(dep["file"], main_path)
        try:       # read as the front end reads it (newlines translated), hashed as recorded
            with open(full, encoding="utf-8") as f:
                data = f.read().encode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        if sha256(data) != dep["sha256"]:
            return None
        paths.append(full)
    return paths


# --- the store -------------------------------------------------------------------------

@record
class Entry:
    meta: dict                  # the JSON description
    blobs: dict                 # name -> bytes


class CacheError(OSError):
    pass


class Cache:
    """A cache directory. Reads never raise for a missing or damaged entry (a miss);
    writes that fail (read-only or full disk) are silently skipped: a cache must never
    break a build."""

    def __init__(self, directory: str | None = None):
        self.dir = os.path.abspath(directory) if directory else default_dir()

    def _path(self, key: str) -> str:
        return os.path.join(self.dir, _LAYOUT, key[:2], key[2:])

    def get(self, key: str) -> Entry | None:
        try:
            with open(self._path(key), "rb") as f:
                data = f.read()
        except OSError:
            return None
        entry = _decode(data)
        if entry is None:       # damaged (a disk error, or written by something else)
            try:
                os.unlink(self._path(key))
            except OSError:
                pass
        return entry

    def put(self, key: str, meta: dict, blobs: dict) -> bool:
        path = self._path(key)
        data = _encode(meta, blobs)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            self._tag()
            # a name no other process or host uses; mode 0666 less the umask (mkstemp's 0600
            # would hide entries from the other users of a shared cache)
            tmp = f"{os.path.dirname(path)}{os.sep}.{key[2:10]}.{os.getpid()}.{os.urandom(8).hex()}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        except OSError:
            return False
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
            return True
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            return False

    def _tag(self) -> None:
        """CACHEDIR.TAG (bford.net/cachedir): backup tools skip the directory."""
        tag = os.path.join(self.dir, "CACHEDIR.TAG")
        if not os.path.exists(tag):
            with open(tag, "w") as f:
                f.write("Signature: 8a477f597d28d172789f06886806bc55\n"
                        "# This file is a cache directory tag created by ember (the GPU kernel compiler).\n")

    def entries(self) -> list:
        root = os.path.join(self.dir, _LAYOUT)
        out = []
        if not os.path.isdir(root):
            return out
        for sub in sorted(os.listdir(root)):
            d = os.path.join(root, sub)
            if len(sub) == 2 and os.path.isdir(d):
                out += [os.path.join(d, n) for n in sorted(os.listdir(d)) if not n.startswith(".")]
        return out

    def info(self) -> dict:
        files = self.entries()
        return {"directory": self.dir, "entries": len(files),
                "bytes": sum(os.path.getsize(f) for f in files if os.path.isfile(f))}

    def clear(self) -> int:
        """Remove every entry (and temporary file) of this format; returns how many
        entries were removed. Files Ember did not write are left alone."""
        import shutil
        n = len(self.entries())
        root = os.path.join(self.dir, _LAYOUT)
        if os.path.isdir(root):
            shutil.rmtree(root, ignore_errors=True)
        return n


def _encode(meta: dict, blobs: dict) -> bytes:
    names = sorted(blobs)
    desc = dict(meta, _blobs=[[n, len(blobs[n])] for n in names])
    text = json.dumps(desc, sort_keys=True, separators=(",", ":")).encode()
    body = _HEADER.pack(_MAGIC, len(text)) + text + b"".join(blobs[n] for n in names)
    return body + hashlib.sha256(body).digest()


def _decode(data: bytes) -> Entry | None:
    if len(data) < _HEADER.size + 32 or hashlib.sha256(data[:-32]).digest() != data[-32:]:
        return None
    magic, n = _HEADER.unpack_from(data)
    if magic != _MAGIC:
        return None
    try:
        meta = json.loads(data[_HEADER.size:_HEADER.size + n])
    except ValueError:
        return None
    blobs, pos = {}, _HEADER.size + n
    for name, size in meta.pop("_blobs"):
        blobs[name] = data[pos:pos + size]
        pos += size
    return Entry(meta, blobs) if pos == len(data) - 32 else None
