"""wgmma kernels the simulator tests and the GPU tests share: C[M, N] = A[M, 64] B[N, 64]^T
with one 64-row slab of A per warpgroup, the tiles filled by ordinary stores in their
swizzled order, and the accumulators written out through std/wgmma.ember's layout."""

import numpy as np

TYPES = {"bf16": "bfloat16", "f16": "float16"}

# cp_async_16 into the rows of a swizzled tile and into a whole one by flat index, read back
# element by element; ldmatrix_x4 of the swizzled tile less that of a plain one (zeros)
COPIES = """kernel k(x: *global u16, out: *mut global u16) block(32) {
    shared t: [[u16; 32]; 16] swizzle(64);
    shared f: [[u16; 32]; 16] swizzle(64);
    shared p: [[u16; 32]; 16];
    for e in 0u32..2u32 {
        let c = e * 32u32 + thread_idx.x;          // chunk c: row c / 4, 8 elements from 8 (c % 4)
        cp_async_16(t[c / 4u32], 8u32 * (c % 4u32), x, 8u32 * c, 16u32);
        cp_async_16(f, 8u32 * c, x, 8u32 * c, 16u32);
        cp_async_16(p[c / 4u32], 8u32 * (c % 4u32), x, 8u32 * c, 16u32);
    }
    cp_async_commit();
    cp_async_wait(0);
    barrier();
    for r in 0u32..16u32 {
        out[r * 32u32 + thread_idx.x] = t[r][thread_idx.x];
        out[512u32 + r * 32u32 + thread_idx.x] = f[r][thread_idx.x];
    }
    var m: [u16; 16];
    let l = thread_idx.x;
    ldmatrix_x4(m, 0u32, t[l % 16u32], 8u32 * (l / 16u32));
    ldmatrix_x4(m, 8u32, p[l % 16u32], 8u32 * (l / 16u32));
    for i in 0u32..8u32 { out[1024u32 + 16u32 * l + i] = m[i] - m[i + 8u32]; }
}"""


