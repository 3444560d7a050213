"""The tuner's decisions that need no GPU: the choice, its tie rule, the parallel compile."""

from ember.tuning.runner import choose, precompile
from ember.tuning.workloads import source_of


def test_the_fastest_is_chosen_and_ties_go_to_the_first_declared():
    results = [{"index": 3, "config": "c", "sass_path": "nvjitlink", "us": 2.0},
               {"index": 1, "config": "a", "sass_path": "driver", "us": 2.0},
               {"index": 1, "config": "a", "sass_path": "nvjitlink", "us": 2.0},
               {"index": 2, "config": "b", "sass_path": "driver", "us": 1.5},
               {"index": 0, "config": "w", "sass_path": "nvjitlink", "us": None}]
    chosen, runner_up = choose(results)
    assert (chosen["config"], chosen["sass_path"]) == ("b", "driver")
    assert (runner_up["config"], runner_up["sass_path"]) == ("a", "nvjitlink")   # a tie: the runtime's default path
    assert choose(list(reversed(results))) == (chosen, runner_up)           # not the order measured
    assert choose([]) == (None, None)


def test_precompile_reports_each_configuration_that_does_not_compile():
    src = str(source_of("q4k_gemv"))
    jobs = [(src, "sm_90", {"WARPS": 2}, "q4k_gemv"), (src, "sm_90", {"WARPS": 0}, "q4k_gemv")]
    errors = precompile(jobs, workers=2)
    assert errors[0] is None and "error" in errors[1]
    assert precompile(jobs[:1], workers=1) == [None]
