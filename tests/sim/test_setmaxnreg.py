"""setmaxnreg_inc / setmaxnreg_dec: warpgroup-wide (the simulator reports part of a
warpgroup running it), arch-specific (sm_90a), a register count of 24..256 in steps of 8."""

import numpy as np
import pytest

import ember
from ember.diagnostics import CompileError
from ember.sim.errors import SimError

SRC = """kernel k(out: *mut global u32) block(256) min_blocks(1) {
    if warp_id < PRODUCERS {
        setmaxnreg_dec(40);
        out[thread_idx.x] = 1u32;
    } else {
        setmaxnreg_inc(232);
        out[thread_idx.x] = 2u32;
    }
}"""


def test_warpgroups_trade_registers():
    prog = ember.compile(SRC.replace("PRODUCERS", "4u32"), arch="sm_90a", stop_after="ir-opt", cache=False)
    out = np.zeros(256, np.uint32)
    ember.runtime.load(prog, device="sim").k(out, grid=1)
    np.testing.assert_array_equal(out, np.repeat([1, 2], 128))
    ptx = ember.compile(SRC.replace("PRODUCERS", "4u32"), arch="sm_90a", cache=False).ptx
    assert "setmaxnreg.dec.sync.aligned.u32 40;" in ptx and "setmaxnreg.inc.sync.aligned.u32 232;" in ptx


def test_part_of_a_warpgroup_is_reported():
    prog = ember.compile(SRC.replace("PRODUCERS", "3u32"), arch="sm_90a", stop_after="ir-opt", cache=False)
    with pytest.raises(SimError) as err:
        ember.runtime.load(prog, device="sim").k(np.zeros(256, np.uint32), grid=1)
    assert err.value.diagnostic.code == "S0010" and "not by thread 96 of its warpgroup" in err.value.diagnostic.message


@pytest.mark.parametrize("arch, change, message", [
    ("sm_90", None, "`setmaxnreg_dec` needs an arch-specific target (sm_90a); the target is sm_90"),
    ("sm_90a", ("setmaxnreg_dec(40)", "setmaxnreg_dec(44)"), "must be a multiple of 8, not 44"),
    ("sm_90a", ("setmaxnreg_inc(232)", "setmaxnreg_inc(264)"), "must be 24..256, not 264"),
])
def test_located_errors(arch, change, message):
    src = SRC.replace("PRODUCERS", "4u32")
    if change:
        src = src.replace(*change)
    with pytest.raises(CompileError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ember.compile(src, arch=arch, cache=False)
