"""python -m bench {rope,rmsnorm,q4k,ops_gemv,q6k,gemm,hopper,hopper_decode,attention,layer,llamacpp,tuned,
                   revision,compile,scaling,sim,launch} [--out DIR]

rope: RoPE on the GPU against the hand-written PTX; rmsnorm: RMSNorm and add+RMSNorm
against Triton, liger-kernel and torch; q4k: the Q4_K GEMV family against Triton and torch; ops_gemv:
ember.ops.q4k_gemv on f32 activations (as digits, as f32 products) and on Q8_1; q6k: the Q6_K GEMV against the copy
ceiling and torch; gemm: the bf16 tensor-core GEMM against cuBLAS and Triton; hopper: the
wgmma + TMA GEMM against the mma.sync one, cuBLAS and Triton (sm_90); hopper_decode: its
tile configurations at decode shapes (M <= 16) against the copy ceiling, cuBLAS and Triton; attention: decode
attention (ember.ops) against torch's SDPA; layer: a Llama-3-8B-shaped Q4_K decoder layer
(ember.model.layer, one CUDA graph) against the bandwidth floor and torch bf16; llamacpp: the same
layer against llama.cpp's CUDA kernels on the same GGUF file (--llama-bench: a llama-batched-bench
built with CUDA); tuned: the tuned
tables of kernels_src/tuned/ (`ember tune`) beside the defaults and the copy ceiling;
revision: a kernel at a git revision (--rev) against the working tree's, bucket by bucket,
as `ember tune` measures (--kernel, --shape, --rounds; GPU);
compile: compile time against Triton and Numba-CUDA; scaling: compile time of large
inputs (long expressions, a 4.7 MB import);
sim: simulator speed (RMSNorm 64 x 4096); launch: host time per launch through the
runtime against a bare cuLaunchKernel (GPU)."""

import argparse
import sys


# What each benchmark needs beyond Ember's own dependencies, and where it comes from.
NEEDS = {"compile": ("triton", "numba", "pip install -e '.[bench]' (Triton and Numba-CUDA, compiling without a GPU)"),
         "rope": ("torch",), "rmsnorm": ("torch", "triton"), "q4k": ("torch", "triton"), "ops_gemv": ("torch",), "q6k": ("torch",), "gemm": ("torch", "triton"),
         "hopper": ("torch", "triton"), "hopper_decode": ("torch", "triton"), "attention": ("torch",), "layer": ("torch",),
         "llamacpp": ("torch", "gguf"), "tuned": (), "revision": (),
         "sim": (), "scaling": (), "launch": ()}


# The benchmarks whose Ember sides take tuned tables (ember.ops, the tuned kernels): they refuse
# to run while one is stale (bench.report.refuse_stale_tables).
TABLES_USED = frozenset({"rmsnorm", "q4k", "ops_gemv", "q6k", "gemm", "hopper", "hopper_decode", "attention",
                         "layer", "llamacpp", "tuned"})


def _missing(which: str) -> str | None:
    """A one-line reason the benchmark cannot run here, or None."""
    import importlib.util
    needs = NEEDS[which]
    how = needs[-1] if needs and " " in needs[-1] else None
    absent = [m for m in needs if " " not in m and importlib.util.find_spec(m) is None]
    if not absent:
        return None
    hint = how or "the GPU benchmarks run where torch and Triton are installed (../shared/GPU.md)"
    return f"python -m bench {which} needs {', '.join(absent)}: {hint}"


def main() -> int:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("which", choices=["rope", "rmsnorm", "q4k", "ops_gemv", "q6k", "gemm", "hopper", "hopper_decode",
                                     "attention", "layer", "llamacpp", "tuned", "revision", "compile", "scaling",
                                     "sim", "launch"])
    p.add_argument("--out", default="bench/results", help="directory for the JSON and markdown results")
    p.add_argument("--quick", action="store_true", help="fewer repetitions (smoke test)")
    p.add_argument("--llama-bench", metavar="PATH", help="llamacpp: the llama-batched-bench binary to compare with")
    p.add_argument("--rev", help="revision: the git revision to measure the working tree against")
    p.add_argument("--kernel", help="revision: a kernel `ember tune` has a workload for")
    p.add_argument("--shape", action="append", help="revision: a shape bucket (repeatable; default: all the kernel's)")
    p.add_argument("--rounds", type=int, default=3, help="revision: interleaved rounds (default 3)")
    p.add_argument("--allow-stale", action="store_true",
                   help="measure even where a tuned table is stale (its kernel then runs its defaults)")
    args = p.parse_args()
    why = _missing(args.which)
    if why:
        print(f"bench: error: {why}", file=sys.stderr)
        return 2
    if args.which in TABLES_USED:
        from .report import refuse_stale_tables
        stale = refuse_stale_tables(args.allow_stale)
        if stale:
            print(stale, file=sys.stderr)
            return 2
    if args.which == "rope":
        from . import rope_ab
        return rope_ab.main(args.out, quick=args.quick)
    if args.which == "rmsnorm":
        from . import rmsnorm_ab
        return rmsnorm_ab.main(args.out, quick=args.quick)
    if args.which == "q4k":
        from . import q4k_ab
        return q4k_ab.main(args.out, quick=args.quick)
    if args.which == "ops_gemv":
        from . import ops_gemv_ab
        return ops_gemv_ab.main(args.out, quick=args.quick)
    if args.which == "q6k":
        from . import q6k_ab
        return q6k_ab.main(args.out, quick=args.quick)
    if args.which == "gemm":
        from . import gemm_ab
        return gemm_ab.main(args.out, quick=args.quick)
    if args.which == "hopper":
        from . import gemm_wgmma_ab
        return gemm_wgmma_ab.main(args.out, quick=args.quick)
    if args.which == "hopper_decode":
        from . import gemm_wgmma_decode
        return gemm_wgmma_decode.main(args.out, quick=args.quick)
    if args.which == "layer":
        from . import layer_ab
        return layer_ab.main(args.out, quick=args.quick)
    if args.which == "llamacpp":
        if not args.llama_bench:
            print("bench: error: python -m bench llamacpp needs --llama-bench PATH (llama.cpp's llama-batched-bench, "
                  "built with CUDA)", file=sys.stderr)
            return 2
        from . import llamacpp_ab
        return llamacpp_ab.main(args.out, args.llama_bench, quick=args.quick)
    if args.which == "revision":
        from . import revision_ab
        return revision_ab.command(args)
    if args.which == "attention":
        from . import attention_ab
        return attention_ab.main(args.out, quick=args.quick)
    if args.which == "tuned":
        from . import tuned_report
        return tuned_report.main(args.out, quick=args.quick)
    if args.which == "launch":
        from . import launch_overhead
        return launch_overhead.main(args.out, quick=args.quick)
    if args.which == "scaling":
        from . import compile_scaling
        return compile_scaling.main(args.out, quick=args.quick)
    if args.which == "sim":
        from . import sim_speed
        return sim_speed.main(args.out, quick=args.quick)
    from . import compile_time
    return compile_time.main(args.out, quick=args.quick)


if __name__ == "__main__":
    sys.exit(main())
