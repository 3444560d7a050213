"""The accurate math ops in the lowering (ember.lowering.lower_expansion): each template is
recorded once and replayed as the very lines that lowering it in place writes; the PTX is
the same bytes as when expand-math copies the templates into the IR first."""

import pytest

import ember
from ember.frontend.builtins import BUILTINS
from ember.ir.ops import OPS
from ember.ir.passes import PIPELINES
from ember.lowering import lower_expansion

ACCURATE = sorted({b.op: b.name for b in BUILTINS.values()
                   if b.op and OPS[b.op].expanded_by == "expand-math"}.items())


def test_every_accurate_op_is_covered():
    assert [op for op, _ in ACCURATE] == sorted(n for n, d in OPS.items() if d.expanded_by == "expand-math")


def _source(fn: str, t: str) -> str:
    """Two uses of `fn`: one in the entry block, one inside an `if` (so the second is
    numbered and named after blocks and values of the first)."""
    call = "let (s, c) = sincos(v); let r = s - c;" if fn == "sincos" else f"let r = {fn}(v);"
    return f"""
kernel k(x: *mut global {t}, n: u32) block(32) {{
    let i = thread_idx.x;
    let v = x[i] * {t}(3.0);
    {call}
    x[i] = r;
    if i < n {{
        let v = r + x[i + 32];
        {call}
        x[i + 32] = r;
    }}
}}
"""


def _llvm(src: str, arch: str) -> str:
    return ember.compile(src, arch=arch, cache=False, stop_after="llvm").stage("llvm")


@pytest.mark.parametrize("op,fn", ACCURATE)
@pytest.mark.parametrize("t", ["f32", "f64"])
def test_replay_writes_what_lowering_in_place_writes(op, fn, t, monkeypatch):
    src = _source(fn, t)
    for arch in ("sm_80", "sm_90"):
        replayed = _llvm(src, arch)
        assert lower_expansion._recordings[(op, _type(t), arch, _ptx(arch))] is not None
        with monkeypatch.context() as m:
            m.setattr(lower_expansion, "_recordings", {})
            m.setattr(lower_expansion, "record_expansion", lambda *a: None)
            assert _llvm(src, arch) == replayed


def _type(name: str):
    from ember.ir.types import F32, F64
    return {"f32": F32, "f64": F64}[name]


def _ptx(arch: str):
    from ember import targets
    return targets.resolve(arch, None).ptx


@pytest.mark.parametrize("defines", [{"HEAD_DIM": 128}, {"HEAD_DIM": 64, "NEOX": True, "BACKWARD": True}])
def test_ptx_is_the_same_as_with_expand_math_in_the_ir(defines):
    path = ember.__path__[0] + "/../kernels_src/rope.ember"
    plain = ember.compile(path, defines=defines, cache=False)
    copied = ember.compile(path, defines=defines, cache=False, passes=PIPELINES[3] + ["expand-math"])
    assert "math.sincos" in plain.stage("ir-opt") and "math.sincos" not in copied.stage("ir-opt")
    assert plain.ptx == copied.ptx


def test_every_accurate_op_in_one_kernel_same_ptx_either_way():
    body = "\n".join(f"    x[i + {32 * k}] = {fn}(x[i + {32 * k}]);" if fn != "sincos" else
                     f"    let (s, c) = sincos(x[i + {32 * k}]); x[i + {32 * k}] = s * c;"
                     for k, (_, fn) in enumerate(ACCURATE))
    for t in ("f32", "f64"):
        src = f"kernel k(x: *mut global {t}) block(32) {{\n    let i = thread_idx.x;\n{body}\n}}\n"
        for opt in (0, 3):
            plain = ember.compile(src, opt=opt, cache=False)
            copied = ember.compile(src, opt=opt, cache=False, passes=PIPELINES[opt] + ["expand-math"])
            assert plain.ptx == copied.ptx, (t, opt)


def test_an_expansion_that_touches_the_module_is_lowered_in_place(monkeypatch):
    """A template whose lowering adds metadata is not recorded (it could not be replayed):
    every use is lowered in place, with the same output."""
    src = _source("exp", "f32")
    want = _llvm(src, "sm_90")
    plain = lower_expansion.lower_in_place

    def touching(L, name, t, args):
        L.L.ll.add_metadata([])
        return plain(L, name, t, args)
    monkeypatch.setattr(lower_expansion, "_recordings", {})
    assert lower_expansion.record_expansion("math.exp", _type("f32"), _module_lowering()) is not None
    monkeypatch.setattr(lower_expansion, "lower_in_place", touching)
    assert lower_expansion.record_expansion("math.exp", _type("f32"), _module_lowering()) is None
    got = _llvm(src, "sm_90")
    assert lower_expansion._recordings[("math.exp", _type("f32"), "sm_90", _ptx("sm_90"))] is None
    # the metadata node the in-place lowering adds is the only difference
    assert got != want
    assert _code(got) == _code(want)


def _code(llvm: str) -> list:
    return [line for line in llvm.splitlines() if not line.startswith("!")]


def _module_lowering():
    from ember import targets
    from ember.lowering import ptx as ptxmod
    from ember.lowering.llvm_lower import ModuleLowering
    target = targets.resolve("sm_90", None)
    return ModuleLowering(None, target, ptxmod.data_layout(target))
