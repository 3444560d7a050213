"""`ember tune --restamp` (ember.tuning.restamp): a table survives an edit of its kernel's
source that left the measured code's PTX unchanged, and is refused - each changed entry
named - when the code changed or when its entries carry no PTX hash to check."""

import json

import pytest

from ember.tuning import table as T
from ember.tuning.restamp import ptx_sha256, restamp
from tests.test_cli import run

SRC = """// a kernel with one tunable const
kernel k<const N: u32 = 2 tune [1, 2, 4]>(x: *mut global f32) block(32) {
    x[thread_idx.x] = x[thread_idx.x] * f32(N);
}
"""


def _table(path, configs: dict) -> dict:
    """A table of kernel `k` made from `path` as it is now: a bucket per config, no hashes."""
    t = T.new_table("k", path)
    t["devices"] = {"GPU sm_90": {f"b{i}": {"config": c, "defines": {}, "us": 1.0} for i, c in enumerate(configs)},
                    "GPU sm_80": {"b0": {"config": None, "defines": {}, "us": None}}}
    return t


def _recorded(tmp_path):
    src = tmp_path / "k.ember"
    src.write_text(SRC)
    first = restamp("k", _table(src, [{"N": 1}, {"N": 4}]), src)
    assert first.ok and first.lines == ["k: the table is current; PTX hashes recorded for 2 entries"]
    entry = first.table["devices"]["GPU sm_90"]["b1"]
    assert entry["arch"] == "sm_90" and entry["ptx_sha256"] == ptx_sha256(src, "sm_90", {"N": 4}, "k")
    return src, first.table


def test_a_current_table_gets_its_entries_ptx_hashes(tmp_path):
    src, table = _recorded(tmp_path)
    again = restamp("k", table, src)
    assert again.ok and again.table is None and again.lines == ["k: the table is current"]


def test_an_edit_that_leaves_the_ptx_alone_is_restamped(tmp_path):
    src, table = _recorded(tmp_path)
    src.write_text(SRC.replace("// a kernel with one tunable const", "// reworded: the code is the same"))
    with pytest.warns(UserWarning, match="source hash differs"):
        assert not T.current(table, src)
    done = restamp("k", table, src)
    assert done.ok and done.table["source_hash"] == T.source_hash(src)
    assert done.lines == ["k: restamped: every entry (2) compiles to the PTX it was measured with from k.ember as "
                          "it is now"]


def test_an_edit_of_the_code_is_refused_and_names_the_entries(tmp_path):
    src, table = _recorded(tmp_path)
    src.write_text(SRC.replace("* f32(N)", "* f32(N) + 1.0"))
    done = restamp("k", table, src)
    assert not done.ok and done.table is None
    assert "k: GPU sm_90, b0: the configuration now compiles to other PTX than was measured" in done.lines
    assert done.lines[-1] == ("k: not restamped: k.ember (or a file it imports) changed the code of 2 entries; "
                              "rerun `ember tune k`")


def test_entries_without_hashes_cannot_be_restamped(tmp_path):
    src = tmp_path / "k.ember"
    src.write_text(SRC)
    table = _table(src, [{"N": 2}])
    src.write_text(SRC + "// an edit\n")
    done = restamp("k", table, src)
    assert not done.ok and done.table is None
    assert "k: GPU sm_90, b0: no PTX hash recorded (tuned before they were): cannot be checked" in done.lines


def test_a_changed_default_leaves_no_old_time_beside_the_new_default(tmp_path):
    """An edit of the kernel's default (N 2 -> 4) leaves every tuned configuration's PTX
    alone: restamped, and each entry names the new default, its time (the old default's)
    dropped - or the entry's own nvJitLink time of that configuration; a default that only
    lacks a parameter added since keeps its time."""
    src, table = _recorded(tmp_path)
    for e in table["devices"]["GPU sm_90"].values():
        e["default"], e["default_us"] = {"N": 2}, 3.0
        e["best_by_path"] = {"nvjitlink": {"config": {"N": 1}, "us": 0.5}}
    src.write_text(SRC.replace("const N: u32 = 2", "const N: u32 = 4"))
    done = restamp("k", table, src)
    assert done.ok and done.lines[-1] == ("k: the kernel's defaults changed: 2 entries now name the new default "
                                          "configuration, its time dropped (the old default's) unless the entry "
                                          "timed it")
    assert [(e["default"], e["default_us"]) for e in done.table["devices"]["GPU sm_90"].values()] == \
        [({"N": 4}, None)] * 2
    table["devices"]["GPU sm_90"]["b1"]["best_by_path"]["nvjitlink"]["config"] = {"N": 4}
    timed = restamp("k", table, src)
    assert [e["default_us"] for e in timed.table["devices"]["GPU sm_90"].values()] == [None, 0.5]
    src.write_text(SRC.replace("const N: u32 = 2 tune [1, 2, 4]", "const N: u32 = 4 tune [1, 2, 4], "
                                                                   "const M: u32 = 1 tune [1]"))
    for e in table["devices"]["GPU sm_90"].values():
        e["default"], e["default_us"] = {"N": 4}, 3.0
    kept = restamp("k", table, src)
    assert kept.ok and [(e["default"], e["default_us"]) for e in kept.table["devices"]["GPU sm_90"].values()] == \
        [({"N": 4, "M": 1}, 3.0)] * 2


