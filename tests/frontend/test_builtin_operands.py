"""Every builtin's operands are checked by the front end: a call with any argument of the
wrong kind, type, element type, address space or length (at a constant index) is a
located error (exit 1), never an internal error (exit 70) from the verifier or the
lowering, and a call the checker accepts compiles to PTX.

Each builtin gets a well-typed call (built from its signature); then each argument in
turn is replaced by values from a palette of scalars, pointers, per-thread and shared
arrays of every element type and two lengths, and constants past an attribute's range.
"""

import random

import pytest

import ember
from ember.diagnostics import CompileError, InternalError
from ember.frontend.builtins import BUILTINS
from ember.ir import signature as sig
from ember.ir.ops import OPS

ELEMS = ["f16", "bf16", "f32", "f64", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"]
SCALARS = ELEMS + ["bool"]

PARAMS = ", ".join([f"g_{t}: *mut global {t}" for t in ELEMS] + [f"r_{t}: *global {t}" for t in ELEMS]
                   + ["n: u32", "m_f32: tensormap<f32, [8, 8]>"])
PRELUDE = "\n".join(
    [f"    var a8_{t}: [{t}; 8];\n    var a2_{t}: [{t}; 2];" for t in ELEMS]
    + [f"    shared s_{t}: [{t}; 512];" for t in ELEMS]
    + [f"    let v_{t} = {t}(thread_idx.x & 1u32);" for t in ELEMS if t not in ("f16", "bf16")]
    + ["    let v_f16 = f16(f32(thread_idx.x & 1u32));", "    let v_bf16 = bf16(f32(thread_idx.x & 1u32));",
       "    let v_bool = thread_idx.x < n;",
       "    shared t_bf16: [[bf16; 64]; 64] swizzle(128);", "    var acc32: [f32; 32];",
       "    shared p_f32: [[f32; 8]; 8];"])

# every kind of argument a user can pass
PALETTE = ([f"v_{t}" for t in SCALARS] + [f"g_{t}" for t in ELEMS] + [f"r_{t}" for t in ELEMS]
           + [f"a8_{t}" for t in ELEMS] + [f"a2_{t}" for t in ELEMS] + [f"s_{t}" for t in ELEMS]
           + ["0", "1", "7", "-1", "255", "256", "1.5", "true", "n", "thread_idx.x"]
           + ["t_bf16", "acc32", "m_f32", "p_f32"])

# the builtins that take whole arrays (ember.frontend.check_tiles): their well-typed calls
WHOLE_ARRAYS = {"wgmma": ["acc32", "t_bf16", "0", "0", "t_bf16", "0", "16", "v_bool"],
                "wgmma_rs": ["acc32", "a8_bf16", "0", "t_bf16", "0", "16", "v_bool"],
                "tma_load": ["p_f32", "m_f32", "s_u64", "0", "0", "0"],
                "tma_load_multicast": ["p_f32", "m_f32", "s_u64", "0", "3", "0", "0"],
                "tma_store": ["m_f32", "p_f32", "0", "0"]}


def kernel(call: str) -> str:
    return f"kernel k({PARAMS}) block(32) {{\n{PRELUDE}\n    {call};\n}}\n"


def _pick(spec, binding: dict) -> str:
    """An argument that satisfies `spec` (binding its type variable)."""
    if isinstance(spec, sig.Exact):
        return f"v_{spec.type}" if spec.type.name != "u32" else "n"
    if isinstance(spec, sig.Var):
        t = binding.get(spec.letter) or next(x for x in SCALARS if spec.admits(ember.ir.types.SCALARS[x]))
        binding[spec.letter] = t
        return f"v_{t}"
    if isinstance(spec, sig.PointerTo):
        t = binding.get(spec.var.letter) or next(
            x for x in ELEMS if spec.var.admits(ember.ir.types.SCALARS[x]))
        binding[spec.var.letter] = t
        if "global" in spec.spaces:
            return f"g_{t}"
        return f"s_{t}" if "shared" in spec.spaces else f"a8_{t}"
    raise AssertionError(spec)


def well_typed_args(b) -> list:
    if b.tiles is not None:
        return list(WHOLE_ARRAYS[b.name])
    binding: dict = {}
    args = [_pick(p, binding) for p in b.params]
    return args + [str(OPS[b.op].attrs[attr].lo or 0) for attr, _ in b.const_attrs]


def arch_of(call: str) -> str:
    """sm_90, or sm_90a for a builtin that needs the arch-specific target (setmaxnreg)."""
    name = call.split("(")[0]
    b = BUILTINS.get(name)
    return "sm_90a" if b is not None and b.op and OPS[b.op].arch_specific else "sm_90"


def compile_call(call: str):
    """"ok", or "error" with every diagnostic located; any other outcome raises."""
    try:
        ember.compile(kernel(call), arch=arch_of(call), cache=False)
    except CompileError as e:
        assert all(d.span is not None for d in e.diagnostics.errors), e.diagnostics.render()
        return "error"
    return "ok"


def test_the_palette_compiles():
    assert compile_call("barrier()") == "ok"


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_a_well_typed_call_compiles(name):
    b = BUILTINS[name]
    args = well_typed_args(b)
    assert compile_call(f"{name}({', '.join(args)})") == "ok"


def _cases(count: int, seed: int) -> list:
    r = random.Random(seed)
    out = []
    names = sorted(BUILTINS)
    for k in range(count):
        b = BUILTINS[names[k % len(names)]]
        args = well_typed_args(b)
        if not args:
            continue
        at = r.randrange(len(args))
        args[at] = r.choice(PALETTE)
        out.append(f"{b.name}({', '.join(args)})")
    return out


@pytest.mark.parametrize("chunk", range(4))
def test_any_argument_is_checked_in_the_front_end(chunk):
    problems = []
    for call in _cases(1200, seed=32)[chunk::4]:
        try:
            compile_call(call)
        except InternalError as e:
            problems.append(f"{call}: {str(e)[:200]}")
    assert problems == []


def test_fragment_arrays_too_short_at_constant_offsets_are_errors():
    call = "mma_m16n8k16(a8_f32, 0, a8_f16, 0, a2_f16, 0)"
    with pytest.raises(CompileError, match="touches 4 elements of `b`"):
        ember.compile(kernel(call), arch="sm_90", cache=False)
    with pytest.raises(CompileError, match="touches 8 elements of `a`"):
        ember.compile(kernel("mma_m16n8k16(a8_f32, 0, a8_f16, 1, a8_f16, 0)"), arch="sm_90", cache=False)
    with pytest.raises(CompileError, match="touches 8 elements of `dst`"):
        ember.compile(kernel("ldmatrix_x4(a2_f16, 0, s_f16, thread_idx.x * 8u32)"), arch="sm_90", cache=False)
    ember.compile(kernel("mma_m16n8k16(a8_f32, 4, a8_f16, 0, a8_f16, 4)"), arch="sm_90", cache=False)


def test_attribute_ranges_are_checked_at_the_argument():
    with pytest.raises(CompileError) as e:
        ember.compile(kernel("cp_async_wait(256)"), arch="sm_90", cache=False)
    d = e.value.diagnostics.errors[0]
    assert "must be 0..255, not 256" in d.message and d.span.line_col[0] == kernel("").count("\n") - 1


def test_mixed_fragment_element_types_are_errors():
    with pytest.raises(CompileError, match="mismatched element types"):
        ember.compile(kernel("mma_m16n8k16(a8_f32, 0, a8_f16, 0, a8_bf16, 0)"), arch="sm_90", cache=False)
    with pytest.raises(CompileError, match="mismatched element types"):
        ember.compile(kernel("ldmatrix_x4(a8_bf16, 0, s_f16, thread_idx.x * 8u32)"), arch="sm_90", cache=False)


def test_every_int_attribute_that_a_builtin_sets_from_a_constant_has_a_range():
    for b in BUILTINS.values():
        for attr, _ in b.const_attrs:
            spec = OPS[b.op].attrs[attr]
            assert spec.lo is not None and spec.hi is not None, (b.name, attr)
