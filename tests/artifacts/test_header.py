"""`ember compile --emit header`: the header compiles as C and C++ with the system compiler,
describes every kernel as Ember does, embeds the image byte for byte, and its typed
launchers (defined when <cuda.h> comes first) pass the compiled block size and each
argument to cuLaunchKernel. A stand-in <cuda.h> records the call, so this runs with no
CUDA install; tests/gpu/test_build_gpu.py launches for real."""

import shutil
import subprocess
from pathlib import Path

import pytest

import ember
from ember.artifacts.header import c_identifier
from ember.cli import main

ROOT = Path(__file__).resolve().parents[2]
CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
CXX = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")

KERNELS = """
kernel scale(x: *global f32, y: *mut global f32, a: f32, n: u32) block(128) {
    let i = block_idx.x * 128 + thread_idx.x;
    if i < n { y[i] = a * x[i]; }
}
kernel anyblock(y: *mut global u16, h: f16, b: i64) {
    y[thread_idx.x] = u16(b);
}
kernel roomy(y: *mut global f32) block(32) {
    shared t: [f32; 20000];
    t[thread_idx.x] = 1.0;
    barrier();
    y[thread_idx.x] = t[31 - thread_idx.x];
}
kernel sized(y: *mut global f64, n: u32) block(32) {
    shared a: [u8; 3];
    shared row: [f64; n];
    row[thread_idx.x] = 1.0;
    a[0] = 1u8;
    barrier();
    y[thread_idx.x] = row[31 - thread_idx.x];
}
"""

# Just enough of <cuda.h> for the launchers: cuLaunchKernel records what it is given.
FAKE_CUDA = """
#define __cuda_cuda_h__
typedef int CUresult;
typedef struct CUfunc_st *CUfunction;
typedef struct CUmod_st *CUmodule;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;
#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8
#define CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED 16
static unsigned seen_block[3], seen_shared, seen_attribute, seen_non_portable;
static void **seen_params;
static CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shared, CUstream s, void **params, void **extra) {
    (void)f; (void)gx; (void)gy; (void)gz; (void)s; (void)extra;
    seen_block[0] = bx; seen_block[1] = by; seen_block[2] = bz; seen_params = params; seen_shared = shared;
    return 0;
}
static CUresult cuFuncSetAttribute(CUfunction f, int attribute, int value) {
    (void)f;
    if (attribute == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) seen_attribute = (unsigned)value;
    if (attribute == CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED) seen_non_portable = (unsigned)value;
    return 0;
}
static CUresult cuModuleLoadData(CUmodule *m, const void *image) { (void)m; return image ? 0 : 1; }
"""

