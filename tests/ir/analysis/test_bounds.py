"""ember.ir.analysis.bounds and the driver's E0409: an array access the pipeline makes a
constant outside its array is a compile error, exactly when the simulator would report the
access out of bounds (S0001), and never for one inside it - over generated programs of the
kind that hid it (a device function filling a per-thread array through a pointer, in a
loop unrolled with the kernel's const values, at a signed offset that may be negative)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from ember.diagnostics import CompileError
from ember.sim import load
from ember.sim.errors import SimError

FILL = """
fn fill(a: *mut local u32, at: i32, n: u32) {{
    unroll for i in 0..n {{
        a[at + i32(i)] = i + 1u32;
    }}
}}
kernel k<const N: u32, const AT: i32>(y: *mut global u32) block(32) {{
    var a: [u32; {length}];
    fill(a, AT, N);
    var s = 0u32;
    unroll for j in 0..{length}u32 {{
        s += a[j];
    }}
    y[thread_idx.x] = s;
}}
"""


def _compile(tmp_path, length: int, n: int, at: int, opt: int = 3):
    src = tmp_path / "fill.ember"
    src.write_text(FILL.format(length=length))
    return ember.compile(src, defines={"N": n, "AT": at}, opt=opt)


@settings(max_examples=30, deadline=None)
@given(length=st.integers(1, 8), n=st.integers(1, 8), at=st.integers(-3, 8))
def test_an_error_exactly_where_the_simulator_finds_the_access_out_of_bounds(tmp_path_factory, length, n, at):
    tmp_path = tmp_path_factory.mktemp("bounds")
    outside = at < 0 or at + n > length
    try:
        prog = _compile(tmp_path, length, n, at)
    except CompileError as e:
        assert outside, e
        assert [d.code for d in e.diagnostics.errors] == ["E0409"]
        message = e.diagnostics.errors[0].message
        first = at if at < 0 else max(at, length)          # the first access outside, in program order
        assert f"writes element {first} of per-thread array `a`, outside its {length} element" in message
        # -O0 unrolls nothing: it compiles, and the simulator finds the access
        with pytest.raises(SimError) as found:
            load(_compile(tmp_path, length, n, at, opt=0)).k(np.zeros(32, np.uint32), grid=(1,))
        assert found.value.code == "S0001"
        return
    assert not outside
    y = np.zeros(32, np.uint32)
    load(prog).k(y, grid=(1,))
    assert (y == sum(range(1, n + 1))).all()


def test_an_index_known_only_at_run_time_is_left_to_the_simulator(tmp_path):
    """Only what is certain is an error: an index that is not a constant after the pipeline
    (here the thread's own) compiles, and the simulator finds the threads that go outside."""
    src = tmp_path / "lanes.ember"
    src.write_text("""
kernel k(y: *mut global u32) block(32) {
    var a: [u32; 4];
    a[thread_idx.x % 8u32] = 1u32;
    y[thread_idx.x] = a[0];
}
""")
    with pytest.raises(SimError) as found:
        load(ember.compile(src)).k(np.zeros(32, np.uint32), grid=(1,))
    assert found.value.code == "S0001"
