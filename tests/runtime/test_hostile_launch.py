"""A kernel launched in the simulator with each argument, grid and block replaced by a
hostile value - other types, bools, NaN, numbers out of range, arrays of other dtypes,
shapes and strides: a launch runs, is refused with LaunchError (or TypeError / ValueError
for a call Python itself would refuse), or the simulator reports what the kernel did
(SimError: an access out of bounds) - never another error from inside Ember. (A bool for a
u32 passed as 1 until 2026-11-27.)"""

import numpy as np
import pytest

import ember
from ember.runtime import LaunchError, load
from ember.sim.errors import SimError

SOURCE = """kernel k(x: *mut global f32, y: *global f32 align(16), n: u32, s: f32, h: bf16) block(32) {
    let i = block_idx.x * 32u32 + thread_idx.x;
    if i < n { x[i] = y[i] * s + f32(h); }
}"""

VALUES = [None, "s", 3, -1, 0, 2.5, float("nan"), float("inf"), -float("inf"), True, np.True_, [1, 2], (), 2 ** 40,
          -2 ** 40, 1e300, np.int64(5), np.uint64(2 ** 63), complex(1, 1), b"xx", {"a": 1}, np.float32(3),
          np.array(3.0), memoryview(b"abcd"), bytearray(256), np.zeros(0, np.float32), np.zeros((8, 8), np.float32),
          np.zeros(64, np.float64), np.zeros(64, np.float32)[::2], np.zeros(65, np.float32)[1:],
          (1, 1, 1, 1), (0,), (2 ** 31,), (1, 70000), [2], (1.0,), (np.int32(2),)]
ALLOWED = (LaunchError, TypeError, ValueError, SimError)


@pytest.fixture(scope="module")
def kernel():
    return load(ember.compile(SOURCE, arch="sm_90"), "sim").k


def _args():
    return [np.zeros(64, np.float32), np.ones(64, np.float32), 64, 2.0, 1.0]


def test_the_valid_launch_runs(kernel):
    args = _args()
    kernel(*args, grid=2)
    assert (args[0] == 3.0).all()


@pytest.mark.parametrize("slot", ["x", "y", "n", "s", "h", "grid", "block", "stream"])
def test_each_hostile_value_is_refused_or_runs(kernel, slot):
    names = ["x", "y", "n", "s", "h"]
    for value in VALUES:
        args, kw = _args(), {"grid": 2}
        if slot in names:
            args[names.index(slot)] = value
        else:
            kw[slot] = value
        try:
            kernel(*args, **kw)
        except ALLOWED as e:
            assert "Traceback" not in str(e)
        except Exception as e:          # noqa: BLE001 - the point: nothing else may come out
            pytest.fail(f"{slot}={value!r:.40}: {type(e).__name__}: {e}")
    if slot in ("n", "s", "h"):
        for flag in (True, np.True_):  # no parameter is a bool: a flag passed for a number
            args = _args()
            args[names.index(slot)] = flag
            with pytest.raises(LaunchError, match=f"`{slot}` is .*, got bool"):
                kernel(*args, grid=2)
