"""Which kernels may be programmatic dependent launches (ember.ir.analysis.grid_dependency):
proven on the optimized IR - a top-level griddep_wait before anything that may touch
global memory - and what the programmatic_launch option inserts."""

import pytest

import ember
from ember.targets import TargetError


def _programmatic(src: str, **kw) -> bool:
    prog = ember.compile(src, cache=False, **kw)
    (info,) = prog.kernels.values()
    return info.programmatic


WAITS_FIRST = """
kernel k(x: *global f32, y: *mut global f32, n: u32) {
    griddep_launch_dependents();
    let i = block_idx.x * block_dim.x + thread_idx.x;
    griddep_wait();
    if i < n { y[i] = x[i] * 2.0; }
}
"""


def test_a_wait_before_every_global_access_qualifies():
    assert _programmatic(WAITS_FIRST)
    assert _programmatic(WAITS_FIRST, opt=0)


def test_a_global_load_before_the_wait_does_not():
    src = """
kernel k(x: *global f32, y: *mut global f32, n: u32) {
    let i = block_idx.x * block_dim.x + thread_idx.x;
    let v = x[i];
    griddep_wait();
    if i < n { y[i] = v; }
}
"""
    assert not _programmatic(src)


def test_a_global_store_in_a_branch_before_the_wait_does_not():
    src = """
kernel k(y: *mut global f32, n: u32) {
    let i = block_idx.x * block_dim.x + thread_idx.x;
    if i == 0 { y[0] = 1.0; }
    griddep_wait();
    if i < n { y[i] = 2.0; }
}
"""
    assert not _programmatic(src)


def test_a_wait_only_some_threads_reach_proves_nothing():
    src = """
kernel k(x: *global f32, y: *mut global f32, n: u32) {
    let i = block_idx.x * block_dim.x + thread_idx.x;
    if i < n {
        griddep_wait();
        y[i] = x[i];
    }
}
"""
    assert not _programmatic(src)


def test_shared_memory_may_be_used_before_the_wait():
    src = """
kernel k(x: *global f32, y: *mut global f32) block(32) {
    shared s: [f32; 32];
    let i = thread_idx.x;
    s[i] = f32(i);
    barrier();
    griddep_wait();
    y[i] = x[i] + s[31 - i];
}
"""
    assert _programmatic(src)


def test_an_atomic_or_a_fence_before_the_wait_counts_as_global():
    for before in ("atomic_add(c, 0, 1u32);", "fence();"):
        src = f"""
kernel k(c: *mut global u32, y: *mut global f32) block(32) {{
    {before}
    griddep_wait();
    y[thread_idx.x] = 1.0;
}}
"""
        assert not _programmatic(src), before


def test_a_tensor_map_copy_before_the_wait_counts_as_global():
    """tma_load's pointers are shared (the tile, the mbarrier): the map names the global
    tensor it reads, so the copy counts as a global access."""
    from tests.sim.tma_programs import load_source
    src = load_source()
    assert not _programmatic(src.replace("    mbarrier_wait(bar, 0, 0u32);", "    griddep_wait();\n"
                                         "    mbarrier_wait(bar, 0, 0u32);"))
    first = src.replace("    shared bar: [u64; 1];\n", "    shared bar: [u64; 1];\n    griddep_wait();\n")
    assert first != src and _programmatic(first)


def test_without_a_wait_a_kernel_is_a_plain_launch():
    src = WAITS_FIRST.replace("griddep_wait();", "")
    assert not _programmatic(src)


def test_the_option_starts_every_kernel_with_the_wait_and_no_signal():
    src = WAITS_FIRST.replace("griddep_wait();", "").replace("griddep_launch_dependents();", "")
    assert not _programmatic(src)
    prog = ember.compile(src, cache=False, programmatic_launch=True)
    assert prog.kernels["k"].programmatic
    ptx = prog.ptx
    entry = ptx[ptx.index(".entry k("):]
    assert entry.index("griddepcontrol.wait;") < entry.index("ld.global")
    assert "launch_dependents" not in ptx
    assert "gpu.griddep_wait" in ember.compile(src, cache=False, programmatic_launch=True,
                                               stop_after="ir").stage("ir")


def test_the_signal_mode_signals_before_the_wait():
    src = WAITS_FIRST.replace("griddep_wait();", "").replace("griddep_launch_dependents();", "")
    prog = ember.compile(src, cache=False, programmatic_launch="signal")
    assert prog.kernels["k"].programmatic
    entry = prog.ptx[prog.ptx.index(".entry k("):]
    assert entry.index("griddepcontrol.launch_dependents;") < entry.index("griddepcontrol.wait;") \
        < entry.index("ld.global")
    assert ember.compile(src, cache=False, programmatic_launch=True).ptx == \
        ember.compile(src, cache=False, programmatic_launch="wait").ptx


def test_the_option_keeps_a_kernels_own_wait():
    src = """
kernel k(y: *mut global f32) block(32) {
    shared s: [f32; 32];
    s[thread_idx.x] = 1.0;
    griddep_wait();
    y[thread_idx.x] = s[thread_idx.x];
}
"""
    ptx = ember.compile(src, cache=False, programmatic_launch=True).ptx
    assert ptx.count("griddepcontrol.wait;") == 1