def test_the_command_restamps_a_shipped_table_without_a_gpu(capsys, tmp_path):
    shipped = T.table_path("rmsnorm_rows")
    copy = tmp_path / "t.json"
    copy.write_text(shipped.read_text())
    code, out, _ = run(capsys, "tune", "rmsnorm_rows", "--restamp", "-o", str(copy))
    assert code == 0 and "rmsnorm_rows: the table is current" in out
    assert json.loads(copy.read_text()) == json.loads(shipped.read_text())
    code, _, err = run(capsys, "tune", "rmsnorm_rows", "--restamp", "--shape", "16384x4096 f32")
    assert code == 2 and "--restamp measures nothing" in err
    code, _, err = run(capsys, "tune", "rmsnorm_rows", "--restamp", "-o", str(tmp_path / "none.json"))
    assert code == 2 and "no table" in err


def test_a_source_that_does_not_compile_is_reported_where_it_fails(capsys, tmp_path, monkeypatch):
    """Exit 1 with the compiler's located diagnostic - not an internal error."""
    from ember.tuning import workloads
    broken = tmp_path / "rmsnorm.ember"
    broken.write_text(workloads.source_of("rmsnorm_rows").read_text().replace("kernel rmsnorm_rows<", "kernel <", 1))
    copy = tmp_path / "t.json"
    copy.write_text(T.table_path("rmsnorm_rows").read_text())
    monkeypatch.setattr(workloads, "source_of", lambda kernel: broken)
    code, _, err = run(capsys, "tune", "rmsnorm_rows", "--restamp", "-o", str(copy))
    assert code == 1 and "rmsnorm.ember:" in err and "error[E0001]" in err and "internal" not in err


@pytest.mark.parametrize("path", sorted(T.table_path("rmsnorm_rows").parent.glob("*.json")), ids=lambda p: p.stem)
def test_shipped_entries_carry_their_ptx_hash(path):
    """So that an edit of a kernel's comments can be restamped rather than retuned."""
    table = T.read(path)
    for device, buckets in table["devices"].items():
        for bucket, e in buckets.items():
            if e.get("config") is not None:
                assert len(e.get("ptx_sha256", "")) == 64 and e.get("arch"), (device, bucket)


def test_after_an_edit_the_entries_whose_code_it_left_alone_are_still_measured(tmp_path):
    """still_measured (what a retune of some buckets keeps of a stale table): an edit that
    changes the code of N = 4 only keeps the N = 1 entry and names the other; entries
    without a hash or without a configuration are dropped, since nothing can vouch for them."""
    from ember.tuning.restamp import still_measured
    src, table = _recorded(tmp_path)
    table["devices"]["GPU sm_90"]["b2"] = {"config": {"N": 2}, "defines": {}, "us": 1.0}      # no hash
    src.write_text(SRC.replace("x[thread_idx.x] * f32(N)", "x[thread_idx.x] * f32(N) * select(N == 4u32, 0.5, 1.0)"))
    assert ptx_sha256(src, "sm_90", {"N": 1}, "k") == table["devices"]["GPU sm_90"]["b0"]["ptx_sha256"]
    kept, dropped = still_measured("k", table, src)
    assert kept == {"GPU sm_90": {"b0": table["devices"]["GPU sm_90"]["b0"]}}
    assert sorted(dropped) == [("GPU sm_80", "b0"), ("GPU sm_90", "b1"), ("GPU sm_90", "b2")]
