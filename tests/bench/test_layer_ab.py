"""bench/layer_ab.py's report says how it timed: a --quick run (fewer replays, graphs of 20
attention calls) is named as one, so that its noisier figures are not read as a full run's."""

from bench.layer_ab import markdown

ROW = {"batch": 1, "context": 512, "ember_us": 65.2, "ember_two_digits_us": 63.3, "ember_q8_1_us": 61.4,
       "ember_without_pdl_us": 67.9, "ember_qkv_rope_apart_us": 66.5, "floor_us": 41.4, "ember_of_floor": 0.635,
       "launches_per_layer": 8.0, "torch_bf16_eager_us": 709.2, "torch_bf16_graph_us": 241.4,
       "ember_attention_us": 5.2, "torch_sdpa_us": 8.4, "attention_ember_over_sdpa": 0.618}


def _report(**extra) -> str:
    return markdown({"device": "NVIDIA H100 80GB HBM3", "date": "2026-11-28", "torch": "2.11", "copy_TBps": 3.0,
                     "rows": [ROW], **extra})


def test_a_quick_run_says_so():
    quick = _report(quick=True)
    assert "Timed with --quick" in quick and "graphs of 20 calls, median of 3" in quick
    assert "graphs of 100 calls" not in quick


def test_a_full_run_states_its_repetitions():
    for full in (_report(quick=False), _report()):     # no flag: a full run
        assert "--quick" not in full and "graphs of 100 calls, median of 5" in full
        assert "5 rounds of 20 graph replays" in full
