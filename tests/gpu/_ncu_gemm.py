# one launch each of Ember's wgmma GEMM, its mma.sync GEMM and cuBLAS at 4096^3, for ncu
import torch, ember
from ember.runtime import cuda
m = n = k = 4096
a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
w = torch.randn(n, k, device="cuda").to(torch.bfloat16)
c = torch.empty(m, n, device="cuda")
wg = cuda.load(ember.compile("kernels_src/gemm_wgmma.ember", arch="sm_90a", cache=False)).gemm_wgmma
sync = cuda.load(ember.compile("kernels_src/gemm_bf16.ember", arch="sm_90", cache=False)).gemm_bf16
wg(a, w, c, m, n, k, grid=(132,))
sync(a, w, c, m, n, k, grid=(32, 32))
torch.mm(a, w.t())
torch.cuda.synchronize()
