"""Differential fuzzing: random well-typed kernels (progen) run in the simulator before and
after every pass, compiled to PTX and validated (differential), and kept as a corpus of
programs with their simulator results for the GPU (corpus). `python -m ember.fuzz --help`."""

from ..ir import verifier as _verifier

# Fuzzing hunts for pass bugs: verify after every pass, naming the pass that broke the IR.
_verifier.VERIFY_EACH = True
