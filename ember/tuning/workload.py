"""The record of one kernel at one shape that `ember tune` runs (ember.tuning.workloads
makes them): its inputs, launch, f64 reference and bytes moved; and the helpers the
workload factories share (seeded inputs, the GEMVs' grids)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..records import field, record


@record
class Workload:
    """One kernel at one shape."""

    source: Path
    kernel: str
    bucket: str                     # the table's key for this shape: "16384x4096 f32"
    defines: dict                   # fixed const parameters (the shape's, the type's)
    inputs: dict                    # name -> numpy array, read by the kernel
    output: str                     # the name of the array checked
    outputs: dict                   # name -> numpy array the kernel writes (zeroed)
    args: list                      # argument names (in inputs/outputs) and scalars, in order
    grid: object                    # config -> grid dims
    reference: np.ndarray           # the output in float64
    tolerance: float                # max |out - ref| / max |ref| a correct configuration stays within
    moved_bytes: int                # bytes read and written by one launch
    arch: str | None = None         # a target the kernel needs (sm_90a), else the device's
    notes: list = field(default_factory=list)
    decode: object = None           # outputs (name -> array) -> the values checked; default: outputs[output]

    def arguments(self, arrays: dict) -> list:
        """The launch's arguments: `args` with each name replaced by its array in `arrays`
        (numpy arrays for the simulator, device arrays on a GPU)."""
        return [arrays[a] if isinstance(a, str) else a for a in self.args]

    def result(self, outputs: dict) -> np.ndarray:
        """What is checked against the reference, from the outputs after a launch (host
        arrays by name): the `output` array, or what `decode` makes of them (quantised
        activations read back as the values they stand for)."""
        return self.decode(outputs) if self.decode is not None else outputs[self.output]

    def error(self, out: np.ndarray) -> float:
        """Normwise relative error of an output against the reference (inf if not finite)."""
        got = np.asarray(out, dtype=np.float64).reshape(self.reference.shape)
        if not np.isfinite(got).all():
            return float("inf")
        scale = max(float(np.abs(self.reference).max()), 1e-30)
        return float(np.abs(got - self.reference).max() / scale)


def warp_rows_grid(n: int):
    """The GEMVs' launch: blocks of WARPS warps, ROWS output rows per warp, over n rows."""
    return lambda c: (-(-n // (c["WARPS"] * c["ROWS"])),)


def imma_block_rows(c: dict) -> int:
    """The output rows a block of q4k_imma.ember's (or q6k_imma.ember's) kernels computes with
    configuration `c`: ROWS tiles of 16 rows, each warp its own with SHARE_X (q4k_imma: the
    block's warps on the same super-blocks), else the block's warps together."""
    return 16 * c["ROWS"] * (c["WARPS"] if c.get("SHARE_X") else 1)


def imma_grid(n: int):
    """q4k_imma.ember's launch over n output rows: a block per imma_block_rows."""
    return lambda c: (-(-n // imma_block_rows(c)),)


def seeded_rng(seed_text: str) -> np.random.Generator:
    """A generator seeded by the text (a kernel and its shape): the same inputs on every
    run and machine, other inputs for every shape."""
    import hashlib
    return np.random.default_rng(int.from_bytes(hashlib.sha256(seed_text.encode()).digest()[:8], "little"))
