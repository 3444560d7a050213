"""The compile cache (ember/cache.py): keyed by content, never by paths or times; an edit to
any byte of any file read, a const value or the arch misses; moving or touching the tree
hits; entries are whole or absent, also with many processes writing at once; a hit in an
`ember` process loads no LLVM."""

import json
import multiprocessing
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from ember import cache as C
from ember.cli import main

ROOT = Path(__file__).resolve().parents[1]
HELPER = 'import "std/reduce.ember";\nfn twice(x: f32) -> f32 { return x * 2.0; }\n'
KERNEL = ('import "lib/helper.ember";\n'
          "kernel k<const N: u32>(x: *mut global f32) block(32) { x[thread_idx.x] = warp_sum(twice(x[N])); }\n")


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "src" / "lib").mkdir(parents=True)
    (tmp_path / "src" / "lib" / "helper.ember").write_text(HELPER)
    (tmp_path / "src" / "k.ember").write_text(KERNEL)
    return tmp_path


@pytest.fixture
def store(tmp_path):
    return C.Cache(str(tmp_path / "cache"))


def compile_(path, store, **kw):
    return ember.compile(Path(path), defines=kw.pop("defines", {"N": 3}), cache=store, **kw)


def test_a_hit_gives_what_the_compile_gave(tree, store):
    first = compile_(tree / "src" / "k.ember", store)
    again = compile_(tree / "src" / "k.ember", store)
    assert not first.cached and again.cached
    assert again.ptx == first.ptx and again.sources == first.sources
    assert {n: k.signature() for n, k in again.kernels.items()} == \
        {n: k.signature() for n, k in first.kernels.items()}
    assert again.kernels["k"].consts == first.kernels["k"].consts == {"N": 3}
    # the stages a hit did not keep are compiled when asked for
    assert again.stage("llvm") == first.stage("llvm") and again.ir is not None


@pytest.mark.parametrize("change", ["const", "source byte", "imported byte", "std byte", "arch", "opt"])
def test_every_input_that_changes_the_output_misses(tree, tmp_path, store, change, monkeypatch):
    src = tree / "src" / "k.ember"
    compile_(src, store)
    kw = {}
    if change == "const":
        kw["defines"] = {"N": 4}
    elif change == "source byte":
        src.write_text(KERNEL + " ")
    elif change == "imported byte":
        (tree / "src" / "lib" / "helper.ember").write_text(HELPER.replace("2.0", "2.5"))
    elif change == "std byte":      # a copy of Ember whose standard library differs
        fake_std = tmp_path / "std"
        shutil.copytree(ROOT / "ember" / "std", fake_std)
        (fake_std / "reduce.ember").write_text((fake_std / "reduce.ember").read_text() + "\n// edited\n")
        monkeypatch.setattr(C.import_paths, "std_dir", lambda: str(fake_std))
    elif change == "arch":
        kw["arch"] = "sm_80"
    elif change == "opt":
        kw["opt"] = 2
    assert not compile_(src, store, **kw).cached


def test_moving_or_touching_the_tree_hits(tree, tmp_path, store):
    first = compile_(tree / "src" / "k.ember", store)
    moved = tmp_path / "elsewhere"
    shutil.copytree(tree / "src", moved)
    os.utime(moved / "lib" / "helper.ember", (1, 1))
    hit = compile_(moved / "k.ember", store)
    assert hit.cached and hit.ptx == first.ptx
    assert hit.sources[1] == str(moved / "lib" / "helper.ember")      # the files read where they are now


def test_a_missing_import_misses_and_reports_the_error(tree, store):
    compile_(tree / "src" / "k.ember", store)
    (tree / "src" / "lib" / "helper.ember").unlink()
    with pytest.raises(ember.CompileError, match="cannot import"):
        compile_(tree / "src" / "k.ember", store)


