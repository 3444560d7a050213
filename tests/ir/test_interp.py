"""The lane interpreter: masks under divergent control flow and loops."""

import numpy as np
import pytest

from ember.ir.parser import parse_module
from ember.ir.interp import Interpreter, StepLimitExceeded


def test_divergent_if_and_loop():
    m = parse_module("""func @f(%n: u32) -> u32 {
  %z = arith.const 0 : u32
  %one = arith.const 1 : u32
  %r = scf.for %i = %z to %n step %one iter_args(%acc = %z) -> (u32) {
    %c = arith.cmp lt %i, %one : u32
    %v = scf.if %c -> (u32) {
      %t = arith.const 100 : u32
      scf.yield %t : u32
    } else {
      scf.yield %i : u32
    }
    %a2 = arith.add %acc, %v : u32
    scf.yield %a2 : u32
  }
  return %r : u32
}
""")
    n = np.array([0, 1, 2, 5], dtype=np.uint32)
    (r,) = Interpreter(m, 4).call(m.get("f"), [n])
    assert list(r) == [0, 100, 101, 110]


def test_step_limit():
    m = parse_module("""func @f(%n: u32) -> u32 {
  %r = scf.while iter_args(%a = %n) -> (u32) {
    %t = arith.const true : bool
    scf.condition %t, %a : bool, u32
  } do (%b: u32) {
    scf.yield %b : u32
  }
  return %r : u32
}
""")
    with pytest.raises(StepLimitExceeded, match="step limit"):
        Interpreter(m, 2, step_limit=50).call(m.get("f"), [np.zeros(2, dtype=np.uint32)])
