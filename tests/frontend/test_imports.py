"""`import "file.ember";`: device functions from other files, located errors, the standard
library, and the list of files read (what a depfile names)."""

import os

import pytest

import ember
from ember.diagnostics import CompileError
from ember.frontend.imports import std_modules

KERNEL = "kernel k(x: *mut global f32) block(32) {{ x[thread_idx.x] = {}(x[thread_idx.x]); }}\n"


def write(tmp_path, files: dict):
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


def diagnostics(path) -> list:
    with pytest.raises(CompileError) as e:
        ember.compile(path)
    return [(d.code, d.span.file.name if d.span else None, d.span.line_col[0] if d.span else None, d.message)
            for d in e.value.diagnostics.sorted()]


def test_functions_of_an_imported_file_are_callable_and_it_is_listed(tmp_path):
    write(tmp_path, {"lib/twice.ember": "fn twice(a: f32) -> f32 { return a * 2.0; }\n",
                     "main.ember": 'import "lib/twice.ember";\n' + KERNEL.format("twice")})
    prog = ember.compile(tmp_path / "main.ember")
    assert "mul" in prog.ptx or "add" in prog.ptx
    assert prog.sources == [str(tmp_path / "main.ember"), str(tmp_path / "lib" / "twice.ember")]


def test_paths_are_relative_to_the_importing_file_and_cycles_are_read_once(tmp_path):
    write(tmp_path, {"a/one.ember": 'import "../b/two.ember";\nfn one(v: f32) -> f32 { return two(v) + 1.0; }\n',
                     "b/two.ember": 'import "../a/one.ember";\nimport "../main.ember";\n'
                                    'fn two(v: f32) -> f32 { return v * 3.0; }\n',
                     "main.ember": 'import "a/one.ember";\nimport "./a/one.ember";\n' + KERNEL.format("one")})
    prog = ember.compile(tmp_path / "main.ember")
    assert len(prog.sources) == 3 and len(set(prog.sources)) == 3
    assert list(prog.kernels) == ["k"]


def test_kernels_of_imported_files_are_not_imported(tmp_path):
    write(tmp_path, {"lib.ember": "fn f(a: f32) -> f32 { return a; }\n"
                                  "kernel lib_kernel(x: *mut global f32) block(32) { x[0] = 1.0; }\n",
                     "main.ember": 'import "lib.ember";\n' + KERNEL.format("f")})
    assert list(ember.compile(tmp_path / "main.ember").kernels) == ["k"]


def test_errors_in_an_imported_file_point_into_it(tmp_path):
    write(tmp_path, {"lib.ember": "\nfn f(a: f32) -> f32 { return a + nowhere; }\n",
                     "main.ember": 'import "lib.ember";\n' + KERNEL.format("f")})
    [(code, file, line, _)] = diagnostics(tmp_path / "main.ember")
    assert (code, file.endswith("lib.ember"), line) == ("E0101", True, 2)


def test_a_syntax_error_in_an_imported_file_is_located_there(tmp_path):
    write(tmp_path, {"lib.ember": "fn f(a: f32) -> f32 { return a + ; }\n",
                     "main.ember": 'import "lib.ember";\n' + KERNEL.format("f")})
    found = diagnostics(tmp_path / "main.ember")
    assert found and all(f.endswith("lib.ember") and line == 1 for _, f, line, _ in found)


def test_a_function_defined_in_two_files_is_an_error(tmp_path):
    write(tmp_path, {"lib.ember": "fn f(a: f32) -> f32 { return a; }\n",
                     "main.ember": 'import "lib.ember";\nfn f(a: f32) -> f32 { return a; }\n' + KERNEL.format("f")})
    found = diagnostics(tmp_path / "main.ember")
    assert [c for c, *_ in found] == ["E0102"]


@pytest.mark.parametrize("path, message, help_", [
    ("nope.ember", "no such file", None),
    ("std/nope.ember", "the standard library has no such file", "std/reduce.ember"),
    ("lib", "it is a directory", None),
    ("binary.ember", "not UTF-8", None),
    ("/dev/zero", "not a regular file", None),
    ("a\x00b.ember", "NUL", None),
])
def test_an_import_that_cannot_be_read_is_e0110_at_its_path(tmp_path, path, message, help_):
    write(tmp_path, {"lib/x.ember": "", "binary.ember": "", "main.ember": f'\nimport "{path}";\n' + KERNEL.format("abs")})
    (tmp_path / "binary.ember").write_bytes(b"\xff\xfe\x00fn")
    with pytest.raises(CompileError) as e:
        ember.compile(tmp_path / "main.ember")
    [d] = e.value.diagnostics.sorted()
    assert d.code == "E0110" and message in d.message and d.span.line_col == (2, 8)
    assert help_ is None or help_ in d.help


def test_source_text_imports_relative_to_the_current_directory(tmp_path, monkeypatch):
    write(tmp_path, {"lib.ember": "fn f(a: f32) -> f32 { return -a; }\n"})
    monkeypatch.chdir(tmp_path)
    prog = ember.compile('import "lib.ember";\n' + KERNEL.format("f"))
    assert prog.sources[1] == os.path.join(str(tmp_path), "lib.ember")


def test_import_is_a_reserved_word_and_must_come_with_a_string():
    with pytest.raises(CompileError):
        ember.compile("import lib;\n" + KERNEL.format("abs"))
    with pytest.raises(CompileError):
        ember.compile("kernel k(import: *mut global f32) block(32) { }")