def test_programs_with_warnings_are_not_stored(tmp_path, store):
    src = tmp_path / "w.ember"
    src.write_text("kernel w(x: *mut global f32) block(32) { x[0] = 2.0; }\n")
    first = ember.compile(src, defines={"UNUSED": 1}, cache=store)
    assert first.warnings
    again = ember.compile(src, defines={"UNUSED": 1}, cache=store)
    assert not again.cached and again.warnings


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage"])
def test_a_damaged_entry_is_a_miss(tree, store, damage):
    first = compile_(tree / "src" / "k.ember", store)
    [path] = store.entries()
    data = bytearray(Path(path).read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip":
        data[len(data) // 3] ^= 0x01
    else:
        data = b"not an entry"
    Path(path).write_bytes(bytes(data))
    again = compile_(tree / "src" / "k.ember", store)
    assert not again.cached and again.ptx == first.ptx
    assert compile_(tree / "src" / "k.ember", store).cached       # rewritten whole


def _writer(directory, worker, rounds):
    """Writes entries under 4 shared keys and 4 of its own, with payloads that say who wrote
    them, and reads the shared ones back while others write."""
    store = C.Cache(directory)
    for r in range(rounds):
        for k in range(4):
            key = C.sha256(f"shared {k}".encode())
            blob = (f"{key}".encode() * 2000)          # the same bytes whoever writes them
            assert store.put(key, {"k": k}, {"b": blob})
            e = store.get(key)
            assert e is not None and e.blobs["b"] == blob and e.meta == {"k": k}
        own = C.sha256(f"worker {worker} {r}".encode())
        assert store.put(own, {"w": worker, "r": r}, {"b": os.urandom(50_000)})


def test_eight_processes_writing_one_directory(tmp_path):
    directory = str(tmp_path / "shared")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(directory, w, 6)) for w in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    store = C.Cache(directory)
    entries = store.entries()
    assert len(entries) == 4 + 8 * 6
    for path in entries:       # every entry whole: its checksum holds
        assert C._decode(Path(path).read_bytes()) is not None
    leftovers = [n for d, _, names in os.walk(directory) for n in names if n.endswith(".tmp")]
    assert leftovers == []


def test_key_ignores_dict_order_and_names_every_option():
    a = C.make_key("ptx", {"arch": "sm_90", "opt": 3}, b"src")
    assert a == C.make_key("ptx", {"opt": 3, "arch": "sm_90"}, b"src")
    assert a != C.make_key("ptx", {"arch": "sm_90", "opt": 2}, b"src")
    assert a != C.make_key("cubin", {"arch": "sm_90", "opt": 3}, b"src")
    assert C.make_key("ptx", {}, b"ab", b"c") != C.make_key("ptx", {}, b"a", b"bc")


def _ember(args, cwd, env_extra):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("EMBER_NO_CACHE", None)
    env.update(env_extra)
    return subprocess.run([sys.executable, "-m", "ember", *args], cwd=cwd, env=env,
                          capture_output=True, text=True)


def test_a_hit_in_an_ember_process_loads_no_compiler(tree, tmp_path):
    env = {"EMBER_CACHE_DIR": str(tmp_path / "cache"), "PYTHONHASHSEED": "1"}
    args = ["compile", "src/k.ember", "-D", "N=3", "--emit", "fatbin", "--arch", "sm_80,sm_90",
            "-o", "k.fatbin", "-MD", "--manifest", "k.json"]
    r = _ember(args, tree, env)
    assert r.returncode == 0, r.stderr
    first = (tree / "k.fatbin").read_bytes(), (tree / "k.d").read_text(), (tree / "k.json").read_text()
    probe = ("import sys, ember.cli; status = ember.cli.main(sys.argv[1:]); "
             "print(sorted({m.split('.')[0] + ('.' + m.split('.')[1] if '.' in m else '') for m in sys.modules "
             "if m.startswith(('llvmlite.binding', 'llvmlite.ir', 'lark', 'numpy', 'ember.lowering', "
             "'ember.frontend', 'ember.ir.passes', 'cuda'))})); sys.exit(status)")
    env2 = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONHASHSEED="2", **{"EMBER_CACHE_DIR": env["EMBER_CACHE_DIR"]})
    env2.pop("EMBER_NO_CACHE", None)
    r = subprocess.run([sys.executable, "-c", probe, *args], cwd=tree, env=env2, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
    assert ((tree / "k.fatbin").read_bytes(), (tree / "k.d").read_text(), (tree / "k.json").read_text()) == first


def test_no_cache_and_the_environment_switch(tree, tmp_path):
    env = {"EMBER_CACHE_DIR": str(tmp_path / "cache")}
    r = _ember(["compile", "src/k.ember", "-D", "N=1", "--no-cache", "-o", "k.ptx"], tree, env)
    assert r.returncode == 0 and not (tmp_path / "cache").exists()
    r = _ember(["compile", "src/k.ember", "-D", "N=1", "-o", "k.ptx"], tree, dict(env, EMBER_NO_CACHE="1"))
    assert r.returncode == 0 and not (tmp_path / "cache").exists()
    r = _ember(["compile", "src/k.ember", "-D", "N=1", "-o", "k.ptx"], tree, env)
    assert r.returncode == 0 and C.Cache(env["EMBER_CACHE_DIR"]).info()["entries"] == 1


def test_cache_info_and_clear(tree, tmp_path, monkeypatch, capsys):
    directory = tmp_path / "cache"
    monkeypatch.setenv("EMBER_CACHE_DIR", str(directory))
    monkeypatch.delenv("EMBER_NO_CACHE")
    (directory).mkdir()
    (directory / "not-ours.txt").write_text("a file Ember did not write")
    assert main(["compile", str(tree / "src" / "k.ember"), "-D", "N=1", "-o", str(tmp_path / "k.ptx")]) == 0
    capsys.readouterr()
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert str(directory) in out and "entries:   1" in out
    assert main(["cache", "clear"]) == 0
    assert "removed 1 entry" in capsys.readouterr().out
    assert C.Cache(str(directory)).info()["entries"] == 0
    assert (directory / "not-ours.txt").exists() and (directory / "CACHEDIR.TAG").exists()


def test_clear_says_what_it_could_not_remove(tree, tmp_path, monkeypatch, capsys):
    """A read-only cache: `clear` reports the entries it could not remove and exits 1
    (root ignores permission bits, so the refusal is simulated at unlink)."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("EMBER_CACHE_DIR", str(directory))
    monkeypatch.delenv("EMBER_NO_CACHE")
    for n in (1, 2):
        assert main(["compile", str(tree / "src" / "k.ember"), "-D", f"N={n}", "-o", str(tmp_path / "k.ptx")]) == 0
    capsys.readouterr()

    def refuse(path, *a, **k):
        raise PermissionError(13, "Read-only file system")
    monkeypatch.setattr(C.os, "unlink", refuse)
    assert main(["cache", "clear"]) == 1
    err = capsys.readouterr()
    assert "removed 0 entries" in err.out and "could not remove 2 entries" in err.err and "Read-only" in err.err
    monkeypatch.undo()
    assert C.Cache(str(directory)).info()["entries"] == 2


def test_an_entry_is_only_served_for_its_own_key(tree, tmp_path, store):
    """Another key's whole, valid entry under this key's name (a misplaced file, a bad sync
    of a shared cache) is a miss, never another program's PTX."""
    other = tmp_path / "other.ember"
    other.write_text("kernel other(x: *mut global f32) block(32) { x[thread_idx.x] = 2.0; }\n")
    compile_(other, store, defines={})
    [theirs] = store.entries()
    first = compile_(tree / "src" / "k.ember", store)
    [mine] = [e for e in store.entries() if e != theirs]
    shutil.copyfile(theirs, mine)                   # k.ember's name now holds other's entry
    again = compile_(tree / "src" / "k.ember", store)
    assert not again.cached and "other" not in again.ptx and again.ptx == first.ptx
    key = C.sha256(b"a")
    store.put(key, {"x": 1}, {"b": b"1"})
    os.makedirs(os.path.dirname(store._path(C.sha256(b"b"))), exist_ok=True)
    os.replace(store._path(key), store._path(C.sha256(b"b")))
    assert store.get(C.sha256(b"b")) is None


def test_a_cache_that_cannot_be_written_says_so_once(tree, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("the cache directory would have to be inside this file")
    env = dict(os.environ, EMBER_CACHE_DIR=str(blocker / "cache"))
    env.pop("EMBER_NO_CACHE", None)
    for jobs in ("1", "2"):
        r = _ember(["compile", "src/k.ember", "-D", "N=1,2,3", "-o", "out/", "-j", jobs], tree, env)
        assert r.returncode == 0, r.stderr
        assert r.stderr.count("cannot be written") == 1 and "ember: warning: the compile cache" in r.stderr
        assert len(list((tree / "out").iterdir())) == 3


def test_default_directory_follows_the_platform(monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", "~/somewhere")
    assert C.default_dir() == os.path.expanduser("~/somewhere")
    monkeypatch.delenv("EMBER_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "/xdg")
    if sys.platform.startswith("linux"):
        assert C.default_dir() == "/xdg/ember"


def test_the_entry_format_is_json_and_bytes(store):
    key = C.sha256(b"k")
    store.put(key, {"a": [1, "x"]}, {"p": b"\x00\x01", "q": b""})
    e = store.get(key)
    assert e.meta == {"a": [1, "x"]} and e.blobs == {"p": b"\x00\x01", "q": b""}
    raw = Path(store.entries()[0]).read_bytes()
    n = int.from_bytes(raw[8:16], "little")
    assert json.loads(raw[16:16 + n])["_blobs"] == [["p", 2], ["q", 0]]


@settings(max_examples=60)
@given(st.lists(st.binary(min_size=1, max_size=40), min_size=2, max_size=6, unique=True), st.randoms())
def test_shuffled_entries_are_never_served_for_another_key(tmp_path_factory, payloads, rnd):
    """Whatever files end up under whatever names (entries moved, copied, swapped), a
    lookup returns the entry stored under that key or nothing."""
    store = C.Cache(str(tmp_path_factory.mktemp("c")))
    keys = [C.sha256(p) for p in payloads]
    for k, p in zip(keys, payloads):
        store.put(k, {"of": k}, {"p": p})
    data = {k: Path(store._path(k)).read_bytes() for k in keys}
    for k in keys:                          # each name gets some entry's bytes
        Path(store._path(k)).write_bytes(data[rnd.choice(keys)])
    for k, p in zip(keys, payloads):
        e = store.get(k)
        assert e is None or (e.meta == {"of": k} and e.blobs == {"p": p})
