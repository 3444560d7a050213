"""Cubins (nvJitLink) and fatbins (nvFatbin), as `ember compile --emit cubin|fatbin`
writes them: an ELF per arch, and a fatbin holding a cubin per --arch plus the PTX of the
lowest; both cached by content and byte-identical run to run."""

import struct
from pathlib import Path

import pytest

import ember
from ember import cache as C
from ember.artifacts import binaries
from ember.cli import main

ROOT = Path(__file__).resolve().parents[2]
RMSNORM = ROOT / "kernels_src" / "rmsnorm.ember"


def fatbin_entries(data: bytes) -> list:
    """(kind, sm) per entry of a fatbin: kind 1 is PTX, 2 a cubin (the layout cuobjdump reads)."""
    magic, _, header, size = struct.unpack_from("<IHHQ", data, 0)
    assert magic == 0xBA55ED50 and header + size == len(data)
    pos, out = header, []
    while pos < len(data):
        kind, _, entry_header, padded = struct.unpack_from("<HHII", data, pos)
        sm = struct.unpack_from("<I", data, pos + 28)[0]
        out.append(({1: "ptx", 2: "cubin"}[kind], sm))
        pos += entry_header + padded
    return out


def test_cubin_is_an_elf_for_its_arch(tmp_path, capsys):
    out = tmp_path / "r.cubin"
    assert main(["compile", str(RMSNORM), "--emit", "cubin", "--arch", "sm_80", "-o", str(out)]) == 0
    data = out.read_bytes()
    assert data[:4] == b"\x7fELF"
    prog = ember.compile(RMSNORM, arch="sm_80", cache=False)
    assert data == binaries.cubin(prog.ptx, "sm_80")[0]


def test_fatbin_holds_each_arch_and_the_lowest_ptx(tmp_path, capsys):
    out = tmp_path / "r.fatbin"
    assert main(["compile", str(RMSNORM), "--emit", "fatbin", "--arch", "sm_90", "--arch", "sm_80,sm_86",
                 "-o", str(out)]) == 0
    assert sorted(fatbin_entries(out.read_bytes())) == [("cubin", 80), ("cubin", 86), ("cubin", 90), ("ptx", 80)]


def test_several_archs_only_make_fatbins(tmp_path, capsys):
    assert main(["compile", str(RMSNORM), "--arch", "sm_80,sm_90", "-o", str(tmp_path / "x.ptx")]) == 2
    assert "several --arch values make a fatbin" in capsys.readouterr().err


def test_binaries_are_cached_by_ptx_content(tmp_path):
    store = C.Cache(str(tmp_path / "cache"))
    ptx = ember.compile(RMSNORM, cache=False).ptx
    fresh, res = binaries.cubin(ptx, "sm_90", store)
    hit, res2 = binaries.cubin(ptx, "sm_90", store)
    assert hit == fresh and res2 == res and res["rmsnorm"].registers > 0
    assert len(store.entries()) == 1
    binaries.cubin(ptx + "\n", "sm_90", store)       # other PTX bytes, another entry
    assert len(store.entries()) == 2
    fb = binaries.fatbin([("sm_90", fresh)], "sm_90", ptx, store)
    assert binaries.fatbin([("sm_90", fresh)], "sm_90", ptx, store) == fb and len(store.entries()) == 3


def test_ptx_that_does_not_assemble_is_an_internal_error(tmp_path, capsys, monkeypatch):
    from ember.artifacts import validate
    monkeypatch.setattr(binaries, "validate", lambda ptx, arch, tool: (_ for _ in ()).throw(
        validate.ValidationError(arch, "ptxas fatal: broken")))
    assert main(["compile", str(RMSNORM), "--emit", "cubin", "--no-cache", "-o", str(tmp_path / "x.cubin")]) == 70
    err = capsys.readouterr().err
    assert "does not assemble for sm_90" in err and "this is a bug in Ember" in err


@pytest.mark.parametrize("emit", ["cubin", "fatbin", "header"])
def test_same_bytes_every_time(tmp_path, capsys, emit, monkeypatch):
    """Uncached, written to the cache, and from it."""
    monkeypatch.delenv("EMBER_NO_CACHE")
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path / "cache"))
    outs = []
    for i, cache in enumerate(["--no-cache", None, None]):
        (tmp_path / str(i)).mkdir()
        out = tmp_path / str(i) / f"r.{emit}"
        args = ["compile", str(RMSNORM), "--emit", emit, "-o", str(out)] + ([cache] if cache else [])
        if emit != "cubin":
            args += ["--arch", "sm_80,sm_90"]
        assert main(args) == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] == outs[2]
    assert C.Cache(str(tmp_path / "cache")).info()["entries"] >= 2