def test_every_standard_library_file_compiles_on_its_own():
    assert std_modules(), "ember/std/ is empty"
    for m in std_modules():
        ember.compile(f'import "{m}";\nkernel k(x: *mut global f32) block(32) {{ x[0] = 1.0; }}')


def test_a_file_reached_by_two_spellings_or_a_link_is_read_once(tmp_path):
    write(tmp_path, {"lib/twice.ember": "fn twice(a: f32) -> f32 { return a * 2.0; }\n"})
    os.symlink("lib/twice.ember", tmp_path / "alias.ember")
    write(tmp_path, {"main.ember": 'import "std/./reduce.ember";\nimport "std/reduce.ember";\n'
                                   'import "lib/twice.ember";\nimport "./lib/../lib/twice.ember";\n'
                                   'import "alias.ember";\n' + KERNEL.format("twice")})
    prog = ember.compile(tmp_path / "main.ember")
    assert len(prog.sources) == 3


@pytest.mark.parametrize("path", ["std/../cli.py", "std/../std/../import_paths.py", "std/reduce"])
def test_std_paths_stay_in_the_standard_library(tmp_path, path):
    write(tmp_path, {"main.ember": f'import "{path}";\n' + KERNEL.format("f32")})
    [(code, _, line, message)] = diagnostics(tmp_path / "main.ember")
    assert code == "E0110" and line == 1 and "not a file of the standard library" in message


def test_search_directories_follow_the_importers_own(tmp_path, monkeypatch):
    write(tmp_path, {"inc1/lib.ember": "fn f(a: f32) -> f32 { return a * 3.0; }\n",
                     "inc2/lib.ember": "fn f(a: f32) -> f32 { return a * 5.0; }\n",
                     "src/main.ember": 'import "lib.ember";\n' + KERNEL.format("f")})
    main = tmp_path / "src" / "main.ember"
    assert diagnostics(main)[0][0] == "E0110"
    p2 = ember.compile(main, include_dirs=[tmp_path / "inc2", tmp_path / "inc1"], cache=False)
    assert p2.sources[1].endswith(os.path.join("inc2", "lib.ember"))
    monkeypatch.setenv("EMBER_INCLUDE_PATH", str(tmp_path / "inc1"))
    assert ember.compile(main, cache=False).sources[1].endswith(os.path.join("inc1", "lib.ember"))
    write(tmp_path, {"src/lib.ember": "fn f(a: f32) -> f32 { return a; }\n"})     # the importer's own comes first
    assert ember.compile(main, include_dirs=[tmp_path / "inc2"], cache=False).sources[1] == \
        str(tmp_path / "src" / "lib.ember")


def test_a_cache_hit_never_hides_a_file_that_now_shadows_another(tmp_path):
    from ember.cache import Cache
    store = Cache(str(tmp_path / "cache"))
    write(tmp_path, {"inc/lib.ember": "fn f(a: f32) -> f32 { return a * 3.0; }\n",
                     "src/main.ember": 'import "lib.ember";\n' + KERNEL.format("f")})
    main = tmp_path / "src" / "main.ember"
    first = ember.compile(main, include_dirs=[tmp_path / "inc"], cache=store)
    assert ember.compile(main, include_dirs=[tmp_path / "inc"], cache=store).cached
    write(tmp_path, {"src/lib.ember": "fn f(a: f32) -> f32 { return a * 7.0; }\n"})
    again = ember.compile(main, include_dirs=[tmp_path / "inc"], cache=store)
    assert not again.cached and again.ptx != first.ptx


def test_unused_imported_functions_are_neither_checked_nor_compiled(tmp_path):
    """A large library costs only what is called: an unused function with a type error in
    its body is not reported (nor its IR made); called, it is."""
    broken = "fn broken(a: f32) -> f32 { return a + nowhere; }\n"
    lib = broken + "".join(f"fn g{k}(a: f32) -> f32 {{ return a * {k}.0; }}\n" for k in range(300))
    write(tmp_path, {"lib.ember": lib, "main.ember": 'import "lib.ember";\n' + KERNEL.format("g7")})
    prog = ember.compile(tmp_path / "main.ember", stop_after="ir", cache=False)
    names = [f.name for f in prog.ir.functions]
    assert names == ["k", "g7"]
    write(tmp_path, {"main.ember": 'import "lib.ember";\n' + KERNEL.format("broken")})
    assert diagnostics(tmp_path / "main.ember")[0][0] == "E0101"


def test_recovery_from_a_syntax_error_in_a_large_file_is_linear(tmp_path, monkeypatch):
    """A broken item among thousands: recovery keeps what the failed parse had reduced and
    parses the rest once - the tokens scanned stay within a small multiple of the file's."""
    from ember.frontend import lalr, parser
    lib = "".join(f"fn f{k}(a: f32) -> f32 {{ return a * {k}.0; }}\n" for k in range(3000))
    broken = lib.replace("fn f1500(a: f32) -> f32 { return a *", "fn f1500(a: f32) -> f32 { return a * *", 1)
    scanned = [0]
    real = lalr._next

    def counting(*args):
        scanned[0] += 1
        return real(*args)
    monkeypatch.setattr(lalr, "_next", counting)
    parser._parse(ember.source.SourceFile("ok.ember", lib), ember.diagnostics.Diagnostics())
    clean, scanned[0] = scanned[0], 0
    diags = ember.diagnostics.Diagnostics()
    module = parser._parse(ember.source.SourceFile("bad.ember", broken), diags)
    assert len(module.items) == 2999 and len(diags.errors) == 1
    assert scanned[0] <= 2.5 * clean
