"""What a wheel holds: pyproject.toml lists ember's packages by hand (kernels_src/ is mapped to
the package `ember_kernels`, which setuptools' discovery cannot find), so a package added to
ember/ and left out of the list would be missing from every non-editable install; and
ember.ops, `ember tune` and the tuned tables find the shipped kernels through
ember.shipped, in a checkout and installed alike."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _setuptools():
    tomllib = pytest.importorskip("tomllib")
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def _dirs(top: Path, name: str) -> set:
    return {".".join((name,) + d.relative_to(top).parts) for d in [top, *top.rglob("*")]
            if d.is_dir() and d.name != "__pycache__" and any(f.is_file() for f in d.iterdir())}


def test_every_package_of_ember_and_of_kernels_src_is_listed():
    config = _setuptools()
    assert config["package-dir"] == {"ember_kernels": "kernels_src"}
    want = _dirs(ROOT / "ember", "ember") | _dirs(ROOT / "kernels_src", "ember_kernels")
    assert sorted(config["packages"]) == sorted(want)


def test_the_shipped_kernels_their_tables_and_baselines_are_package_data():
    data = _setuptools()["package-data"]
    assert data["ember_kernels"] == ["*.ember"] and data["ember_kernels.tuned"] == ["*.json"]
    assert data["ember_kernels.baselines"] == ["*.ptx"]


def test_the_kernels_are_found_where_they_are():
    from ember.shipped import KERNELS_SRC
    assert (KERNELS_SRC / "rope.ember").is_file() and (KERNELS_SRC / "tuned").is_dir()
    assert KERNELS_SRC.resolve() == (ROOT / "kernels_src").resolve()     # this checkout's, installed editable or not
