"""kernels_src/rope.ember: every variant compiles and validates for sm_80 and sm_90,
keeps its pair accesses as vector loads (adjacent pairs) and uses no local memory."""

import re
from pathlib import Path

import pytest

from tests.conftest import compile_both

ROPE = Path(__file__).resolve().parents[2] / "kernels_src" / "rope.ember"


@pytest.mark.parametrize("head_dim", [64, 128, 256])
@pytest.mark.parametrize("neox", [False, True])
@pytest.mark.parametrize("backward", [False, True])
@pytest.mark.parametrize("fast", [False, True])
def test_variants_compile(head_dim, neox, backward, fast):
    progs = compile_both(ROPE, defines={"HEAD_DIM": head_dim, "NEOX": neox, "BACKWARD": backward, "FAST": fast})
    for prog in progs.values():
        assert set(prog.kernels) == {"rope", "rope_out"}
        assert prog.kernels["rope"].block == (head_dim // 2, 1, 1)
        assert ".local" not in prog.ptx
        if not neox:
            assert "ld.global.v2" in prog.ptx and "st.global.v2" in prog.ptx
        if not fast:
            assert ".approx" not in prog.ptx


def test_hand_ptx_baselines_validate():
    from ember.artifacts.validate import validate
    for f in sorted((ROPE.parent / "baselines").glob("rope*.ptx")):
        for arch in ("sm_80", "sm_90"):
            assert validate(f.read_text(), arch).kernels["rope_hand"].spill_stores == 0


@pytest.mark.parametrize("t", ["f16", "bf16"])
def test_half_precision_io_keeps_vector_accesses(t):
    progs = compile_both(ROPE, defines={"HEAD_DIM": 128, "T": t})
    for prog in progs.values():
        # each pair is one 4-byte access: loaded as v2.b16, stored packed in one b32
        assert "v2.b16" in prog.ptx and re.search(r"st\.global\.(v2\.b16|b32)", prog.ptx)
        assert not re.search(r"(ld|st)\.global(\.nc)?\.b16", prog.ptx)
        assert ".local" not in prog.ptx


@pytest.mark.parametrize("t", ["f32", "bf16"])
@pytest.mark.parametrize("neox", [False, True])
def test_several_pairs_a_thread_make_wider_accesses(t, neox):
    """PAIRS = 4: a thread's values are neighbours (2 x 4, or 4 in each half with NEOX), so
    every load and store of them is an 8-byte vector access (the pointers promise align(8)):
    no lone element is read or written; the one scalar load is the token's position."""
    import ember
    ptx = ember.compile(ROPE, defines={"HEAD_DIM": 128, "T": t, "NEOX": neox, "PAIRS": 4}, kernels=["rope_out"]).ptx
    accesses = re.findall(r"(?:ld|st)\.global\S*", ptx)
    assert accesses.count("ld.global.nc.b32") == 1                      # positions[token]
    vector = {"f32": {"ld.global.nc.v2.b32", "st.global.v2.b32"}, "bf16": {"ld.global.nc.v4.b16", "st.global.v2.b32"}}[t]
    assert set(accesses) - {"ld.global.nc.b32"} == vector, accesses
