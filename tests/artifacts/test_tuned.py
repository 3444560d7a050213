"""`ember compile FILE --tuned DEVICE`: the tuned tables' configurations as variants."""

import json
import shutil
from pathlib import Path

import pytest

from ember.tuning import table as T
from tests.test_cli import run

SRC = Path(__file__).resolve().parents[2] / "kernels_src" / "q4k_dp4a.ember"


@pytest.fixture
def tuned_dir(tmp_path, monkeypatch):
    shutil.copy(SRC, tmp_path / SRC.name)
    (tmp_path / "tuned").mkdir()
    t = T.new_table("q4k_q8_gemv", tmp_path / SRC.name)
    entry = {"config": {"WARPS": 2, "UNROLL": 1, "ROWS": 2}, "defines": {"M": 1}}
    t["devices"] = {"NVIDIA H100 80GB HBM3 sm_90": {"1x14336x4096": entry,
                                                     "8x14336x4096": {**entry, "defines": {"M": 8}},
                                                     "1x4096x14336": dict(entry)},    # the same variant: once
                    "NVIDIA H200 sm_90": {"1x14336x4096": {**entry, "config": {"WARPS": 8, "UNROLL": 2, "ROWS": 1}}}}
    T.write(tmp_path / "tuned" / "q4k_q8_gemv.json", t)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_each_configuration_of_the_device_is_a_variant(tuned_dir, capsys):
    code, out, _ = run(capsys, "compile", SRC.name, "--tuned", "h100", "-k", "q4k_q8_gemv", "--list-outputs")
    assert code == 0 and out.splitlines() == [
        "q4k_dp4a.M-1.ROWS-2.UNROLL-1.WARPS-2.ptx\tM=1\tROWS=2\tUNROLL=1\tWARPS=2",
        "q4k_dp4a.M-8.ROWS-2.UNROLL-1.WARPS-2.ptx\tM=8\tROWS=2\tUNROLL=1\tWARPS=2"]
    code, _, _ = run(capsys, "compile", SRC.name, "--tuned", "H200", "-k", "q4k_q8_gemv", "-o", "out/")
    assert code == 0 and [p.name for p in (tuned_dir / "out").iterdir()] == ["q4k_dp4a.M-1.ROWS-1.UNROLL-2.WARPS-8.ptx"]


def test_the_manifest_says_what_each_variant_was_chosen_for(tuned_dir, capsys):
    """A host program picks a variant by the shape it runs: --manifest lists, per output, the
    table entries (kernel, device, bucket, time, SASS path) whose configuration it is."""
    code, _, err = run(capsys, "compile", SRC.name, "--tuned", "h100", "-k", "q4k_q8_gemv", "-o", "out/",
                       "--manifest", "build.json")
    assert code == 0, err
    outputs = json.loads((tuned_dir / "build.json").read_text())["outputs"]
    chosen = {Path(o["output"]).name: [(u["kernel"], u["device"], u["bucket"], u["sass_path"]) for u in o["tuned_for"]]
              for o in outputs}
    h100 = "NVIDIA H100 80GB HBM3 sm_90"
    assert chosen == {
        "q4k_dp4a.M-1.ROWS-2.UNROLL-1.WARPS-2.ptx": [("q4k_q8_gemv", h100, "1x14336x4096", "nvjitlink"),
                                                    ("q4k_q8_gemv", h100, "1x4096x14336", "nvjitlink")],
        "q4k_dp4a.M-8.ROWS-2.UNROLL-1.WARPS-2.ptx": [("q4k_q8_gemv", h100, "8x14336x4096", "nvjitlink")]}


def test_unknown_ambiguous_and_stale(tuned_dir, capsys):
    code, out, err = run(capsys, "compile", SRC.name, "--tuned", "A100", "-k", "q4k_q8_gemv", "--list-outputs")
    assert code == 0 and out.strip() == "q4k_dp4a.ptx" and "no tuned table" in err and "defaults" in err
    code, _, err = run(capsys, "compile", SRC.name, "--tuned", "NVIDIA", "--list-outputs")
    assert code == 2 and "matches several devices" in err
    code, _, err = run(capsys, "compile", SRC.name, SRC.name, "--tuned", "H100", "--list-outputs")
    assert code == 2 and "one source file" in err
    (tuned_dir / SRC.name).write_text(SRC.read_text() + "\n// edited after tuning\n")
    code, out, err = run(capsys, "compile", SRC.name, "--tuned", "H100", "-k", "q4k_q8_gemv", "--list-outputs")
    assert code == 0 and out.strip() == "q4k_dp4a.ptx" and "another version of q4k_dp4a.ember" in err


def test_a_configuration_chosen_through_the_driver_is_named(tuned_dir, capsys):
    """The table says the H200's M = 1 configuration was fastest through the driver's JIT:
    the build says that its cubin is nvJitLink's and how to get the driver's SASS."""
    path = tuned_dir / "tuned" / "q4k_q8_gemv.json"
    t = T.read(path)
    t["devices"]["NVIDIA H200 sm_90"]["1x14336x4096"].update(
        sass_path="driver", us=10.0, best_by_path={"nvjitlink": {"config": {}, "us": 11.0}})
    T.write(path, t)
    code, _, err = run(capsys, "compile", SRC.name, "--tuned", "H200", "-k", "q4k_q8_gemv", "--list-outputs")
    assert code == 0 and "fastest through the driver's JIT (10.0 us; its best through nvJitLink 11.0 us)" in err
    assert "--image ptx" in err
    code, _, err = run(capsys, "compile", SRC.name, "--tuned", "H100", "-k", "q4k_q8_gemv", "--list-outputs")
    assert code == 0 and "driver" not in err


def test_a_bool_configuration_is_spelled_as_a_define(tmp_path, capsys, monkeypatch):
    """A tuned bool (attention_split's PREFETCH, stored as JSON true) becomes `-D
    PREFETCH=true`, which the kernel takes - Python's `True` it does not."""
    src = SRC.parent / "decode_attention.ember"
    shutil.copy(src, tmp_path / src.name)
    (tmp_path / "tuned").mkdir()
    t = T.new_table("attention_split", tmp_path / src.name)
    t["devices"] = {"NVIDIA H100 80GB HBM3 sm_90": {"1x4096x1 c128": {
        "config": {"WARPS": 4, "U": 1, "PREFETCH": True},
        "defines": {"T": "f32", "D": 128, "G": 4, "M": 1, "CHUNK": 128, "KG": 4}}}}
    T.write(tmp_path / "tuned" / "attention_split.json", t)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "compile", src.name, "--tuned", "h100", "-k", "attention_split", "-o", "out/")
    assert code == 0, err
    [ptx] = (tmp_path / "out").iterdir()
    assert "PREFETCH-true" in ptx.name and "U-1" in ptx.name


def test_the_runtime_and_ember_ops_spell_a_bool_configuration_as_a_define():
    from ember.driver import define_text
    from ember.tuning.pick import values_key
    assert values_key({"PREFETCH": True, "WARPS": 4, "T": "f32"}) == (("PREFETCH", "true"), ("T", "f32"), ("WARPS", "4"))
    assert define_text(False) == "false" and define_text(1.5) == "1.5"
