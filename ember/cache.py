"""The compile cache: content-addressed entries on disk, shared by `ember compile` and
`ember.compile()`.

A key is the sha256 of everything that decides the output: the toolchain (every byte of
Ember's own code, so an edited checkout never hits an entry of its old self; the
versions of Python and llvmlite, whose release pins the LLVM it carries; the assembler's
version for binaries), the options that change the output (stage, arch, PTX version, -O,
pass pipeline, const values, ...) and every byte of the source. The files a source
imports are not known before it is parsed, so an entry records every import statement
(the path as written, which file wrote it, which file it read) and each file's sha256,
and a lookup resolves the statements again and re-hashes what they read: an edit to any
file misses, and so does a file that now shadows another in the search order; moving or
touching the tree hits. Paths and modification times never enter a key, but the import search directories
(`-I`, EMBER_INCLUDE_PATH) do: they decide which file an import reads.

An entry is one file: a header, a JSON description (which holds the entry's own key),
the payloads and a sha256 of all of it. It is written under a unique temporary name,
flushed to disk and renamed into place; a rename within a directory is atomic on POSIX
file systems and on NFS servers, so a reader sees a whole entry or none. A damaged entry
(checksum) is a miss, and so is a whole, valid entry found under another key's name (a
misplaced file, a bad sync of a shared cache): an entry is only ever returned for the key
it was stored with. Concurrent writers of one key write the same bytes; the last rename
wins.

A cache that cannot be written (read-only, full, not ours) never breaks a build: the
compile goes on, and the process says so once (a `CacheWarning`; `ember` prints it as a
warning).

Imports nothing of Ember's beyond `ember.import_paths`: a cache hit must not pay for the
compiler (a hit in `ember compile` never imports LLVM).
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import sys
import warnings

from . import import_paths
from .records import record

FORMAT = 3                                  # 2: entries hold their key; 3: import statements
_MAGIC = b"EMBERC\x00\x03"
_HEADER = struct.Struct("<8sQ")              # magic, length of the JSON description
_LAYOUT = f"v{FORMAT}"                      # entries live under DIR/v3/ab/abcdef...


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

def record_imports(imported: list, edges: list) -> dict:
    """What a lookup re-checks: every import statement of the compile, in the order the
    front end met them, as (index of the importing file, the path as written, index of the
    file it read), and each imported file's sha256. Paths stay as written, so moving or
    touching the tree hits."""
    return {"edges": [list(e) for e in edges], "sha256": [sha256(text.encode("utf-8")) for _, text in imported]}


def check_imports(main_path: str | None, recorded: dict, search: list) -> list | None:
    """The full paths of the imported files, if every import statement of the source at
    `main_path` still leads (through the same search directories) to the same file with its
    recorded bytes; None if any changed, is gone, or another file now comes first."""
    try:
        edges, hashes = recorded["edges"], recorded["sha256"]
    except (KeyError, TypeError):
        return None
    paths = [main_path]
    real = [import_paths.identity(main_path) if main_path else None]
    for importer, written, target in edges:
        if importer >= len(paths):
            return None
        try:
            full = import_paths.locate(written, paths[importer], search)
        except import_paths.ImportPathError:
            return None
        key = import_paths.identity(full)
        if target < len(real):
            if real[target] != key:
                return None
            continue
        if target != len(real) or target - 1 >= len(hashes):
            return None
        try:       # read as the front end reads it (newlines translated), hashed as recorded
            with open(full, encoding="utf-8") as f:
                data = f.read().encode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        if sha256(data) != hashes[target - 1]:
            return None
        paths.append(full)
        real.append(key)
    return paths[1:] if len(paths) == len(hashes) + 1 else None


# --- the store -------------------------------------------------------------------------

@record
class Entry:
    meta: dict                  # the JSON description
    blobs: dict                 # name -> bytes


class CacheWarning(UserWarning):
    """The cache directory cannot be written: compiles go on without storing results."""


_UNWRITABLE: set = set()          # directories this process has warned about


def _report_unwritable(directory: str, why: str) -> None:
    if directory in _UNWRITABLE:
        return
    _UNWRITABLE.add(directory)
    warnings.warn(f"the compile cache {directory} cannot be written ({why}); results are not stored "
                  "(EMBER_CACHE_DIR chooses another directory, EMBER_NO_CACHE=1 turns the cache off)",
                  CacheWarning, stacklevel=3)


_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
        "# This file is a cache directory tag created by ember (the GPU kernel compiler).\n")


class Cache:
    """A cache directory. Reads never raise for a missing, damaged or misplaced entry (a
    miss); writes that fail (read-only or full disk) are skipped with one CacheWarning
    per process: a cache must never break a build. `read_only`: never write (what a
    build's workers do when the parent found the directory unwritable)."""

    def __init__(self, directory: str | None = None, read_only: bool = False):
        self.dir = os.path.abspath(directory) if directory else default_dir()
        self.read_only = read_only

    def _path(self, key: str) -> str:
        return os.path.join(self.dir, _LAYOUT, key[:2], key[2:])

    def get(self, key: str) -> Entry | None:
        try:
            with open(self._path(key), "rb") as f:
                data = f.read()
        except OSError:
            return None
        entry = _decode(data)
        if entry is not None and entry.meta.pop("_key", None) == key:
            return entry
        # damaged (a disk error, or written by something else), or another key's entry
        if not self.read_only:
            try:
                os.unlink(self._path(key))
            except OSError:
                pass
        return None

    def put(self, key: str, meta: dict, blobs: dict) -> bool:
        if self.read_only:
            return False
        path = self._path(key)
        data = _encode(dict(meta, _key=key), blobs)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            self._tag()
            # a name no other process or host uses; mode 0666 less the umask (mkstemp's 0600
            # would hide entries from the other users of a shared cache)
            tmp = f"{os.path.dirname(path)}{os.sep}.{key[2:10]}.{os.getpid()}.{os.urandom(8).hex()}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        except OSError as e:
            _report_unwritable(self.dir, e.strerror or str(e))
            return False
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
            return True
        except OSError as e:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            _report_unwritable(self.dir, e.strerror or str(e))
            return False

    def writable(self) -> str | None:
        """None if entries can be stored here, else why not (creates the directory)."""
        probe = os.path.join(self.dir, _LAYOUT, f".probe.{os.getpid()}.{os.urandom(6).hex()}")
        try:
            os.makedirs(os.path.dirname(probe), exist_ok=True)
            os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            os.unlink(probe)
        except OSError as e:
            return e.strerror or str(e)
        return None

    def _tag(self) -> None:
        """CACHEDIR.TAG (bford.net/cachedir): backup tools skip the directory."""
        tag = os.path.join(self.dir, "CACHEDIR.TAG")
        if not os.path.lexists(tag):
            try:
                fd = os.open(tag, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:          # another process just wrote it
                return
            with os.fdopen(fd, "w") as f:
                f.write(_TAG)

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

    def clear(self) -> tuple[int, int, str | None]:
        """Remove every entry (and temporary file) of this format: (entries removed,
        entries that could not be, why). Files Ember did not write are left alone."""
        root = os.path.join(self.dir, _LAYOUT)
        removed, kept, why = 0, 0, None
        if not os.path.isdir(root):
            return removed, kept, why
        for sub in sorted(os.listdir(root)):
            d = os.path.join(root, sub)
            if not (len(sub) == 2 and os.path.isdir(d) and not os.path.islink(d)):
                continue
            for name in sorted(os.listdir(d)):
                try:
                    os.unlink(os.path.join(d, name))
                except OSError as e:
                    if not name.startswith("."):
                        kept += 1
                        why = why or e.strerror
                    continue
                removed += not name.startswith(".")
            try:
                os.rmdir(d)
            except OSError:
                pass
        try:
            os.rmdir(root)
        except OSError:
            pass
        return removed, kept, why


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
