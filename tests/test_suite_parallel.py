"""`pytest` alone spreads the suite over the cores (tests/conftest.py's pytest_cmdline_main);
named paths, `-n`, `--pdb` and pytest-xdist's own workers keep pytest's choice."""

from types import SimpleNamespace

import pytest

from tests import conftest


class _Plugins:
    def __init__(self, xdist: bool):
        self.xdist = xdist

    def hasplugin(self, name: str) -> bool:
        return name == "xdist" and self.xdist


def _config(source, xdist=True, numprocesses=None, dist="no", pdb=False):
    option = SimpleNamespace(numprocesses=numprocesses, dist=dist, usepdb=pdb, collectonly=False)
    return SimpleNamespace(args_source=source, pluginmanager=_Plugins(xdist), option=option,
                           getoption=lambda name, default=None: getattr(option, name, default))


def test_the_whole_suite_runs_on_every_core(monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    config = _config(pytest.Config.ArgsSource.TESTPATHS)
    conftest.pytest_cmdline_main(config)
    assert config.option.numprocesses == "auto"


@pytest.mark.parametrize("change", [{"source": pytest.Config.ArgsSource.ARGS}, {"xdist": False},
                                    {"numprocesses": 0}, {"numprocesses": 3}, {"dist": "loadfile"}, {"pdb": True}])
def test_named_paths_and_explicit_choices_are_kept(monkeypatch, change):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    kw = {"source": pytest.Config.ArgsSource.TESTPATHS, **change}
    config = _config(kw.pop("source"), **kw)
    before = config.option.numprocesses
    conftest.pytest_cmdline_main(config)
    assert config.option.numprocesses == before


def test_a_worker_does_not_spread_again(monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    config = _config(pytest.Config.ArgsSource.TESTPATHS)
    conftest.pytest_cmdline_main(config)
    assert config.option.numprocesses is None


def test_a_test_id_holding_a_memory_address_stops_the_collection():
    """Such an id differs between xdist's workers, which then refuse to run anything (a flag
    test's `object()` parameter with ids=repr did so, 2026-11-27): named at collection."""
    items = [SimpleNamespace(nodeid="tests/t.py::test_x[<object object at 0x7f83a1cc7610>]", keywords={}),
             SimpleNamespace(nodeid="tests/t.py::test_y[an object]", keywords={})]
    with pytest.raises(pytest.UsageError, match=r"test_x\[<object object at 0x7f83a1cc7610>\]"):
        conftest.pytest_collection_modifyitems(None, items)


def _items(sizes: dict) -> list:
    return [SimpleNamespace(nodeid=f"{f}::test_{i}", keywords={}) for f, n in sizes.items() for i in range(n)]


def test_shards_partition_the_collection_by_whole_files_of_about_as_many_tests():
    """`--shard K/N` (for a GPU suite longer than one command may run): the shards together
    hold every test once, each file whole in one shard, the largest files spread first."""
    sizes = {"tests/gpu/a.py": 40, "tests/gpu/b.py": 30, "tests/gpu/c.py": 25, "tests/gpu/d.py": 10,
             "tests/gpu/e.py": 9, "tests/gpu/f.py": 1}
    items = _items(sizes)
    shards = [conftest.shard_of(items, k, 3) for k in (1, 2, 3)]
    assert sorted(i.nodeid for s in shards for i in s) == sorted(i.nodeid for i in items)
    files = [{i.nodeid.split("::")[0] for i in s} for s in shards]
    assert all(not (files[a] & files[b]) for a in range(3) for b in range(a + 1, 3))
    assert [len(s) for s in shards] == [40, 39, 36]          # a | b e | c d f
    assert conftest.shard_of(items, 1, 1) == items


@pytest.mark.parametrize("spec", ["0/3", "4/3", "1", "a/b", "1/0"])
def test_a_shard_outside_one_to_n_is_refused(spec):
    config = SimpleNamespace(getoption=lambda name: spec)
    with pytest.raises(pytest.UsageError, match=f"--shard {spec}: K/N with 1 <= K <= N"):
        conftest.pytest_collection_modifyitems(config, _items({"tests/t.py": 2}))


def test_shard_deselects_what_other_shards_run():
    deselected = []
    config = SimpleNamespace(getoption=lambda name: "2/2",
                             hook=SimpleNamespace(pytest_deselected=lambda items: deselected.extend(items)))
    items = _items({"tests/x.py": 3, "tests/y.py": 2})
    kept = list(items)
    conftest._shard(config, kept)
    assert [i.nodeid.split("::")[0] for i in kept] == ["tests/y.py"] * 2
    assert len(deselected) == 3
