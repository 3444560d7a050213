"""bench.layer_profile refuses arguments it cannot profile before it touches a GPU."""

import pytest

from bench import layer_profile


@pytest.mark.parametrize("argv", [[], ["1"], ["one", "512"], ["9", "512"], ["1", "0"], ["1", "512", "fp8"],
                                  ["1", "512", "digits", "extra"]])
def test_bad_arguments_are_refused_with_the_usage(argv, capsys):
    assert layer_profile.main(argv) == 2
    assert "usage: python -m bench.layer_profile" in capsys.readouterr().err


def test_stale_tables_are_refused_before_a_gpu(monkeypatch, capsys):
    from ember.tuning import table
    monkeypatch.setattr(table, "stale_shipped", lambda: ["attention_cluster_mma"])
    assert layer_profile.main(["1", "512"]) == 2
    assert "stale tuned tables (attention_cluster_mma" in capsys.readouterr().err
