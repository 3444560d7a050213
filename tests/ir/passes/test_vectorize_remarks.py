"""--remarks: where contiguous accesses were not widened, and the missing fact."""

import ember

SILU = """kernel silu_mul(g: *global f32{A}, u: *global f32{A}, y: *mut global f32{A}, n: u32) block(256) {{
    let base = (block_idx.x * 256u32 + thread_idx.x) * 4u32;
    for k in 0u32..4u32 {{
        let i = base + k;
        let a = g[i];
        y[i] = a / (1.0 + exp(-a)) * u[i];
    }}
}}
"""


def test_the_natural_silu_and_mul_is_told_what_to_promise():
    prog = ember.compile(SILU.format(A=""), remarks=True, cache=False)
    messages = [(r.code, r.span.line_col[0], r.message, r.help) for r in prog.remarks]
    assert len(messages) == 3 and all(code == "R0001" for code, *_ in messages)
    assert any("4 loads" in m and "aligned to 4 bytes only" in m and "`g: ... align(16)`" in h
               for _, line, m, h in messages if line == 5)
    assert any("4 stores" in m and "`y: ... align(16)`" in h for _, line, m, h in messages if line == 6)
    assert prog.ptx.count("ld.global.nc.v4") == 0


def test_with_the_promise_it_is_widened_and_nothing_is_said():
    prog = ember.compile(SILU.format(A=" align(16)"), remarks=True, cache=False)
    assert prog.remarks == []
    assert prog.ptx.count("ld.global.nc.v4.b32") == 2 and prog.ptx.count("st.global.v4.b32") == 1


def test_an_index_whose_factor_is_unknown_is_named():
    src = ("kernel k(x: *mut global f32 align(16), s: u32) block(32) {\n"
           "    let b = s + thread_idx.x;\n"
           "    x[b] = 1.0; x[b + 1u32] = 2.0; x[b + 2u32] = 3.0; x[b + 3u32] = 4.0;\n}\n")
    prog = ember.compile(src, remarks=True, cache=False)
    assert any("multiple of 1 element(s) only" in r.message and "`4 * j + k`" in r.help for r in prog.remarks)


def test_remarks_on_the_command_line(tmp_path, capsys):
    from ember.cli import main
    f = tmp_path / "silu.ember"
    f.write_text(SILU.format(A=""))
    assert main(["compile", str(f), "--remarks", "-o", str(tmp_path / "s.ptx")]) == 0
    err = capsys.readouterr().err
    assert err.count("remark[R0001]") == 3


def test_a_conversion_of_a_sum_hides_the_adjacency_and_is_named():
    """`w[u64(j + v)]` for v = 0..3: adjacent, but not provably (the u32 sum may wrap);
    found in the Q6_K kernel's staging loop, where the loads stayed 4-byte and nothing
    was said."""
    src = ("kernel k(w: *global u32 align(16), y: *mut global u32, c: u32) block(32) {\n"
           "    var s = 0u32;\n"
           "    unroll for v in 0u32..4u32 { s += w[u64(c * 4u32 + v)]; }\n"
           "    y[thread_idx.x] = s;\n}\n")
    prog = ember.compile(src, remarks=True, cache=False)
    assert [(r.span.line_col[0], r.help) for r in prog.remarks] == [(3, "convert before adding: `u64(j) + u64(k)`")]
    assert "4 adjacent loads here were not merged: each index converts a sum" in prog.remarks[0].message
    fixed = ember.compile(src.replace("u64(c * 4u32 + v)", "u64(c * 4u32) + u64(v)"), remarks=True, cache=False)
    assert fixed.remarks == [] and fixed.ptx.count("ld.global.nc.v4.b32") == 1


def test_per_thread_arrays_get_no_remarks():
    """They live in registers once their indices are constants: merging them means nothing."""
    src = ("kernel k(w: *global u32, y: *mut global u32) block(32) {\n"
           "    var a: [u32; 4];\n"
           "    unroll for v in 0u32..4u32 { a[v] = w[thread_idx.x * 7u32 + v]; }\n"
           "    y[thread_idx.x] = a[0] + a[3];\n}\n")
    prog = ember.compile(src, remarks=True, cache=False)
    assert not any("`a`" in (r.help or "") for r in prog.remarks)
