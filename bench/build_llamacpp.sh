#!/usr/bin/env bash
# Builds llama.cpp's llama-batched-bench with its CUDA back end, for `python -m bench llamacpp`.
#   bash bench/build_llamacpp.sh SRC BUILD [ARCH]
# SRC: a llama.cpp source tree (bench/results/llamacpp_ab.md names the one measured: the copy
# that the llama-cpp-python sdist on PyPI vendors); BUILD: the build folder; ARCH: CUDA
# architectures (default 90: H100 / H200). Release build, llama.cpp's defaults otherwise
# (CUDA graphs on, flash-attention kernels for the f16 cache); needs cmake, ninja and nvcc.
# LLAMA_COMMIT (environment): the source's llama.cpp commit, which `--version` then reports
# (a tree without its own .git would report the enclosing repository's). Prints the binary's path.
set -euo pipefail
src=${1:?usage: build_llamacpp.sh SRC BUILD [ARCH]}
build=${2:?usage: build_llamacpp.sh SRC BUILD [ARCH]}
arch=${3:-90}
commit=()
if [ -n "${LLAMA_COMMIT:-}" ]; then commit=(-DLLAMA_BUILD_COMMIT="$LLAMA_COMMIT" -DLLAMA_BUILD_NUMBER=0); fi
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES="$arch" -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_OPENSSL=OFF "${commit[@]}" >&2
cmake --build "$build" --target llama-batched-bench -j "$(nproc)" >&2
echo "$build/bin/llama-batched-bench"
