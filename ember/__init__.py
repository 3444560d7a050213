"""Ember: a compiler for GPU kernels.

    import ember
    prog = ember.compile("kernels_src/rope.ember", arch="sm_90", defines={"HEAD_DIM": 128})
    prog.ptx                      # the PTX text
    prog.stage("ir-opt")          # any stage: ast, ir, ir-opt, llvm, llvm-opt, ptx
    prog.kernels["rope_fwd"]      # signature and launch metadata
"""

__version__ = "0.1.0"

from .diagnostics import CompileError, Diagnostic, InternalError  # noqa: E402
from .driver import KernelInfo, ParamInfo, Program, compile  # noqa: E402
from .tuning import TuneSpace, tune_space  # noqa: E402



def __getattr__(name):
    """`ember.runtime` and `ember.sim` load on first use (they pull in numpy and cuda)."""
    if name in ("runtime", "sim"):
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'ember' has no attribute {name!r}")


__all__ = ["compile", "Program", "KernelInfo", "ParamInfo", "CompileError", "InternalError",
           "Diagnostic", "tune_space", "TuneSpace", "__version__"]
