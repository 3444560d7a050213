"""bench.q4km_qkv_ab's table from a result (no GPU): every side's rounds, its ratio to the
three launches, the launches of each side."""

from bench import q4km_qkv_ab

RESULT = {"device": "NVIDIA H200", "date": "2026-11-28", "torch": "2.11.0", "layers": 4, "quick": False,
          "rows": [{"batch": 2, "context": 4096,
                    "launches": {"one launch": 8.0, "one launch, the table's rows": 8.0, "apart": 10.0},
                    "us": {"one launch": [102.92, 103.05], "one launch, the table's rows": [106.81, 106.93],
                           "apart": [104.52, 104.5]},
                    "over_apart": {"one launch": 0.9847, "one launch, the table's rows": 1.022, "apart": 1.0}}]}


def test_the_table_has_each_side_and_its_ratio():
    md = q4km_qkv_ab.markdown(RESULT)
    row = md.strip().splitlines()[-1]
    assert row == ("| 2 | 4096 | 102.92, 103.05 | 106.81, 106.93 | 104.52, 104.5 | 0.985 | 1.022 | 8 / 8 / 10 |")
    header, rule = md.strip().splitlines()[-3:-1]
    assert header.count("|") == rule.count("|") == row.count("|")
    assert "NVIDIA H200" in md and "nvJitLink" in md
