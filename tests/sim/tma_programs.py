"""TMA kernels the simulator tests and the GPU tests share, with their references."""

import numpy as np

ELEM_BYTES = {"bf16": 2, "f16": 2, "f32": 4, "u8": 1}


def load_source(t: str = "bf16", rows: int = 16, cols: int = 64, swizzle: int = 128, row0: int = -3,
                col0: int = 8) -> str:
    """Block b copies the rows x cols box of x at (rows b + row0, col0) (zeros outside x)
    into a tile laid out as the map says, then writes the tile out element by element."""
    swz = f", swizzle({swizzle})" if swizzle else ""
    tile_swz = f" swizzle({swizzle})" if swizzle else ""
    n = rows * cols
    return f"""import "std/mbarrier.ember";

kernel k(x: tensormap<{t}, [{rows}, {cols}]{swz}>, out: *mut global {t}) block(128) {{
    shared t: [[{t}; {cols}]; {rows}]{tile_swz};
    shared bar: [u64; 1];
    if thread_idx.x == 0u32 {{ mbarrier_init(bar, 0, 1u32); }}
    barrier();
    if thread_idx.x == 0u32 {{
        mbarrier_arrive(bar, 0, {n * ELEM_BYTES[t]}u32);
        tma_load(t, x, bar, 0, i32({rows}u32 * block_idx.x) + ({row0}), {col0});
    }}
    mbarrier_wait(bar, 0, 0u32);
    for e in 0u32..{(n + 127) // 128}u32 {{
        let i = e * 128u32 + thread_idx.x;
        if i < {n}u32 {{
            out[block_idx.x * {n}u32 + i] = t[i / {cols}u32][i % {cols}u32];
        }}
    }}
}}
"""


def load_reference(x: np.ndarray, blocks: int, rows: int, cols: int, row0: int, col0: int) -> np.ndarray:
    out = np.zeros((blocks * rows, cols), x.dtype)
    for b in range(blocks):
        for r in range(rows):
            g = rows * b + row0 + r
            lo, hi = max(col0, 0), min(col0 + cols, x.shape[1])
            if 0 <= g < x.shape[0] and lo < hi:
                out[b * rows + r, lo - col0:hi - col0] = x[g, lo:hi]
    return out


def store_source(rows: int = 16, cols: int = 64, swizzle: int = 128, dr: int = 3, dc: int = 4) -> str:
    """Block b loads the box at (rows b, 0) of x, adds 1 to each element, and stores the
    tile to the box at (rows b + dr, dc) of y through TMA (what falls outside y is dropped)."""
    swz = f", swizzle({swizzle})" if swizzle else ""
    tile_swz = f" swizzle({swizzle})" if swizzle else ""
    n = rows * cols
    return f"""import "std/mbarrier.ember";

kernel k(x: tensormap<f32, [{rows}, {cols}]{swz}>, y: tensormap<f32, [{rows}, {cols}]{swz}>) block(128) {{
    shared t: [[f32; {cols}]; {rows}]{tile_swz};
    shared bar: [u64; 1];
    if thread_idx.x == 0u32 {{ mbarrier_init(bar, 0, 1u32); }}
    barrier();
    let row = i32({rows}u32 * block_idx.x);
    if thread_idx.x == 0u32 {{
        mbarrier_arrive(bar, 0, {4 * n}u32);
        tma_load(t, x, bar, 0, row, 0);
    }}
    mbarrier_wait(bar, 0, 0u32);
    for e in 0u32..{(n + 127) // 128}u32 {{
        let i = e * 128u32 + thread_idx.x;
        if i < {n}u32 {{ t[i / {cols}u32][i % {cols}u32] += 1.0; }}
    }}
    fence_proxy_async();
    barrier();
    if thread_idx.x == 0u32 {{
        tma_store(y, t, row + ({dr}), {dc});
        cp_async_bulk_commit();
        cp_async_bulk_wait(0);
    }}
}}
"""


def store_reference(x: np.ndarray, y: np.ndarray, blocks: int, rows: int, cols: int, dr: int = 3,
                    dc: int = 4) -> np.ndarray:
    out = y.copy()
    for b in range(blocks):
        for r in range(rows):
            for c in range(cols):
                src = (rows * b + r, c)
                dst = (rows * b + dr + r, dc + c)
                v = x[src] + 1 if src[0] < x.shape[0] and src[1] < x.shape[1] else np.float32(1)
                if 0 <= dst[0] < y.shape[0] and 0 <= dst[1] < y.shape[1]:
                    out[dst] = v
    return out


