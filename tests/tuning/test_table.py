"""Tuned tables: written deterministically, merged per device, refused with a warning
when the kernel's source changed after tuning, and with an error naming the part when
their structure is broken."""

import json
import re
import shutil

import pytest

from ember.tuning import table as T
from ember.tuning.workloads import source_of


def entry(config, us, sass_path="nvjitlink"):
    return {"config": config, "sass_path": sass_path, "us": us, "runner_up": None}


def test_lookup_finds_the_device_and_bucket_and_falls_back_to_none(tmp_path):
    src = source_of("q4k_gemv")
    t = T.new_table("q4k_gemv", src)
    t["devices"][T.device_key("NVIDIA H100 80GB HBM3", "sm_90")] = {"1x14336x4096": entry({"WARPS": 8, "ROWS": 1}, 40.0)}
    path = tmp_path / "q4k_gemv.json"
    T.write(path, t)
    text = path.read_bytes()
    T.write(path, T.read(path))
    assert path.read_bytes() == text and text.endswith(b"\n")            # same table, same bytes
    t = T.read(path)
    assert T.lookup(t, src, "NVIDIA H100 80GB HBM3", "sm_90", "1x14336x4096") == T.Tuned({"WARPS": 8, "ROWS": 1})
    assert T.lookup(t, src, "NVIDIA H200", "sm_90", "1x14336x4096") is None
    assert T.lookup(t, src, "NVIDIA H100 80GB HBM3", "sm_90", "8x14336x4096") is None


def test_a_table_of_edited_source_is_refused_with_a_warning(tmp_path):
    src = tmp_path / "q4k_gemv.ember"
    shutil.copy(source_of("q4k_gemv"), src)
    t = T.new_table("q4k_gemv", src)
    t["devices"]["GPU sm_90"] = {"b": entry({"WARPS": 8}, 1.0)}
    assert T.lookup(t, src, "GPU", "sm_90", "b") == T.Tuned({"WARPS": 8})
    src.write_text(src.read_text() + "\n// edited after tuning\n")
    with pytest.warns(UserWarning, match="another version of q4k_gemv.ember"):
        assert T.lookup(t, src, "GPU", "sm_90", "b") is None


def test_merge_keeps_other_devices_and_drops_stale_tables():
    src = source_of("q4k_gemv")
    old = T.new_table("q4k_gemv", src)
    old["devices"] = {"H100 sm_90": {"a": entry({}, 1.0), "b": entry({}, 2.0)}, "H200 sm_90": {"a": entry({}, 3.0)}}
    new = T.new_table("q4k_gemv", src)
    new["devices"] = {"H100 sm_90": {"b": entry({}, 5.0)}}
    merged = T.merge(old, new)
    assert merged["devices"] == {"H100 sm_90": {"a": entry({}, 1.0), "b": entry({}, 5.0)},
                                 "H200 sm_90": {"a": entry({}, 3.0)}}
    stale = json.loads(json.dumps(old))
    stale["source_hash"] = "0" * 64
    with pytest.warns(UserWarning, match="its 2 entries they do not replace are dropped"):
        assert T.merge(stale, new) == new


def test_shipped_tables_match_their_sources_and_serve_config_for():
    """Each table under kernels_src/tuned/ was made from the kernel source as committed (an
    edit after tuning must be retuned), and config_for reads it by device and bucket."""
    import warnings
    from ember.tuning import config_for, tuned_for
    from ember.tuning.workloads import WORKLOADS
    shipped = sorted(source_of("q4k_gemv").parent.glob("tuned/*.json"))
    assert {"q4k_gemv", "q4k_q8_gemv", "rmsnorm_rows"} <= {p.stem for p in shipped} <= set(WORKLOADS)
    for kernel in (p.stem for p in shipped):
        t = T.read(T.table_path(kernel))
        assert t["kernel"] == kernel and t["source_hash"] == T.source_hash(source_of(kernel)), kernel
        for key, buckets in t["devices"].items():
            name, arch = key.rsplit(" ", 1)
            for bucket, e in buckets.items():
                assert T.entry_sass_path(t, e) in ("nvjitlink", "driver")
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    assert config_for(kernel, bucket, device_name=name, arch=arch) == e["config"]
                    tuned = tuned_for(kernel, bucket, device_name=name, arch=arch)
                    assert tuned == T.Tuned(e["config"], T.entry_sass_path(t, e))
    with pytest.warns(UserWarning, match="not tuned for Some GPU sm_80"):
        assert config_for("q4k_gemv", "1x14336x4096", device_name="Some GPU", arch="sm_80") == {}


# buckets a shipped table has never held on any GPU (the workload lists them; tuning them is
# left): a bucket missing from this list and from a device's entries is an entry lost
NEVER_TUNED = {"gemm_bf16": {"2048x14336x4096"}}


