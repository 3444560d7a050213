"""The op table is complete in every layer: each op has semantics the simulator and the
folder run, a lowering (or an expansion before lowering), a doc and a doc example that
round-trips, a line in the all-ops round-trip file; builtins name real ops; approximate
ops have documented bounds; an op's minimum architecture is enforced. A new op that
forgets one of these fails here, with the op's name."""

import re
from pathlib import Path

import numpy as np
import pytest

import ember
from ember.diagnostics import CompileError
from ember.frontend.builtins import BUILTINS
from ember.ir import examples, interp
from ember.ir.opdef import READS_MEMORY, defop
from ember.ir.ops import OPS
from ember.ir.formats import Operands

ROOT = Path(__file__).resolve().parents[2]
ALL_OPS = ROOT / "tests" / "lit" / "roundtrip" / "all_ops.ir"


def test_every_op_has_semantics():
    """`eval` (pure), `simulate` (needs the machine), an expansion, or run by the
    interpreter itself (control flow, calls); terminators just hand values back."""
    missing = [n for n, d in OPS.items() if d.eval is None and d.simulate is None and d.expanded_by is None
               and n not in interp.STRUCTURED and not d.terminator]
    assert missing == []


def test_every_op_is_lowered_or_expanded():
    from ember import lowering
    assert lowering.missing_lowerings() == []


def test_an_op_without_a_lowering_is_named():
    from ember import lowering
    defop("test.unlowered", Operands(), operands="a: u32", results="r: u32", eval=lambda op, a: (a,),
          example="%r = test.unlowered %a : u32", example_args="%a: u32", doc="A test op.")
    try:
        assert lowering.missing_lowerings() == ["test.unlowered"]
    finally:
        del OPS["test.unlowered"]


@pytest.mark.parametrize("name", sorted(OPS))
def test_doc_example_round_trips(name):
    d = OPS[name]
    assert d.doc, f"`{name}` has no doc"
    assert examples.round_trips(name), f"the example of `{name}` does not print back the same"


def _mnemonic(name: str) -> str:
    """How the op's own printer names it (`func.return` prints as `return`)."""
    text = examples.example_text(name)
    return text.split("=", 1)[1].split()[0] if re.match(r"%[\w.]+(, %[\w.]+)* = ", text) else text.split()[0]


def test_every_op_is_named_in_the_all_ops_round_trip():
    text = ALL_OPS.read_text()
    missing = [n for n in OPS if not re.search(rf"(?<![\w.]){re.escape(_mnemonic(n))}(?![\w.])", text)]
    assert missing == [], f"add these ops to {ALL_OPS.relative_to(ROOT)}: {missing}"


PURE = sorted(n for n, d in OPS.items() if (d.eval is not None or d.expanded_by) and not d.has(READS_MEMORY)
              and n not in interp.STRUCTURED and not d.terminator and d.simulate is None)


def _random_lanes(t, n: int, rng) -> np.ndarray:
    from ember.ir import semantics as S
    if t.is_bool:
        return rng.integers(0, 2, n).astype(bool)
    if t.is_float:
        return S.round_to(rng.standard_normal(n) * 4, t)
    lo, hi = t.int_range()
    return rng.integers(lo, hi, n, endpoint=True, dtype=S.dtype(t))


@pytest.mark.parametrize("name", PURE)
def test_pure_op_evaluates_its_example(name):
    """The interpreter runs the example on 8 lanes of random arguments: semantics are
    complete for the example's types, not only declared."""
    from ember.ir.types import ScalarType, VectorType
    m = examples.example_module(name)
    f = next(f for f in m.functions if any(op.name == name for op in f.walk()))
    if not all(isinstance(a.type, (ScalarType, VectorType)) for a in f.args):
        pytest.skip("the example takes a pointer")
    rng = np.random.default_rng(len(name))
    args = []
    for a in f.args:
        if isinstance(a.type, VectorType):
            args.append(np.stack([_random_lanes(a.type.elem, 8, rng) for _ in range(a.type.length)], axis=1))
        else:
            args.append(_random_lanes(a.type, 8, rng))
    interp.Interpreter(m, 8).call(f, args)


def test_every_builtin_is_an_op_or_expanded_by_ir_generation():
    from ember.frontend import irgen
    bad = [b.name for b in BUILTINS.values() if (b.op and b.op not in OPS) or (not b.op and b.name not in irgen.EXPANDED)]
    assert bad == []


def test_approximate_ops_have_documented_bounds():
    text = (ROOT / "docs" / "math.md").read_text()
    assert [n for n, d in OPS.items() if d.approx is not None and f"| {n.split('.', 1)[1]} |" not in text] == []


def test_an_op_newer_than_the_target_is_a_located_error(monkeypatch):
    monkeypatch.setattr(OPS["arith.dp4a"], "min_sm", 80)
    src = "kernel k(x: *mut global i32) block(32) {\n    x[0] = dp4a(x[1], x[2], 0);\n}\n"
    with pytest.raises(CompileError) as e:
        ember.compile(src, arch="sm_75", name="k.ember")
    d = e.value.diagnostics.errors[0]
    assert d.code == "E0501" and "`dp4a` needs sm_80 or newer; the target is sm_75" in d.message
    assert d.span.line_col == (2, 12)
    ember.compile(src, arch="sm_80")