def gemm_source(n: int = 128) -> str:
    """C[64 blocks.y, n blocks.x] = A B^T over K in steps of 64: each step's tiles come by TMA
    (A's 64 x 64 box, B's n x 64 box, one mbarrier phase) and one warpgroup multiplies them."""
    return f"""import "std/mbarrier.ember";
import "std/wgmma.ember";

kernel g(a: tensormap<bf16, [64, 64], swizzle(128)>, b: tensormap<bf16, [{n}, 64], swizzle(128)>,
         c: *mut global f32, ldc: u32, k_tiles: u32) block(128) {{
    shared ta: [[bf16; 64]; 64] swizzle(128);
    shared tb: [[bf16; 64]; {n}] swizzle(128);
    shared full: [u64; 1];
    let q = thread_idx.x;
    if q == 0u32 {{ mbarrier_init(full, 0, 1u32); }}
    barrier();
    var acc: [f32; {n // 2}];
    for kt in 0u32..k_tiles {{
        if q == 0u32 {{
            mbarrier_arrive(full, 0, {(64 + n) * 128}u32);
            tma_load(ta, a, full, 0, i32(64u32 * block_idx.y), i32(64u32 * kt));
            tma_load(tb, b, full, 0, i32({n}u32 * block_idx.x), i32(64u32 * kt));
        }}
        mbarrier_wait(full, 0, kt & 1u32);
        wgmma_fence();
        unroll for k in 0u32..4u32 {{
            wgmma(acc, ta, 0u32, 16u32 * k, tb, 0u32, 16u32 * k, kt + k > 0u32);
        }}
        wgmma_commit();
        wgmma_wait(0);
        barrier();              // every thread's wgmma has read the tiles before they are refilled
    }}
    unroll for j in 0u32..{n // 2}u32 {{
        let row = 64u32 * block_idx.y + wgmma_acc_row(q, j);
        c[row * ldc + {n}u32 * block_idx.x + wgmma_acc_col(q, j)] = acc[j];
    }}
}}
"""


# Rank 0 of each cluster of 2 loads the box at (16 cluster, 0) of x once, multicast into the
# tile of both blocks; each block waits on its own mbarrier and writes its tile out.
MULTICAST = """import "std/mbarrier.ember";

kernel k(x: tensormap<bf16, [16, 64], swizzle(128)>, out: *mut global bf16) block(128) cluster(2) {
    shared t: [[bf16; 64]; 16] swizzle(128);
    shared bar: [u64; 1];
    if thread_idx.x == 0u32 {
        mbarrier_init(bar, 0, 1u32);
        mbarrier_arrive(bar, 0, 2048u32);       // this block's phase waits for the box's bytes
    }
    cluster_barrier();                           // every block's barrier is set up before the copy
    if cluster_rank == 0u32 && thread_idx.x == 0u32 {
        tma_load_multicast(t, x, bar, 0, 3u32, i32(16u32 * (block_idx.x / 2u32)), 0);
    }
    mbarrier_wait(bar, 0, 0u32);
    for e in 0u32..8u32 {
        let i = e * 128u32 + thread_idx.x;
        out[block_idx.x * 1024u32 + i] = t[i / 64u32][i % 64u32];
    }
    cluster_barrier();
}
"""


# A ring of 2 stages that a cluster of 2 fills together: for use u, each block's producer loads
# its half of x's rows 16u..16u+16 (8 rows) multicast into the stage of both blocks; each block's
# consumers copy the 16 rows out and release the stage to their producer, which forwards it to
# both (std/pipeline's cluster functions), so no producer refills a stage either block still reads.
MULTICAST_RING = """import "std/pipeline.ember";

kernel k(x: tensormap<bf16, [8, 64], swizzle(128)>, out: *mut global bf16, uses: u32) block(256) cluster(2) {
    shared t: [[[[bf16; 64]; 8]; 2]; 2] swizzle(128);
    shared full: [u64; 2];
    shared empty: [u64; 2];
    shared clear: [u64; 2];
    let rank = cluster_rank;
    if thread_idx.x == 0u32 { pipeline_init_cluster(full, empty, clear, 2u32, 128u32, 2u32); }
    cluster_barrier();                           // both blocks' barriers exist before any copy
    if thread_idx.x < 128u32 {
        if thread_idx.x == 0u32 {
            for u in 0u32..uses {
                producer_acquire_cluster(empty, clear, u, 2u32, 2u32);
                producer_commit(full, u, 2u32, 2048u32);
                tma_load_multicast(t[u % 2u32][rank], x, full, u % 2u32, 3u32, i32(16u32 * u + 8u32 * rank), 0);
            }
        }
    } else {
        let q = thread_idx.x - 128u32;
        for u in 0u32..uses {
            consumer_wait(full, u, 2u32);
            for e in 0u32..8u32 {
                let i = e * 128u32 + q;
                out[(block_idx.x * uses + u) * 1024u32 + i] = t[u % 2u32][i / 512u32][(i / 64u32) % 8u32][i % 64u32];
            }
            consumer_release(empty, u, 2u32);
        }
    }
    cluster_barrier();                           // no block exits while the other may write to it
}
"""
