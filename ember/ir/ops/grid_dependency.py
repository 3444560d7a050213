"""Programmatic dependent launch (sm_90): a kernel launched as a programmatic dependent of
the kernel before it on the stream may start while that one still runs; it waits for it
at `gpu.griddep_wait`, and a kernel lets the next one start early at
`gpu.griddep_launch_dependents`.

- `gpu.griddep_wait` (PTX griddepcontrol.wait) blocks the thread until every grid this one
  depends on has completed and its memory writes are visible. Without a programmatic
  dependency (a plain launch) it returns at once. Passes move no memory access across it.
- `gpu.griddep_launch_dependents` (PTX griddepcontrol.launch_dependents) lets the grids
  that depend on this one be scheduled once every block of this one has executed it or
  exited. It makes nothing visible: a dependent still waits for this grid's completion.

Which kernels the runtime launches this way is proven, not assumed
(ember.ir.analysis.grid_dependency): a kernel whose every path waits at a top-level
`gpu.griddep_wait` before it touches global memory. In the simulator a kernel runs alone:
both ops do nothing, but the simulator notes which threads have waited and reports a
global access before the wait in a kernel the proof passed (S0014: the proof, or a pass
that moved the access, is wrong).
"""

from __future__ import annotations

from ..formats import Operands
from ..opdef import READS_MEMORY, SIDE_EFFECT, WRITES_MEMORY, defop

_SM90 = dict(min_sm=90, min_ptx=(7, 8))

defop("gpu.griddep_wait", Operands(), traits=(READS_MEMORY, WRITES_MEMORY, SIDE_EFFECT), **_SM90,
      simulate=lambda m, op, args, mask: m.grid_dependency_wait(mask) or [],
      example="gpu.griddep_wait",
      doc="Wait until the grids this one depends on (a programmatic dependent launch) have completed "
          "and their writes are visible (PTX griddepcontrol.wait); at once without such a dependency. "
          "Loads and stores stay on their side of it.")
defop("gpu.griddep_launch_dependents", Operands(), traits=(SIDE_EFFECT,), **_SM90,
      simulate=lambda m, op, args, mask: [],
      example="gpu.griddep_launch_dependents",
      doc="Let the grids launched as programmatic dependents of this one start once every block of "
          "this one has executed this or exited (PTX griddepcontrol.launch_dependents). It makes "
          "no write visible: they still wait for this grid at gpu.griddep_wait.")
