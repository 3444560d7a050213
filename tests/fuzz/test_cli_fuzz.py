"""The CLI mutation fuzzer (ember.fuzz.cli_fuzz), a fixed-seed portion: mutated programs
and command lines end with exit status 0, 1 or 2, no traceback or internal error, in
time. The long run is `python -m ember.fuzz cli --count 10000` (docs/testing.md)."""

import os

import pytest

from ember.fuzz import cli_fuzz


@pytest.fixture(scope="module")
def programs():
    return cli_fuzz.seed_programs()


def test_fixed_seeds_end_cleanly(programs):
    problems, statuses = [], set()
    for seed in range(150):
        case = cli_fuzz.make_case(seed, programs)
        code, problem = cli_fuzz.run_case(case)
        statuses.add(code)
        if problem:
            problems.append((seed, case.argv, problem))
    assert problems == []
    assert statuses == {0, 1, 2}     # the cases reach success, program errors and usage errors


def test_the_fuzzer_reports_an_internal_error(programs, monkeypatch):
    """It can fail: a parser that crashes on integer literals is caught."""
    from ember.frontend import parser
    monkeypatch.setattr(parser, "_parse_int", lambda text: int("not a number"))
    case = cli_fuzz.Case(0, ["compile", "k.ember"], {"k.ember": "kernel k(x: *mut global u32) block(32) { x[0] = 7; }"})
    code, problem = cli_fuzz.run_case(case)
    assert code == 70 and "exit status 70" in problem


def test_mutations_make_deep_and_long_programs():
    import random
    m = cli_fuzz.Mutator(random.Random(3))
    src = "kernel k(x: *mut global f32) block(32) {\n    x[0] = x[1];\n}\n"
    deep = [m.deepen(src) for _ in range(40)]
    assert any("(" * 200 in d for d in deep) and any("-" * 200 in d for d in deep)
    assert any("if true {\n" * 200 in d for d in deep) and any("{\n" * 200 in d for d in deep)
    assert m.lengthen(src).count("x[1]") >= 500
    assert "fz3" in m.fan_out(src)


def _links_written(monkeypatch):
    """Ember's outputs as they were until 2026-11-27: a symbolic link taken for the file it
    names (run as root, `-o k.ptx` with k.ptx a link to /etc/passwd replaced the passwd)."""
    from ember import output_files
    from ember.artifacts import command
    checked = output_files.check_output

    def links_followed(path, inputs=(), what="the output"):
        return "replace" if os.path.islink(path) else checked(path, inputs, what)
    monkeypatch.setattr(output_files, "check_output", links_followed)
    monkeypatch.setattr(command, "check_output", links_followed)
    return output_files


def _case(out: str):
    src = "kernel k(x: *mut global u32) block(32) { x[0] = 7; }"
    return cli_fuzz.Case(0, ["compile", "k.ember", "-o", out], {"k.ember": src},
                         links={"link.ptx": cli_fuzz.DECOY[0], "dangling.ptx": cli_fuzz.DANGLING_TARGET})


def test_the_fuzzer_reports_a_write_through_a_link(monkeypatch):
    """It can fail: the bytes written to a link's target, or a dangling link's target made."""
    _links_written(monkeypatch)
    assert "a link's target, was written through the link" in cli_fuzz.run_case(_case("link.ptx"))[1]
    assert "a dangling link's target, was created" in cli_fuzz.run_case(_case("dangling.ptx"))[1]


def test_the_fuzzer_reports_a_replaced_link(monkeypatch):
    """It can fail: an output written by renaming over the path as given (the link itself)."""
    output_files = _links_written(monkeypatch)

    def naive(real, raw, shown):
        with open(shown + ".tmp", "wb") as f:
            f.write(raw)
        os.replace(shown + ".tmp", shown)
    monkeypatch.setattr(output_files, "_replace", naive)
    assert "link.ptx was replaced" in cli_fuzz.run_case(_case("link.ptx"))[1]
