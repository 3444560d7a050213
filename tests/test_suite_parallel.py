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