PREFETCHES_FIRST = """
fn scaled(i: u32) -> u32 { return i * 4u32 + 1u32; }
fn first(x: *global f32, i: u32) -> f32 { return x[i]; }
kernel k(w: *global u32, x: *global f32, y: *mut global f32, n: u32) block(64) {
    shared s: [f32; 64];
    let i = block_idx.x * 64u32 + thread_idx.x;
    s[thread_idx.x] = f32(i);
    for l in 0u32..4u32 {
        prefetch_l2(w, u64(scaled(i) * 32u32 + l));
    }
    barrier();
    let v = first(x, min(i, n - 1u32));
    if i < n { y[i] = v + s[63u32 - thread_idx.x]; }
}
"""


def test_a_prefetch_into_l2_may_come_before_the_wait():
    """prefetch_l2 reads nothing into the thread: L2 is where the kernels' writes meet, so a
    line brought in early is updated by the kernel before like any other."""
    src = """
kernel k(w: *global u32, y: *mut global u32, n: u32) block(64) {
    let i = block_idx.x * 64u32 + thread_idx.x;
    prefetch_l2(w, u64(i) * 32u64);
    griddep_wait();
    if i < n { y[i] = w[i]; }
}
"""
    assert _programmatic(src)
    assert _programmatic(src, opt=0)


def test_the_option_waits_as_late_as_the_proof_allows():
    """The inserted wait comes before the first top-level op that may touch global memory:
    the index arithmetic, the shared memory, the prefetch loop and the call that only
    computes run before it; the call that loads comes after it (also at -O0, where the
    calls stay calls)."""
    for opt in (3, 0):
        prog = ember.compile(PREFETCHES_FIRST, cache=False, programmatic_launch=True, opt=opt)
        assert prog.kernels["k"].programmatic
        entry = prog.ptx[prog.ptx.index(".entry k("):]
        assert entry.index("prefetch.global.L2") < entry.index("griddepcontrol.wait;") < entry.index("ld.global")
        ir = ember.compile(PREFETCHES_FIRST, cache=False, programmatic_launch=True, stop_after="ir",
                           opt=opt).stage("ir")
        kernel = ir[ir.index("kernel @k"):]
        assert kernel.index("mem.prefetch_l2") < kernel.index("gpu.griddep_wait") < kernel.index("func.call @first")


def test_the_option_needs_sm_90_and_a_bool():
    with pytest.raises(TargetError, match="sm_90"):
        ember.compile(WAITS_FIRST, arch="sm_80", cache=False, programmatic_launch=True)
    for bad in (1, "yes", None):
        with pytest.raises(TypeError, match="a bool, \"wait\" or \"signal\""):
            ember.compile(WAITS_FIRST, cache=False, programmatic_launch=bad)


def test_the_option_is_part_of_the_cache_key(tmp_path):
    src = WAITS_FIRST.replace("griddep_wait();", "").replace("griddep_launch_dependents();", "")
    plain = ember.compile(src, cache=tmp_path)
    pdl = ember.compile(src, cache=tmp_path, programmatic_launch=True)
    assert not pdl.cached and "griddepcontrol" not in plain.ptx and "griddepcontrol" in pdl.ptx
    again = ember.compile(src, cache=tmp_path, programmatic_launch=True)
    assert again.cached and again.kernels["k"].programmatic and again.ptx == pdl.ptx
    signal = ember.compile(src, cache=tmp_path, programmatic_launch="signal")
    assert not signal.cached and "launch_dependents" in signal.ptx


# Whether each op with a memory effect may touch global memory (then it must come after the
# wait of a programmatic kernel), as its doc example uses it. A new op with a memory effect
# must be added here: its author says what it touches.
TOUCHES_GLOBAL = {
    "func.call": True,                        # a call not inlined: anything
    "gpu.griddep_wait": False,
    "gpu.ldmatrix": False, "gpu.stmatrix": False, "gpu.mma": False, "gpu.mma_i8": False,
    "gpu.wgmma": False, "gpu.wgmma_rs": False,
    "gpu.wgmma_commit": True, "gpu.wgmma_fence": True, "gpu.wgmma_wait": True,     # no pointer: counted global
    "mem.load": True, "mem.store": True,      # through a global pointer in the example
    "mem.atomic": True, "mem.atomic_load": True, "mem.atomic_store": True, "mem.cas": True,
    "mem.cp_async": True, "mem.cp_async_bulk": True, "mem.cp_async_bulk_store": True,
    "mem.cp_async_wait": True, "mem.cp_async_bulk_wait": True,
    "mem.fence": True, "mem.fence_proxy_async": True,
    "mem.dsmem_load": False, "mem.dsmem_store": False,      # another block's shared memory, same grid
    "mem.mbarrier_init": False, "mem.mbarrier_arrive": False, "mem.mbarrier_arrive_remote": False,
    "mem.mbarrier_try_wait": False,
    "mem.tma_load": True, "mem.tma_load_multicast": True, "mem.tma_store": True,   # the map's global tensor
}


def test_every_op_with_a_memory_effect_is_classified():
    from ember.ir.analysis.grid_dependency import _may_touch_global
    from ember.ir.examples import example_module, first_op
    from ember.ir.ops import OPS
    memory_ops = {n for n, d in OPS.items() if d.reads_memory or d.writes_memory} | {"func.call"}
    assert memory_ops == set(TOUCHES_GLOBAL), "classify the new op in TOUCHES_GLOBAL"
    for name, want in TOUCHES_GLOBAL.items():
        assert _may_touch_global(first_op(example_module(name), name)) == want, name
