"""Build outputs on the GPU: a fatbin loads and runs; one whose only cubin is for an older
major arch runs through the PTX it carries (the driver JITs it); a C program built against
a generated header with the system compiler and <cuda.h> launches a kernel through the
typed launcher and gets the right numbers."""

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import ember
from ember.cli import main

pytestmark = pytest.mark.gpu

SCALE = """
kernel scale(x: *global f32, y: *mut global f32, a: f32, n: u32) block(128) {
    let i = block_idx.x * 128 + thread_idx.x;
    if i < n { y[i] = a * x[i] + 1.0; }
}
"""

HOST = r"""
#include <cuda.h>
#include <stdio.h>
#include <math.h>
#include "scale.h"
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { printf("cuda error %d at %d\n", (int)r_, __LINE__); return 1; } } while (0)
int main(void) {
    enum { N = 1000 };
    float x[N], y[N];
    CUdevice dev; CUcontext ctx; CUmodule mod; CUfunction f; CUdeviceptr dx, dy;
    for (int i = 0; i < N; i++) x[i] = 0.25f * (float)i - 7.0f;
    CK(cuInit(0)); CK(cuDeviceGet(&dev, 0)); CK(cuCtxCreate(&ctx, NULL, 0, dev));
    CK(scale_load(&mod));
    CK(cuModuleGetFunction(&f, mod, scale_kernels[0].name));
    CK(cuMemAlloc(&dx, sizeof x)); CK(cuMemAlloc(&dy, sizeof y));
    CK(cuMemcpyHtoD(dx, x, sizeof x));
    CK(scale_launch_scale(f, (N + 127) / 128, 1, 1, 0, dx, dy, 3.0f, (uint32_t)N));
    CK(cuCtxSynchronize());
    CK(cuMemcpyDtoH(y, dy, sizeof y));
    for (int i = 0; i < N; i++)
        if (y[i] != 3.0f * x[i] + 1.0f) { printf("wrong at %d: %f\n", i, y[i]); return 2; }
    printf("ok %u\n", scale_kernels[0].block[0]);
    return 0;
}
"""


def _run_fatbin(image: bytes):
    from ember.runtime.cuda import Module
    prog = ember.compile(SCALE, arch="sm_80", cache=False)
    k = Module(prog, image=image).scale
    x = np.random.default_rng(1).standard_normal(1000).astype(np.float32)
    y = np.zeros_like(x)
    k(x, y, np.float32(3.0), 1000, grid=(8, 1, 1))
    np.testing.assert_array_equal(y, np.float32(3.0) * x + np.float32(1.0))


@pytest.mark.parametrize("archs", ["sm_80,sm_90", "sm_80"])
def test_fatbin_runs_from_its_cubin_or_its_ptx(tmp_path, capsys, archs):
    src = tmp_path / "scale.ember"
    src.write_text(SCALE)
    out = tmp_path / "scale.fatbin"
    assert main(["compile", str(src), "--emit", "fatbin", "--arch", archs, "-o", str(out)]) == 0
    _run_fatbin(out.read_bytes())     # sm_80 only: an sm_90 GPU can run it only by JIT-compiling the PTX


@pytest.mark.parametrize("programmatic", [False, True])
def test_a_host_program_launches_through_the_header(tmp_path, capsys, programmatic):
    """(programmatic: the kernel compiled with --programmatic-launch, launched by the
    header's cuLaunchKernelEx with programmatic stream serialization.)"""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("nvcc")
    cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    if cc is None or not Path(cuda_home, "include", "cuda.h").exists():
        pytest.skip("no C compiler or no <cuda.h>")
    (tmp_path / "scale.ember").write_text(SCALE)
    (tmp_path / "host.c").write_text(HOST)
    options = ["--programmatic-launch", "--arch", "sm_90"] if programmatic else ["--arch", "sm_80,sm_90"]
    assert main(["compile", str(tmp_path / "scale.ember"), "--emit", "header", *options,
                 "-o", str(tmp_path / "scale.h")]) == 0
    assert ("return cuLaunchKernelEx" in (tmp_path / "scale.h").read_text()) == programmatic
    libdirs = [d for d in (Path(cuda_home) / "lib64" / "stubs", Path(cuda_home) / "lib64") if d.exists()]
    cmd = [cc, "host.c", "-o", "host", f"-I{cuda_home}/include", *(f"-L{d}" for d in libdirs), "-lcuda"]
    subprocess.run(cmd, cwd=tmp_path, check=True, capture_output=True)
    r = subprocess.run(["./host"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "ok 128", r.stdout + r.stderr