HOST = """
#include <stdio.h>
#include <string.h>
#include "fake_cuda.h"
#include "k.h"
#include "k.h"   /* twice: the include guard holds */

int main(void) {
    CUmodule m;
    if (k_load(&m) != 0) return 10;
    if (k_num_kernels != 4 || strcmp(k_kernels[0].name, "scale") != 0) return 11;
    if (k_kernels[0].block[0] != 128 || k_kernels[1].block[0] != 0) return 12;
    if (k_kernels[0].num_params != 4 || strcmp(k_kernels[0].params[1].type, "*mut global f32") != 0) return 13;
    if (!k_kernels[0].params[1].writable || k_kernels[0].params[0].writable) return 14;
    if (k_kernels[1].params[1].size != 2 || k_kernels[1].params[2].size != 8) return 15;
    if (k_launch_scale(0, 4, 1, 1, 0, 1000, 2000, 2.5f, 77u) != 0) return 16;
    if (seen_block[0] != 128 || seen_block[1] != 1 || seen_block[2] != 1) return 17;
    if (*(CUdeviceptr *)seen_params[1] != 2000 || *(float *)seen_params[2] != 2.5f) return 18;
    if (*(uint32_t *)seen_params[3] != 77u) return 19;
    k_launch_anyblock(0, 1, 1, 1, 64, 2, 1, 0, 3000, (uint16_t)0x3c00, (int64_t)-5);
    if (seen_block[0] != 64 || seen_block[1] != 2 || *(int64_t *)seen_params[2] != -5) return 20;
    if (seen_shared != 0 || seen_attribute != 0) return 21;
    if (k_kernels[2].dynamic_shared_bytes != 80000 || k_kernels[0].dynamic_shared_bytes != 0) return 22;
    k_launch_roomy(0, 1, 1, 1, 0, 4000);
    if (seen_shared != 80000 || seen_attribute != 80000) return 23;
    /* a shared array sized at launch: 16 bytes for `a` (aligned), then n f64 */
    if (k_kernels[3].sized_shared_param != 1 || k_kernels[3].sized_shared_elem_bytes != 8) return 24;
    if (k_kernels[2].sized_shared_param != -1) return 25;
    k_launch_sized(0, 1, 1, 1, 0, 4000, 1000u);
    if (seen_shared != 16 + 8000 || seen_attribute != 16 + 8000) return 26;
    if (k_launch_sized(0, 1, 1, 1, 0, 4000, 0xffffffffu) == 0) return 27;
    printf("%zu", k_image_size);
    for (size_t i = 0; i < k_image_size; i++) printf(" %02x", k_image[i]);
    printf("\\n");
    return 0;
}
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.ember").write_text(KERNELS)
    (tmp_path / "fake_cuda.h").write_text(FAKE_CUDA)
    (tmp_path / "host.c").write_text(HOST)
    (tmp_path / "host.cpp").write_text(HOST)
    return tmp_path


@pytest.mark.parametrize("image", ["ptx", "cubin", "fatbin"])
@pytest.mark.parametrize("lang", ["c", "c++"])
def test_a_host_program_builds_against_the_header(project, capsys, image, lang):
    compiler = CC if lang == "c" else CXX
    if compiler is None:
        pytest.skip(f"no {lang} compiler")
    assert main(["compile", "k.ember", "--emit", "header", "--image", image, "-o", "k.h"]) == 0
    src, std = ("host.c", "-std=c11") if lang == "c" else ("host.cpp", "-std=c++11")
    subprocess.run([compiler, std, "-Wall", "-Wextra", "-Werror", "-pedantic", src, "-o", "host"],
                   check=True, capture_output=True)
    run = subprocess.run(["./host"], capture_output=True, text=True)
    assert run.returncode == 0, f"host program check {run.returncode} failed"
    size, *hexes = run.stdout.split()
    embedded = bytes(int(h, 16) for h in hexes)
    assert int(size) == len(embedded)
    if image == "ptx":
        assert embedded == ember.compile(project / "k.ember", cache=False).ptx.encode() + b"\0"
    else:
        assert main(["compile", "k.ember", "--emit", image, "-o", f"k.{image}"]) == 0
        assert embedded == (project / f"k.{image}").read_bytes()


def test_header_names_come_from_the_output_name(project, capsys):
    assert main(["compile", "k.ember", "--emit", "header", "-D", "X=1,2", "-o", "out"]) == 0
    capsys.readouterr()
    text = (project / "out" / "k.X-1.h").read_text()
    assert "k_X_1_image[" in text and "EMBER_K_X_1_H" in text and "k_X_1_launch_scale(" in text
    assert c_identifier("9lives-x.y") == "_9lives_x_y"


TMA_KERNEL = """
kernel t(x: tensormap<bf16, [128, 64], swizzle(128)>, y: *mut global f32) block(128) cluster(2) {
    y[0] = 1.0;
}
"""

TMA_HOST = """
#include <string.h>
#include "fake_cuda.h"
typedef struct { unsigned long long opaque[16]; } CUtensorMap;
#include "t.h"

int main(void) {
    const ember_param *x = &t_kernels[0].params[0], *y = &t_kernels[0].params[1];
    if (!x->is_tensor_map || x->is_pointer || x->size != 128 || x->align != 64) return 10;
    if (x->rank != 2 || x->box_dim[0] != 64 || x->box_dim[1] != 128 || x->box_dim[2] != 0) return 11;
    if (x->swizzle != 128 || y->is_tensor_map || y->rank != 0) return 12;
    if (strcmp(x->type, "tensormap<bf16, [128, 64], swizzle(128)>") != 0) return 13;
    if (t_kernels[0].cluster[0] != 2 || t_kernels[0].cluster[1] != 1) return 16;
    CUtensorMap map;
    memset(&map, 7, sizeof map);
    if (t_launch_t(0, 1, 1, 1, 0, &map, 5000) != 0) return 14;
    if (seen_params[0] != (void *)&map || *(CUdeviceptr *)seen_params[1] != 5000) return 15;
    (void)cuFuncSetAttribute;
    return 0;
}
"""


def test_tensor_map_parameters_in_the_header(tmp_path, monkeypatch, capsys):
    """A host program reads what to encode (box innermost first, swizzle) and passes the
    CUtensorMap by address to the typed launcher, as cuLaunchKernel takes a 128-byte value."""
    assert _c_host_with_header(tmp_path, monkeypatch, "t", TMA_KERNEL, TMA_HOST) == 0


def _c_host_with_header(tmp_path, monkeypatch, name: str, kernels: str, host: str) -> int:
    """`ember compile NAME.ember --emit header` (sm_90, a PTX image), then the C host program
    built against it and the fake <cuda.h> (strict C11) and run: its exit status."""
    if CC is None:
        pytest.skip("no C compiler")
    monkeypatch.chdir(tmp_path)
    (tmp_path / f"{name}.ember").write_text(kernels)
    (tmp_path / "fake_cuda.h").write_text(FAKE_CUDA)
    (tmp_path / "host.c").write_text(host)
    assert main(["compile", f"{name}.ember", "--arch", "sm_90", "--emit", "header", "--image", "ptx",
                 "-o", f"{name}.h"]) == 0
    subprocess.run([CC, "-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "host.c", "-o", "host"],
                   check=True, capture_output=True)
    return subprocess.run(["./host"]).returncode


CLUSTER_KERNEL = """
kernel wide(y: *mut global u32) block(32) cluster(16) {
    y[block_idx.x] = cluster_rank;
}
kernel narrow(y: *mut global u32) block(32) cluster(8) {
    y[block_idx.x] = cluster_rank;
}
"""

CLUSTER_HOST = """
#include "fake_cuda.h"
#include "c.h"

