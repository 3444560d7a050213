"""A kernel with a shared array sized at launch, shared by the simulator and GPU tests."""

import numpy as np

# Softmax of each row of any width, reading the input once: the row waits in a shared
# array whose length the launch gives (`cols`).
SOFTMAX = """
import "std/reduce.ember";

kernel softmax(x: *global f32, y: *mut global f32, cols: u32) block(256) {
    shared row: [f32; cols];
    shared partial: [f32; 8];
    let base = block_idx.x * cols;
    var m = -f32.inf;
    for c in thread_idx.x..cols step 256u32 {
        let v = x[base + c];
        row[c] = v;
        m = max(m, v);
    }
    m = block_max(m, partial, 8u32);
    var s = 0.0;
    for c in thread_idx.x..cols step 256u32 {
        let e = exp(row[c] - m);
        row[c] = e;
        s += e;
    }
    s = block_sum(s, partial, 8u32);
    for c in thread_idx.x..cols step 256u32 {
        y[base + c] = row[c] / s;
    }
}
"""


def inputs(rows: int, cols: int, seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(rows * cols) * 4).astype(np.float32)


def reference(x: np.ndarray, rows: int, cols: int) -> np.ndarray:
    r = x.reshape(rows, cols).astype(np.float64)
    e = np.exp(r - r.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).reshape(-1)