def test_shipped_tables_hold_every_bucket_of_their_workload():
    """Each device of a shipped table has an entry for every bucket `ember tune` measures for
    the kernel: merging a partial retune made from newer source (ember.tuning.table.merge
    replaces a table of other source whole) once left a table of one bucket a device, and
    ember.ops ran the defaults everywhere else without failing a test."""
    from ember.tuning.workloads import WORKLOADS
    for path in sorted(source_of("q4k_gemv").parent.glob("tuned/*.json")):
        t = T.read(path)
        want = set(WORKLOADS[path.stem][2]) - NEVER_TUNED.get(path.stem, set())
        for key, buckets in t["devices"].items():
            assert want <= set(buckets), (path.stem, key, sorted(want - set(buckets)))


def test_config_for_without_a_table_warns_and_uses_the_defaults(tmp_path):
    from ember.tuning import config_for
    with pytest.warns(UserWarning, match="no tuned table"):
        assert config_for("q4k_gemv", "b", device_name="GPU", arch="sm_90", path=tmp_path / "none.json") == {}


def test_each_entry_names_its_sass_path_and_old_tables_their_one_path(tmp_path):
    """An entry chosen through the driver's JIT is served with that path; a table written
    before both paths were measured names one path for all its entries."""
    src = source_of("q4k_gemv")
    t = T.new_table("q4k_gemv", src)
    assert t["sass_paths"] == ["nvjitlink", "driver"]
    t["devices"]["GPU sm_90"] = {"a": entry({"WARPS": 2}, 1.0, "driver"), "b": entry({"WARPS": 4}, 1.0)}
    assert T.lookup(t, src, "GPU", "sm_90", "a") == T.Tuned({"WARPS": 2}, "driver")
    assert T.lookup(t, src, "GPU", "sm_90", "b") == T.Tuned({"WARPS": 4}, "nvjitlink")
    old = {k: v for k, v in t.items() if k != "sass_paths"}
    old["sass_path"] = "nvjitlink"
    old["devices"] = {"GPU sm_90": {"a": {"config": {"WARPS": 8}, "us": 1.0}}}
    assert T.lookup(old, src, "GPU", "sm_90", "a") == T.Tuned({"WARPS": 8}, "nvjitlink")


def _kernel_with_import(d):
    d.mkdir(parents=True, exist_ok=True)
    (d / "helper.ember").write_text("fn twice(x: f32) -> f32 { return x + x; }\n")
    (d / "k.ember").write_text('import "helper.ember";\n'
                               "kernel k(o: *mut global f32) block(32) { o[thread_idx.x] = twice(1.0); }\n")
    return d / "k.ember"


def test_an_edit_of_an_imported_file_makes_the_table_stale(tmp_path):
    """The hash covers the files the kernel imports: a table of the kernel before an edit of
    one is refused, as one of an edited kernel is."""
    src = _kernel_with_import(tmp_path)
    t = T.new_table("k", src)
    t["devices"]["GPU sm_90"] = {"b": entry({"WARPS": 8}, 1.0)}
    assert T.lookup(t, src, "GPU", "sm_90", "b") == T.Tuned({"WARPS": 8})
    (tmp_path / "helper.ember").write_text("fn twice(x: f32) -> f32 { return 2.0 * x; }\n")
    with pytest.warns(UserWarning, match="another version of k.ember or of a file it imports"):
        assert T.lookup(t, src, "GPU", "sm_90", "b") is None


def test_the_source_hash_does_not_depend_on_where_the_files_are(tmp_path):
    assert T.source_hash(_kernel_with_import(tmp_path / "a")) == T.source_hash(_kernel_with_import(tmp_path / "b" / "c"))


def test_a_table_of_format_1_is_refused_its_hash_not_covering_imports(tmp_path):
    src = _kernel_with_import(tmp_path)
    t = T.new_table("k", src)
    t["devices"]["GPU sm_90"] = {"b": entry({"WARPS": 8}, 1.0)}
    t["format"] = 1
    with pytest.warns(UserWarning, match="format 1, whose source hash does not cover the files k.ember imports"):
        assert T.lookup(t, src, "GPU", "sm_90", "b") is None


def test_every_shipped_configuration_compiles_as_the_tools_spell_it():
    """Each entry of each shipped table, its const values and configuration written as
    ember.ops, the runtime and `ember compile --tuned` write them (define_text), checks
    with the kernel as committed: a bool spelled Python's way (`True`) or a configuration
    the source no longer admits fails here, not on a user's GPU."""
    import ember
    from ember.driver import define_text
    from ember.tuning.workloads import WORKLOADS
    seen = set()
    for p in sorted(source_of("q4k_gemv").parent.glob("tuned/*.json")):
        t = T.read(p)
        arch = "sm_90a" if t["kernel"] == "gemm_wgmma" else None
        for buckets in t["devices"].values():
            for e in buckets.values():
                if e.get("config") is None:
                    continue
                defines = {k: define_text(v) for k, v in {**e.get("defines", {}), **e["config"]}.items()}
                key = (t["kernel"], tuple(sorted(defines.items())))
                if key in seen:
                    continue
                seen.add(key)
                ember.compile(source_of(t["kernel"]), kernels=[t["kernel"]], defines=defines, stop_after="ast",
                              cache=False, **({"arch": arch} if arch else {}))
    assert len({k for k, _ in seen}) == len(list(source_of("q4k_gemv").parent.glob("tuned/*.json")))
    assert set(k for k, _ in seen) <= set(WORKLOADS)


