"""Programs a code generator could write: long expressions and deep nests compile (to
validated PTX) and simulate, with Python's default recursion limit. Every stage walks
them without recursion (ember.trampoline, iterative IR walks); before, each of these
ended in RecursionError (exit 70)."""

import sys

import numpy as np
import pytest

import ember
from ember.sim import load

K = "kernel k(x: *mut global f32, n: u32) block(32) {{\nlet t = u64(thread_idx.x) * 1024;\n{}\n}}\n"

PROGRAMS = {
    "else_if_chain_200": "let i = thread_idx.x;\n" + "".join(
        f"{'} else ' if j else ''}if i == {j}u32 {{ x[i] = {j}.0;\n" for j in range(200)) + "}",
    "sum_of_500_terms": "let v = x[t];\nx[t + 1] = " + " + ".join("v" for _ in range(500)) + ";",
    "sum_of_20000_terms": "let v = x[t];\nx[t + 1] = " + " + ".join("v" for _ in range(20000)) + ";",
    "parentheses_5000_deep": "let v = x[t];\nx[t + 1] = " + "(v + " * 5000 + "v" + ")" * 5000 + ";",
    "ifs_600_deep": "let i = thread_idx.x;\n" + "if i < n {\n" * 600 + "x[i] = 1.0;\n" + "}\n" * 600,
    "blocks_1000_deep": "{\n" * 1000 + "x[t] = 1.0;\n" + "}\n" * 1000,
    "unary_minus_3000": "let v = x[t];\nx[t + 1] = " + "-" * 3000 + "v;",
    "early_returns_1000": "".join(f"if x[t + {j}] > 0.5 {{ return; }}\nx[t + {j}] = 1.0;\n" for j in range(1000)),
}


@pytest.fixture(autouse=True)
def default_recursion_limit():
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    yield
    sys.setrecursionlimit(old)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_deep_program_compiles(name):
    prog = ember.compile(K.format(PROGRAMS[name]), name=f"{name}.ember")
    assert ".entry k(" in prog.ptx


@pytest.mark.parametrize("name", ["else_if_chain_200", "ifs_600_deep", "early_returns_1000", "parentheses_5000_deep"])
def test_deep_program_simulates(name):
    x = np.zeros(32 * 1024, np.float32)
    x[7] = 1.0
    x[1024] = 2.0
    prog = ember.compile(K.format(PROGRAMS[name]), name=f"{name}.ember", opt=0)
    load(prog).k(x, 64, grid=1)
    if name == "else_if_chain_200":
        assert list(x[:32]) == [float(j) for j in range(32)]
    elif name == "ifs_600_deep":
        assert (x[:32] == 1.0).all()
    elif name == "early_returns_1000":
        assert (x[:7] == 1.0).all() and (x[8:1000] == 0.0).all()   # x[7] > 0.5 returns
        assert x[1024] == 2.0 and (x[1025:2048] == 0.0).all()       # returns at once
        assert (x[2048:2048 + 1000] == 1.0).all()
    else:
        assert x[1025] == 5001.0 * 2.0


def test_ir_text_of_a_deep_program_round_trips():
    from ember.ir.parser import parse_module
    from ember.ir.printer import print_module
    prog = ember.compile(K.format(PROGRAMS["ifs_600_deep"]), stop_after="ir")
    text = print_module(prog.ir)
    assert print_module(parse_module(text)) == text