def source(swizzle: int = 128, t: str = "bf16", n: int = 64, groups: int = 1, registers: bool = False,
           fence_proxy: bool = True, fence: bool = True, wait: bool = True, early_overwrite: bool = False,
           copies: bool = False, a_mn: bool = False, b_mn: bool = False) -> str:
    """The kernel `wg`: `groups` warpgroups, K = 64 in tiles of `swizzle` bytes per row
    (64 / W blocks of W columns); A from the tile, or from registers (`registers`); B's
    tile filled by element stores, or by 16-byte `cp_async_16` copies into its rows
    (`copies`); A or B transposed in shared memory (`a_mn`, `b_mn`: tiles of blocks of W
    M or N columns by the 64 K rows, read by wgmma as mn_major). The other flags break it on
    purpose for the simulator's checks."""
    w = (swizzle or 16) // 2         # elements per row (16-bit types); swizzle 0: none (16-byte rows)
    swz = f" swizzle({swizzle})" if swizzle else ""
    kb = 64 // w
    m = 64 * groups
    at = "ta[r / {w}u32][k][r % {w}u32]" if a_mn else "ta[k / {w}u32][r][k % {w}u32]"
    a_tile = "" if registers else (f"    shared ta: [[[{t}; {w}]; 64]; {m // w}]{swz};\n" if a_mn else
                                   f"    shared ta: [[[{t}; {w}]; {m}]; {kb}]{swz};\n")
    fill_a = "" if registers else (
        f"    for e in 0u32..{m * 64 // (128 * groups)}u32 {{\n"
        f"        let x = e * {128 * groups}u32 + q;\n"
        f"        let (r, k) = (x / 64u32, x % 64u32);\n"
        f"        {at.format(w=w)} = a[x];\n    }}\n")
    bt = "tb[r / {w}u32][k][r % {w}u32]" if b_mn else "tb[k / {w}u32][r][k % {w}u32]"
    b_tile = (f"    shared tb: [[[{t}; {w}]; 64]; {-(-n // w)}]{swz};\n" if b_mn else
              f"    shared tb: [[[{t}; {w}]; {n}]; {kb}]{swz};\n")
    frags = (
        f"    var af: [{t}; 32];\n"
        "    let (warp, g, tq) = ((q % 128u32) / 32u32, (q % 32u32) / 4u32, q % 4u32);\n"
        "    unroll for s in 0u32..4u32 {\n"
        "        unroll for i in 0u32..8u32 {\n"
        "            let row = 64u32 * grp + 16u32 * warp + g + 8u32 * ((i / 2u32) % 2u32);\n"
        "            af[8u32 * s + i] = a[row * 64u32 + 16u32 * s + 2u32 * tq + i % 2u32 + 8u32 * (i / 4u32)];\n"
        "        }\n    }\n") if registers else ""
    threads = 128 * groups
    fill_b = (
        f"    for e in 0u32..{(n * 64 + threads - 1) // threads}u32 {{\n"
        f"        let x = e * {threads}u32 + q;\n"
        f"        if x < {n * 64}u32 {{\n"
        "            let (r, k) = (x / 64u32, x % 64u32);\n"
        f"            {bt.format(w=w)} = b[x];\n        }}\n    }}\n")
    fill_b_copies = (                  # chunk x / 8 of B: 8 elements into one row of a block
        f"    for e in 0u32..{(n * 8 + threads - 1) // threads}u32 {{\n"
        f"        let x = 8u32 * (e * {threads}u32 + q);\n"
        f"        if x < {n * 64}u32 {{\n"
        "            let (r, k) = (x / 64u32, x % 64u32);\n"
        f"            cp_async_16(tb[k / {w}u32][r], k % {w}u32, b, x, 16u32);\n        }}\n    }}\n"
        "    cp_async_commit();\n    cp_async_wait(0);\n")
    steps = []
    for s in range(4):
        blk, col = divmod(16 * s, w)
        acc = "false" if s == 0 else "true"
        b_op = (f"tb, {16 * s}u32, 0u32" if b_mn else f"tb, 0u32, {16 * s}u32" if not swizzle
                else f"tb[{blk}], 0u32, {col}u32")      # no swizzle: a K-major operand spans blocks of 8
        a_op = (f"ta, {16 * s}u32, 64u32 * grp" if a_mn else f"ta, 64u32 * grp, {16 * s}u32" if not swizzle
                else f"ta[{blk}], 64u32 * grp, {col}u32")
        b_word = ", mn_major" if b_mn else ""
        if registers:
            steps.append(f"    wgmma_rs(acc, af, {8 * s}u32, {b_op}, {acc}{b_word});\n")
        else:
            words = f", {'mn_major' if a_mn else 'k_major'}{b_word}" if a_mn or b_mn else ""
            steps.append(f"    wgmma(acc, {a_op}, {b_op}, {acc}{words});\n")
    overwrite = f"    tb[0][0][0] = {t}(0.0);\n" if early_overwrite else ""
    return (
        'import "std/wgmma.ember";\n\n'
        f"kernel wg(a: *global {t}, b: *global {t}, c: *mut global f32) block({128 * groups}) {{\n"
        + a_tile
        + b_tile +
        "    let q = thread_idx.x;\n"
        "    let grp = q / 128u32;\n"
        + fill_a
        + (fill_b_copies if copies else fill_b)
        + ("    fence_proxy_async();\n" if fence_proxy else "")
        + "    barrier();\n"
        + frags +
        f"    var acc: [f32; {n // 2}];\n"
        + ("    wgmma_fence();\n" if fence else "")
        + "".join(steps)
        + "    wgmma_commit();\n"
        + overwrite
        + ("    wgmma_wait(0);\n" if wait else "")
        + f"    unroll for j in 0u32..{n // 2}u32 {{\n"
        f"        c[(64u32 * grp + wgmma_acc_row(q % 128u32, j)) * {n}u32 + wgmma_acc_col(q % 128u32, j)] = acc[j];\n"
        "    }\n}\n")


def inputs(t: str, n: int, groups: int, seed: int = 0):
    """A [64 groups, 64] and B [n, 64] of small integers (exact products and sums), flat."""
    import ml_dtypes
    dt = getattr(ml_dtypes, TYPES[t]) if t == "bf16" else np.float16
    rng = np.random.default_rng(seed)
    a = rng.integers(-8, 9, (64 * groups, 64)).astype(dt)
    b = rng.integers(-8, 9, (n, 64)).astype(dt)
    return a, b


def reference(a, b) -> np.ndarray:
    return (a.astype(np.float64) @ b.astype(np.float64).T).astype(np.float32)


def run(prog, a, b, n: int, device: str = "sim") -> np.ndarray:
    import ember
    c = np.full(a.shape[0] * n, np.nan, np.float32)
    ember.runtime.load(prog, device=device).wg(a.reshape(-1), b.reshape(-1), c, grid=1)
    return c.reshape(a.shape[0], n)