def test_a_table_is_written_as_ember_writes_outputs_and_a_non_table_is_named(tmp_path):
    """T.write goes through ember.output_files (a link is refused, its target untouched), and
    T.read of a file that is no table is an error naming it (`ember tune K --restamp -o FILE`
    on it exited 70 with a JSON traceback's message)."""
    from ember.cli_support import CommandError
    from ember.output_files import OutputNotOurs
    decoy = tmp_path / "decoy.json"
    decoy.write_text("not a table")
    (tmp_path / "t.json").symlink_to("decoy.json")
    with pytest.raises(OutputNotOurs, match="symbolic link"):
        T.write(tmp_path / "t.json", T.new_table("q4k_gemv", source_of("q4k_gemv")))
    assert decoy.read_text() == "not a table"
    with pytest.raises(CommandError, match="decoy.json is not a tuned table"):
        T.read(decoy)
    decoy.write_text("[1, 2]")
    with pytest.raises(CommandError, match="no kernel and devices"):
        T.read(decoy)


BAD_TABLES = [
    ({"source": None}, "`source` is null, not a string"),
    ({"devices": {"GPU sm_90": [1]}}, 'device "GPU sm_90" holds [1], not an object of buckets'),
    ({"devices": {"GPU sm_90": {"b": 5}}}, 'the entry of "GPU sm_90" at "b" is 5, not an object with a `config`'),
    ({"devices": {"GPU sm_90": {"b": {"us": 1.0}}}}, "not an object with a `config`"),
    ({"devices": {"GPU sm_90": {"b": {"config": {"WARPS": [4]}}}}}, "an object of const values, or null"),
    ({"devices": {"GPU sm_90": {"b": {"config": {}, "us": "fast"}}}}, '`us` "fast" of the wrong type'),
    ({"devices": {"GPU sm_90": {"b": {"config": {}, "defines": 3}}}}, "`defines` 3 of the wrong type"),
    ({"devices": {"GPU sm_90": {"b": {"config": {}, "sass_path": "ptxas"}}}}, '"ptxas": nvjitlink or driver'),
]


@pytest.mark.parametrize("change, message", BAD_TABLES)
def test_a_malformed_table_is_named_with_what_is_wrong(change, message, tmp_path, capsys):
    """A table whose structure its readers could not use (a hand edit): an error naming the
    file and the part - `ember tune --restamp` failed inside Ember (exit 70) on a bucket that
    was not an object, and `ember compile --tuned` passed over a table without its source."""
    from ember.cli_support import CommandError
    from tests.test_cli import run
    t = {**T.new_table("rmsnorm_rows", source_of("rmsnorm_rows")), **change}
    path = tmp_path / "rmsnorm_rows.json"
    path.write_text(json.dumps(t))
    with pytest.raises(CommandError, match=f"{path} is not a tuned table: .*{re.escape(message)}"):
        T.read(path)
    code, _, err = run(capsys, "tune", "rmsnorm_rows", "--restamp", "-o", str(path))
    assert code == 1 and message in err


def test_stale_shipped_names_the_tables_a_benchmark_would_measure_the_defaults_of(tmp_path):
    """stale_shipped: none of the shipped tables; a table beside a copy of its source edited
    after tuning, and one of format 1, by kernel name - without a warning."""
    import shutil
    import warnings
    assert T.stale_shipped() == []
    src = source_of("q4k_gemv")
    (tmp_path / "tuned").mkdir()
    shutil.copy(src, tmp_path / src.name)
    for kernel in ("q4k_gemv", "q4k_q8_gemv"):
        shutil.copy(T.table_path(kernel), tmp_path / "tuned" / f"{kernel}.json")
    old = json.loads((tmp_path / "tuned" / "q4k_q8_gemv.json").read_text())
    (tmp_path / "tuned" / "q4k_q8_gemv.json").write_text(json.dumps({**old, "format": 1}))
    shutil.copy(source_of("q4k_q8_gemv"), tmp_path / old["source"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert T.stale_shipped(tmp_path / "tuned") == ["q4k_q8_gemv"]
        (tmp_path / src.name).write_text(src.read_text() + "\n// edited after tuning\n")
        assert T.stale_shipped(tmp_path / "tuned") == ["q4k_gemv", "q4k_q8_gemv"]
