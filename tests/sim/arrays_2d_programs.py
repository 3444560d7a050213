"""Kernels over multi-dimensional arrays, shared by the simulator and GPU tests."""

TRANSPOSE = """
// A transpose through a shared tile padded by one column (no bank conflicts either way).
kernel transpose(x: *global f32, y: *mut global f32, n: u32) block(32, 8) {
    shared tile: [[f32; 33]; 32];
    let bx = block_idx.x * 32u32;
    let by = block_idx.y * 32u32;
    for k in 0u32..4u32 {
        let r = thread_idx.y + k * 8u32;
        tile[r][thread_idx.x] = x[(by + r) * n + bx + thread_idx.x];
    }
    barrier();
    for k in 0u32..4u32 {
        let r = thread_idx.y + k * 8u32;
        y[(bx + r) * n + by + thread_idx.x] = tile[thread_idx.x][r];
    }
}

// A per-thread 3-D array, a compound assignment, and a row passed as a pointer.
fn row_sum(p: *mut local i32, n: u32) -> i32 {
    var s = 0i32;
    for j in 0u32..n { s += p[j]; }
    return s;
}
kernel cube(x: *global i32, out: *mut global i32) block(64) {
    var a: [[[i32; 3]; 2]; 2];
    let t = thread_idx.x;
    for i in 0u32..2u32 { for j in 0u32..2u32 { for k in 0u32..3u32 {
        a[i][j][k] = x[t] * i32(i * 6u32 + j * 3u32 + k);
    } } }
    a[1][0][2] += 5i32;
    out[t * 2u32] = row_sum(a[1][0], 3u32);
    out[t * 2u32 + 1u32] = a[0][1][1] - a[1][1][0];
}
"""


def cube_reference(x):
    import numpy as np
    a = x[:, None, None, None].astype(np.int64) * np.arange(12).reshape(2, 2, 3)[None]
    a[:, 1, 0, 2] += 5
    return np.stack([a[:, 1, 0].sum(axis=1), a[:, 0, 1, 1] - a[:, 1, 1, 0]], axis=1).reshape(-1).astype(np.int32)
