"""ember.lowering.local_memory: the kernels whose PTX keeps per-thread arrays in local
memory (W0004; the diagnostic itself: tests/test_driver.py and
tests/lit/diagnostics/local_memory.ember)."""

from ember.lowering.local_memory import local_depots


def test_local_depots_are_the_kernels_arrays_in_local_memory():
    """W0004 reads the PTX: a kernel (.entry) that declares a local depot keeps that many
    bytes of per-thread arrays in local memory; a device function's depot (.func, with a
    return parameter) is not a kernel's, and a kernel without one is not named."""
    ptx = """.visible .func  (.param .b32 func_retval0) helper(
\t.param .b32 helper_param_0
)
{
\t.local .align 4 .b8 \t__local_depot0[16];
\tret;
}
.visible .entry k1(
\t.param .u64 k1_param_0
)
{
\t.local .align 8 .b8 \t__local_depot1[128];
\tret;
}
.visible .entry k2(
\t.param .u64 k2_param_0
)
{
\tret;
}
"""
    assert local_depots(ptx) == {"k1": 128}