int main(void) {
    if (c_kernels[0].cluster[0] != 16 || c_kernels[1].cluster[0] != 8) return 10;
    if (c_launch_narrow(0, 8, 1, 1, 0, 1000) != 0 || seen_non_portable != 0) return 11;
    if (c_launch_wide(0, 16, 1, 1, 0, 1000) != 0 || seen_non_portable != 1) return 12;
    return 0;
}
"""


def test_a_cluster_past_the_portable_size_is_allowed_by_its_launcher(tmp_path, monkeypatch, capsys):
    """cluster(16) (non-portable: up to 16 blocks on an H100 or H200) has its typed launcher
    opt the kernel in first (CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED); a kernel
    of 8 blocks launches as before."""
    assert _c_host_with_header(tmp_path, monkeypatch, "c", CLUSTER_KERNEL, CLUSTER_HOST) == 0


PDL_KERNEL = """
kernel bump(x: *global u32, y: *mut global u32, n: u32) block(256) {
    let i = block_idx.x * 256 + thread_idx.x;
    if i < n { y[i] = x[i] + 1u32; }
}
kernel anyblock(y: *mut global u32) {
    y[thread_idx.x] = 1u32;
}
"""

# <cuda.h> of CUDA 12+ for the programmatic launchers: cuLaunchKernelEx records its config.
FAKE_CUDA_EX = FAKE_CUDA + """
#define CUDA_VERSION 12080
typedef enum { CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6 }
    CUlaunchAttributeID;
typedef union { char pad[64]; int programmaticStreamSerializationAllowed; } CUlaunchAttributeValue;
typedef struct { CUlaunchAttributeID id; char pad[4]; CUlaunchAttributeValue value; } CUlaunchAttribute;
typedef struct {
    unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
    CUstream hStream;
    CUlaunchAttribute *attrs;
    unsigned numAttrs;
} CUlaunchConfig;
static CUlaunchConfig seen_config;
static int seen_pdl = -1;
static CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra) {
    (void)f; (void)extra;
    seen_config = *c; seen_params = params;
    seen_pdl = c->numAttrs == 1 && c->attrs[0].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
        ? c->attrs[0].value.programmaticStreamSerializationAllowed : -1;
    return 0;
}
"""

PDL_HOST = """
#include "fake_cuda.h"
#include "p.h"

int main(void) {
    if (!p_kernels[0].programmatic || !p_kernels[1].programmatic) return 10;
    seen_block[0] = 0;
    if (p_launch_bump(0, 4, 1, 1, 0, 1000, 2000, 77u) != 0) return 11;
    if (seen_pdl != 1 || seen_block[0] != 0) return 12;       /* cuLaunchKernelEx, not cuLaunchKernel */
    if (seen_config.gridDimX != 4 || seen_config.blockDimX != 256 || seen_config.blockDimY != 1) return 13;
    if (*(CUdeviceptr *)seen_params[1] != 2000 || *(uint32_t *)seen_params[2] != 77u) return 14;
    p_launch_anyblock(0, 2, 1, 1, 64, 2, 1, 0, 3000);
    if (seen_config.blockDimX != 64 || seen_config.blockDimY != 2 || seen_config.sharedMemBytes != 0) return 15;
    (void)cuLaunchKernel; (void)cuFuncSetAttribute;
    return 0;
}
"""


@pytest.mark.parametrize("lang", ["c", "c++"])
def test_programmatic_kernels_launch_as_programmatic_dependent_launches(tmp_path, monkeypatch, capsys, lang):
    """A kernel compiled with --programmatic-launch (it waits for the kernel before it):
    its description says so and its launcher calls cuLaunchKernelEx with programmatic
    stream serialization (CUDA 12+); without the option it stays a plain launch."""
    compiler = CC if lang == "c" else CXX
    if compiler is None:
        pytest.skip(f"no {lang} compiler")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.ember").write_text(PDL_KERNEL)
    (tmp_path / "fake_cuda.h").write_text(FAKE_CUDA_EX)
    src = "host.c" if lang == "c" else "host.cpp"
    (tmp_path / src).write_text(PDL_HOST)
    assert main(["compile", "p.ember", "--programmatic-launch", "--emit", "header", "--image", "ptx",
                 "-o", "p.h"]) == 0
    subprocess.run([compiler, "-std=c11" if lang == "c" else "-std=c++11", "-Wall", "-Wextra", "-Werror",
                    "-pedantic", src, "-o", "host"], check=True, capture_output=True)
    assert subprocess.run(["./host"]).returncode == 0
    assert main(["compile", "p.ember", "--emit", "header", "--image", "ptx", "-o", "plain.h"]) == 0
    text = (tmp_path / "plain.h").read_text()
    assert "return cuLaunchKernelEx" not in text and "{1, 1, 1}, 0}," in text
