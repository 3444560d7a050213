"""Ember's own code names the GPU it works on: `cuda.context()` and `Event()` without an
argument mean cuda:0 and make it current, which sent a worker of `ember tune` measuring on
cuda:1 through cuda:0's events (CUDA_ERROR_INVALID_HANDLE) and cuda:0's context."""

import ast
from pathlib import Path

import ember

IMPLICIT = {"context", "Event"}


def _implicit_device_calls(tree: ast.AST):
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or node.args or node.keywords:
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id in IMPLICIT:
            yield node.lineno, f.id
        elif (isinstance(f, ast.Attribute) and f.attr in IMPLICIT and isinstance(f.value, ast.Name)
              and f.value.id == "cuda"):
            yield node.lineno, f"cuda.{f.attr}"


def test_no_call_picks_the_first_gpu_by_default():
    root = Path(ember.__file__).parent
    found = [f"{p.relative_to(root.parent)}:{line}: {name}()" for p in sorted(root.rglob("*.py"))
             for line, name in _implicit_device_calls(ast.parse(p.read_text(), str(p)))]
    assert found == []


def test_the_check_sees_both_spellings():
    src = "cuda.context()\nEvent()\ncuda.context(1)\nEvent(d)\ntorch.cuda.Event()\n"
    assert [n for _, n in _implicit_device_calls(ast.parse(src))] == ["cuda.context", "Event"]
