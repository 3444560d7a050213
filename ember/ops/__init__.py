"""ember.ops: the decoder layer's kernels as functions a decode loop calls on torch
tensors, CuPy arrays or any CUDA array (DLPack / __cuda_array_interface__).

    import torch, ember.ops
    y = ember.ops.rms_norm(x, weight, 1e-5)                 # x: [rows, cols] f32/bf16/f16
    ember.ops.rope(q, k, positions, 500000.0)               # in place, GQA shapes
    ember.ops.rope_append(q, k, v, k_cache, v_cache, positions, 500000.0)   # + the KV append
    y = ember.ops.q4k_gemv(w_q4k, x)                        # Q4_K weight bytes, f32 x [m, k]
    xq = ember.ops.quantize_q8_1(x)                         # once, for the DP4A kernels
    xd = ember.ops.quantize_digits(x)                       # (or f32-accurate digits):
    y = ember.ops.q4k_gemv(w_q4k, xq)
    h = ember.ops.swiglu_q4k(w_gate, w_up, xq)              # silu(x Wg^T) * (x Wu^T)
    ember.ops.q4k_qkv_rope_append(w_qkv, xd, k_cache, v_cache, positions, 500000.0, q_out=q)
                                                            # x Wqkv^T, RoPE, KV append: one launch
    y = ember.ops.q6k_gemv(w_q6k, x)
    xq = ember.ops.add_rms_norm_q8(delta, h, weight, 1e-5)  # h += delta; Q8_1 of rms_norm(h)
    o = ember.ops.decode_attention(q, k_cache, v_cache, lengths)   # GQA over a KV cache

Every op checks its arguments before it launches (device, dtype, rank, shape, contiguity,
alignment, overlaps, scalar ranges) and raises ArgumentError naming the argument; it runs
on torch's current stream, and picks the compiled variant from the call's shape and the
tuned table of the GPU it runs on (compiled once, then cached). On sm_90+ the kernels are
programmatic dependent launches: each is launched while the kernel before it on the stream
finishes, and waits for it before it touches memory (`programmatic_launch(False)` turns
this off). Inside
`with ember.ops.on_simulator():` they take numpy arrays and run in Ember's simulator."""

from .args import ArgumentError, on_simulator
from .attention import decode_attention, decode_attention_launches
from .kernels import programmatic_launch
from .gemv import Q8Activations, q4k_gemv, q6k_gemv, quantize_digits, quantize_q8_1, swiglu_q4k
from .norm import add_rms_norm_q8, rms_norm
from .qkv import q4k_qkv_rope_append
from .rope import rope, rope_append

__all__ = ["ArgumentError", "on_simulator", "rms_norm", "add_rms_norm_q8", "rope", "q4k_gemv", "quantize_q8_1", "quantize_digits", "Q8Activations", "swiglu_q4k",
           "q6k_gemv", "decode_attention", "decode_attention_launches", "rope_append", "q4k_qkv_rope_append",
           "programmatic_launch"]
