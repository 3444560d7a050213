"""An `if` whose condition is a constant once const parameters are bound compiles only the
branch it takes (as C++'s `if constexpr`): the other may hold what only other values of the
const parameters make valid; a condition known only at run time checks both."""

import pytest

import ember
from ember.diagnostics import CompileError

SRC = """kernel k<const WIDE: bool = false>(o: *mut global u32) block(32) {
    var a: [u32; 4];
    if WIDE { a[7] = 1u32; } else { a[3] = 2u32; }
    o[thread_idx.x] = a[3];
}"""


def test_the_branch_not_taken_is_not_checked():
    ember.compile(SRC, cache=False)                      # a[7] is out of bounds, but never compiled


def test_the_branch_taken_is():
    with pytest.raises(CompileError, match="index 7 is out of bounds"):
        ember.compile(SRC, defines={"WIDE": True}, cache=False)


def test_a_run_time_condition_checks_both_branches():
    with pytest.raises(CompileError, match="index 7 is out of bounds"):
        ember.compile(SRC.replace("if WIDE", "if o[0] == 1u32"), cache=False)
