"""Shared test setup.

- Tests marked `gpu` are skipped when no CUDA GPU is present.
- The compile cache is off (EMBER_NO_CACHE=1, also for the `ember` processes tests
  start), so that every test exercises the compiler; tests of the cache turn it on with
  a directory of their own.
- After every test, `/dev/null` and `/dev/full` must still be character devices: CI runs
  as root, where a rename over a device path replaces the machine's device.
- Every PTX any test produces through `ember.compile` is assembled with nvJitLink (or
  ptxas) for its target, in threads beside the tests; a PTX that does not assemble fails
  the run at the session's end. `compile_both` compiles a program for sm_80 and sm_90, so
  every kernel source in the tests is validated for both.
- The whole suite (`pytest` with no paths: the testpaths) runs on one pytest-xdist worker
  a core where pytest-xdist is installed (the `test` extra has it): on CI's two cores
  that halves its time. Naming paths, `-n N` (`-n 0`: one process) or `-p no:xdist`
  keeps pytest's own choice.
- `--shard K/N` runs one of N parts of what was collected (whole files, about as many tests
  each): the GPU suite takes longer than one command on the GPU machine may run.
"""

from __future__ import annotations

import os
import re
import stat

os.environ["EMBER_NO_CACHE"] = "1"
os.environ.pop("EMBER_CACHE_DIR", None)

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

import ember  # noqa: E402
from ember import driver  # noqa: E402
from ember.ir import verifier  # noqa: E402

verifier.CHECK_USES = True     # every IR the tests make has its use lists checked after every pass
verifier.VERIFY_EACH = True

# CI runs are reproducible (derandomized); HYPOTHESIS_PROFILE=explore searches afresh.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

_emitted: dict[tuple, str] = {}


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """`pytest` alone distributes the suite over the cores (before pytest-xdist's own hook
    reads its options); see the module's docstring."""
    whole_suite = config.args_source == pytest.Config.ArgsSource.TESTPATHS
    if (whole_suite and config.pluginmanager.hasplugin("xdist") and getattr(config.option, "numprocesses", 0) is None
            and config.getoption("dist", "no") == "no" and not config.getoption("usepdb", False)
            and not config.getoption("collectonly", False) and "PYTEST_XDIST_WORKER" not in os.environ):
        config.option.numprocesses = "auto"


def _record(program) -> None:
    """A PTX new to the session goes to the validators at once: they run beside the tests
    (nvJitLink and ptxas without the GIL), so that the session's end waits only for the
    last ones. (All at the end, one thread a core: the teardown of the last test took 52 s
    on one of CI's two workers and 28 s on the other, 2026-11-28.)"""
    key = (program.arch, program.ptx)
    if key not in _emitted:
        _emitted[key] = program.name
        _validations.append(_validators().submit(_check_ptx, key, program.name))


_validations: list = []
_pool: list = []


def _validators():
    if not _pool:
        from concurrent.futures import ThreadPoolExecutor
        _pool.append(ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="ptx-validation"))
    return _pool[0]


def _check_ptx(key: tuple, name: str, at_the_end: bool = False):
    """None where the PTX assembles for its target; else the failure's line - or, during the
    session, the arguments to check again at its end where the validator itself failed: a
    test may have made it fail for a while (test_cli's missing nvJitLink patches its create)."""
    from ember.artifacts.validate import ValidationError, validate
    arch, ptx = key
    try:
        validate(ptx, arch)
    except ValidationError as e:
        return f"{name} ({arch}): {e.log[:500]}"
    except Exception as e:           # noqa: BLE001 - see the docstring
        return f"{name} ({arch}): not validated: {type(e).__name__}: {e}" if at_the_end else (key, name)
    return None


driver.compile_hooks.append(_record)


# A memory address in a test's id (a parameter's default repr, `<object object at 0x...>`)
# differs from process to process: pytest-xdist's workers then collect different tests and
# the whole run stops before any test (2026-11-27)
_ADDRESS = re.compile(r" at 0x[0-9a-f]+>")


def pytest_addoption(parser):
    parser.addoption("--shard", metavar="K/N", default=None,
                     help="run shard K of N (1 <= K <= N): the collected test files dealt out so that the N "
                          "shards hold about as many tests each - for a suite longer than one command may run "
                          "(the GPU tests on the GPU machine: `pytest -m gpu tests/gpu --shard 1/3`, then 2/3, 3/3)")


def shard_of(items, k: int, n: int) -> list:
    """The items of shard k (1-based) of n: whole test files, the largest first, each to the
    shard holding the fewest tests so far (ties: the lower shard), so that the n shards
    partition the collection, the same way for the same collection."""
    files: dict = {}
    for item in items:
        files.setdefault(item.nodeid.split("::")[0], []).append(item)
    load, owner = [0] * n, {}
    for name in sorted(files, key=lambda f: (-len(files[f]), f)):
        i = min(range(n), key=lambda s: (load[s], s))
        owner[name] = i
        load[i] += len(files[name])
    return [item for item in items if owner[item.nodeid.split("::")[0]] == k - 1]


def _shard(config, items) -> None:
    spec = config.getoption("shard")
    if spec is None:
        return
    m = re.fullmatch(r"([0-9]+)/([0-9]+)", spec)
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise pytest.UsageError(f"--shard {spec}: K/N with 1 <= K <= N is needed, e.g. --shard 1/3")
    keep = shard_of(items, int(m.group(1)), int(m.group(2)))
    kept = {id(item) for item in keep}
    config.hook.pytest_deselected(items=[item for item in items if id(item) not in kept])
    items[:] = keep


def pytest_collection_modifyitems(config, items):
    unstable = [item.nodeid for item in items if _ADDRESS.search(item.nodeid)]
    if unstable:
        raise pytest.UsageError("test ids that hold a memory address (give the parameter a stable repr or "
                                "`ids=`): " + ", ".join(unstable[:5]))
    _shard(config, items)
    from ember.runtime import cuda_available
    if cuda_available():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU available")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


DEVICES = ("/dev/null", "/dev/full")


def _not_devices() -> list:
    out = []
    for path in DEVICES:
        try:
            if not stat.S_ISCHR(os.lstat(path).st_mode):
                out.append(path)
        except FileNotFoundError:
            pass        # a system without it (nothing a test could have replaced)
    return out


@pytest.fixture(autouse=True)
def devices_stay_devices():
    """A test that turns /dev/null into a regular file fails, naming itself (and the rest
    of the session is not blamed: the test after it starts from the same state)."""
    before = _not_devices()
    yield
    broken = [p for p in _not_devices() if p not in before]
    if broken:
        pytest.fail(f"{', '.join(broken)} is no longer a character device after this test "
                    "(an output was renamed over it)")


@pytest.fixture(scope="session", autouse=True)
def validate_every_ptx():
    yield
    from ember.artifacts.validate import nvjitlink_available, ptxas_path
    if not (nvjitlink_available() or ptxas_path()):
        pytest.fail("no PTX validator (nvJitLink or ptxas): cannot validate the emitted PTX")
    results = [v.result() for v in _validations]
    results = [_check_ptx(*r, at_the_end=True) if isinstance(r, tuple) else r for r in results]
    failures = [f for f in results if f is not None]
    if _pool:
        _pool[0].shutdown()
    if failures:
        pytest.fail("PTX that does not assemble:\n" + "\n".join(failures))


def compile_both(source, **kw) -> dict:
    """Compile for sm_80 and sm_90; returns {arch: Program} (both get validated)."""
    return {arch: ember.compile(source, arch=arch, **kw) for arch in ("sm_80", "sm_90")}


@pytest.fixture
def compile_checked():
    return compile_both
