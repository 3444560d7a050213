"""bench/llamacpp_ab.py without a GPU: the GGUF files it writes load in Ember with the shapes
and hyperparameters written, and llama-batched-bench's JSON lines become step times (a
stand-in script prints them; the real binary runs on the GPU machine)."""

import json
import os
import stat
import sys

import numpy as np
import pytest

pytest.importorskip("gguf")

from bench import llamacpp_ab  # noqa: E402
from ember.model.gguf_weights import load  # noqa: E402


def test_model_file_loads_in_ember(tmp_path):
    path = str(tmp_path / "m.gguf")
    llamacpp_ab.write_model(path, 2, hidden=512, heads=4, kv_heads=2, ffn=1024, vocab=32, q6k=("ffn_down",))
    model = load(path)
    hp = model.hparams
    assert (hp.layers, hp.hidden, hp.heads, hp.kv_heads, hp.ffn, hp.head_dim) == (2, 512, 4, 2, 1024, 128)
    assert hp.eps == pytest.approx(llamacpp_ab.EPS) and hp.rope_base == llamacpp_ab.ROPE_BASE
    layer = model.layer(1)
    assert (layer.wk.kind, layer.wk.shape) == ("Q4_K", (256, 512))
    assert (layer.w_down.kind, layer.w_down.shape) == ("Q6_K", (512, 1024))
    w = layer.wq.dequantize()
    assert np.isfinite(w).all() and 0.5 < w.std() * 512 ** 0.5 < 2.0     # a trained model's scale


def _stand_in(tmp_path, lines, status=0):
    script = tmp_path / "llama-batched-bench"
    body = "".join(f"print({json.dumps(json.dumps(r))})\n" for r in lines)
    script.write_text(f"#!{sys.executable}\nimport sys\n{body}sys.exit({status})\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def test_step_times_from_json_lines(tmp_path):
    rows = [{"pp": c, "tg": 32, "pl": b, "t_tg": 0.032 * b * (1 + c / 4096), "speed_tg": 1.0}
            for b in (1, 8) for c in (512, 4096)]
    binary = _stand_in(tmp_path, rows)
    steps = llamacpp_ab.llamacpp_steps(binary, "m.gguf", batches=(1, 8), contexts=(512, 4096))
    assert steps[(1, 4096)] == pytest.approx(2000.0) and steps[(8, 512)] == pytest.approx(9000.0)


def test_missing_shape_or_failure_is_an_error(tmp_path):
    binary = _stand_in(tmp_path, [{"pp": 512, "tg": 32, "pl": 1, "t_tg": 0.1, "speed_tg": 1.0}])
    with pytest.raises(RuntimeError, match=r"no result for .*\(8, 512\)"):
        llamacpp_ab.llamacpp_steps(binary, "m.gguf", batches=(1, 8), contexts=(512,))
    failing = _stand_in(tmp_path, [], status=3)
    with pytest.raises(RuntimeError, match="exited with 3"):
        llamacpp_ab.llamacpp_steps(failing, "m.gguf", batches=(1,), contexts=(512,))


def test_main_refuses_a_path_that_is_not_a_program(tmp_path, capsys):
    assert llamacpp_ab.main(str(tmp_path / "out"), os.devnull) == 2
    assert "not an executable" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_build_script_says_how_to_call_it():
    """bench/build_llamacpp.sh without its arguments stops before running anything, with
    its usage (the build itself needs nvcc and a llama.cpp source: the GPU machine)."""
    import subprocess
    from pathlib import Path
    script = Path(__file__).resolve().parents[2] / "bench" / "build_llamacpp.sh"
    run = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=60)
    assert run.returncode != 0 and "usage: build_llamacpp.sh SRC BUILD [ARCH]" in run.stderr
