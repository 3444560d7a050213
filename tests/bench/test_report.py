"""bench/report.py: a benchmark's results are named for the GPU they were measured on."""

import json

from bench.report import for_device, save


def test_an_h200_result_gets_its_own_files(tmp_path):
    """An H200 run writes NAME_h200 beside the H100's NAME (which it must not replace), also
    when the caller named it so already."""
    save(str(tmp_path), "attention_ab", {"device": "NVIDIA H200", "rows": [1]}, "# h200\n")
    save(str(tmp_path), "attention_ab", {"device": "NVIDIA H100 80GB HBM3", "rows": [2]}, "# h100\n")
    assert json.loads((tmp_path / "attention_ab_h200.json").read_text())["rows"] == [1]
    assert (tmp_path / "attention_ab.md").read_text() == "# h100\n"
    assert for_device(for_device("layer_ab", "NVIDIA H200"), "NVIDIA H200") == "layer_ab_h200"


def test_a_benchmark_refuses_stale_tables_unless_allowed(monkeypatch, capsys):
    """`python -m bench layer` (and every benchmark whose Ember side takes tuned tables) stops
    with exit 2 and the stale tables named, before touching a GPU; --allow-stale measures."""
    import sys

    import bench.__main__ as main
    from bench import report
    from ember.tuning import table
    monkeypatch.setattr(table, "stale_shipped", lambda: ["q4k_digits_gemv"])
    monkeypatch.setattr(main, "_missing", lambda which: None)
    monkeypatch.setattr(sys, "argv", ["bench", "layer"])
    assert main.main() == 2
    err = capsys.readouterr().err
    assert "stale tuned tables (q4k_digits_gemv" in err and "--restamp" in err and "--allow-stale" in err
    assert report.refuse_stale_tables(allow=True) is None
    assert {"layer", "attention", "ops_gemv", "tuned"} <= main.TABLES_USED
