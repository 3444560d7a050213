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
