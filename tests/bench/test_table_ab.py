"""bench.table_ab: its table from a result, and what it refuses before it touches a GPU (a
file that is not a table, one made from another version of the source, bad shapes)."""

import contextlib
import json

import pytest

from bench import table_ab

RESULT = {"device": "NVIDIA H200", "date": "2026-11-28", "torch": "2.11.0", "kernel": "q4k_digits_gemv", "layers": 4,
          "activations": "digits", "q4_k_m": False, "rounds": 2,
          "rows": [{"batch": 2, "context": 4096, "launches": {"shipped": 8.0, "candidate": 8.0},
                    "us": {"shipped": [90.1, 90.3], "candidate": [88.0, 88.2]}, "candidate_over_shipped": 0.9767}]}


def test_the_table_has_both_sides_and_their_ratio():
    md = table_ab.markdown(RESULT)
    assert md.strip().splitlines()[-1] == "| 2 | 4096 | 90.1, 90.3 | 88, 88.2 | 0.977 | 8 / 8 |"
    assert "`q4k_digits_gemv`" in md and "NVIDIA H200" in md and "nvJitLink" in md


@pytest.mark.parametrize("change, argv, message", [
    ("not json", [], "is not a tuned table"),
    ("stale", [], "made from another version of its source"),
    (None, ["--batch", "9"], "batches 1..8"),
])
def test_refused_before_a_gpu(change, argv, message, tmp_path, capsys):
    from ember.tuning.workloads import KERNELS_SRC
    path = tmp_path / "candidate.json"
    table = json.loads((KERNELS_SRC / "tuned" / "q4k_digits_gemv.json").read_text())
    if change == "stale":
        table["source_hash"] = "0" * 64
    path.write_text("{" if change == "not json" else json.dumps(table))
    with pytest.warns(UserWarning) if change == "stale" else contextlib.nullcontext():
        assert table_ab.main([str(path), *argv]) == 2
    assert message in capsys.readouterr().err

